// The window's state and how every answer and live event changes it. Pure: no I/O, no
// clock (callers pass `now`), so each rule is unit-tested (tests/store.test.ts).
import type {
  ApiEvent,
  ClientChangeKind,
  HistoryEntry,
  Orphan,
  ServerStatus,
  SessionStatus,
  StatusReport,
  SupervisorInfo,
} from "../bindings/api";
import type { AppState } from "../bindings/app";

export type ToastKind = "info" | "warn" | "error";

export interface Toast {
  id: number;
  kind: ToastKind;
  title: string;
  body: string;
}

export interface State {
  /** Servers, sorted by name. */
  servers: ServerStatus[];
  sessions: SessionStatus[];
  /** Local clock (ms) when each session's relative numbers (heartbeat age, request ages) were reported. */
  seenAt: Record<string, number>;
  supervisor: SupervisorInfo | null;
  /** A status answer has arrived at least once. */
  loaded: boolean;
  /** Why the last status request failed (cleared by the next good one). */
  statusError: string | null;
  /** Event timeline per server, oldest first. */
  timelines: Record<string, HistoryEntry[]>;
  orphans: Orphan[];
  app: AppState | null;
  toasts: Toast[];
  nextToastId: number;
}

export const TIMELINE_CAP = 500;
export const TOAST_CAP = 5;

export function initialState(): State {
  return {
    servers: [],
    sessions: [],
    seenAt: {},
    supervisor: null,
    loaded: false,
    statusError: null,
    timelines: {},
    orphans: [],
    app: null,
    toasts: [],
    nextToastId: 1,
  };
}

export type Action =
  | { type: "status"; report: StatusReport; now: number }
  | { type: "status_error"; message: string }
  | { type: "event"; event: ApiEvent; now: number }
  | { type: "history"; server: string; entries: HistoryEntry[] }
  | { type: "app"; state: AppState }
  | { type: "toast"; kind: ToastKind; title: string; body: string }
  | { type: "dismiss_toast"; id: number };

export function reduce(state: State, action: Action): State {
  switch (action.type) {
    case "status":
      return applyStatus(state, action.report, action.now);
    case "status_error":
      return { ...state, statusError: action.message };
    case "event":
      return apply(state, action.event, action.now);
    case "history":
      return applyHistory(state, action.server, action.entries);
    case "app":
      return { ...state, app: action.state };
    case "toast":
      return pushToast(state, action.kind, action.title, action.body);
    case "dismiss_toast":
      return { ...state, toasts: state.toasts.filter((t) => t.id !== action.id) };
  }
}

/** A fresh status replaces servers and sessions (the safety net under the live events). */
export function applyStatus(state: State, report: StatusReport, now: number): State {
  const seenAt: Record<string, number> = {};
  for (const s of report.sessions) seenAt[s.id] = now;
  return {
    ...state,
    servers: [...report.servers].sort(byName),
    sessions: report.sessions,
    seenAt,
    supervisor: report.supervisor,
    loaded: true,
    statusError: null,
  };
}

/** The history of one server replaces its timeline; live events newer than it are kept. */
export function applyHistory(state: State, server: string, entries: HistoryEntry[]): State {
  const last = entries.length > 0 ? (entries[entries.length - 1]?.event.ts_ms ?? 0) : -Infinity;
  const live = (state.timelines[server] ?? []).filter((e) => e.event.ts_ms > last);
  return {
    ...state,
    timelines: { ...state.timelines, [server]: cap([...entries, ...live]) },
  };
}

/** One live event from the supervisor. */
export function apply(state: State, event: ApiEvent, now: number): State {
  switch (event.kind) {
    case "session_opened":
    case "session_updated":
      return upsertSession(state, event.session, now);
    case "session_closed": {
      const sessions = state.sessions.filter((s) => s.id !== event.session);
      const seenAt = { ...state.seenAt };
      delete seenAt[event.session];
      return recount({ ...state, sessions, seenAt }, event.server);
    }
    case "health": {
      const s = withServer(state, event.server);
      return updateServer(s, event.server, (srv) => ({
        ...srv,
        health: event.health,
        reason: event.reason,
      }));
    }
    case "server": {
      // The supervisor's own row (figures, health, tools, chart), sent when it changes.
      const s = withServer(state, event.server.name);
      return updateServer(s, event.server.name, () => event.server);
    }
    case "event": {
      // The figures the event changes arrive with the next `server` row.
      const { server } = event.entry;
      const timeline = cap([...(state.timelines[server] ?? []), event.entry]);
      return { ...state, timelines: { ...state.timelines, [server]: timeline } };
    }
    case "probe": {
      const name = event.report.server;
      if (name === null) return state;
      const s = withServer(state, name);
      return updateServer(s, name, (srv) => ({ ...srv, last_probe: event.report }));
    }
    case "orphans":
      return { ...state, orphans: event.orphans };
    case "client": {
      // The pages that show clients ask again themselves (`useApi`'s `ON_CLIENTS`).
      const { kind, title } = clientToast(event.change);
      return pushToast(state, kind, title, event.message);
    }
    case "config_changed":
      // A server page asks for its limits again itself (`useApi`'s `onLimits`).
      return state;
    case "add_progress":
      // The Add dialog follows its own workflow's steps.
      return state;
    case "app":
      // The window sends the tray's state as its own `warden://app` event.
      return { ...state, app: event.event };
  }
}

