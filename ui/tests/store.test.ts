import { describe, expect, it } from "vitest";
import {
  apply,
  blankServer,
  applyHistory,
  heartbeatAge,
  inflightOf,
  initialState,
  reduce,
  TIMELINE_CAP,
  TOAST_CAP,
  type State,
} from "../src/lib/store";
import { entry, session, status } from "../src/dev/fixtures";

function loaded(): State {
  return reduce(initialState(), { type: "status", report: status(), now: 1000 });
}

function server(state: State, name: string) {
  const s = state.servers.find((x) => x.name === name);
  if (!s) throw new Error(`no server ${name}`);
  return s;
}

describe("status", () => {
  it("replaces servers and sessions, sorted by name, and clears the error", () => {
    let s = reduce(initialState(), { type: "status_error", message: "down" });
    expect(s.loaded).toBe(false);
    s = reduce(s, { type: "status", report: status(), now: 1000 });
    expect(s.loaded).toBe(true);
    expect(s.statusError).toBeNull();
    expect(s.servers.map((x) => x.name)).toEqual(["fs", "ripgrep"]);
    expect(s.sessions).toHaveLength(1);
    expect(s.seenAt["s1"]).toBe(1000);
  });

  it("drops sessions the new report no longer has", () => {
    let s = loaded();
    s = reduce(s, { type: "status", report: status({ sessions: [] }), now: 2000 });
    expect(s.sessions).toEqual([]);
    expect(s.seenAt).toEqual({});
  });
});

describe("session events", () => {
  it("session_updated replaces the session with the same id and recounts in-flight", () => {
    const req = { id: 7, method: "tools/call", tool: "search", age_ms: 100, idle_ms: 50, progress: null };
    const s = apply(loaded(), { kind: "session_updated", session: session({ inflight: [req, { ...req, id: 8 }] }) }, 5000);
    expect(s.sessions).toHaveLength(1);
    expect(s.sessions[0]?.inflight).toHaveLength(2);
    expect(server(s, "ripgrep").inflight).toBe(2);
    expect(s.seenAt["s1"]).toBe(5000);
  });

  it("session_opened adds a session and a server that was not known yet", () => {
    const s = apply(loaded(), { kind: "session_opened", session: session({ id: "s2", server: "github" }) }, 5000);
    expect(s.sessions.map((x) => x.id)).toEqual(["s1", "s2"]);
    expect(s.servers.map((x) => x.name)).toEqual(["fs", "github", "ripgrep"]);
    expect(server(s, "github").sessions).toBe(1);
    expect(server(s, "github").health).toBe("starting");
  });

  it("counts unresponsive sessions", () => {
    const s = apply(loaded(), { kind: "session_updated", session: session({ state: "unresponsive" }) }, 5000);
    expect(server(s, "ripgrep").unresponsive).toBe(1);
  });

  it("session_closed removes the session and its count", () => {
    const s = apply(loaded(), { kind: "session_closed", session: "s1", server: "ripgrep", reason: "client closed" }, 5000);
    expect(s.sessions).toEqual([]);
    expect(server(s, "ripgrep").sessions).toBe(0);
    expect(s.seenAt["s1"]).toBeUndefined();
  });

  it("session_closed of an unknown session changes nothing else", () => {
    const before = loaded();
    const s = apply(before, { kind: "session_closed", session: "nope", server: "ripgrep", reason: "" }, 5000);
    expect(s.sessions).toEqual(before.sessions);
    expect(server(s, "ripgrep").sessions).toBe(1);
  });
});

describe("health", () => {
  it("sets health and reason of that server only", () => {
    const s = apply(loaded(), { kind: "health", server: "ripgrep", health: "down", reason: "crashed 3 times" }, 0);
    expect(server(s, "ripgrep").health).toBe("down");
    expect(server(s, "ripgrep").reason).toBe("crashed 3 times");
    expect(server(s, "fs").health).toBe("idle");
  });

  it("adds a server it did not know", () => {
    const s = apply(loaded(), { kind: "health", server: "new", health: "degraded", reason: "slow" }, 0);
    expect(server(s, "new").health).toBe("degraded");
  });
});

describe("event", () => {
  it("appends to the server's timeline and leaves the figures to the supervisor's row", () => {
    let s = loaded();
    const before = server(s, "ripgrep");
    s = apply(s, { kind: "event", entry: entry("ripgrep", { kind: "restart" }) }, 0);
    s = apply(s, {
      kind: "event",
      entry: entry("ripgrep", { kind: "request", method: "tools/call", tool: "search", outcome: "timeout", duration_ms: 50000 }),
    }, 0);
    expect(s.timelines["ripgrep"]?.map((e) => e.event.kind)).toEqual(["restart", "request"]);
    expect(server(s, "ripgrep")).toEqual(before);
    expect(s.timelines["fs"]).toBeUndefined();
  });

  it("keeps at most TIMELINE_CAP events", () => {
    let s = loaded();
    for (let i = 0; i < TIMELINE_CAP + 10; i++) {
      s = apply(s, { kind: "event", entry: entry("ripgrep", { kind: "request", ts_ms: i }) }, 0);
    }
    const t = s.timelines["ripgrep"] ?? [];
    expect(t).toHaveLength(TIMELINE_CAP);
    expect(t[0]?.event.ts_ms).toBe(10);
  });
});

