// The UI's one set of fixtures: builders of API values, each with everything filled in and
// what a case needs overridden. The unit tests (ui/tests/) and the dev mock (mock.ts, for
// `npm run dev`) both build from these. Dev and tests only: no production module imports it.
import type { Event, HistoryEntry, LimitValue, ServerStatus, SessionStatus, StatusReport } from "../bindings/api";
import { blankServer } from "../lib/store";

/** A healthy server row, seen now. */
export function server(name: string, over: Partial<ServerStatus> = {}): ServerStatus {
  return { ...blankServer(name), health: "healthy", reason: "answering normally", last_seen_ms: Date.now(), ...over };
}

/** A key of the limits report at its built-in default. */
export function limitValue(over: Partial<LimitValue> & { key: string }): LimitValue {
  return { value: 0, default: 0, source: "default", line: null, doc: "", fix: "", ...over };
}

export function session(over: Partial<SessionStatus> = {}): SessionStatus {
  return {
    id: "s1",
    server: "ripgrep",
    pid: 100,
    client: "claude-code 2.1.80",
    era: "legacy",
    adapted: false,
    last_heartbeat_ms: 500,
    state: "live",
    server_pid: 101,
    generation: 1,
    circuit_open: false,
    fallback: false,
    debug: false,
    sandbox: "off",
    config_hash: "abc",
    started_ms: 1_700_000_000_000,
    command: ["npx", "-y", "mcp-ripgrep"],
    inflight: [],
    approvals: [],
    stderr_tail: "",
    ...over,
  };
}

export function status(over: Partial<StatusReport> = {}): StatusReport {
  return {
    servers: [
      { ...blankServer("ripgrep"), health: "healthy", reason: "answering", sessions: 1 },
      { ...blankServer("fs"), health: "idle", reason: "no sessions" },
    ],
    sessions: [session()],
    supervisor: {
      pid: 1,
      socket: "/run/user/1000/warden/control.sock",
      config: "/home/me/.config/warden/config.toml",
      history: null,
      started_ms: 1_700_000_000_000,
      history_events: 0,
    },
    ...over,
  };
}

export function entry(server: string, ev: Partial<Event> & { kind: string }): HistoryEntry {
  return { server, event: { ts_ms: 1_700_000_000_000, ...ev } };
}
