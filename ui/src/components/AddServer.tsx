// The Add flow: find a server (the MCP Registry, a command, or a server.json), read what it
// will run (the consent screen), give its values and secrets, choose the clients, see each
// file's exact change, write, and see whether it starts.
import { useState } from "preact/hooks";
import type { ClientId, FileChangeView, ProbeReport, Risk } from "../bindings/api";
import type { Found, InputRequest, PlanView } from "../bindings/app";
import { bridgeArgv, entryNameProblem, planEnv, splitCommandLine } from "../lib/manage";
import { runnerPreset, writeSandboxFirst, type AddSandbox, type FirstStartState } from "../lib/sandbox";
import { ask, askRegistry } from "../lib/tauri";
import { AddSandboxChoices, FirstStartNetwork } from "./AddSandbox";
import { ChangeList, changeResult, ResultPanel, type Result } from "./Changes";
import { Dialog } from "./Dialog";
import { ErrorText, FailureCode } from "./common";
import { printableLine, shellArgv } from "../lib/format";

type Source = "registry" | "command" | "document";
type Step = "find" | "review" | "clients" | "changes" | "done";

/** What will be written, whatever the source. */
interface Server {
  name: string;
  argv: string[];
  env: Record<string, string>;
  secrets: Record<string, string>;
  plan: PlanView | null;
}

const STEPS: Array<[Step, string]> = [
  ["find", "Find"],
  ["review", "Review"],
  ["clients", "Clients"],
  ["changes", "Changes"],
  ["done", "Result"],
];

