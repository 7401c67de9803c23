import { useMemo, useState } from "preact/hooks";
import type { FileChangeView, PlannedFile } from "../bindings/api";
import { byServer, changedSincePreview, detectedClients, type ManagedServer, type Place, switchRequest } from "../lib/manage";
import { printableLine } from "../lib/format";
import { ask } from "../lib/tauri";
import { useAction } from "../lib/useAction";
import { ON_CLIENTS, useApi } from "../lib/useApi";
import { AddServer } from "./AddServer";
import { ChangeList, ResultPanel, type Result, changeResult, errorResult } from "./Changes";
import { Dialog } from "./Dialog";
import { Empty, ErrorText, Loading } from "./common";
import { ProjectsSection } from "./ProjectsSection";

/** A removal's preview: what is shown, and the plan that applies exactly that. */
type Removal = { server: string; changes: FileChangeView[]; plan: PlannedFile[]; stale?: string | undefined };

/** Every server across the clients' files: where it is, on or off per client, Remove, Add; then the projects and their sets. */
export function ManagePage() {
  const clientsReport = useApi({ op: "clients" }, ON_CLIENTS);
  const { data: report, error } = clientsReport;
  const load = clientsReport.reload;
  const action = useAction();
  const [result, setResult] = useState<Result | null>(null);
  const [removal, setRemoval] = useState<Removal | null>(null);
  const [adding, setAdding] = useState(false);

  const servers = useMemo(() => (report ? byServer(report) : []), [report]);
  const clients = useMemo(() => (report ? detectedClients(report) : []), [report]);

  /** Runs `f`; what fails shows as a result titled `title`. */
  const run = (title: string, f: () => Promise<void>) => action.run(f, { onError: (message) => setResult(errorResult(title, message)) });

  const toggle = (server: string, p: Place) => {
    const title = `${p.enabled ? "Turn off" : "Turn on"} ${server} in ${p.clientName}`;
    void run(title, async () => {
      const r = await ask(switchRequest(server, p, !p.enabled));
      setResult(r.ok ? changeResult(title, r.value.changes) : errorResult(title, r.error.message));
      await load();
    });
  };

  /** Shows the preview of removing `server`; `stale`: why an earlier one was not applied. */
  const showRemoval = async (server: string, stale?: string) => {
    const r = await ask({ op: "server_remove", server, clients: [], plan: null, dry_run: true });
    if (r.ok) setRemoval({ server, changes: r.value.changes, plan: r.value.plan, stale });
    else {
      setRemoval(null);
      setResult(errorResult(`Remove ${server}`, r.error.message));
    }
  };

  const previewRemove = (server: string) => void run(`Remove ${server}`, () => showRemoval(server));

  const remove = () => {
    if (!removal) return;
    const title = `Remove ${removal.server}`;
    void run(title, async () => {
      // Exactly what the preview showed: refused (nothing written) if a file changed since.
      const r = await ask({ op: "server_remove", server: removal.server, clients: [], plan: removal.plan, dry_run: false });
      if (!r.ok && changedSincePreview(r.error.message)) {
        await showRemoval(removal.server, r.error.message);
        return;
      }
      setResult(r.ok ? changeResult(title, r.value.changes) : errorResult(title, r.error.message));
      setRemoval(null);
      await load();
    });
  };

  return (
    <section class="page" data-testid="manage-page">
      <div class="page-head">
        <h1>Servers across clients</h1>
        <button type="button" data-testid="add-server" disabled={!report} onClick={() => setAdding(true)}>
          Add a server…
        </button>
      </div>
      <p class="muted">
        Every MCP server in your clients' config files, by name, with a row per file and scope (a project's entry apart from
        the user-level one). A switch turns that one entry off without deleting it: with the client's own switch where it has
        one, else Warden keeps the entry aside and gives back its exact bytes when you turn it on. Every change is backed up
        first, a removed entry that was off included (Clients → Backups).
      </p>
      {error && <ErrorText message={error} testid="manage-error" />}
      {result && <ResultPanel result={result} onClose={() => setResult(null)} />}
      {!report && !error && <Loading what="the clients' servers" />}
      {report && servers.length === 0 && (
        <Empty title="No MCP servers yet">
          <p>
            None of the {clients.length} client{clients.length === 1 ? "" : "s"} Warden found has a server. Add one from the
            MCP Registry, a command or a server.json.
          </p>
        </Empty>
      )}
      {servers.length > 0 && (
        <div class="table-wrap">
          <table data-testid="managed-servers">
            <thead>
              <tr>
                <th scope="col">Server</th>
                <th scope="col">Client</th>
                <th scope="col">Through Warden</th>
                <th scope="col">On</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>{servers.map((s) => <ServerRows key={s.name} server={s} busy={action.busy} onToggle={toggle} onRemove={previewRemove} />)}</tbody>
          </table>
        </div>
      )}
      {report && <ProjectsSection clients={clients} onWritten={() => void load()} />}
      {removal && (
        <Dialog title={`Remove ${printableLine(removal.server)}`} onClose={() => setRemoval(null)} testid="remove-preview" wide>
          {removal.stale && <ErrorText message={removal.stale} testid="remove-stale" />}
          <p class="muted small">
            Nothing has been written yet. This removes the entry from every client below, exactly as shown: if a file changes
            before you confirm, nothing is written and you get a new preview to look at. Each file is backed up first (entries
            that were off too; Clients → Backups puts one back). Keychain items of its secrets stay until you delete them.
          </p>
          <ChangeList changes={removal.changes} />
          <div class="dialog-actions">
            <button type="button" class="secondary" data-testid="cancel" onClick={() => setRemoval(null)}>
              Cancel
            </button>
            <button type="button" class="danger" data-testid="confirm-remove" data-autofocus disabled={action.busy} onClick={remove}>
              Remove
            </button>
          </div>
        </Dialog>
      )}
      {adding && report && (
        <AddServer
          clients={clients}
          warden={report.warden}
          sandboxWorks={report.sandbox_works}
          onClose={() => setAdding(false)}
          onWritten={() => void load()}
        />
      )}
    </section>
  );
}

