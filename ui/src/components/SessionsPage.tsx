import { formatAge, formatMs, printableLine } from "../lib/format";
import { serverHref } from "../lib/route";
import { heartbeatAge } from "../lib/store";
import { useNow, useStore } from "./context";
import { Empty, ErrorText, Loading } from "./common";

export function SessionsPage() {
  const { state } = useStore();
  const now = useNow();
  const sessions = [...state.sessions].sort(
    (a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : a.started_ms - b.started_ms),
  );
  return (
    <section class="page">
      <h1>Sessions</h1>
      <p class="muted">
        One row per bridge: each IDE window or agent (and each sub-agent) that started a server through Warden.
      </p>
      {!state.loaded ? (
        state.statusError ? <ErrorText message={state.statusError} /> : <Loading what="sessions" />
      ) : sessions.length === 0 ? (
        <Empty title="No live sessions">
          <p>
            A session appears when a client starts a server through <code>warden bridge</code>. If your servers are
            not wrapped yet, go to <a href="#/clients">Clients</a>.
          </p>
        </Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Server</th>
                <th scope="col">Client</th>
                <th scope="col" class="num">Bridge pid</th>
                <th scope="col" class="num">Server pid</th>
                <th scope="col">State</th>
                <th scope="col" class="num">Uptime</th>
                <th scope="col" class="num">Last heartbeat</th>
                <th scope="col" class="num">In flight</th>
              </tr>
            </thead>
            <tbody>
              {sessions.map((s) => (
                <tr key={s.id} data-testid="session-row" data-session={s.id} data-server={s.server}>
                  <td>
                    <a href={serverHref(s.server)}>{printableLine(s.server)}</a>
                    {s.fallback && <span class="tag">fallback</span>}
                    {s.circuit_open && <span class="tag bad">breaker open</span>}
                    {s.debug && <span class="tag">debug</span>}
                  </td>
                  <td>
                    {s.client !== null ? printableLine(s.client) : <span class="muted">not said yet</span>}
                    {s.era !== null && (
                      <span
                        class="tag"
                        data-testid="session-era"
                        title={
                          s.adapted
                            ? "A legacy client in front of a server that speaks only MCP 2026-07-28: Warden adapts between them"
                            : s.era === "modern"
                              ? "The client speaks MCP 2026-07-28 (no handshake; _meta on each request)"
                              : "The client speaks the legacy MCP handshake (initialize)"
                        }
                      >
                        {s.adapted ? "adapted to 2026-07-28" : s.era === "modern" ? "2026-07-28" : "legacy"}
                      </span>
                    )}
                  </td>
                  <td class="num">{s.pid}</td>
                  <td class="num">
                    {s.server_pid ?? <span class="muted">none</span>}
                    {s.generation > 1 && <span class="small muted" title="Server processes started in this session"> (#{s.generation})</span>}
                  </td>
                  <td>
                    <span class={`badge state-${s.state}`} data-state={s.state}>
                      {s.state}
                    </span>
                  </td>
                  <td class="num">{formatMs(Math.max(0, now - s.started_ms))}</td>
                  <td class="num">{formatAge(heartbeatAge(state, s, now))}</td>
                  <td class="num">{s.inflight.length}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
