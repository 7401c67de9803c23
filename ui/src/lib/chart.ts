// The server page's pictures: scales of the latency chart and which history events become
// markers on its timeline. Pure, so each rule is unit-tested (tests/chart.test.ts).
import type { Event } from "../bindings/api";
import { printableLine } from "./format";

/** The chart shows the last hour, one point per minute (as the supervisor keeps them). */
export const CHART_SPAN_MS = 60 * 60 * 1000;
export const MINUTE_MS = 60 * 1000;

/** The smallest of 1, 2, 5 × 10^k at or above `v` (at least 2, so the axis's middle line is a
 *  whole millisecond): the top of the y axis. */
export function niceMax(v: number): number {
  if (!(v > 2)) return 2;
  const pow = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) {
    if (m * pow >= v) return m * pow;
  }
  return 10 * pow;
}

/** x of wall-clock `t` in a plot `width` wide ending at `now`; clamped to the plot. */
export function xOf(t: number, now: number, width: number): number {
  const f = (t - (now - CHART_SPAN_MS)) / CHART_SPAN_MS;
  return Math.min(width, Math.max(0, f * width));
}

export type MarkerKind = "restart" | "exit" | "timeout" | "breaker_open" | "breaker_closed" | "fallback" | "start_failed";

export interface Marker {
  kind: MarkerKind;
  /** One character drawn on the timeline. */
  glyph: string;
  /** What happened, for the tooltip. */
  label: string;
}

/** The timeline marker of a history event: restarts, exits, timeouts, breaker and fallback
 *  switches, failed starts; null for everything else. */
export function markerOf(e: Event): Marker | null {
  const detail = e.detail ? `: ${printableLine(e.detail)}` : "";
  switch (e.kind) {
    case "restart":
      return { kind: "restart", glyph: "R", label: `restart${detail}` };
    case "server_exit":
      return { kind: "exit", glyph: "X", label: `server exited${detail}` };
    case "spawn_failed":
    case "start_failed":
      return { kind: "start_failed", glyph: "!", label: `failed to start${e.cause ? `: ${e.cause}` : detail}` };
    case "circuit":
      return (e.detail ?? "").startsWith("open")
        ? { kind: "breaker_open", glyph: "B", label: `breaker ${e.detail}` }
        : { kind: "breaker_closed", glyph: "b", label: `breaker ${e.detail ?? "closed"}` };
    case "fallback":
      return { kind: "fallback", glyph: "F", label: `fallback${detail}` };
    case "request": {
      const o = e.outcome ?? "";
      if (o !== "timeout" && o !== "max_timeout" && o !== "startup_timeout") return null;
      const what = e.tool ? `${e.method ?? "request"} (tool ${e.tool})` : (e.method ?? "a request");
      return { kind: "timeout", glyph: "T", label: `${o}: ${what}` };
    }
    default:
      return null;
  }
}
