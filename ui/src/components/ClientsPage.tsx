import { useState } from "preact/hooks";
import type { AwaitingServer, Backup, ClientFile, Request } from "../bindings/api";
import { formatBytes, formatDateTime } from "../lib/format";
import { ask, askApp } from "../lib/tauri";
import { unwrap, useAction } from "../lib/useAction";
import { ON_CLIENTS, useApi } from "../lib/useApi";
import { AwaitingPanel, FileCard } from "./ClientFiles";
import { type Pending, PreviewDialog, secretsLine } from "./ClientsPreview";
import { changeResult, errorResult, ResultPanel, type Result } from "./Changes";
import { Empty, ErrorText, Loading } from "./common";

export function ClientsPage() {
  const clients = useApi({ op: "clients" }, ON_CLIENTS);
  const backupList = useApi({ op: "backups" }, ON_CLIENTS);
  const { data: report, error } = clients;
  const backups = backupList.data?.backups ?? null;
  const backupsError = backupList.error;
  const [pending, setPending] = useState<Pending | null>(null);
  const [result, setResult] = useState<Result | null>(null);
  // The previews and writes (their failures go to the result panel), and the page's two switches.
  const action = useAction();
  const switches = useAction();

  const load = async () => {
    await Promise.all([clients.reload(), backupList.reload()]);
  };

  /** Runs `f`; what fails shows as a result titled `title`. */
  const act = (title: string, f: () => Promise<unknown>) => action.run(f, { onError: (message) => setResult(errorResult(title, message)) });

  const preview = (wrap: boolean, file: string | null, server: string | null, title: string, moveSecrets = false) =>
    act(title, async () => {
      const r = unwrap(await ask({ op: "client_edit", wrap, file, server, dry_run: true, move_secrets: moveSecrets }));
      setPending({ kind: "edit", title, wrap, file, server, moveSecrets, changes: r.changes });
    });

  const previewRestore = (b: Backup) => {
    const title = `Restore ${b.original} from ${b.created}`;
    return act(title, async () => {
      const view = unwrap(await ask({ op: "restore", id: b.id, dry_run: true }));
      setPending({ kind: "restore", title, id: b.id, view });
    });
  };

  const apply = async () => {
    if (!pending) return;
    await action.run(async () => {
      if (pending.kind === "edit") {
        const r = await ask({
          op: "client_edit",
          wrap: pending.wrap,
          file: pending.file,
          server: pending.server,
          dry_run: false,
          move_secrets: pending.moveSecrets,
        });
        setResult(r.ok ? changeResult(pending.title, r.value.changes, (c) => secretsLine(c, pending.wrap)) : errorResult(pending.title, r.error.message));
      } else {
        const r = await ask({ op: "restore", id: pending.id, dry_run: false });
        if (r.ok) {
          const lines = [r.value.written ? `Restored ${r.value.backup.original}.` : "Nothing to restore: the file already has these contents."];
          if (r.value.previous) lines.push(`The contents it replaced were backed up as ${r.value.previous}.`);
          setResult({ title: pending.title, ok: true, lines, notices: [] });
        } else setResult(errorResult(pending.title, r.error.message));
      }
      setPending(null);
      await load();
    });
  };

  // The page's two switches.
  const setSwitch = (req: Extract<Request, { op: "auto_rewrite" | "probe_ide" }>) =>
    switches.run(async () => {
      unwrap(await ask(req));
      await load();
    });
  const setAutoRewrite = (on: boolean, withoutAsking: boolean) =>
    setSwitch({ op: "auto_rewrite", on, without_asking: withoutAsking });
  const setProbeIde = (on: boolean) => setSwitch({ op: "probe_ide", on });

  const keepUnwrapped = async (a: AwaitingServer) => {
    const title = `Keep ${a.server.name} unwrapped`;
    const r = await ask({ op: "keep_unwrapped", file: a.path, server: a.server.name });
    if (!r.ok) return setResult(errorResult(title, r.error.message));
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
    if (!r.ok) setResult(errorResult(`Open ${path}`, r.error.message));
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
          {switches.error && <ErrorText message={switches.error} />}
        </div>
      )}
      {unprotectedFiles.length > 1 && (
        <p>
          <button type="button" data-testid="wrap-everything" disabled={action.busy} onClick={() => void preview(true, null, null, "Wrap every stdio server")}>
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
          busy={action.busy}
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
          busy={action.busy}
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
                    <button type="button" class="secondary" data-testid={`restore-${b.id}`} disabled={action.busy} onClick={() => void previewRestore(b)}>
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
          busy={action.busy}
          onApply={() => void apply()}
          onCancel={() => setPending(null)}
          onMoveSecrets={(on) => pending.kind === "edit" && void preview(pending.wrap, pending.file, pending.server, pending.title, on)}
        />
      )}
    </section>
  );
}
