import { useState } from "preact/hooks";
import type { HistoryEntry, JsonValue, LimitsReport } from "../bindings/api";
import { formatClock, printableLine } from "../lib/format";
import { blocked, expandHome, grantable, hostEntry, insideGrant, readOnlyNames, sandboxPlaces, sandboxSettings, type SandboxPlaces } from "../lib/sandbox";
import { ask } from "../lib/tauri";
import { unwrap, useAction } from "../lib/useAction";
import { ErrorText } from "./common";

/**
 * The server's sandbox (Linux, docs/sandbox.md): the switch, the folders it may write, what
 * it may not read, its network; what it was refused lately, each with the grant that allows
 * it (only a folder that is safe to grant: `grantable`); what stays read-only inside each
 * grant (what other programs run later), as the supervisor found it. Every change is one
 * `SetLimit`: config.toml is edited at once, and the server gets it at its next start.
 */
export function SandboxSection(props: {
  server: string;
  report: LimitsReport;
  mode: string | undefined;
  timeline: HistoryEntry[];
  onSaved: () => void;
}) {
  const s = sandboxSettings(props.report);
  const places = sandboxPlaces(props.report);
  const names = readOnlyNames(props.report);
  const [folder, setFolder] = useState("");
  const action = useAction();
  const busy = action.busy;

  /** One `SetLimit`: a value, or (`list`) items added to or taken out of the list config.toml
   * holds then, so that a grant made meanwhile elsewhere is kept. */
  const set = (key: string, value: JsonValue, list?: { add?: string[]; remove?: string[] }) =>
    action.run(async () => {
      unwrap(await ask({ op: "set_limit", server: props.server, key, value: list ? null : value, ...list }));
      props.onSaved();
    });
  const grant = (path: string) => {
    if (path === "" || s.write.includes(path)) return;
    void set("sandbox_write", null, { add: [path] });
  };
  /** A folder typed in: granted as typed (`~/…` stays), if what it names may be granted. */
  const grantTyped = (typed: string) => {
    const p = typed.trim();
    const g = grantable(expandHome(p, places.home), places);
    if (!g.ok) return action.setError(`${printableLine(p)} is not granted: ${g.why}.`);
    grant(p);
    setFolder("");
  };
  const landlock = props.mode === "landlock";
  // A grant written `~/…` covers the refusals of what it names.
  const refused = s.on ? blocked(props.timeline, { ...s, write: s.write.map((w) => expandHome(w, places.home)) }) : [];

  return (
    <section class="card sandbox" data-testid="sandbox" aria-labelledby="sandbox-title">
      <div class="card-head">
        <h2 id="sandbox-title">Sandbox</h2>
        <label class="switch">
          <input
            type="checkbox"
            role="switch"
            data-testid="sandbox-switch"
            checked={s.on}
            disabled={busy}
            onChange={(e) => void set("sandbox", e.currentTarget.checked ? "on" : "off")}
          />
          <span>{s.on ? "on" : "off"}</span>
        </label>
      </div>
      <p class="muted small">
        {s.on
          ? `It cannot read the hidden paths below; everything else it can read but not change, except the folders it may write, its package cache and ${landlock ? "/tmp" : "a private /tmp"}. ${
              s.hosts
                ? s.hosts.length === 0
                  ? "Network: none; every attempt goes to Warden's proxy, which refuses it and says so below."
                  : `Network: only through Warden's proxy, to ${s.hosts.map(printableLine).join(", ")} (a name without a port: 80 and 443). UDP and DNS of its own do not get out.`
                : !s.network
                ? landlock
                  ? "Network: none for TCP (Linux 6.7+); Landlock cannot cut UDP or DNS."
                  : "Network: none at all, not even this machine's services."
                : "Network: the host's; it may connect anywhere, and so send anywhere what it can read."
            }`
          : "Off: it runs with your rights. On Linux, turn it on to hide the paths listed below from it, make everything else read-only to it but the folders you grant, and cut its network."}{" "}
        {props.mode && props.mode !== "off" && <span data-testid="sandbox-mode">Running now: {props.mode}.</span>} Changes apply from its next start.
      </p>
      {action.error && <ErrorText message={action.error} testid="sandbox-error" />}
      {refused.length > 0 && (
        <ul class="sandbox-blocked" data-testid="sandbox-blocked">
          {refused.map((b) =>
            b.kind === "network" ? (
              <li key="network">
                <span class="muted small">{formatClock(b.ts_ms)}</span> It tried to reach the network.{" "}
                <button type="button" data-testid="allow-network" disabled={busy} onClick={() => void set("sandbox_network", "host")}>
                  Allow network
                </button>{" "}
                <span class="muted small">(from its next start, to anywhere)</span>
              </li>
            ) : b.kind === "host" ? (
              <li key={`host:${b.entry}`} data-testid="sandbox-host-denied">
                <span class="muted small">{formatClock(b.ts_ms)}</span> Its proxy refused <code>{printableLine(hostEntry(b.host, b.port))}</code>.{" "}
                <button type="button" data-testid="allow-host" disabled={busy} onClick={() => void set("sandbox_network", null, { add: [b.entry] })}>
                  Allow {printableLine(b.entry)}
                </button>{" "}
                <span class="muted small">(from its next start)</span>
              </li>
            ) : (
              <li key={b.path}>
                <span class="muted small">{formatClock(b.ts_ms)}</span> It was refused <code>{printableLine(b.path)}</code>. <FolderGrant folder={b.folder} places={places} busy={busy} onGrant={grant} />
              </li>
            ),
          )}
        </ul>
      )}
      <div class="sandbox-grid">
        <div>
          <h3 class="small">May write</h3>
          <ul class="paths" data-testid="sandbox-write">
            {s.write.length === 0 && <li class="muted small">no folder of yours</li>}
            {s.write.map((p) => {
              const inside = insideGrant(props.report, p, places.home);
              return (
                <li key={p} data-testid="sandbox-grant" data-grant={p}>
                  <code>{printableLine(p)}</code>{" "}
                  <button type="button" class="link" disabled={busy} onClick={() => void set("sandbox_write", null, { remove: [p] })}>
                    remove
                  </button>
                  {inside?.git && (
                    <div class="grant-note warn-text small" data-testid="grant-git">
                      {printableLine(p)} is a git work tree: its .git config, hooks and info stay read-only; the server can still commit.
                    </div>
                  )}
                  {inside && inside.readOnly.length > 0 && (
                    <div class="grant-note muted small" data-testid="grant-read-only">
                      Read-only in it: <Names names={inside.readOnly} />
                    </div>
                  )}
                </li>
              );
            })}
          </ul>
          <form
            class="inline-form"
            onSubmit={(e) => {
              e.preventDefault();
              grantTyped(folder);
            }}
          >
            <input data-testid="sandbox-add-folder" placeholder="~/projects/notes" value={folder} onInput={(e) => setFolder(e.currentTarget.value)} />
            <button type="submit" class="secondary" disabled={busy || folder.trim() === ""}>
              Add folder
            </button>
          </form>
          {names.length > 0 && (
            <p class="muted small" data-testid="sandbox-read-only-names">
              Inside each, these stay read-only: <Names names={names} /> (other programs run what they hold).
            </p>
          )}
        </div>
        <div>
          <h3 class="small">Hidden: it cannot read these</h3>
          <ul class="paths" data-testid="sandbox-hidden">
            {places.hidden.length === 0
              ? s.deny.map((p) => (
                  <li key={p}>
                    <code>{p}</code>
                  </li>
                ))
              : places.hidden.map((p) => (
                  <li key={p}>
                    <code>{printableLine(p)}</code>
                  </li>
                ))}
          </ul>
          <p class="muted small">Everything else is readable to it: add what matters to <code>sandbox_deny</code> in config.toml.</p>
          {s.hosts && (
            <>
              <h3 class="small">May connect to</h3>
              <ul class="paths" data-testid="sandbox-hosts">
                {s.hosts.length === 0 && <li class="muted small">nowhere</li>}
                {s.hosts.map((h) => (
                  <li key={h}>
                    <code>{printableLine(h)}</code>{" "}
                    <button type="button" class="link" disabled={busy} onClick={() => void set("sandbox_network", null, { remove: [h] })}>
                      remove
                    </button>
                  </li>
                ))}
              </ul>
            </>
          )}
          <label class="check">
            <input
              type="checkbox"
              data-testid="sandbox-network"
              checked={s.network}
              disabled={busy}
              onChange={(e) => void set("sandbox_network", e.currentTarget.checked ? "host" : "none")}
            />
            Network (the host's: it may connect anywhere; off: {landlock ? "no TCP" : "none at all"})
          </label>
        </div>
      </div>
    </section>
  );
}

/** Paths or names, each as code, separated by commas. */
function Names(props: { names: string[] }) {
  return (
    <>
      {props.names.map((n, i) => (
        <span key={n}>
          {i > 0 && ", "}
          <code>{printableLine(n)}</code>
        </span>
      ))}
    </>
  );
}

/** "Allow <folder>" for a folder that may be granted (said so when broad); else why not. */
function FolderGrant(props: { folder: string; places: SandboxPlaces; busy: boolean; onGrant: (folder: string) => void }) {
  const g = grantable(props.folder, props.places);
  if (!g.ok)
    return (
      <span class="muted small" data-testid="no-grant">
        No grant offered for <code>{printableLine(g.folder)}</code>: {g.why}.
      </span>
    );
  return (
    <>
      <button type="button" data-testid="allow-folder" disabled={props.busy} onClick={() => props.onGrant(g.folder)}>
        Allow {g.folder}
      </button>
      {g.broad && (
        <span class="warn-text small" data-testid="grant-broad">
          {" "}
          Broad: {g.broad}; it may change anything in it.
        </span>
      )}
    </>
  );
}