describe("server", () => {
  it("replaces the row with the supervisor's, so its numbers agree", () => {
    const row = {
      ...server(loaded(), "ripgrep"),
      health: "degraded" as const,
      reason: "1 of 4 requests timed out in the last 5 min",
      requests: 4,
      timeouts: 1,
      p50_ms: 12,
      p95_ms: 66,
      restarts: 1,
      tools: [{ name: "search", calls: 4, errors: 0, timeouts: 1, p50_ms: 12, p95_ms: 66, bytes_out: 900, pin: "off" as const, diff: null }],
    };
    const s = apply(loaded(), { kind: "server", server: row }, 0);
    expect(server(s, "ripgrep")).toEqual(row);
    expect(server(s, "fs").health).toBe("idle");
  });

  it("adds a server it did not know, in name order", () => {
    const row = { ...blankServer("linear"), health: "down" as const, code: "W-SPAWN-NOT-FOUND" };
    const s = apply(loaded(), { kind: "server", server: row }, 0);
    expect(s.servers.map((x) => x.name)).toEqual(["fs", "linear", "ripgrep"]);
    expect(server(s, "linear").code).toBe("W-SPAWN-NOT-FOUND");
  });
});

describe("history", () => {
  it("replaces the timeline and keeps live events newer than it", () => {
    let s = loaded();
    s = apply(s, { kind: "event", entry: entry("ripgrep", { kind: "old", ts_ms: 5 }) }, 0);
    s = apply(s, { kind: "event", entry: entry("ripgrep", { kind: "live", ts_ms: 50 }) }, 0);
    s = applyHistory(s, "ripgrep", [entry("ripgrep", { kind: "a", ts_ms: 1 }), entry("ripgrep", { kind: "b", ts_ms: 10 })]);
    expect(s.timelines["ripgrep"]?.map((e) => e.event.kind)).toEqual(["a", "b", "live"]);
  });
});

describe("client and config events", () => {
  it("client events make a toast", () => {
    const s = apply(loaded(), {
      kind: "client",
      change: "reverted",
      client: "cursor",
      path: "/home/me/.cursor/mcp.json",
      servers: ["ripgrep"],
      message: "Cursor put back the original entry",
    }, 0);
    expect(s.toasts).toEqual([{ id: 1, kind: "warn", title: "A client undid Warden's edit", body: "Cursor put back the original entry" }]);
  });

  it("keeps the newest TOAST_CAP toasts, and dismisses by id", () => {
    let s = loaded();
    for (let i = 0; i < TOAST_CAP + 2; i++) s = reduce(s, { type: "toast", kind: "info", title: `t${i}`, body: "" });
    expect(s.toasts).toHaveLength(TOAST_CAP);
    expect(s.toasts[0]?.title).toBe("t2");
    const id = s.toasts[0]?.id ?? -1;
    s = reduce(s, { type: "dismiss_toast", id });
    expect(s.toasts.some((t) => t.id === id)).toBe(false);
  });

  it("probe reports land on their server", () => {
    const report = {
      server: "fs", command: ["x"], ok: true, ts_ms: 0, cold_start_ms: 1200, total_ms: 1500, tools: 3,
      tool_names: [], server_info: null, protocol_version: null, error: null, code: null, shutdown: "exited with status 0", stderr_tail: "",
    };
    const s = apply(loaded(), { kind: "probe", report }, 0);
    expect(server(s, "fs").last_probe?.cold_start_ms).toBe(1200);
  });
});

describe("selectors", () => {
  it("ages heartbeats and requests by the time since they were reported", () => {
    const req = { id: "a", method: "tools/call", tool: "search", age_ms: 1000, idle_ms: 200, progress: "3/10" };
    const s = apply(loaded(), { kind: "session_updated", session: session({ last_heartbeat_ms: 300, inflight: [req] }) }, 10_000);
    const sess = s.sessions[0];
    if (!sess) throw new Error("no session");
    expect(heartbeatAge(s, sess, 12_000)).toBe(2300);
    const inflight = inflightOf(s, "ripgrep", 12_000);
    expect(inflight).toHaveLength(1);
    expect(inflight[0]?.age_ms).toBe(3000);
    expect(inflight[0]?.idle_ms).toBe(2200);
    expect(inflight[0]?.id).toBe('"a"');
    expect(inflightOf(s, "fs", 12_000)).toEqual([]);
  });
});
