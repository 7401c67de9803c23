import { useState } from "preact/hooks";
import type { AwaitingServer, Backup, ClientFile, FileChangeView, Notice, NoticeKind, Request, RestoreView, RiskKind, ServerEntry } from "../bindings/api";
import { formatBytes, formatDateTime, printableLine, shellArgv } from "../lib/format";
import { fileState } from "../lib/clients";
import { ask, askApp } from "../lib/tauri";
import { ON_CLIENTS, useApi } from "../lib/useApi";
import { Dialog } from "./Dialog";
import { DiffView } from "./DiffView";
import { ChangeList, changeResult, errorResult, NoticeList, ResultPanel, type Result, skippedText } from "./Changes";
import { CommandLine, Empty, ErrorText, Loading } from "./common";

type Pending =
  | { kind: "edit"; title: string; wrap: boolean; file: string | null; server: string | null; moveSecrets: boolean; changes: FileChangeView[] }
  | { kind: "restore"; title: string; id: string; view: RestoreView };

export function ClientsPage() {
  const clients = useApi({ op: "clients" }, ON_CLIENTS);
  const backupList = useApi({ op: "backups" }, ON_CLIENTS);
  const report = clients.answer?.kind === "clients" ? clients.answer : null;
  const error = clients.answer?.kind === "error" ? clients.answer.message : null;
  const backups = backupList.answer?.kind === "backups" ? backupList.answer.backups : null;
  const backupsError = backupList.answer?.kind === "error" ? backupList.answer.message : null;
  const [pending, setPending] = useState<Pending | null>(null);
  const [result, setResult] = useState<Result | null>(null);
  const [busy, setBusy] = useState(false);
  const [switchError, setSwitchError] = useState<string | null>(null);

  const load = async () => {
    await Promise.all([clients.reload(), backupList.reload()]);
  };

  const preview = async (wrap: boolean, file: string | null, server: string | null, title: string, moveSecrets = false) => {
    setBusy(true);
    try {
      const r = await ask({ op: "client_edit", wrap, file, server, dry_run: true, move_secrets: moveSecrets });
      if (r.kind === "error") setResult(errorResult(title, r.message));
      else setPending({ kind: "edit", title, wrap, file, server, moveSecrets, changes: r.changes });
    } finally {
      setBusy(false);
    }
  };

  const previewRestore = async (b: Backup) => {
    setBusy(true);
    const title = `Restore ${b.original} from ${b.created}`;
    try {
      const r = await ask({ op: "restore", id: b.id, dry_run: true });
      if (r.kind === "error") setResult(errorResult(title, r.message));
      else setPending({ kind: "restore", title, id: b.id, view: r });
    } finally {
      setBusy(false);
    }
  };

  const apply = async () => {
    if (!pending) return;
    setBusy(true);
    try {
      if (pending.kind === "edit") {
        const r = await ask({
          op: "client_edit",
          wrap: pending.wrap,
          file: pending.file,
          server: pending.server,
          dry_run: false,
          move_secrets: pending.moveSecrets,
        });
        if (r.kind === "error") setResult(errorResult(pending.title, r.message));
        else setResult(changeResult(pending.title, r.changes, (c) => secretsLine(c, pending.wrap)));
      } else {
        const r = await ask({ op: "restore", id: pending.id, dry_run: false });
        if (r.kind === "error") setResult(errorResult(pending.title, r.message));
        else {
          const lines = [r.written ? `Restored ${r.backup.original}.` : "Nothing to restore: the file already has these contents."];
          if (r.previous) lines.push(`The contents it replaced were backed up as ${r.previous}.`);
          setResult({ title: pending.title, ok: true, lines, notices: [] });
        }
      }
      setPending(null);
      await load();
    } finally {
      setBusy(false);
    }
  };

  // The page's two switches.
  const setSwitch = async (req: Extract<Request, { op: "auto_rewrite" | "probe_ide" }>) => {
    const r = await ask(req);
    if (r.kind === "error") setSwitchError(r.message);
    else {
      setSwitchError(null);
      await load();
    }
  };
  const setAutoRewrite = (on: boolean, withoutAsking: boolean) =>
    setSwitch({ op: "auto_rewrite", on, without_asking: withoutAsking });
  const setProbeIde = (on: boolean) => setSwitch({ op: "probe_ide", on });

  const keepUnwrapped = async (a: AwaitingServer) => {
    const title = `Keep ${a.server.name} unwrapped`;
    const r = await ask({ op: "keep_unwrapped", file: a.path, server: a.server.name });
    if (r.kind === "error") return setResult(errorResult(title, r.message));
    setResult({
      title,
      ok: true,
      lines: [`${a.server.name} stays as it is in ${a.path}; Warden will not ask about it again. The Wrap button below still wraps it.`],
      notices: [],
    });
    await load();
  };

  const openFile = async (path: string) => {
    const r = await askApp({ op: "open", target: { kind: "client_file", path } });
    if (r.kind === "error") setResult(errorResult(`Open ${path}`, r.message));
  };

  const present = report?.files.filter((f) => f.exists) ?? [];
  const unwrappedIn = (f: ClientFile) => f.servers.filter((s) => s.state === "unwrapped");
  const unprotectedFiles = present.filter((f) => f.active && !f.error && unwrappedIn(f).length > 0);
  const unprotected = unprotectedFiles.flatMap(unwrappedIn).length;
  const absent = report?.files.filter((f) => !f.exists) ?? [];

  return (
    <section class="page">
      <h1>Clients</h1>
      <p class="muted">
        The MCP config files of your IDEs and agents. <em>Wrap</em> puts <code>warden bridge</code> in front of a stdio
        server (the original command moves behind <code>--</code>; nothing else in the file changes), <em>Unwrap</em>{" "}
        gives back the original entry. You see the exact change before anything is written, and every write is backed up.
      </p>
      {report && (
        <div class="switch-row">
          <label class="check">
            <input
              type="checkbox"
              role="switch"
              data-testid="auto-rewrite"
              checked={report.auto_rewrite}
              aria-checked={report.auto_rewrite}
              onChange={(e) => void setAutoRewrite(e.currentTarget.checked, false)}
            />
            Wrap new stdio servers automatically
          </label>
          {report.auto_rewrite && (
            <label class="check">
              <input
                type="checkbox"
                data-testid="without-asking"
                checked={report.without_asking}
                onChange={(e) => void setAutoRewrite(true, e.currentTarget.checked)}
              />
              without asking me first
            </label>
          )}
          <span class="muted small">
            {report.watching
              ? "Warden watches these files; a client that keeps undoing its edits is left alone."
              : "The file watcher is not running, so this switch has no effect until the app's supervisor runs."}
          </span>
          {report.probe_ide !== null && (
            <label class="check">
              <input
                type="checkbox"
                role="switch"
                data-testid="probe-ide"
                checked={report.probe_ide}
                aria-checked={report.probe_ide}
                onChange={(e) => void setProbeIde(e.currentTarget.checked)}
              />
              Check that each server starts (at start, after each change, and again while it fails)
            </label>
          )}
          {switchError && <ErrorText message={switchError} />}
        </div>
      )}
      {unprotectedFiles.length > 1 && (
        <p>
          <button type="button" data-testid="wrap-everything" disabled={busy} onClick={() => void preview(true, null, null, "Wrap every stdio server")}>
            Wrap all {unprotected} servers in every file…
          </button>
        </p>
      )}
      {report && !report.warden && (
        <p class="warn-text small" data-testid="no-warden-binary">
          The path of the <code>warden</code> binary is not known, so nothing can be wrapped: start the app from its
          installed location.
        </p>
      )}
      {result && <ResultPanel result={result} onClose={() => setResult(null)} />}
      {report && report.awaiting.length > 0 && (
        <AwaitingPanel
          awaiting={report.awaiting}
          busy={busy}
          onReview={(a) => void preview(true, a.path, a.server.name, `Wrap ${a.server.name}`)}
          onKeep={(a) => void keepUnwrapped(a)}
        />
      )}
      {error && <ErrorText message={error} testid="clients-error" />}
      {!report && !error && <Loading what="client configs" />}
      {report && present.length === 0 && (
        <Empty title="No client config files found">
          <p>
            Warden looks for the MCP configs of Claude Desktop, Claude Code, Cursor, VS Code, Cline, Windsurf, Zed, Gemini
            CLI, Codex, opencode, Kiro, LM Studio, Continue and Goose. Add an MCP server in one of them and it appears
            here.
          </p>
        </Empty>
      )}
      {present.map((f) => (
        <FileCard
          key={f.path}
          file={f}
          busy={busy}
          onEdit={(wrap, server, title) => void preview(wrap, f.path, server, title)}
          onOpen={() => void openFile(f.path)}
        />
      ))}
      {absent.length > 0 && (
        <details class="absent">
          <summary>{absent.length} other places Warden looks (not on this machine)</summary>
          <ul>
            {absent.map((f) => (
              <li key={f.path} data-testid="client-file-missing" data-path={f.path}>
                {f.client_name}: <code>{f.path}</code>
              </li>
            ))}
          </ul>
        </details>
      )}

      <h2>Backups</h2>
      <p class="muted small">Taken before every write of a client file (the last 10 per file).</p>
      {backupsError && <ErrorText message={backupsError} />}
      {backups === null && !backupsError && <Loading what="backups" />}
      {backups !== null && backups.length === 0 && <p class="muted">No backups yet: Warden has not changed any file.</p>}
      {backups !== null && backups.length > 0 && (
        <div class="table-wrap">
          <table data-testid="backups">
            <thead>
              <tr>
                <th scope="col">Taken</th>
                <th scope="col">File</th>
                <th scope="col" class="num">Size</th>
                <th scope="col"><span class="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {backups.map((b) => (
                <tr key={b.id} data-testid="backup-row" data-backup={b.id}>
                  <td>{formatDateTime(b.created_unix_ms)}</td>
                  <td>
                    <code>{b.original}</code>
                  </td>
                  <td class="num">{formatBytes(b.size)}</td>
                  <td>
                    <button type="button" class="secondary" data-testid={`restore-${b.id}`} disabled={busy} onClick={() => void previewRestore(b)}>
                      Restore…
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      {pending && (
        <PreviewDialog
          pending={pending}
          busy={busy}
          onApply={() => void apply()}
          onCancel={() => setPending(null)}
          onMoveSecrets={(on) => pending.kind === "edit" && void preview(pending.wrap, pending.file, pending.server, pending.title, on)}
        />
      )}
    </section>
  );
}

function secretsLine(c: FileChangeView, wrap: boolean): string {
  return wrap
    ? `Moved into the OS keychain (the file keeps a placeholder): ${c.secrets.join(", ")}. The backup taken before this change still holds them in plain text.`
    : `Written back from the OS keychain: ${c.secrets.join(", ")}.`;
}

const RISK_LABEL: Record<RiskKind, string> = {
  sudo: "runs as root",
  shell: "shell command line",
  unpinned: "unpinned package",
  runner_option: "runner option",
  loader_env: "loader variable",
  loader_env_by_document: "set by the document",
};

function Risks({ entry }: { entry: ServerEntry }) {
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
function AwaitingPanel(props: {
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

function FileCard(props: {
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

function EntryRow(props: { entry: ServerEntry; busy: boolean; file: string; onEdit: (wrap: boolean, server: string | null, title: string) => void }) {
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

function PreviewDialog(props: {
  pending: Pending;
  busy: boolean;
  onApply: () => void;
  onCancel: () => void;
  onMoveSecrets: (on: boolean) => void;
}) {
  const p = props.pending;
  const diffs = p.kind === "edit" ? p.changes.filter((c) => c.diff !== "") : p.view.diff !== "" ? [p.view] : [];
  const nothing = diffs.length === 0;
  return (
    <Dialog title={p.title} onClose={props.onCancel} testid="diff-preview" wide>
      <p class="muted small">Nothing has been written yet. This is the exact change:</p>
      {p.kind === "edit" && p.wrap && (
        <label class="check small">
          <input
            type="checkbox"
            data-testid="move-secrets"
            checked={p.moveSecrets}
            disabled={props.busy}
            onChange={(e) => props.onMoveSecrets(e.currentTarget.checked)}
          />
          Also move secrets (env values named like TOKEN, KEY, SECRET, PASSWORD…) into the OS keychain; the bridge puts
          them back into the server's environment, and Unwrap writes them back into the file.
        </label>
      )}
      {p.kind === "edit" && (
        <ChangeList changes={p.changes} secretsLabel={p.wrap ? "Into the OS keychain (service mcp-warden)" : "Back from the OS keychain"} />
      )}
      {p.kind === "restore" && (
        <section class="change">
          <h3 class="small">
            <code>{p.view.backup.original}</code>
          </h3>
          {p.view.diff !== "" && <DiffView diff={p.view.diff} testid="diff" />}
        </section>
      )}
      {nothing && <p data-testid="nothing-to-change">Nothing to change: the file already looks like this.</p>}
      <div class="dialog-actions">
        <button type="button" class="secondary" data-testid="cancel" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" data-testid="confirm-apply" data-autofocus disabled={props.busy || nothing} onClick={props.onApply}>
          Apply
        </button>
      </div>
    </Dialog>
  );
}
