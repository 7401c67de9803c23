import { describe, expect, it } from "vitest";
import { CHART_SPAN_MS, markerOf, niceMax, xOf } from "../src/lib/chart";
import type { Event } from "../src/bindings/api";

const ev = (over: Partial<Event>): Event => ({ ts_ms: 0, kind: "request", ...over }) as Event;

describe("niceMax", () => {
  it("rounds up to 1, 2 or 5 times a power of ten, at least 2 ms", () => {
    expect([0, 0.3, 1, 1.5, 3, 7, 10, 66, 120, 4999].map(niceMax)).toEqual([2, 2, 2, 2, 5, 10, 10, 100, 200, 5000]);
  });
});

describe("xOf", () => {
  it("maps the last hour onto the plot and clamps what is outside", () => {
    const now = 10 * CHART_SPAN_MS;
    expect(xOf(now, now, 600)).toBe(600);
    expect(xOf(now - CHART_SPAN_MS / 2, now, 600)).toBe(300);
    expect(xOf(now - 2 * CHART_SPAN_MS, now, 600)).toBe(0);
    expect(xOf(now + 1000, now, 600)).toBe(600);
  });
});

describe("markerOf", () => {
  it("marks restarts, exits, failed starts, breaker and fallback switches", () => {
    expect(markerOf(ev({ kind: "restart", detail: "server process #2 started" }))?.kind).toBe("restart");
    expect(markerOf(ev({ kind: "server_exit", detail: "killed by signal 9" }))?.label).toBe("server exited: killed by signal 9");
    expect(markerOf(ev({ kind: "spawn_failed", cause: "not found on PATH" }))?.label).toBe("failed to start: not found on PATH");
    expect(markerOf(ev({ kind: "circuit", detail: "open after 1 failure" }))?.kind).toBe("breaker_open");
    expect(markerOf(ev({ kind: "circuit", detail: "closed: restarted on request" }))?.kind).toBe("breaker_closed");
    expect(markerOf(ev({ kind: "fallback", detail: "on" }))?.kind).toBe("fallback");
  });

  it("marks requests that timed out, and no other request or event", () => {
    expect(markerOf(ev({ outcome: "timeout", method: "tools/call", tool: "search" }))?.label).toBe("timeout: tools/call (tool search)");
    expect(markerOf(ev({ outcome: "max_timeout", method: "tools/call" }))?.kind).toBe("timeout");
    expect(markerOf(ev({ outcome: "ok", method: "tools/call" }))).toBeNull();
    expect(markerOf(ev({ outcome: "server_exited" }))).toBeNull();
    expect(markerOf(ev({ kind: "heartbeat" }))).toBeNull();
  });
});