export function AddServer(props: {
  clients: Array<{ client: ClientId; name: string }>;
  warden: string | null;
  /** Whether bubblewrap works here: the sandbox is then offered, on, without network. */
  sandboxWorks: boolean;
  taken: Set<string>;
  onClose: () => void;
  onWritten: () => void;
}) {
  const [step, setStep] = useState<Step>("find");
  const [source, setSource] = useState<Source>("registry");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // Find
  const [term, setTerm] = useState("");
  const [found, setFound] = useState<Found[] | null>(null);
  const [commandLine, setCommandLine] = useState("");
  const [commandName, setCommandName] = useState("");
  const [envText, setEnvText] = useState("");
  const [secretText, setSecretText] = useState("");
  const [document, setDocument] = useState("");
  // Review
  const [plan, setPlan] = useState<PlanView | null>(null);
  const [origin, setOrigin] = useState<{ name: string; version: string | null } | null>(null);
  const [inputs, setInputs] = useState<Record<string, string>>({});
  const [asName, setAsName] = useState("");
  const [server, setServer] = useState<Server | null>(null);
  // Clients
  const [chosen, setChosen] = useState<Set<ClientId>>(() => new Set(props.clients.map((c) => c.client)));
  const [wrap, setWrap] = useState(true);
  const [sandbox, setSandbox] = useState<AddSandbox>({ on: props.sandboxWorks, firstStart: false, keep: false });
  const [askDestructive, setAskDestructive] = useState(true);
  // Changes and result
  const [changes, setChanges] = useState<{ changes: FileChangeView[]; risks: Risk[] } | null>(null);
  const [result, setResult] = useState<Result | null>(null);
  const [probe, setProbe] = useState<ProbeReport | "running" | null>(null);
  const [firstStart, setFirstStart] = useState<FirstStartState | null>(null);

  const task = async (f: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await f();
    } catch (e) {
      setError(String(e));
    } finally {
      setBusy(false);
    }
  };

  const search = () =>
    task(async () => {
      const r = await askRegistry({ op: "search", term });
      if (r.kind === "error") setError(r.message);
      else setFound(r.servers);
    });

  /** Plans again with the values given so far; the view says what is still missing. */
  const replan = (over: { name?: string; version?: string | null; values?: Record<string, string>; entry?: string }) =>
    task(async () => {
      const values = over.values ?? inputs;
      const entry = (over.entry ?? asName).trim() || null;
      const target = over.name ? { name: over.name, version: over.version ?? null } : origin;
      const request =
        source === "document"
          ? ({ op: "document", document, inputs: values, as_name: entry } as const)
          : target
            ? ({ op: "plan", name: target.name, version: target.version, inputs: values, as_name: entry } as const)
            : null;
      if (!request) return;
      const r = await askRegistry(request);
      if (r.kind === "error") return setError(r.message);
      setPlan(r);
      if (over.name) setOrigin(target);
      // A new choice names the entry afresh; planning again keeps the name typed.
      if (over.name !== undefined || over.entry === "" || asName === "") setAsName(r.entry_name);
      setStep("review");
    });

  const fromCommand = () => {
    const split = splitCommandLine(commandLine);
    if ("error" in split) return setError(split.error);
    const env = keyValues(envText);
    const secrets = keyValues(secretText);
    if (typeof env === "string") return setError(`Environment: ${env}`);
    if (typeof secrets === "string") return setError(`Secrets: ${secrets}`);
    const name = commandName.trim() || guessName(split.argv);
    setError(null);
    setPlan(null);
    setAsName(name);
    setServer({ name, argv: split.argv, env, secrets, plan: null });
    setStep("review");
  };

  /** The review's server: the plan's, or the command's with the name as edited. */
  const reviewed = (): Server | null => {
    if (plan) {
      if (!plan.plan) return null;
      const { env, secrets } = planEnv(plan.plan);
      return { name: asName.trim() || plan.entry_name, argv: [plan.plan.command, ...plan.plan.args], env, secrets, plan };
    }
    return server ? { ...server, name: asName.trim() || server.name } : null;
  };

  const toClients = () => {
    const s = reviewed();
    if (!s) return;
    const problem = entryNameProblem(s.name) ?? (props.taken.has(s.name) ? `A server named ${s.name} exists already: choose another name.` : null);
    if (problem) return setError(problem);
    setServer(s);
    setError(null);
    setStep("clients");
  };

  const add = (dryRun: boolean) => {
    const s = server;
    if (!s) return null;
    const [command, ...args] = s.argv;
    return ask({
      op: "server_add",
      name: s.name,
      clients: [...chosen],
      command: command ?? "",
      args,
      env: s.env,
      secrets: dryRun ? Object.fromEntries(Object.keys(s.secrets).map((k) => [k, ""])) : s.secrets,
      wrap,
      dry_run: dryRun,
    });
  };

  const preview = () =>
    task(async () => {
      const r = await add(true);
      if (!r) return;
      if (r.kind === "error") return setError(r.message);
      setChanges({ changes: r.changes, risks: r.risks });
      setStep("changes");
    });

  const write = () =>
    task(async () => {
      const s = server;
      if (!s) return;
      const failed = await writeSandboxFirst(wrap && props.sandboxWorks && sandbox.on ? sandbox : null, {
        // 1. The sandbox's keys in config.toml, before any client's file.
        setKey: async (key, value) => {
          const r = await ask({ op: "set_limit", server: s.name, key, value });
          return r.kind === "error" ? r.message : null;
        },
        // 2. The clients' files.
        writeFiles: async () => {
          const r = await add(false);
          if (!r) return { start: false };
          if (r.kind === "error") return { error: r.message };
          const written = changeResult(`Added ${s.name}`, r.changes, (c) => `Into the OS keychain (service mcp-warden): ${c.secrets.join(", ")}.`);
          setResult(written);
          setStep("done");
          props.onWritten();
          return { start: written.ok };
        },
        // 3. Probe what the clients will run: through the bridge (which reads the sandbox's
        // keys and the keychain, and pins the tools on first sight), with the entry's environment.
        firstStart: async () => {
          setProbe("running");
          const argv = wrap && props.warden ? bridgeArgv(props.warden, s.name, Object.keys(s.secrets), s.argv) : s.argv;
          const p = await ask({ op: "probe", server: s.name, command: argv, env: s.env, timeout_ms: 120_000 });
          if (p.kind === "error") {
            setProbe(null);
            return `The probe could not run: ${p.message}`;
          }
          setProbe(p);
          return null;
        },
        // 4. Then the network allowed for the first start only is taken away.
        onNetwork: setFirstStart,
      }, runnerPreset(s.argv), wrap && askDestructive);
      if (failed !== null) setError(failed);
    });

  const s = step === "review" ? reviewed() : server;
  return (
    <Dialog title="Add a server" onClose={props.onClose} testid="add-server-dialog" wide>
      <ol class="stepper small" aria-label="Steps">
        {STEPS.map(([id, label]) => (
          <li key={id} aria-current={id === step ? "step" : undefined} data-step={id}>
            {label}
          </li>
        ))}
      </ol>
      {error && <ErrorText message={error} testid="add-error" />}

      {step === "find" && (
        <>
          <div class="tabs" role="tablist">
            {(["registry", "command", "document"] as const).map((k) => (
              <button
                key={k}
                type="button"
                role="tab"
                class={source === k ? "" : "secondary"}
                aria-selected={source === k}
                data-testid={`source-${k}`}
                onClick={() => setSource(k)}
              >
                {k === "registry" ? "MCP Registry" : k === "command" ? "Command" : "server.json"}
              </button>
            ))}
          </div>
          {source === "registry" && (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void search();
              }}
            >
              <label class="field">
                Search the official MCP Registry
                <input data-testid="registry-term" data-autofocus value={term} placeholder="e.g. playwright" onInput={(e) => setTerm(e.currentTarget.value)} />
              </label>
              <button type="submit" data-testid="registry-search" disabled={busy}>
                {busy ? "Searching…" : "Search"}
              </button>
              {found && found.length === 0 && <p class="muted">No server matches.</p>}
              {found && found.length > 0 && (
                <ul class="found-list" data-testid="registry-results">
                  {found.map((f) => (
                    <li key={f.name} data-testid={`found-${f.name}`}>
                      <div>
                        <strong>{printableLine(f.title ?? f.name)}</strong> <span class="muted small">{printableLine(f.version ?? "")}</span>
                        {f.kinds.map((k) => (
                          <span key={k} class="tag">
                            {k}
                          </span>
                        ))}
                        {f.deprecated && <span class="tag bad">deprecated</span>}
                        <div class="small muted">{printableLine(f.name)}</div>
                        {f.description && <div class="small">{printableLine(f.description)}</div>}
                      </div>
                      <button type="button" class="secondary" data-testid={`choose-${f.name}`} disabled={busy} onClick={() => void replan({ name: f.name, version: null, values: {}, entry: "" })}>
                        Choose
                      </button>
                    </li>
                  ))}
                </ul>
              )}
            </form>
          )}
          {source === "command" && (
            <div>
              <label class="field">
                Command (run without a shell)
                <input data-testid="command-line" value={commandLine} placeholder="npx -y @modelcontextprotocol/server-everything@2025.9.25" onInput={(e) => setCommandLine(e.currentTarget.value)} />
              </label>
              <label class="field">
                Name
                <input data-testid="command-name" value={commandName} placeholder="everything" onInput={(e) => setCommandName(e.currentTarget.value)} />
              </label>
              <label class="field">
                Environment, one KEY=VALUE a line (written into the files)
                <textarea data-testid="command-env" rows={2} value={envText} onInput={(e) => setEnvText(e.currentTarget.value)} />
              </label>
              <label class="field">
                Secrets, one KEY=VALUE a line (into the OS keychain, never a file)
                <textarea data-testid="command-secrets" rows={2} value={secretText} onInput={(e) => setSecretText(e.currentTarget.value)} />
              </label>
              <button type="button" data-testid="command-next" onClick={fromCommand}>
                Next
              </button>
            </div>
          )}
          {source === "document" && (
            <div>
              <label class="field">
                Paste a server.json (the MCP Registry's format)
                <textarea data-testid="document" rows={10} value={document} onInput={(e) => setDocument(e.currentTarget.value)} />
              </label>
              <button type="button" data-testid="document-next" disabled={busy || document.trim() === ""} onClick={() => void replan({ values: {}, entry: "" })}>
                Next
              </button>
            </div>
          )}
        </>
      )}

      {step === "review" && (
        <Review
          plan={plan}
          server={s}
          warden={props.warden}
          asName={asName}
          inputs={inputs}
          busy={busy}
          onName={setAsName}
          onInputs={setInputs}
          onApply={() => void replan({ values: inputs, entry: asName })}
          onVersion={(v) => origin && void replan({ name: origin.name, version: v })}
        />
      )}

      {step === "clients" && (
        <fieldset class="clients-choice" data-testid="choose-clients">
          <legend>Add {server?.name} to</legend>
          {props.clients.length === 0 && <p class="muted">Warden found no client on this computer.</p>}
          {props.clients.map((c) => (
            <label key={c.client} class="check">
              <input
                type="checkbox"
                data-testid={`client-${c.client}`}
                checked={chosen.has(c.client)}
                onChange={(e) => {
                  const next = new Set(chosen);
                  if (e.currentTarget.checked) next.add(c.client);
                  else next.delete(c.client);
                  setChosen(next);
                }}
              />
              {c.name}
            </label>
          ))}
          <label class="check">
            <input type="checkbox" data-testid="wrap" checked={wrap} onChange={(e) => setWrap(e.currentTarget.checked)} />
            Run it through Warden's bridge (timeouts, restarts, logs; needed for secrets in the keychain)
          </label>
          <AddSandboxChoices works={props.sandboxWorks} wrap={wrap} preset={server ? runnerPreset(server.argv) : null} value={sandbox} onChange={setSandbox} />
          <label class="check">
            <input type="checkbox" data-testid="add-ask-destructive" checked={wrap && askDestructive} disabled={!wrap} onChange={(e) => setAskDestructive(e.currentTarget.checked)} />
            Ask me before it runs a tool that may change or delete things (<code>tools_ask = ["@destructive"]</code>: in the client's prompt where it
            has one, else on top of Warden's window and with <code>warden approvals</code>)
          </label>
        </fieldset>
      )}

      {step === "changes" && changes && (
        <>
          <p class="muted small">Nothing has been written yet. These are the exact changes, one file each; each file is backed up first.</p>
          {changes.risks.length > 0 && (
            <ul class="risks small" data-testid="add-risks">
              {changes.risks.map((r, i) => (
                <li key={i} data-kind={r.kind}>
                  <span class={`tag risk-${r.kind}`}>{r.kind}</span> {printableLine(r.detail)}
                </li>
              ))}
            </ul>
          )}
          <ChangeList changes={changes.changes} secretsLabel="Into the OS keychain (service mcp-warden)" />
        </>
      )}

      {step === "done" && (
        <>
          {result && <ResultPanel result={result} onClose={() => setResult(null)} />}
          <ProbeResult probe={probe} />
        </>
      )}

      <FirstStartNetwork state={firstStart} />

      <div class="dialog-actions">
        <button type="button" class="secondary" data-testid="add-close" onClick={props.onClose}>
          {step === "done" ? "Close" : "Cancel"}
        </button>
        {step === "review" && (
          <button type="button" data-testid="review-next" disabled={busy || !s} onClick={toClients}>
            I agree: choose clients
          </button>
        )}
        {step === "clients" && (
          <button type="button" data-testid="clients-next" disabled={busy || chosen.size === 0} onClick={() => void preview()}>
            Show the changes
          </button>
        )}
        {step === "changes" && (
          <button type="button" data-testid="add-write" data-autofocus disabled={busy || !changes || changes.changes.some((c) => c.error)} onClick={() => void write()}>
            Write
          </button>
        )}
      </div>
    </Dialog>
  );
}

