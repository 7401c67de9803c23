import { useEffect, useRef, useState } from "preact/hooks";
import type { Request } from "../bindings/api";
import type { OpenTarget } from "../bindings/app";
import { formatAge, formatBytes, formatClock, formatEra, formatMs, printableLine, printableLines } from "../lib/format";
import { inflightOf, sessionsOf, TIMELINE_CAP } from "../lib/store";
import { ask, askApp } from "../lib/tauri";
import { useAction } from "../lib/useAction";
import { onLimits, useApi } from "../lib/useApi";
import { useNow, useStore } from "./context";
import { CommandLine, ErrorText, FailureCode, HealthBadge, Loading, Outcome, type OutcomeView } from "./common";
import { LatencyChart, ToolsTable } from "./Charts";
import { parseWordDiff, waitingTools } from "../lib/pins";
import type { ToolStatus } from "../bindings/api";
import { LimitsForm } from "./LimitsForm";
import { SandboxSection } from "./SandboxSection";
import { SigninSection } from "./SigninSection";
import { PolicySection } from "./PolicySection";

export function ServerPage({ name }: { name: string }) {
  const { state, dispatch } = useStore();
  const now = useNow();
  const server = state.servers.find((s) => s.name === name);
  const [outcome, setOutcome] = useState<OutcomeView | null>(null);
  const action = useAction();
  const [historyError, setHistoryError] = useState<string | null>(null);
  // Read again when config.toml changes for this server, and (the tool policy section reads
  // the pin file too) when an "always" answer is given or a tool is pinned or changes.
  const { data: limits, error: limitsError, reload: reloadLimits } = useApi(
    { op: "limits", server: name },
    onLimits(name),
  );
  const loadLimits = () => void reloadLimits();
  const toolsSeen = server?.tools.map((t) => `${t.name}:${t.pin}`).join(" ") ?? "";
  const seen = useRef(toolsSeen);
  useEffect(() => {
    if (seen.current === toolsSeen) return;
    seen.current = toolsSeen;
    void reloadLimits();
  }, [toolsSeen, reloadLimits]);

  useEffect(() => {
    void ask({ op: "history", server: name, since_ms: null, limit: TIMELINE_CAP }).then((r) => {
      if (r.ok) dispatch({ type: "history", server: name, entries: r.value.entries });
      else setHistoryError(r.error.message);
    });
  }, [name, dispatch]);

  const configFlag = (key: string, live: boolean | undefined): boolean => {
    const v = limits?.keys.find((k) => k.key === key)?.value;
    return typeof v === "boolean" ? v : (live ?? false);
  };
  const fallbackOn = configFlag("force_fallback", server?.fallback);
  const debugOn = configFlag("debug", server?.debug);

  const run = (label: string, f: () => Promise<OutcomeView>) => action.run(async () => setOutcome(await f()), { label });

  const command = (title: string, request: Extract<Request, { op: "restart" | "fallback" | "debug" | "approve_tools" }>) =>
    run(title, async () => {
      const r = await ask(request);
      return r.ok ? { kind: "command", title, outcome: r.value } : { kind: "error", title, message: r.error.message };
    }).then(loadLimits);

  const open = (title: string, target: OpenTarget) =>
    run(title, async () => {
      const r = await askApp({ op: "open", target });
      return r.ok ? { kind: "info", title, message: `opened ${r.value.path}` } : { kind: "error", title, message: r.error.message };
    });

  const probe = () =>
    run("Probe", async () => {
      const a = await ask({ op: "probe", server: name, command: null, timeout_ms: null, env: {} });
      if (!a.ok) return { kind: "error", title: "Probe", message: a.error.message };
      const r = a.value;
      return r.ok
        ? { kind: "info", title: "Probe", message: `answered in ${formatMs(r.cold_start_ms)} (cold start) with ${r.tools ?? 0} tools${r.era ? `, ${formatEra(r)}` : ""}; ${r.shutdown}` }
        : { kind: "error", title: "Probe", message: `${r.error ?? "failed"}${r.stderr_tail ? ` — stderr: ${r.stderr_tail.trim().split("\n").slice(-3).join(" / ")}` : ""}` };
    });

  const sessions = sessionsOf(state, name);
  const inflight = inflightOf(state, name, now);
  const timeline = [...(state.timelines[name] ?? [])].reverse();

  return (
    <section class="page server-page">
      <p class="crumbs">
        <a href="#/servers">Servers</a> / <span>{printableLine(name)}</span>
      </p>
      <div class="server-head">
        <h1>{printableLine(name)}</h1>
        {server ? <HealthBadge name={name} health={server.health} /> : null}
      </div>
      {server ? (
        <p class="reason big" data-testid="health-reason">
          {printableLine(server.reason)}
        </p>
      ) : state.loaded ? (
        <p class="muted" data-testid="health-reason">
          The supervisor has not seen this server yet (no session, not in config.toml). You can still set its limits
          below; they apply when a bridge with <code>--server {name}</code> starts.
        </p>
      ) : (
        <Loading what="status" />
      )}
      {server && (
        <PinNotice
          tools={waitingTools(server.tools)}
          busy={action.busy}
          approve={(tools) => command("Approve", { op: "approve_tools", server: name, tools })}
        />
      )}
      {server && (
        <dl class="facts">
          <div><dt>Sessions</dt><dd>{server.sessions}</dd></div>
          <div><dt>In flight</dt><dd data-testid="inflight-count">{server.inflight}</dd></div>
          <div><dt>p50 / p95 / p99</dt><dd>{server.requests > 0 ? `${formatMs(server.p50_ms)} / ${formatMs(server.p95_ms)} / ${formatMs(server.p99_ms)}` : "—"}</dd></div>
          <div><dt>Requests</dt><dd>{server.requests} ({server.errors} errors, {server.timeouts} timeouts)</dd></div>
          <div><dt>Retries / restarts</dt><dd>{server.retries} / <span data-testid="restarts">{server.restarts}</span></dd></div>
          <div><dt>Traffic</dt><dd>{formatBytes(server.bytes_in)} in, {formatBytes(server.bytes_out)} out</dd></div>
          <div><dt>Last seen</dt><dd>{server.last_seen_ms ? formatAge(now - server.last_seen_ms) : "—"}</dd></div>
          {server.last_probe && (
            <div>
              <dt>Last probe</dt>
              <dd>
                {server.last_probe.ok
                  ? `${formatMs(server.last_probe.cold_start_ms)} cold start, ${server.last_probe.tools ?? 0} tools${server.last_probe.era ? `, ${formatEra(server.last_probe)}` : ""}`
                  : `failed: ${server.last_probe.error ?? "unknown error"}`}
              </dd>
            </div>
          )}
          {server.last_error && (
            <div class="wide">
              <dt>Last error</dt>
              <dd class="last-error">
                {server.code && <FailureCode code={server.code} testid="last-error-code" />}
                {server.last_error}
              </dd>
            </div>
          )}
          {server.command && <div class="wide"><dt>Command</dt><dd><CommandLine command={server.command} /></dd></div>}
        </dl>
      )}

      <div class="actions" role="group" aria-label="Server actions">
        <button
          type="button"
          data-testid="restart"
          disabled={action.busy}
          onClick={() => void command("Restart", { op: "restart", server: name })}
          title="Restart the server process of every live session (each session acknowledges)"
        >
          Restart
        </button>
        <button
          type="button"
          class="toggle"
          data-testid="fallback-toggle"
          aria-pressed={fallbackOn}
          disabled={action.busy}
          onClick={() => void command(`Fallback ${fallbackOn ? "off" : "on"}`, { op: "fallback", server: name, on: !fallbackOn })}
          title="force_fallback: serve this server's tools from local ripgrep now, whatever its state"
        >
          Fallback to local ripgrep: {fallbackOn ? "on" : "off"}
        </button>
        <button
          type="button"
          class="toggle"
          data-testid="debug-toggle"
          aria-pressed={debugOn}
          disabled={action.busy}
          onClick={() => void command(`Debug logging ${debugOn ? "off" : "on"}`, { op: "debug", server: name, on: !debugOn })}
          title="debug: log every message whole (secrets redacted) to logs/<server>.debug.jsonl"
        >
          Debug logging: {debugOn ? "on" : "off"}
        </button>
        <button
          type="button"
          class="secondary"
          data-testid="probe"
          disabled={action.busy}
          onClick={() => void probe()}
          title="Start the server once outside any session: handshake, list its tools, shut down"
        >
          Probe
        </button>
        <button type="button" class="secondary" data-testid="open-event-log" disabled={action.busy} onClick={() => void open("Open event log", { kind: "event_log", server: name })}>
          Open event log
        </button>
        <button type="button" class="secondary" data-testid="open-debug-log" disabled={action.busy} onClick={() => void open("Open debug log", { kind: "debug_log", server: name })}>
          Open debug log
        </button>
        {action.running && <span class="muted" role="status">{action.running}…</span>}
      </div>
      {server && (server.fallback !== fallbackOn || server.debug !== debugOn) && sessions.length > 0 && (
        <p class="small muted" data-testid="flags-pending">
          Running sessions: fallback {server.fallback ? "on" : "off"}, debug {server.debug ? "on" : "off"}
          {" "}(they pick up config.toml within a moment).
        </p>
      )}
      <Outcome view={outcome} />
      <SigninSection server={name} />

      {server && (
        <>
          <h2>Last hour</h2>
          <LatencyChart points={server.latency} events={state.timelines[name] ?? []} now={now} />
          <h2>Tools</h2>
          <ToolsTable tools={server.tools} />
        </>
      )}

      <h2>In flight</h2>
      <div data-testid="inflight">
        {inflight.length === 0 ? (
          <p class="muted">No requests in flight.</p>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Request</th>
                  <th scope="col" class="num">Age</th>
                  <th scope="col" class="num" title="Time since the last response, progress or server activity">Idle</th>
                  <th scope="col">Progress</th>
                  <th scope="col">Session</th>
                </tr>
              </thead>
              <tbody>
                {inflight.map((r) => (
                  <tr key={`${r.session.id}:${r.id}`} data-testid="inflight-row">
                    <td>
                      <code>{printableLine(r.method)}</code>
                      {r.tool && <> · <strong>{printableLine(r.tool)}</strong></>}
                      <span class="muted small"> id {r.id}</span>
                    </td>
                    <td class="num">{formatMs(r.age_ms)}</td>
                    <td class="num">{formatMs(r.idle_ms)}</td>
                    <td>{r.progress !== null ? printableLine(r.progress) : <span class="muted">none</span>}</td>
                    <td class="small">
                      pid {r.session.pid}
                      {r.session.client ? ` · ${printableLine(r.session.client)}` : ""}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </div>

      {limits && <PolicySection server={name} report={limits} onSaved={loadLimits} />}

      {limits && <SandboxSection server={name} report={limits} mode={server?.sandbox} timeline={state.timelines[name] ?? []} onSaved={loadLimits} />}

      <h2>Limits</h2>
      {limitsError && <ErrorText message={limitsError} testid="limits-error" />}
      {limits ? <LimitsForm server={name} report={limits} onSaved={reloadLimits} /> : !limitsError && <Loading what="limits" />}

      <h2>Event timeline</h2>
      {historyError && <ErrorText message={historyError} />}
      <ol class="timeline" data-testid="timeline" reversed>
        {timeline.length === 0 ? (
          <li class="muted">No events yet.</li>
        ) : (
          timeline.slice(0, 200).map((e, i) => {
            const ev = e.event;
            const bad = ev.outcome !== undefined && ev.outcome !== "ok";
            return (
              <li key={`${ev.ts_ms}-${i}`} data-testid="timeline-entry" data-kind={ev.kind} class={bad ? "bad" : ""}>
                <time class="muted">{formatClock(ev.ts_ms)}</time>
                <span class={`kind kind-${ev.kind}`}>{ev.kind}</span>
                {ev.method && <code>{ev.method}</code>}
                {ev.tool && <strong>{printableLine(ev.tool)}</strong>}
                {ev.outcome && <span class={bad ? "bad-text" : "ok-text"}>{ev.outcome}</span>}
                {ev.duration_ms !== undefined && <span>{formatMs(ev.duration_ms)}</span>}
                {ev.bytes_out !== undefined && ev.bytes_out > 0 && <span class="muted">{formatBytes(ev.bytes_out)}</span>}
                {ev.detail && <span class="detail">{printableLine(ev.detail)}</span>}
              </li>
            );
          })
        )}
      </ol>

      <h2>Server stderr</h2>
      <div data-testid="stderr" class="stderr-wrap">
        {sessions.filter((s) => s.stderr_tail !== "").length === 0 ? (
          server?.last_probe?.stderr_tail ? (
            <div>
              <div class="small muted">From the last probe ({formatClock(server.last_probe.ts_ms)}):</div>
              <pre class="stderr">{printableLines(server.last_probe.stderr_tail)}</pre>
            </div>
          ) : (
            <p class="muted">No stderr output from live sessions.</p>
          )
        ) : (
          sessions
            .filter((s) => s.stderr_tail !== "")
            .map((s) => (
              <div key={s.id}>
                {sessions.length > 1 && (
                  <div class="small muted">
                    session pid {s.pid}
                    {s.client ? ` · ${printableLine(s.client)}` : ""}
                  </div>
                )}
                <pre class="stderr" data-session={s.id}>
                  {printableLines(s.stderr_tail)}
                </pre>
              </div>
            ))
        )}
      </div>
    </section>
  );
}

/** Tools whose definition changed (or that are new) since they were pinned: what changed, word
 * by word, and a button that approves each (`warden tools approve`). */
function PinNotice(props: { tools: ToolStatus[]; busy: boolean; approve: (tools: string[]) => void }) {
  if (props.tools.length === 0) return null;
  return (
    <section class="card pin-notice" data-testid="pin-notice">
      <h3>{props.tools.length === 1 ? "1 tool is" : `${props.tools.length} tools are`} not as pinned</h3>
      <p class="small muted">
        The server now tells the model something else than when Warden first saw it. With <code>pin_tools = "block"</code> these
        tools are held back from clients until approved; with <code>"warn"</code> they pass. Approve only what you trust.
      </p>
      {props.tools.map((t) => (
        <div class="pin-tool" key={t.name} data-testid="pin-tool" data-tool={t.name} data-pin={t.pin}>
          <div class="pin-head">
            <strong>{printableLine(t.name)}</strong> <span class="tag bad">{t.pin === "new" ? "new" : "changed"}</span>
            <button type="button" data-testid={`approve-${t.name}`} disabled={props.busy} onClick={() => props.approve([t.name])}>
              Approve
            </button>
          </div>
          <pre class="diff word-diff" data-testid={`pin-diff-${t.name}`}>
            {parseWordDiff(t.diff ?? "").map((r, i) =>
              r.kind === "same" ? <span key={i}>{r.text}</span> : r.kind === "del" ? <del key={i}>{r.text}</del> : <ins key={i}>{r.text}</ins>,
            )}
          </pre>
        </div>
      ))}
    </section>
  );
}