function ServerRows(props: {
  server: ManagedServer;
  busy: boolean;
  onToggle: (server: string, p: Place) => void;
  onRemove: (server: string) => void;
}) {
  const { server: s } = props;
  return (
    <>
      {s.places.map((p, i) => (
        <tr key={`${p.path}:${p.scope.join("/")}`} data-testid={`managed-${s.name}`} data-client={p.client}>
          {i === 0 && (
            <th scope="rowgroup" rowSpan={s.places.length}>
              {printableLine(s.name)}
            </th>
          )}
          <td>
            {p.clientName}
            {p.scope.length > 0 && <span class="muted small"> · {printableLine(p.scope[p.scope.length - 1] ?? "")}</span>}
            <div class="muted small">
              <code>{printableLine(p.path)}</code>
            </div>
          </td>
          <td>{p.skipped ? <span class="muted">not a local server</span> : p.wrapped ? "wrapped" : <span class="muted">no</span>}</td>
          <td>
            <label class="switch" title={p.enabled ? `On in ${p.clientName}` : `Off in ${p.clientName}`}>
              <input
                type="checkbox"
                role="switch"
                data-testid={`switch-${s.name}-${p.client}`}
                aria-label={`${s.name} in ${p.clientName}`}
                checked={p.enabled}
                disabled={props.busy || p.skipped}
                onChange={() => props.onToggle(s.name, p)}
              />
              <span>{p.enabled ? "on" : "off"}</span>
            </label>
          </td>
          {i === 0 && (
            <td rowSpan={s.places.length}>
              <button type="button" class="secondary" data-testid={`remove-${s.name}`} disabled={props.busy} onClick={() => props.onRemove(s.name)}>
                Remove…
              </button>
            </td>
          )}
        </tr>
      ))}
    </>
  );
}