/** The consent screen: what will run, who published it, every variable, what to give. */
function Review(props: {
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
      {server && (
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
      {p && p.env.length > 0 && (
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
            {p.env.map((e) => (
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

function ProbeResult({ probe }: { probe: ProbeReport | "running" | null }) {
  if (probe === null) return null;
  if (probe === "running")
    return (
      <p class="muted" role="status" data-testid="add-probe" data-state="running">
        Starting it once to check (a package runner may download it first)…
      </p>
    );
  return (
    <div class={`outcome ${probe.ok ? "ok" : "bad"}`} data-testid="add-probe" data-state={probe.ok ? "ok" : "failed"}>
      {probe.ok ? (
        <>
          <strong>It starts:</strong> answered in {probe.cold_start_ms ?? "?"} ms with {probe.tools ?? 0} tools
          {probe.tool_names.length > 0 && <span class="muted"> ({probe.tool_names.slice(0, 8).join(", ")}{probe.tool_names.length > 8 ? ", …" : ""})</span>}; their
          definitions are pinned.
        </>
      ) : (
        <>
          <strong>It does not start yet</strong> {probe.code && <FailureCode code={probe.code} />}: {probe.error}. The entry stays; fix what the
          message says (a missing key, say), then probe it again from its page.
        </>
      )}
    </div>
  );
}

/** `KEY=VALUE` lines to a map; a line without `=` is an error that names it. */
function keyValues(text: string): Record<string, string> | string {
  const out: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    const at = line.indexOf("=");
    if (at <= 0) return `"${line}" is not KEY=VALUE.`;
    out[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return out;
}

/** A name from the command: the package's last path part, without its version. */
function guessName(argv: string[]): string {
  const last = [...argv].reverse().find((a) => !a.startsWith("-")) ?? argv[0] ?? "server";
  const base = last.split("/").pop() ?? last;
  return base.replace(/(@|==)[^@=]*$/, "").replace(/[^A-Za-z0-9._-]/g, "-") || "server";
}
