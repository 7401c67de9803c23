import type { HistoryEntry, LatencyPoint, ToolStatus } from "../bindings/api";
import { CHART_SPAN_MS, MINUTE_MS, markerOf, niceMax, xOf } from "../lib/chart";
import { formatBytes, formatClock, formatCount, formatMs, printableLine } from "../lib/format";

const W = 960; // about the width it is drawn at, so its 11px text stays near 11px
const H = 170;
const LEFT = 52;
const RIGHT = 8;
const TOP = 8;
const BOTTOM = 20;
const PLOT_W = W - LEFT - RIGHT;
const PLOT_H = H - TOP - BOTTOM;
const LANE_H = 26;

/** p50 and p95 per minute over the last hour, with the restarts, timeouts, breaker and
 *  fallback switches of the same hour on a lane below (shared time axis). */
export function LatencyChart({ points, events, now }: { points: LatencyPoint[]; events: HistoryEntry[]; now: number }) {
  const shown = points.filter((p) => p.t_ms + MINUTE_MS > now - CHART_SPAN_MS);
  const top = niceMax(Math.max(0, ...shown.map((p) => p.p95_ms ?? 0)));
  const x = (t: number) => LEFT + xOf(t, now, PLOT_W);
  const y = (ms: number) => TOP + PLOT_H - (Math.min(ms, top) / top) * PLOT_H;
  const mid = (p: LatencyPoint) => x(p.t_ms + MINUTE_MS / 2);
  const line = (pick: (p: LatencyPoint) => number | null) =>
    shown.flatMap((p) => {
      const v = pick(p);
      return v === null ? [] : [`${mid(p).toFixed(1)},${y(v).toFixed(1)}`];
    }).join(" ");
  const markers = events
    .filter((e) => e.event.ts_ms > now - CHART_SPAN_MS)
    .flatMap((e) => {
      const m = markerOf(e.event);
      return m ? [{ ...m, ts: e.event.ts_ms }] : [];
    });
  const requests = shown.reduce((n, p) => n + p.requests, 0);
  const summary =
    shown.length === 0
      ? "No requests in the last hour."
      : `${formatCount(requests)} requests in the last hour; the last minute with traffic: p50 ${formatMs(shown[shown.length - 1]?.p50_ms)}, p95 ${formatMs(shown[shown.length - 1]?.p95_ms)}.`;

  return (
    <figure class="chart" data-testid="latency-chart">
      <svg viewBox={`0 0 ${W} ${H + LANE_H}`} role="img" aria-label={`Latency per minute, last hour. ${summary}`}>
        {[0, 0.5, 1].map((f) => (
          <g key={f} class="grid">
            <line x1={LEFT} x2={W - RIGHT} y1={y(top * f)} y2={y(top * f)} />
            <text x={LEFT - 6} y={y(top * f) + 4} text-anchor="end">{formatMs(top * f)}</text>
          </g>
        ))}
        {[60, 45, 30, 15, 0].map((m) => (
          <text key={m} class="axis" x={x(now - m * MINUTE_MS)} y={TOP + PLOT_H + 14} text-anchor={m === 0 ? "end" : m === 60 ? "start" : "middle"}>
            {m === 0 ? "now" : `-${m} min`}
          </text>
        ))}
        <polyline class="p95" points={line((p) => p.p95_ms)} />
        <polyline class="p50" points={line((p) => p.p50_ms)} />
        {shown.map((p) => {
          const bad = p.errors + p.timeouts > 0;
          return (
            <circle
              key={p.t_ms}
              data-testid="latency-point"
              data-requests={p.requests}
              data-p95={p.p95_ms ?? ""}
              class={bad ? "point bad" : "point"}
              cx={mid(p)}
              cy={y(p.p95_ms ?? top)}
              r={bad ? 3.5 : 2.5}
            >
              <title>
                {`${formatClock(p.t_ms)}: ${formatCount(p.requests)} requests, p50 ${formatMs(p.p50_ms)}, p95 ${formatMs(p.p95_ms)}` +
                  (p.errors ? `, ${p.errors} errors` : "") +
                  (p.timeouts ? `, ${p.timeouts} timeouts` : "")}
              </title>
            </circle>
          );
        })}
        <line class="lane" x1={LEFT} x2={W - RIGHT} y1={H + LANE_H / 2} y2={H + LANE_H / 2} />
        {markers.map((m, i) => (
          <g key={`${m.ts}-${i}`} class={`marker marker-${m.kind}`} data-testid="timeline-marker" data-kind={m.kind}>
            <title>{`${formatClock(m.ts)} ${m.label}`}</title>
            <circle cx={x(m.ts)} cy={H + LANE_H / 2} r={8} />
            <text x={x(m.ts)} y={H + LANE_H / 2 + 4} text-anchor="middle">{m.glyph}</text>
          </g>
        ))}
      </svg>
      <figcaption class="small muted">
        <span class="key p95">p95</span> <span class="key p50">p50</span> per minute ·{" "}
        <span class="key bad">●</span> a minute with errors or timeouts · on the lane: R restart, X exit, T timeout, B/b breaker
        open/closed, F fallback, ! failed start. {summary}
      </figcaption>
    </figure>
  );
}

/** Calls, errors, timeouts, latency and bytes out of each tool, slowest p95 first. */
export function ToolsTable({ tools }: { tools: ToolStatus[] }) {
  if (tools.length === 0) return <p class="muted" data-testid="tools-empty">No tool calls yet.</p>;
  const rows = [...tools].sort((a, b) => b.p95_ms - a.p95_ms || b.calls - a.calls);
  return (
    <div class="table-wrap">
      <table data-testid="tools">
        <thead>
          <tr>
            <th scope="col">Tool</th>
            <th scope="col" class="num">Calls</th>
            <th scope="col" class="num">Errors</th>
            <th scope="col" class="num">Timeouts</th>
            <th scope="col" class="num">p50</th>
            <th scope="col" class="num">p95</th>
            <th scope="col" class="num">Bytes out</th>
            <th scope="col">Pin</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((t) => (
            <tr key={t.name} data-testid="tool-row" data-tool={t.name} data-calls={t.calls}>
              <td><strong>{printableLine(t.name)}</strong></td>
              <td class="num">{formatCount(t.calls)}</td>
              <td class={t.errors ? "num bad-text" : "num"}>{formatCount(t.errors)}</td>
              <td class={t.timeouts ? "num bad-text" : "num"}>{formatCount(t.timeouts)}</td>
              <td class="num">{formatMs(t.p50_ms)}</td>
              <td class="num">{formatMs(t.p95_ms)}</td>
              <td class="num">{formatBytes(t.bytes_out)}</td>
              <td class={t.pin === "changed" || t.pin === "new" ? "bad-text" : "muted"} data-testid="tool-pin">{t.pin}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
