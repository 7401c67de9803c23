// The Clients page's cards: one per client config file with its servers and what deserves a
// look in each command, and the new servers auto-rewrite found.
import type { AwaitingServer, ClientFile, RiskKind, ServerEntry } from "../bindings/api";
import { printableLine, shellArgv } from "../lib/format";
import { fileState } from "../lib/clients";
import { NoticeList } from "./Changes";
import { CommandLine, ErrorText } from "./common";

const RISK_LABEL: Record<RiskKind, string> = {
  sudo: "runs as root",
  shell: "shell command line",
  unpinned: "unpinned package",
  runner_option: "runner option",
  loader_env: "loader variable",
  loader_env_by_document: "set by the document",
};

export function Risks({ entry }: { entry: ServerEntry }) {
  if (entry.risks.length === 0) return null;
  return (
    <ul class="risks small" data-testid="risks">
      {entry.risks.map((r, i) => (
        <li key={i} data-kind={r.kind}>
          <span class={`tag risk-${r.kind}`}>{RISK_LABEL[r.kind]}</span> {printableLine(r.detail)}
        </li>
      ))}
    </ul>
  );
}

/** New servers auto-rewrite found: each exact command, what deserves a look, and the choice. */
export function AwaitingPanel(props: {
  awaiting: AwaitingServer[];
  busy: boolean;
  onReview: (a: AwaitingServer) => void;
  onKeep: (a: AwaitingServer) => void;
}) {
  return (
    <section class="card awaiting" data-testid="awaiting" aria-labelledby="awaiting-title">
      <h2 id="awaiting-title">
        {props.awaiting.length === 1 ? "1 server awaits" : `${props.awaiting.length} servers await`} your approval
      </h2>
      <p class="muted small">
        Wrapping a server puts Warden in front of it; it does not vet what the server does. Read each command as it will
        run, with your rights, before you approve it.
      </p>
      <ul class="awaiting-list">
        {props.awaiting.map((a) => {
          const s = a.server;
          if (s.state !== "unwrapped") return null;
          return (
            <li key={`${a.path}:${s.scope.join("/")}:${s.name}`} data-testid={`awaiting-${s.name}`}>
              <div class="awaiting-head">
                <strong>{s.name}</strong>
                <span class="muted small">
                  {" "}
                  in {a.client_name} · <code>{a.path}</code>
                </span>
              </div>
              <pre class="cmd full" data-testid="awaiting-command">
                {shellArgv([s.command, ...s.args])}
              </pre>
              {s.env_keys.length > 0 && <div class="small muted">env: {s.env_keys.join(", ")}</div>}
              <Risks entry={s} />
              <div class="card-actions">
                <button type="button" data-testid={`approve-${s.name}`} disabled={props.busy} onClick={() => props.onReview(a)}>
                  Review and wrap…
                </button>
                <button type="button" class="secondary" data-testid={`keep-${s.name}`} disabled={props.busy} onClick={() => props.onKeep(a)}>
                  Keep unwrapped
                </button>
              </div>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

export function FileCard(props: {
  file: ClientFile;
  busy: boolean;
  onEdit: (wrap: boolean, server: string | null, title: string) => void;
  onOpen: () => void;
}) {
  const f = props.file;
  const unwrapped = f.servers.filter((s) => s.state === "unwrapped");
  const wrapped = f.servers.filter((s) => s.state === "wrapped");
  const needs = f.notices.filter((n) => n.kind !== "note");
  const state = fileState(f);
  return (
    <article class="card client-file" data-testid="client-file" data-path={f.path} data-client={f.client}>
      <header class="card-head">
        <div>
          <h3>
            {f.client_name}
            {f.project && <span class="muted small"> · project {f.project}</span>}
          </h3>
          <div class="small">
            <code>{f.path}</code> <span class="tag">{f.format}</span>
            <span class={`tag file-state ${state.kind}`} data-testid="file-state" data-state={state.kind} title={state.detail}>
              {state.label}
            </span>
            {!f.active && <span class="tag bad" title="The client does not read this file">not read by the client</span>}
            {f.given_up && (
              <span class="tag bad" data-testid="given-up" title="The client kept reverting Warden's edits">
                left alone: the client kept undoing Warden's edits
              </span>
            )}
          </div>
        </div>
        <div class="card-actions">
          {unwrapped.length > 0 && (
            <button type="button" data-testid="wrap-all" disabled={props.busy} onClick={() => props.onEdit(true, null, `Wrap all servers of ${f.path}`)}>
              {state.kind === "changed" ? "Re-apply" : "Wrap all"}
            </button>
          )}
          {wrapped.length > 0 && (
            <button type="button" class="secondary" data-testid="unwrap-all" disabled={props.busy} onClick={() => props.onEdit(false, null, `Unwrap all servers of ${f.path}`)}>
              Unwrap all
            </button>
          )}
          <button type="button" class="link" onClick={props.onOpen}>
            Open file
          </button>
        </div>
      </header>
      {f.error && <ErrorText message={`Warden cannot read this file, so it leaves it alone: ${f.error}`} testid="client-file-error" />}
      {needs.length > 0 && (
        <div class="needs small" data-testid="client-notices">
          After a change: <NoticeList notices={f.notices} />
        </div>
      )}
      {f.servers.length === 0 && !f.error ? (
        <p class="muted small">No MCP servers in this file.</p>
      ) : (
        <table class="entries">
          <tbody>
            {f.servers.map((s) => (
              <EntryRow key={`${s.scope.join("/")}:${s.name}`} entry={s} busy={props.busy} file={f.path} onEdit={props.onEdit} />
            ))}
          </tbody>
        </table>
      )}
    </article>
  );
}

export function EntryRow(props: { entry: ServerEntry; busy: boolean; file: string; onEdit: (wrap: boolean, server: string | null, title: string) => void }) {
  const s = props.entry;
  const scope = s.scope.length > 0 ? s.scope[s.scope.length - 1] : null;
  return (
    <tr data-testid={`client-server-${s.name}`} data-state={s.reverted ? "reverted" : s.state}>
      <th scope="row">
        {printableLine(s.name)}
        {scope && <div class="small muted">in {printableLine(scope)}</div>}
      </th>
      <td>
        <span class={`badge entry-${s.reverted ? "reverted" : s.state}`} title={s.reverted ? "Warden had wrapped it; the client put the original command back" : undefined}>
          {s.reverted ? "reverted" : s.state}
        </span>
      </td>
      <td class="entry-cmd">
        {s.state === "skipped" ? (
          <span class="muted">{printableLine(s.reason)}</span>
        ) : (
          <CommandLine command={[s.command, ...s.args]} />
        )}
        {s.state === "wrapped" && (
          <div class="small muted">
            through <code>{s.bridge}</code> bridge{s.server && s.server !== s.name ? ` --server ${s.server}` : ""}
          </div>
        )}
        {s.env_keys.length > 0 && <div class="small muted">env: {s.env_keys.join(", ")}</div>}
        <Risks entry={s} />
      </td>
      <td class="entry-action">
        {s.state === "unwrapped" && (
          <button type="button" data-testid={`wrap-${s.name}`} disabled={props.busy} onClick={() => props.onEdit(true, s.name, `Wrap ${s.name}`)}>
            Wrap
          </button>
        )}
        {s.state === "wrapped" && (
          <button type="button" class="secondary" data-testid={`unwrap-${s.name}`} disabled={props.busy} onClick={() => props.onEdit(false, s.name, `Unwrap ${s.name}`)}>
            Unwrap
          </button>
        )}
      </td>
    </tr>
  );
}