export function clientToast(change: ClientChangeKind): { kind: ToastKind; title: string } {
  switch (change) {
    case "new_servers":
      return { kind: "info", title: "New MCP servers in a client config" };
    case "awaiting":
      return { kind: "warn", title: "A new MCP server awaits your approval" };
    case "wrapped":
      return { kind: "info", title: "Servers wrapped" };
    case "reverted":
      return { kind: "warn", title: "A client undid Warden's edit" };
    case "gave_up":
      return { kind: "warn", title: "Warden stopped rewriting a file" };
    case "failed":
      return { kind: "error", title: "Could not rewrite a client config" };
  }
}

function upsertSession(state: State, session: SessionStatus, now: number): State {
  const i = state.sessions.findIndex((s) => s.id === session.id);
  const sessions =
    i === -1
      ? [...state.sessions, session]
      : state.sessions.map((s, j) => (j === i ? session : s));
  const s = withServer({ ...state, sessions, seenAt: { ...state.seenAt, [session.id]: now } }, session.server);
  return recount(s, session.server);
}

/** Live session, unresponsive and in-flight counts of a server follow its sessions. */
function recount(state: State, server: string): State {
  const mine = state.sessions.filter((s) => s.server === server);
  return updateServer(state, server, (srv) => ({
    ...srv,
    sessions: mine.length,
    unresponsive: mine.filter((s) => s.state === "unresponsive").length,
    inflight: mine.reduce((n, s) => n + s.inflight.length, 0),
  }));
}

function updateServer(state: State, name: string, f: (s: ServerStatus) => ServerStatus): State {
  if (!state.servers.some((s) => s.name === name)) return state;
  return { ...state, servers: state.servers.map((s) => (s.name === name ? f(s) : s)) };
}

/** The state with a server of that name (a blank one until the next status fills it in). */
function withServer(state: State, name: string): State {
  if (state.servers.some((s) => s.name === name)) return state;
  return { ...state, servers: [...state.servers, blankServer(name)].sort(byName) };
}

export function blankServer(name: string): ServerStatus {
  return {
    name,
    health: "starting",
    reason: "just seen; waiting for the supervisor's report",
    sessions: 0,
    unresponsive: 0,
    inflight: 0,
    p50_ms: 0,
    p95_ms: 0,
    p99_ms: 0,
    requests: 0,
    errors: 0,
    timeouts: 0,
    retries: 0,
    restarts: 0,
    bytes_in: 0,
    bytes_out: 0,
    last_error: null,
    code: null,
    last_seen_ms: null,
    command: null,
    circuit_open: false,
    fallback: false,
    debug: false,
    sandbox: "off",
    last_probe: null,
    tools: [],
    latency: [],
    network_denied: [],
  };
}

function pushToast(state: State, kind: ToastKind, title: string, body: string): State {
  const toast: Toast = { id: state.nextToastId, kind, title, body };
  return {
    ...state,
    toasts: [...state.toasts, toast].slice(-TOAST_CAP),
    nextToastId: state.nextToastId + 1,
  };
}

function cap<T>(list: T[]): T[] {
  return list.length > TIMELINE_CAP ? list.slice(list.length - TIMELINE_CAP) : list;
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

// Selectors.

export function sessionsOf(state: State, server: string): SessionStatus[] {
  return state.sessions.filter((s) => s.server === server);
}

/** A session's heartbeat age now: the reported age plus the time since it was reported. */
export function heartbeatAge(state: State, session: SessionStatus, now: number): number {
  return session.last_heartbeat_ms + Math.max(0, now - (state.seenAt[session.id] ?? now));
}

/** The in-flight requests of a server's sessions, ages brought up to `now`, oldest first. */
export function inflightOf(
  state: State,
  server: string,
  now: number,
): Array<{ session: SessionStatus; id: string; method: string; tool: string | null; age_ms: number; idle_ms: number; progress: string | null }> {
  const out = [];
  for (const session of sessionsOf(state, server)) {
    const since = Math.max(0, now - (state.seenAt[session.id] ?? now));
    // A session that stopped reporting keeps its requests ageing, as the supervisor does.
    for (const r of session.inflight) {
      out.push({
        session,
        id: JSON.stringify(r.id),
        method: r.method,
        tool: r.tool,
        age_ms: r.age_ms + since,
        idle_ms: r.idle_ms + since,
        progress: r.progress,
      });
    }
  }
  return out.sort((a, b) => b.age_ms - a.age_ms);
}
