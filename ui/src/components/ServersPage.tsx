import type { ClientsReport, ProbeReport, ServerStatus } from "../bindings/api";
import { formatCount, formatEra, formatMs, printableLine } from "../lib/format";
import { serverHref } from "../lib/route";
import { ON_CLIENTS, useApi } from "../lib/useApi";
import { useStore } from "./context";
import { CommandLine, Empty, ErrorText, FailureCode, HealthBadge, Loading } from "./common";

/** A client config entry with `warden bridge` (at `warden`, its real path) in front of a server. */
export function bridgeSnippet(warden: string): string {
  return `"ripgrep": { "command": ${JSON.stringify(warden)},
             "args": ["bridge", "--server", "ripgrep", "--", "npx", "-y", "mcp-ripgrep"] }`;
}

/** The IDE config files' stdio servers that do not run through the bridge yet, and the one
 *  step that protects them (the Clients page's wrap, with its diff preview). */
function Unprotected({ report, servers }: { report: ClientsReport; servers: ServerStatus[] }) {
  const found = report.files.flatMap((f) =>
    f.active ? f.servers.flatMap((s) => (s.state === "unwrapped" ? [{ file: f, entry: s }] : [])) : [],
  );
  if (found.length === 0) return null;
  return (
    <div class="card unprotected" data-testid="unprotected">
      <h2>
        {found.length === 1 ? "1 server" : `${found.length} servers`} in your IDE configs {found.length === 1 ? "does" : "do"} not
        run through Warden yet
      </h2>
      <p class="muted">
        Warden cannot restart, time out or explain what it does not see. Wrapping puts <code>warden bridge</code> in front of
        each one; you see the exact change first, and unwrapping gives back the original file.
      </p>
      <ul>
        {found.map(({ file, entry }) => (
          <li key={`${file.path}:${entry.name}`} data-testid={`unprotected-${entry.name}`}>
            <strong>{entry.name}</strong> <span class="muted small">({file.client_name}, {file.path})</span>
            {entry.state === "unwrapped" && (
              <div>
                <CommandLine command={[entry.command, ...entry.args]} />
              </div>
            )}
            <ProbeLine probe={servers.find((s) => s.name === entry.name)?.last_probe ?? null} probing={report.probe_ide === true} />
          </li>
        ))}
      </ul>
      <a class="button" href="#/clients" data-testid="review-and-wrap">
        Review and wrap
      </a>
    </div>
  );
}

/** What the last probe of an IDE server found, before any client started it. */
function ProbeLine({ probe, probing }: { probe: ProbeReport | null; probing: boolean }) {
  if (!probe) return probing ? <div class="small muted" data-testid="probe-result" data-ok="pending">Checking that it starts…</div> : null;
  if (probe.ok) {
    return (
      <div class="small ok-text" data-testid="probe-result" data-ok="true">
        Starts: {probe.tools ?? 0} tools, answered in {formatMs(probe.cold_start_ms ?? 0)}{probe.era && <>, {formatEra(probe)}</>}
      </div>
    );
  }
  return (
    <div class="small bad-text" data-testid="probe-result" data-ok="false">
      Does not start{probe.code && <> <FailureCode code={probe.code} /></>}: {probe.error}
    </div>
  );
}

export function ServersPage() {
  const { state } = useStore();
  const { data: clients } = useApi({ op: "clients" }, ON_CLIENTS);
  if (!state.loaded) {
    return (
      <section class="page">
        <h1>Servers</h1>
        {state.statusError ? <ErrorText message={state.statusError} /> : <Loading what="servers" />}
      </section>
    );
  }
  return (
    <section class="page">
      <h1>Servers</h1>
      {clients && <Unprotected report={clients} servers={state.servers} />}
      {state.servers.length === 0 ? (
        <Empty title="No MCP servers yet">
          <p>
            Warden watches the servers your IDEs and agents start once they run through its bridge. Two ways to
            get there:
          </p>
          <ol>
            <li>
              Open <a href="#/clients">Clients</a>, pick the config files of your IDEs, and press <em>Wrap</em>:
              Warden routes their stdio servers through the bridge and shows you the exact change first.
            </li>
            <li>
              Or put <code>warden bridge</code> in front of a server yourself, in your client's config:
              <pre class="snippet" data-testid="bridge-snippet">{bridgeSnippet(clients?.warden ?? "/path/to/warden")}</pre>
            </li>
          </ol>
          <p class="muted">Then restart the client (or reload its MCP servers); the server shows up here.</p>
        </Empty>
      ) : (
        <div class="table-wrap">
          <table class="servers">
            <thead>
              <tr>
                <th scope="col">Server</th>
                <th scope="col">Health</th>
                <th scope="col" class="num">Sessions</th>
                <th scope="col" class="num">In flight</th>
                <th scope="col" class="num" title="Median and 95th percentile response time">
                  p50 / p95
                </th>
                <th scope="col" class="num">Timeouts</th>
                <th scope="col" class="num">Retries</th>
                <th scope="col" class="num">Restarts</th>
                <th scope="col">Last error</th>
              </tr>
            </thead>
            <tbody>
              {state.servers.map((s) => (
                <tr key={s.name} data-testid={`server-row-${s.name}`}>
                  <th scope="row">
                    <a href={serverHref(s.name)} data-testid={`open-server-${s.name}`}>
                      {printableLine(s.name)}
                    </a>
                    {s.fallback && <span class="tag" title="Served by local ripgrep">fallback</span>}
                    {s.sandbox !== "off" && (
                      <span class="tag" data-testid={`sandboxed-${s.name}`} title={`Runs in a sandbox (${s.sandbox}): it reads what it is granted, writes only its grants, and has no network unless allowed`}>
                        sandboxed
                      </span>
                    )}
                    {s.circuit_open && <span class="tag bad" title="The circuit breaker is open">breaker open</span>}
                    {s.debug && <span class="tag" title="Debug logging is on">debug</span>}
                  </th>
                  <td class="health-cell">
                    <HealthBadge name={s.name} health={s.health} />
                    <div class="reason" data-testid={`reason-${s.name}`}>
                      {printableLine(s.reason)}
                    </div>
                  </td>
                  <td class="num">
                    {s.sessions}
                    {s.unresponsive > 0 && <span class="small warn-text"> ({s.unresponsive} silent)</span>}
                  </td>
                  <td class="num">{s.inflight}</td>
                  <td class="num">
                    {s.requests > 0 ? `${formatMs(s.p50_ms)} / ${formatMs(s.p95_ms)}` : "—"}
                  </td>
                  <td class="num">{formatCount(s.timeouts)}</td>
                  <td class="num">{formatCount(s.retries)}</td>
                  <td class="num">{formatCount(s.restarts)}</td>
                  <td class="last-error">
                    {s.code && <FailureCode code={s.code} testid={`code-${s.name}`} />}
                    {s.last_error ?? <span class="muted">none</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
