import { useState } from "preact/hooks";
import type { HistoryEntry, JsonValue, LimitsReport } from "../bindings/api";
import { formatClock } from "../lib/format";
import { blocked, sandboxSettings } from "../lib/sandbox";
import { api } from "../lib/tauri";
import { ErrorText } from "./common";

/**
 * The server's sandbox (Linux, docs/sandbox.md): the switch, the folders it may write, what
 * it may not read, its network; what it was refused lately, each with the grant that allows
 * it. Every change is one `SetLimit`: config.toml is edited at once, and the server gets it
 * at its next start.
 */
export function SandboxSection(props: {
  server: string;
  report: LimitsReport;
  mode: string | undefined;
  timeline: HistoryEntry[];
  onSaved: () => void;
}) {
  const s = sandboxSettings(props.report);
  const [folder, setFolder] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const set = async (key: string, value: JsonValue) => {
    setBusy(true);
    try {
      const r = await api({ op: "set_limit", server: props.server, key, value });
      if (r.kind === "error") setError(r.message);
      else {
        setError(null);
        props.onSaved();
      }
    } finally {
      setBusy(false);
    }
  };
  const grant = (path: string) => {
    const p = path.trim();
    if (p === "" || s.write.includes(p)) return;
    void set("sandbox_write", [...s.write, p]);
  };
  const refused = s.on ? blocked(props.timeline, s) : [];

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
          ? `It reads what is not hidden, writes only the folders below (and its own /tmp and package cache), and ${s.network ? "has the network" : "has no network"}.`
          : "Off: it runs with your rights. On Linux, turn it on to let it write only the folders you grant, hide your keys, and cut its network."}{" "}
        {props.mode && props.mode !== "off" && <span data-testid="sandbox-mode">Running now: {props.mode}.</span>} Changes apply from its next start.
      </p>
      {error && <ErrorText message={error} testid="sandbox-error" />}
      {refused.length > 0 && (
        <ul class="sandbox-blocked" data-testid="sandbox-blocked">
          {refused.map((b) =>
            b.kind === "network" ? (
              <li key="network">
                <span class="muted small">{formatClock(b.ts_ms)}</span> It tried to reach the network.{" "}
                <button type="button" data-testid="allow-network" disabled={busy} onClick={() => void set("sandbox_network", "host")}>
                  Allow network
                </button>
              </li>
            ) : (
              <li key={b.path}>
                <span class="muted small">{formatClock(b.ts_ms)}</span> It was refused <code>{b.path}</code>.{" "}
                <button type="button" data-testid="allow-folder" disabled={busy} onClick={() => grant(b.folder)}>
                  Allow {b.folder}
                </button>
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
            {s.write.map((p) => (
              <li key={p}>
                <code>{p}</code>{" "}
                <button type="button" class="link" disabled={busy} onClick={() => void set("sandbox_write", s.write.filter((x) => x !== p))}>
                  remove
                </button>
              </li>
            ))}
          </ul>
          <form
            class="inline-form"
            onSubmit={(e) => {
              e.preventDefault();
              grant(folder);
              setFolder("");
            }}
          >
            <input data-testid="sandbox-add-folder" placeholder="~/projects/notes" value={folder} onInput={(e) => setFolder(e.currentTarget.value)} />
            <button type="submit" class="secondary" disabled={busy || folder.trim() === ""}>
              Add folder
            </button>
          </form>
        </div>
        <div>
          <h3 class="small">Hidden besides ~/.ssh, ~/.aws, ~/.gnupg, keyrings…</h3>
          <ul class="paths">
            {s.deny.length === 0 && <li class="muted small">nothing more</li>}
            {s.deny.map((p) => (
              <li key={p}>
                <code>{p}</code>
              </li>
            ))}
          </ul>
          <label class="check">
            <input
              type="checkbox"
              data-testid="sandbox-network"
              checked={s.network}
              disabled={busy}
              onChange={(e) => void set("sandbox_network", e.currentTarget.checked ? "host" : "none")}
            />
            Network (the host's: it may connect anywhere)
          </label>
        </div>
      </div>
    </section>
  );
}
