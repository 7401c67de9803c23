// The Add flow's review step, the consent screen: what will run, who published it, every
// variable, and the values it asks for.
import type { InputRequest, PlanView } from "../bindings/app";
import type { Server } from "../lib/addFlow";
import { printableLine, shellArgv } from "../lib/format";
import { ErrorText } from "./common";

/** The consent screen: what will run, who published it, every variable, what to give. */
export function AddReview(props: {
  plan: PlanView | null;
  server: Server | null;
  warden: string | null;
  asName: string;
  inputs: Record<string, string>;
  busy: boolean;
  onName: (n: string) => void;
  onInputs: (i: Record<string, string>) => void;
  onApply: () => void;
  onVersion: (v: string) => void;
}) {
  const { plan, server } = props;
  const p = plan?.plan ?? null;
  // The variables shown: the package's, or a remote's headers'.
  const vars = p?.env ?? plan?.remote?.env ?? [];
  const asks: InputRequest[] = [...(plan?.missing ?? []), ...(p?.optional_inputs ?? [])];
  return (
    <div data-testid="consent">
      {plan && (
        <dl class="facts">
          <div class="wide">
            <dt>Server</dt>
            <dd data-testid="consent-name">{printableLine(plan.title ? `${plan.title} (${plan.name})` : plan.name)}</dd>
          </div>
          <div>
            <dt>Version</dt>
            <dd>
              {plan.versions.length > 1 ? (
                <select data-testid="consent-version" value={plan.version ?? ""} disabled={props.busy} onChange={(e) => props.onVersion(e.currentTarget.value)}>
                  {plan.versions.map((v) => (
                    <option key={v} value={v}>
                      {v}
                    </option>
                  ))}
                </select>
              ) : (
                printableLine(plan.version ?? "none")
              )}
            </dd>
          </div>
          <div>
            <dt>Publisher</dt>
            <dd title="The registry name's namespace, which the registry verified when it was published">{printableLine(plan.namespace)}</dd>
          </div>
          {p && (
            <div>
              <dt>Package</dt>
              <dd data-testid="consent-package">
                {printableLine(p.package.registry_type)} <code>{printableLine(p.package.reference)}</code> (pinned)
              </dd>
            </div>
          )}
          {plan.repository && (
            <div class="wide">
              <dt>Repository</dt>
              <dd>
                <code>{printableLine(plan.repository)}</code>
              </dd>
            </div>
          )}
          {plan.description && (
            <div class="wide">
              <dt>About</dt>
              <dd>{printableLine(plan.description)}</dd>
            </div>
          )}
        </dl>
      )}
      {plan?.refused && plan.missing.length === 0 && <ErrorText message={plan.refused} testid="consent-refused" />}
      <label class="field">
        Entry name in the clients' files
        <input data-testid="entry-name" value={props.asName} onInput={(e) => props.onName(e.currentTarget.value)} />
      </label>
      {server?.url && (
        <>
          <div class="small muted">Your clients will reach this remote server through Warden's bridge; a sign-in, if it asks for one, opens your browser once for every client:</div>
          <pre class="cmd full" data-testid="consent-url">
            {printableLine(server.url)}
          </pre>
        </>
      )}
      {server && !server.url && (
        <>
          <div class="small muted">It will run, with your rights:</div>
          <pre class="cmd full" data-testid="consent-argv">
            {shellArgv(server.argv)}
          </pre>
          {props.warden && (
            <div class="small muted">
              through <code>{props.warden} bridge</code> unless you choose otherwise.
            </div>
          )}
        </>
      )}
      {vars.length > 0 && (
        <table class="small" data-testid="consent-env">
          <thead>
            <tr>
              <th scope="col">Variable</th>
              <th scope="col">Required</th>
              <th scope="col">Secret</th>
              <th scope="col">Default</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {vars.map((e) => (
              <tr key={e.name}>
                <td>
                  <code>{printableLine(e.name)}</code>
                  {e.description && <div class="muted">{printableLine(e.description)}</div>}
                </td>
                <td>{e.required ? "yes" : "no"}</td>
                <td>{e.secret ? "yes: OS keychain" : "no"}</td>
                <td>{printableLine(e.default ?? "")}</td>
                <td>{e.value === null ? <span class="muted">not set</span> : e.secret ? "••••••" : printableLine(e.value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {server && !plan && Object.keys(server.secrets).length > 0 && (
        <p class="small">Into the OS keychain: {Object.keys(server.secrets).join(", ")}</p>
      )}
      {p && p.risks.length > 0 && (
        <ul class="risks small" data-testid="consent-risks">
          {p.risks.map((r, i) => (
            <li key={i} data-kind={r.kind}>
              <span class={`tag risk-${r.kind}`}>{r.kind}</span> {printableLine(r.detail)}
            </li>
          ))}
        </ul>
      )}
      {p && p.warnings.length > 0 && (
        <ul class="small warn-text" data-testid="consent-warnings">
          {p.warnings.map((w, i) => (
            <li key={i}>{printableLine(w.message)}</li>
          ))}
        </ul>
      )}
      {asks.length > 0 && (
        <fieldset data-testid="consent-inputs">
          <legend>Values it asks for</legend>
          {asks.map((a) => (
            <label key={a.key} class="field">
              <code>{a.key}</code>
              {plan?.missing.includes(a) ? " (required)" : " (optional)"}
              {a.description && <span class="muted small"> {printableLine(a.description)}</span>}
              {a.choices.length > 0 ? (
                <select data-testid={`input-${a.key}`} value={props.inputs[a.key] ?? ""} onChange={(e) => props.onInputs({ ...props.inputs, [a.key]: e.currentTarget.value })}>
                  <option value="">choose…</option>
                  {a.choices.map((c) => (
                    <option key={c} value={c}>
                      {c}
                    </option>
                  ))}
                </select>
              ) : (
                <ValueInput
                  testid={`input-${a.key}`}
                  secret={a.secret}
                  placeholder={a.placeholder ?? ""}
                  value={props.inputs[a.key] ?? ""}
                  onValue={(v) => props.onInputs({ ...props.inputs, [a.key]: v })}
                />
              )}
            </label>
          ))}
          <button type="button" class="secondary" data-testid="apply-values" disabled={props.busy} onClick={props.onApply}>
            Use these values
          </button>
        </fieldset>
      )}
    </div>
  );
}

/** A value's field; a secret's is a password field (not shown, not remembered). */
function ValueInput(props: { testid: string; secret: boolean; placeholder: string; value: string; onValue: (v: string) => void }) {
  const common = {
    "data-testid": props.testid,
    autoComplete: "off",
    placeholder: props.placeholder,
    value: props.value,
    onInput: (e: { currentTarget: HTMLInputElement }) => props.onValue(e.currentTarget.value),
  };
  return props.secret ? <input type="password" {...common} /> : <input type="text" {...common} />;
}
