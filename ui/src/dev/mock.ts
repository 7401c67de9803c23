// Dev-only stand-in for the Rust app (`npm run dev` in a plain browser): answers `api` and
// `app` with realistic fixtures and sends live events. Never part of a production build
// (main.tsx imports it under `import.meta.env.DEV`). `?empty` shows a first run.
import { mockIPC } from "@tauri-apps/api/mocks";
import { emit } from "@tauri-apps/api/event";
import { CHANNELS } from "../bindings/api";
import { server, session } from "./fixtures";
import type {
  ApiEvent,
  AwaitingServer,
  Backup,
  ClientFile,
  ClientId,
  HistoryEntry,
  JsonValue,
  LimitValue,
  Overview,
  Request,
  Response,
  ServerStatus,
  SessionStatus,
  ToolPolicy,
} from "../bindings/api";
import type { AppRequest, AppResponse, AppState, RegistryAnswer, RegistryRequest, Signin } from "../bindings/app";

const empty = new URLSearchParams(window.location.search).has("empty");
const now = () => Date.now();
const CONFIG = "/home/dev/.config/warden/config.toml";
/** What the sandbox hides by default, as the supervisor lists it. */
const SANDBOX_HIDDEN = [".ssh", ".aws", ".gnupg", ".kube", ".docker", ".netrc", ".config/gh", ".local/share/keyrings", ".config/warden", ".local/state/warden"]
  .map((d) => `/home/dev/${d}`)
  .concat(["/run", "/var/run", "/run/user/1000"]);
const WARDEN = "/usr/bin/warden";
/** What stays read-only inside every grant (`READ_ONLY_IN_GRANTS`). */
const READ_ONLY_NAMES = [".git/config", ".git/hooks", ".git/info", ".vscode", ".idea", ".zed", ".cursor", ".gemini", ".claude", ".mcp.json", ".envrc", ".direnv", ".github/workflows"];
/** What the supervisor finds in a granted folder; any other folder holds none of those names. */
const GRANT_FOLDERS: Record<string, { read_only: string[]; git: boolean }> = {
  "/home/dev/projects/app": { git: true, read_only: [".git/config", ".git/hooks", ".git/info", ".vscode", ".github/workflows"] },
  "/home/dev/notes": { git: false, read_only: [".envrc"] },
};


const servers: ServerStatus[] = empty ? [] : [
  server("ripgrep", {
    reason: "answering normally (p95 340 ms over the last 5 min)", sessions: 2, inflight: 1, p50_ms: 42, p95_ms: 340,
    p99_ms: 1900, requests: 1843, errors: 3, retries: 2, restarts: 1, bytes_in: 512_000, bytes_out: 98_400_000,
    command: ["npx", "-y", "mcp-ripgrep"],
    tools: [
      { name: "search", calls: 1610, errors: 1, timeouts: 0, p50_ms: 38, p95_ms: 310, bytes_out: 97_900_000, pin: "off", diff: null },
      { name: "count-matches", calls: 233, errors: 2, timeouts: 0, p50_ms: 61, p95_ms: 402, bytes_out: 500_000, pin: "off", diff: null },
    ],
    latency: Array.from({ length: 40 }, (_, i) => {
      const t = Math.floor(now() / 60_000) * 60_000 - (39 - i) * 60_000;
      return { t_ms: t, requests: 20 + (i % 7) * 5, errors: i === 25 ? 1 : 0, timeouts: 0, p50_ms: 35 + (i % 5) * 3, p95_ms: 260 + ((i * 37) % 120) };
    }),
  }),
  server("github", {
    health: "degraded", reason: "3 of the last 20 requests timed out (idle_timeout_ms 50 s)", sessions: 1, inflight: 1,
    p50_ms: 820, p95_ms: 12_400, p99_ms: 49_000, requests: 210, timeouts: 3, errors: 1,
    last_error: "timeout: tools/call (tool search_issues) after 50000 ms", command: ["npx", "-y", "@modelcontextprotocol/server-github"],
  }),
  server("filesystem", {
    health: "down", reason: "the server exited 5 times in a row; the breaker is open until 14:32:10", circuit_open: true,
    restarts: 5, last_error: "server exited: exit status 1 — Error: ENOENT: no such file or directory, scandir '/home/dev/missing'",
    command: ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/dev/missing"],
  }),
  server("docs-search", { health: "fallback", reason: "served by local ripgrep (force_fallback)", fallback: true, sessions: 1 }),
  server("linear", {
    health: "down",
    reason: "failed to start 4 min ago (W-SPAWN-NOT-FOUND): npx -y linear-mcp: `npx` was not found on PATH (/usr/bin:/bin); fix: give npx's absolute path",
    last_error: "npx -y linear-mcp: `npx` was not found on PATH (/usr/bin:/bin)", code: "W-SPAWN-NOT-FOUND",
    command: ["npx", "-y", "linear-mcp"], last_seen_ms: now() - 240_000,
  }),
  server("context7", { health: "idle", reason: "no live sessions; last seen 2 h ago", last_seen_ms: now() - 7_200_000 }),
];

const started = now() - 3_725_000;
const sessions: SessionStatus[] = empty ? [] : [
  session({
    id: "b1-4211", pid: 4211, last_heartbeat_ms: 800, server_pid: 4219, generation: 2, config_hash: "9f2c", started_ms: started,
    inflight: [{ id: 41, method: "tools/call", tool: "advanced-search", age_ms: 7_300, idle_ms: 1_100, progress: "12/40 files" }],
    stderr_tail: "npm warn exec The following package was not found and will be installed: mcp-ripgrep@0.4.0\nMCP ripgrep server running on stdio\n",
  }),
  session({
    id: "b2-5120", pid: 5120, client: "cursor 1.7.2", era: "modern", last_heartbeat_ms: 1_500, server_pid: 5124, config_hash: "9f2c", started_ms: now() - 600_000,
  }),
  session({
    id: "b3-6001", server: "github", pid: 6001, client: "claude-code 2.1.80 (sub-agent)", last_heartbeat_ms: 7_400, state: "unresponsive",
    server_pid: 6007, config_hash: "1a7e", started_ms: now() - 95_000, command: ["npx", "-y", "@modelcontextprotocol/server-github"],
    inflight: [{ id: "req-9", method: "tools/call", tool: "search_issues", age_ms: 38_000, idle_ms: 38_000, progress: null }],
    stderr_tail: "GitHub MCP Server running on stdio\nwarning: rate limit 4990/5000\n",
  }),
  session({
    id: "b4-7002", server: "docs-search", pid: 7002, client: null, last_heartbeat_ms: 300, server_pid: 7010,
    generation: 3, fallback: true, debug: true, config_hash: "33aa", started_ms: now() - 30_000, command: ["uvx", "docs-search-mcp"],
  }),
];

const KEYS: Array<[string, JsonValue, string, string]> = [
  ["idle_timeout_ms", 50000, "Fail a request that has had no response, progress or activity for this long. 50 s is below the 60 s after which common clients give up on their own.", "1000..=3600000"],
  ["max_timeout_ms", 600000, "Fail a request after this long even while it reports progress.", "1000..=86400000"],
  ["startup_timeout_ms", 45000, "Time a (re)started server has to answer its handshake. Covers npx/uvx cold starts.", "1000..=600000"],
  ["stderr_is_activity", true, "Whether server stderr output resets the idle clock of its requests.", "true or false"],
  ["max_message_bytes", 268435456, "Largest single message relayed in either direction.", "1048576..=4294967296"],
  ["retries", 2, "How many times a safe request is re-sent after a transient failure.", "0..=10"],
  ["backoff_ms", 250, "First restart/retry delay; it doubles on each consecutive failure.", "0..=60000"],
  ["max_backoff_ms", 30000, "Upper bound of the doubling restart/retry delay.", "0..=600000"],
  ["circuit_failures", 5, "Consecutive failures that open the circuit breaker.", "1..=100"],
  ["circuit_cooldown_ms", 30000, "Time the breaker stays open before one trial request may half-open it.", "1000..=3600000"],
  ["debug", false, "Full message logging for this server, secrets redacted.", "true or false"],
  ["fallback", "off", "\"rg\" serves ripgrep tools locally when the server is down (circuit open).", "\"off\" or \"rg\""],
  ["force_fallback", false, "Serve from local ripgrep now, whatever the server's state.", "true or false"],
  ["fallback_roots", [], "Absolute directories the ripgrep fallback may search.", "a list of absolute paths"],
  ["clamp", {}, "Per-tool caps on numeric arguments.", "{ tool = { arg = N } }"],
  ["result_soft_cap_bytes", 0, "Truncate a larger tool result's text content, with a visible note (0 = off).", "0 or 1024..="],
  ["idempotent_tools", [], "Tools that are safe to call twice.", "a list of tool names"],
  ["sandbox", "off", "\"on\" runs the server in a sandbox: the whole file system read-only but for sandbox_write and a folder of its own.", "\"on\" or \"off\""],
  ["sandbox_write", [], "Folders a sandboxed server may write; `~` is your home.", "a list of absolute paths"],
  ["sandbox_deny", [], "Paths a sandboxed server may not read, besides the defaults.", "a list of absolute paths"],
  ["sandbox_network", "none", "A sandboxed server's network: \"none\", \"host\", or a list of destinations.", "\"none\", \"host\" or a list"],
];

const config: Record<string, Record<string, JsonValue>> = {
  defaults: { idle_timeout_ms: 40000 },
  ripgrep: { max_message_bytes: 536870912, clamp: { "advanced-search": { maxResults: 500 } } },
  "docs-search": { force_fallback: true, debug: true },
  github: { sandbox: "on", sandbox_write: ["~/projects/app", "/home/dev/notes", "/home/dev/scratch"], sandbox_network: ["@npm", "api.github.com"] },
};

/** `sandbox_grants` of a limits report: each folder `name` may write, as the supervisor reads it. */
function grantsOf(name: string) {
  const write = config[name]?.["sandbox_write"];
  return (Array.isArray(write) ? write : []).filter((w): w is string => typeof w === "string").map((w) => {
    const grant = w.startsWith("~/") ? `/home/dev${w.slice(1)}` : w;
    const found = GRANT_FOLDERS[grant] ?? { git: false, read_only: [] };
    return { grant, git: found.git, read_only: found.read_only.map((n) => `${grant}/${n}`) };
  });
}

/** The strings a key takes when it takes one of a few (`CHOICES`). */
const CHOICES: Record<string, string[]> = { fallback: ["off", "rg"], sandbox: ["off", "on"], sandbox_network: ["none", "host"] };

function limitsOf(name: string): LimitValue[] {
  return KEYS.map(([key, def, doc, fix], i) => {
    const mine = config[name]?.[key];
    const dflt = config["defaults"]?.[key];
    const source = mine !== undefined ? "server" : dflt !== undefined ? "defaults" : "default";
    return {
      key, default: def, doc, fix,
      value: mine ?? dflt ?? def, source, line: source === "default" ? null : 3 + i,
      // As the supervisor answers: the strings a key takes when it takes one of a few.
      ...(CHOICES[key] ? { choices: CHOICES[key] } : {}),
    };
  });
}

function setFlag(name: string, key: string, on: boolean): Response {
  (config[name] ??= {})[key] = on;
  const s = servers.find((x) => x.name === name);
  if (s && key === "force_fallback") s.fallback = on;
  if (s && key === "debug") s.debug = on;
  void send({ kind: "config_changed", server: name });
  const mine = sessions.filter((x) => x.server === name);
  return {
    kind: "command", ok: true, config: CONFIG,
    message: `${key} = ${on} in [servers.${name}] of ${CONFIG}; ${mine.length} session(s) reloaded it`,
    sessions: mine.map((x) => ({ session: x.id, pid: x.pid, ok: true, message: "reloaded config (config_reloaded)" })),
  };
}

const history: HistoryEntry[] = [];
function addEvent(server: string, ev: Omit<HistoryEntry["event"], "ts_ms">, ts = now()): HistoryEntry {
  const e = { server, event: { ts_ms: ts, ...ev } };
  history.push(e);
  return e;
}
if (!empty) {
  const t0 = now() - 600_000;
  addEvent("ripgrep", { kind: "session_start", detail: "claude-code 2.1.80" }, t0);
  addEvent("ripgrep", { kind: "installing", detail: "npm warn exec … will be installed: mcp-ripgrep@0.4.0" }, t0 + 1000);
  addEvent("ripgrep", { kind: "request", method: "initialize", id: 0, duration_ms: 8400, outcome: "ok", bytes_in: 310, bytes_out: 1200 }, t0 + 9000);
  addEvent("ripgrep", { kind: "request", method: "tools/call", id: 3, tool: "search", duration_ms: 120, outcome: "ok", bytes_in: 180, bytes_out: 97_000_000 }, t0 + 60_000);
  addEvent("ripgrep", { kind: "server_exit", detail: "killed by signal 9 (SIGKILL)" }, t0 + 120_000);
  addEvent("ripgrep", { kind: "restart", detail: "after 250 ms (generation 2)" }, t0 + 120_300);
  addEvent("ripgrep", { kind: "replayed", detail: "initialize, notifications/initialized" }, t0 + 121_000);
  addEvent("ripgrep", { kind: "retry", method: "tools/call", id: 7, tool: "count-matches", detail: "read-only tool, attempt 1 of 2" }, t0 + 121_100);
  addEvent("github", { kind: "request", method: "tools/call", id: "req-4", tool: "search_issues", duration_ms: 50000, outcome: "timeout" }, t0 + 300_000);
  addEvent("filesystem", { kind: "start_failed", detail: "exit status 1" }, t0 + 400_000);
  addEvent("filesystem", { kind: "circuit", detail: "open after 5 failures; retry in 30 s" }, t0 + 401_000);
}

function file(over: Partial<ClientFile> & Pick<ClientFile, "client" | "client_name" | "path">): ClientFile {
  return { format: "json", project: null, active: true, exists: true, servers: [], kept_aside: [], error: null, notices: [], given_up: false, ...over };
}

const files: ClientFile[] = empty
  ? [file({ client: "cursor", client_name: "Cursor", path: "/home/dev/.cursor/mcp.json", exists: false })]
  : [
      file({
        client: "claude-code", client_name: "Claude Code", path: "/home/dev/.claude.json",
        notices: [{ client: "claude-code", kind: "restart", message: "Restart Claude Code sessions (or run /mcp) to pick up the change." }],
        servers: [
          { name: "ripgrep", scope: [], env_keys: [], reverted: false, enabled: true, state: "wrapped", bridge: WARDEN, server: "ripgrep", command: "npx", args: ["-y", "mcp-ripgrep@0.4.0"], risks: [] },
          { name: "github", scope: [], env_keys: ["GITHUB_TOKEN"], reverted: true, enabled: true, state: "unwrapped", command: "npx", args: ["-y", "@modelcontextprotocol/server-github@latest"],
            risks: [{ kind: "unpinned", detail: "npx fetches @modelcontextprotocol/server-github@latest at whatever version is current at each start; pin one (@modelcontextprotocol/server-github@1.2.3)" }] },
          { name: "linear", scope: [], env_keys: [], reverted: false, enabled: true, state: "skipped", reason: "remote server (url): nothing to bridge", risks: [] },
          { name: "filesystem", scope: ["projects", "/home/dev/src/app"], env_keys: [], reverted: false, enabled: true, state: "unwrapped", command: "bash", args: ["-c", "curl -fsSL https://get.example.dev/fs.sh | sh"],
            risks: [{ kind: "shell", detail: "bash runs a command line that pipes into a shell: curl -fsSL https://get.example.dev/fs.sh | sh" }] },
        ],
      }),
      file({
        client: "vscode", client_name: "VS Code", path: "/home/dev/.config/Code/User/mcp.json", format: "jsonc",
        notices: [{ client: "vscode", kind: "approval", message: "VS Code asks you to trust the changed server the next time it starts it." }],
        servers: [{ name: "context7", scope: [], env_keys: [], reverted: false, enabled: true, state: "unwrapped", command: "npx", args: ["-y", "@upstash/context7-mcp@1.0.14"], risks: [] }],
      }),
      file({
        client: "zed", client_name: "Zed", path: "/home/dev/.config/zed/settings.json", format: "jsonc",
        error: "line 14, column 3: expected ',' or '}' after an object member", given_up: false,
      }),
      file({ client: "cursor", client_name: "Cursor", path: "/home/dev/.cursor/mcp.json", exists: false }),
      file({ client: "windsurf", client_name: "Windsurf", path: "/home/dev/.codeium/windsurf/mcp_config.json", exists: false }),
    ];

const backups: Backup[] = empty ? [] : [
  { id: "claude-code-20260314T093015123Z", file: "/home/dev/.local/state/warden/backups/claude-code-20260314T093015123Z.bak",
    original: "/home/dev/.claude.json", client: "claude-code", created_unix_ms: now() - 86_400_000, created: "2026-03-14T09:30:15.123Z", size: 18_422 },
];

let autoRewrite = !empty;
let withoutAsking = false;
let probeIde = true;
const kept = new Set<string>();

/** What the supervisor asks about with auto-rewrite on and asking: unwrapped, not kept. */
function awaiting(): AwaitingServer[] {
  if (!autoRewrite || withoutAsking) return [];
  return files.flatMap((f) =>
    f.exists && f.active
      ? f.servers
          .filter((s) => s.state === "unwrapped" && !kept.has(`${f.path}:${s.name}`))
          .map((server) => ({ client: f.client, client_name: f.client_name, path: f.path, server }))
      : [],
  );
}

function entryDiff(path: string, name: string, wrap: boolean, command: string, args: string[]): string {
  const plain = `"${name}": { "command": "${command}", "args": [${args.map((a) => `"${a}"`).join(", ")}] }`;
  const wrapped = `"${name}": { "command": "${WARDEN}", "args": ["bridge", "--server", "${name}", "--", "${command}", ${args.map((a) => `"${a}"`).join(", ")}] }`;
  const [from, to] = wrap ? [plain, wrapped] : [wrapped, plain];
  return `--- ${path}\n+++ ${path}\n@@ -3,3 +3,3 @@\n   "mcpServers": {\n-    ${from},\n+    ${to},\n     "other": { "command": "node" }\n`;
}

function clientEdit(wrap: boolean, path: string | null, name: string | null, dryRun: boolean, moveSecrets: boolean): Response {
  const targets = files.filter((f) => f.exists && (path === null || f.path === path));
  const changes = targets.map((f) => {
    const matching = f.servers.filter((s) => (name === null || s.name === name) && s.state === (wrap ? "unwrapped" : "wrapped"));
    if (f.error) {
      return { client: f.client, path: f.path, changed: [], skipped: [], diff: "", written: false, backup: null, secrets: [], notices: [], error: f.error };
    }
    const diff = matching.map((s) => (s.state === "skipped" ? "" : entryDiff(f.path, s.name, wrap, s.command, s.args))).join("");
    if (!dryRun) {
      f.servers = f.servers.map((s) => {
        if (!matching.includes(s) || s.state === "skipped") return s;
        return wrap
          ? { name: s.name, scope: s.scope, env_keys: s.env_keys, risks: s.risks, reverted: false, enabled: s.enabled, state: "wrapped", bridge: WARDEN, server: s.name, command: s.command, args: s.args }
          : { name: s.name, scope: s.scope, env_keys: s.env_keys, risks: s.risks, reverted: false, enabled: s.enabled, state: "unwrapped", command: s.command, args: s.args };
      });
      if (diff) backups.unshift({ ...backups[0]!, id: `${f.client}-${Date.now()}`, original: f.path, client: f.client, created_unix_ms: now(), created: new Date().toISOString() });
    }
    return {
      client: f.client, path: f.path, changed: matching.map((s) => s.name),
      skipped: f.servers.filter((s) => s.state === "skipped" && (name === null || s.name === name)).map((s) => ({ name: s.name, reason: s.state === "skipped" ? s.reason : "" })),
      diff, written: !dryRun && diff !== "", backup: !dryRun && diff !== "" ? `${f.client}-${Date.now()}` : null,
      secrets: moveSecrets ? matching.flatMap((s) => s.env_keys.filter((k) => /TOKEN|KEY|SECRET|PASSWORD/i.test(k)).map((k) => `${s.name}/${k}`)) : [],
      notices: f.notices, error: null,
    };
  });
  return { kind: "client_edit", changes };
}

async function send(e: ApiEvent): Promise<void> {
  await emit(CHANNELS.api, e);
}

function handleApi(req: Request): Response | Promise<Response> {
  switch (req.op) {
    case "status":
      return {
        kind: "status", servers, sessions,
        supervisor: { pid: 3100, socket: "/run/user/1000/warden/control.sock", config: CONFIG, history: null, started_ms: started, history_events: history.length },
      };
    case "history": {
      const mine = history.filter((h) => req.server === null || h.server === req.server);
      return { kind: "history", entries: mine.slice(-(req.limit ?? 200)) };
    }
    case "restart": {
      const mine = sessions.filter((x) => x.server === req.server);
      if (mine.length === 0) {
        return { kind: "command", ok: false, config: null, sessions: [], message: `no live session of ${req.server} to restart; it starts when a client next uses it` };
      }
      return {
        kind: "command", ok: true, config: null, message: `restarted ${req.server} in ${mine.length} session(s)`,
        sessions: mine.map((x) => ({ session: x.id, pid: x.pid, ok: x.state === "live", message: x.state === "live" ? "restarted (generation 3)" : "no answer within 5 s" })),
      };
    }
    case "fallback":
      return setFlag(req.server, "force_fallback", req.on);
    case "debug":
      return setFlag(req.server, "debug", req.on);
    case "limits":
      return { kind: "limits", server: req.server, config: CONFIG, keys: limitsOf(req.server), warnings: req.server === "ripgrep" ? ["unknown key `idle_timout_ms` in [servers.ripgrep] (line 12): ignored"] : [], error: null,
        home: "/home/dev", sandbox_hidden: SANDBOX_HIDDEN, sandbox_read_only_names: READ_ONLY_NAMES, sandbox_grants: grantsOf(req.server), tools: MOCK_POLICIES };
    case "set_limit": {
      const key = KEYS.find((k) => k[0] === req.key);
      if (!key) return { kind: "error", code: "invalid", message: `\`${req.key}\` is not a config key (see docs/config.md)` };
      if (typeof req.value === "number" && req.key.endsWith("_ms") && req.value < 1000) {
        return { kind: "error", code: "config", message: `${req.key} = ${req.value} is out of range. Fix: ${key[3]}` };
      }
      const table = (config[req.server] ??= {});
      if (req.add || req.remove) {
        const had = Array.isArray(table[req.key]) ? (table[req.key] as string[]) : [];
        const kept = had.filter((x) => !req.remove?.includes(x));
        table[req.key] = [...kept, ...(req.add ?? []).filter((x) => !kept.includes(x))];
      } else if (req.value === null) delete table[req.key];
      else table[req.key] = req.value;
      void send({ kind: "config_changed", server: req.server });
      return { kind: "command", ok: true, config: CONFIG, sessions: [], message: req.value === null ? `${req.key} removed from [servers.${req.server}]` : `${req.key} = ${JSON.stringify(req.value)} in [servers.${req.server}]` };
    }
    case "clients":
      return { kind: "clients", files, auto_rewrite: autoRewrite, without_asking: withoutAsking, awaiting: awaiting(), probe_ide: probeIde, watching: true, warden: WARDEN, sandbox_works: true };
    case "client_edit":
      return clientEdit(req.wrap, req.file, req.server, req.dry_run, req.wrap && req.move_secrets);
    case "backups":
      return { kind: "backups", backups };
    case "restore": {
      const b = backups.find((x) => x.id === req.id);
      if (!b) return { kind: "error", code: "not_found", message: `no backup ${req.id}` };
      return { kind: "restore", backup: b, written: !req.dry_run, previous: req.dry_run ? null : `restore-${Date.now()}`, diff: entryDiff(b.original, "github", false, "npx", ["-y", "@modelcontextprotocol/server-github"]) };
    }
    case "probe": {
      const s = servers.find((x) => x.name === req.server);
      const ok = s?.health !== "down";
      const report = {
        server: req.server, command: s?.command ?? [], ok, ts_ms: now(), cold_start_ms: ok ? 2_340 : null, total_ms: 2_900,
        tools: ok ? 5 : null, tool_names: [], server_info: null, protocol_version: ok ? "2025-06-18" : null, era: ok ? ("legacy" as const) : undefined,
        error: ok ? null : "the server exited with status 1 before answering server/discover; its last stderr line: Error: ENOENT: no such file or directory",
        code: ok ? null : "W-SPAWN-EXITED",
        shutdown: ok ? "exited with status 0" : "exited with status 1", stderr_tail: ok ? "" : "Error: ENOENT: no such file or directory\n",
      };
      void send({ kind: "probe", report });
      return { kind: "probe", ...report };
    }
    case "auto_rewrite":
      autoRewrite = req.on;
      withoutAsking = req.on && req.without_asking;
      return { kind: "auto_rewrite", on: autoRewrite, without_asking: withoutAsking };
    case "probe_ide":
      probeIde = req.on;
      return { kind: "probe_ide", on: probeIde };
    case "keep_unwrapped":
      kept.add(`${req.file}:${req.server}`);
      return { kind: "kept_unwrapped", servers: [req.server] };
    case "server_add":
      return serverAdd(req);
    case "set_tool_policy": {
      const t = MOCK_POLICIES.find((x) => x.tool === req.tool);
      if (!t) return { kind: "error", code: "not_found", message: `\`${req.server}\` has no tool named "${req.tool}" that Warden knows of` };
      // As the supervisor moves it: by its own entry (a glob or selector elsewhere stays).
      const by = req.policy === "allow" ? null : req.policy === "ask" ? "tools_ask" : "tools_deny";
      Object.assign(t, { policy: req.policy, key: by, entry: by && t.name_entry });
      void send({ kind: "config_changed", server: req.server });
      return { kind: "command", ok: true, config: CONFIG, sessions: [], message: `${req.tool} is now ${req.policy} in [servers.${req.server}]` };
    }
    case "projects":
      return { kind: "projects", ...projectsOverview() };
    case "set_apply":
    case "set_remove":
      return setEdit(req);
    case "approvals":
      return { kind: "approvals", approvals: [] };
    case "approvals_forget":
      for (const t of MOCK_POLICIES) if (req.tool === null || t.tool === req.tool) t.always = t.always_current = false;
      return { kind: "command", ok: true, message: `forgot the always-allow of ${req.tool ?? "every tool"} of \`${req.server}\``, config: null, sessions: [] };
    default:
      return { kind: "error", code: "invalid", message: `the mock does not do ${req.op}` };
  }
}

/** The mock's sets (config.toml's `[sets.NAME]`) and the projects each was applied in, per client. */
const SETS: Record<string, string[]> = empty ? {} : { web: ["github", "ripgrep"], docs: ["context7"] };
const applied = new Map<string, Set<ClientId>>([["web|/home/dev/src/app", new Set<ClientId>(["claude-code"])]]);
const PROJECT_FILE: Partial<Record<ClientId, string>> = { "claude-code": ".mcp.json", cursor: ".cursor/mcp.json", vscode: ".vscode/mcp.json", zed: ".zed/settings.json" };

function projectsOverview(): Overview {
  const dirs = new Set(["/home/dev/src/app", "/home/dev/src/site", ...[...applied.keys()].map((k) => k.split("|")[1] as string)]);
  const sets = Object.entries(SETS).map(([name, servers]) => ({
    name, servers, unknown: servers.filter((x) => !names().has(x)),
    applied: [...applied.entries()].filter(([k]) => k.startsWith(`${name}|`)).flatMap(([k, cs]) =>
      [...cs].map((client) => ({ client, file: `${k.split("|")[1]}/${PROJECT_FILE[client]}`, project: k.split("|")[1] as string, present: servers, missing: [], by_warden: true }))),
  }));
  const projects = [...dirs].map((dir) => ({
    dir, exists: true, found_in: dir === "/home/dev/src/app" ? ["claude-code", "warden"] : dir === "/home/dev/src/site" ? ["codex"] : ["warden"],
    sets: sets.filter((s) => s.applied.some((a) => a.project === dir)).map((s) => s.name),
    clients: files.filter((f) => f.exists && f.active && !f.error).map((f) => {
      const mine = sets.flatMap((s) => s.applied.filter((a) => a.project === dir && a.client === f.client).flatMap(() => s.servers));
      const user = f.servers.filter((e) => e.scope.length === 0 && e.state !== "skipped");
      return {
        client: f.client, project_file: mine.length > 0 ? `${dir}/${PROJECT_FILE[f.client]}` : null,
        starts: [
          ...mine.map((name) => ({ name, server: name, wrapped: true, enabled: true, from: "project" })),
          ...user.map((e) => ({ name: e.name, server: e.name, wrapped: e.state === "wrapped", enabled: e.enabled, from: "user" })),
        ],
      };
    }),
  }));
  return { sets, projects };
}

/** `SetApply` and `SetRemove`: a dry run answers each file's change and a plan; a write with that plan records it. */
function setEdit(req: Extract<Request, { op: "set_apply" | "set_remove" }>): Response {
  const servers = SETS[req.set];
  if (!servers) return { kind: "error", code: "invalid", message: `no set named "${req.set}" in ${CONFIG}. Nothing was written. Fix: add it there [W-CLIENT-USAGE]` };
  const dir = req.project ?? "/home/dev";
  const key = `${req.set}|${dir}`;
  const apply = req.op === "set_apply";
  const had = applied.get(key) ?? new Set<ClientId>();
  const clients = apply ? req.clients : [...had].filter((c) => req.clients.length === 0 || req.clients.includes(c));
  if (!apply && clients.length === 0) return { kind: "error", code: "io", message: `set "${req.set}" added nothing to ${dir}: nothing to remove [W-CLIENT-NO-SUCH-SERVER]` };
  const skipped = clients.filter((c) => !PROJECT_FILE[c]);
  const written = !req.dry_run;
  const body = servers.map((n) => `+    "${n}": { "command": "warden", "args": ["bridge", "--server", "${n}", "--", "npx", "-y", "${n}-mcp"] }`).join(",\n");
  const fileOf = (c: ClientId) => `${dir}/${PROJECT_FILE[c]}`;
  const files_ = clients.filter((c) => PROJECT_FILE[c]).map((c) => ({
    change: {
      client: c, path: fileOf(c), changed: servers, skipped: [], written, backup: null, secrets: [], notices: [], error: null,
      diff: apply ? `--- ${fileOf(c)}\n+++ ${fileOf(c)}\n@@ -0,0 +1,5 @@\n+{\n+  "mcpServers": {\n${body}\n+  }\n+}\n` : `--- ${fileOf(c)}\n+++ ${fileOf(c)}\n@@ -1,5 +0,0 @@\n-{\n-  "mcpServers": {}\n-}\n`,
    },
    kept: [], whole_file: true,
  }));
  const plan = files_.map((f) => ({ path: f.change.path, fingerprint: "mock", changed: servers }));
  if (written) {
    if (apply) applied.set(key, new Set([...had, ...clients.filter((c) => PROJECT_FILE[c])]));
    else applied.delete(key);
  }
  return { kind: "set", files: files_, skipped, plan, warning: null };
}

/** The names the mock's client files have (a dry run refuses them, as the supervisor does). */
const names = () => new Set(files.flatMap((f) => f.servers.map((s) => s.name)));
const wait = (ms: number) => new Promise((r) => window.setTimeout(r, ms));

/** `ServerAdd`: a dry run answers the files' changes (refusing a name as the supervisor does),
 * a write reports its steps (`add_progress`), then answers with the first start. */
function serverAdd(req: Extract<Request, { op: "server_add" }>): Response | Promise<Response> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(req.name))
    return { kind: "error", code: "invalid", message: `${JSON.stringify(req.name)} cannot be a server name. Fix: use letters, digits, '-', '_' or '.'` };
  if (names().has(req.name))
    return { kind: "error", code: "invalid", message: `/home/dev/.claude.json: a server named "${req.name}" is already there. Nothing was written to any file. Fix: pick another name` };
  const changes = req.clients.map((c) => ({
    client: c, path: `/home/dev/.config/${c}/mcp.json`, changed: [req.name], skipped: [], written: !req.dry_run,
    backup: req.dry_run ? null : "20261126-142700-1", secrets: Object.keys(req.secrets), notices: [], error: null,
    diff: `--- a\n+++ b\n@@ -1,2 +1,5 @@\n {\n   "mcpServers": {\n+    "${req.name}": {\n+      "command": "${WARDEN}",\n+      "args": ["bridge", "--server", "${req.name}", "--", "${req.command}"]\n+    }\n`,
  }));
  const preset = ["npx", "bunx"].includes(req.command) ? "@npm" : req.command === "uvx" ? "@pypi" : null;
  const answer = { kind: "server_add" as const, risks: [], preset, changes, probe: null, network: null };
  if (req.dry_run) return answer;
  const step = (step: Extract<ApiEvent, { kind: "add_progress" }>["step"]) => send({ kind: "add_progress", server: req.name, step });
  const c = req.sandbox;
  const firstStartOnly = !!c && c.first_start && !c.keep && !(preset && c.registry);
  return (async () => {
    if (firstStartOnly) await step({ step: "network", state: "allowed" });
    await wait(400);
    for (const f of files.filter((f) => f.exists && req.clients.includes(f.client)))
      f.servers.push({ name: req.name, scope: [], env_keys: Object.keys(req.env), risks: [], reverted: false, enabled: true,
        ...(req.wrap ? { state: "wrapped", bridge: WARDEN, server: req.name } : { state: "unwrapped" }), command: req.command, args: req.args } as ClientFile["servers"][number]);
    await step({ step: "written", changes });
    await step({ step: "first_start" });
    await wait(1500);
    const probe = {
      server: req.name, command: [req.command, ...req.args], ok: true, ts_ms: now(), cold_start_ms: 1_240, total_ms: 1_400, tools: 3,
      tool_names: ["search", "fetch", "summarize"], server_info: null, protocol_version: "2026-07-28", era: "modern" as const, error: null, code: null,
      shutdown: "exited with status 0", stderr_tail: "",
    };
    if (firstStartOnly) await step({ step: "network", state: "taken" });
    return { ...answer, probe, network: firstStartOnly ? ("taken" as const) : null };
  })();
}

const MOCK_POLICIES: ToolPolicy[] = [
  { tool: "search_code", policy: "allow", key: null, entry: null, name_entry: "search_code", allow_listed: true, selectors: ["@readonly", "@openworld"], known: true, always: false, always_current: false },
  { tool: "create_issue", policy: "ask", key: "tools_ask", entry: "@destructive", name_entry: "create_issue", allow_listed: true, selectors: ["@write", "@destructive", "@openworld"], known: true, always: true, always_current: true },
  { tool: "delete_repo", policy: "deny", key: "tools_deny", entry: "delete_*", name_entry: "delete_repo", allow_listed: true, selectors: ["@write", "@destructive", "@openworld"], known: true, always: false, always_current: false },
];

const appState: AppState = {
  tray: empty ? "idle" : "down",
  tooltip: empty ? "MCP Warden: no servers yet" : "filesystem down: breaker open · github degraded: 3 timeouts",
  supervisor_error: null,
  sidecar_error: null,
  notifications: empty ? [] : [
    { ts_ms: now() - 400_000, title: "filesystem is down", body: "It exited 5 times in a row. Open Warden to see why." },
    { ts_ms: now() - 60_000, title: "github is slow", body: "3 of the last 20 requests timed out." },
  ],
  version: "0.1.0",
};
let autostart = false;

function handleApp(req: AppRequest): AppResponse {
  switch (req.op) {
    case "state":
      return { kind: "state", ...appState };
    case "autostart":
      if (req.on !== null) autostart = req.on;
      return { kind: "autostart", on: autostart };
    case "open":
      return { kind: "opened", path: req.target.kind === "event_log" ? `/home/dev/.local/state/warden/logs/${req.target.server}.jsonl` : "/home/dev/.config/warden" };
    case "quit":
      return { kind: "quitting" };
    case "signins":
      return { kind: "signins", servers: [signin] };
    case "sign_in":
      signin = req.out
        ? { ...signin, signin: "none", issuer: null, expires_at: null, refreshable: false }
        : { ...signin, signin: "signed_in", issuer: "https://github.com/login/oauth", expires_at: Math.floor(Date.now() / 1000) + 8 * 3600, refreshable: true };
      return { kind: "signed_in", message: req.out ? "Signed out of `github`." : "Signed in to `github`." };
  }
}

/** One remote server (`warden bridge --remote`), signed in, for the sign-in section. */
let signin: Signin = {
  name: "github", url: "https://api.githubcopilot.com/mcp/", clients: ["claude-desktop", "cursor"],
  signin: "signed_in", issuer: "https://github.com/login/oauth", expires_at: Math.floor(Date.now() / 1000) + 7 * 3600, refreshable: true,
};

function handleRegistry(req: RegistryRequest): RegistryAnswer {
  if (req.op === "search")
    return {
      kind: "found",
      servers: [
        { name: "io.github.microsoft/playwright-mcp", title: null, version: "0.0.79", description: "Playwright Tools for MCP", repository: "https://github.com/microsoft/playwright-mcp", kinds: ["npm"], deprecated: false },
        { name: "io.github.github/github-mcp-server", title: null, version: "0.20.1", description: "GitHub's official MCP Server", repository: "https://github.com/github/github-mcp-server", kinds: ["oci", "remote"], deprecated: false },
      ],
    };
  return {
    kind: "plan", name: "io.github.microsoft/playwright-mcp", title: null, version: "0.0.79", description: "Playwright Tools for MCP",
    namespace: "io.github.microsoft", repository: "https://github.com/microsoft/playwright-mcp", website: null, entry_name: "playwright-mcp",
    versions: ["0.0.79", "0.0.78"], missing: [], refused: null, remote: null,
    plan: {
      server: "io.github.microsoft/playwright-mcp", version: "0.0.79",
      package: { index: 0, registry_type: "npm", identifier: "@playwright/mcp", version: "0.0.79", reference: "@playwright/mcp@0.0.79" },
      command: "npx", args: ["-y", "@playwright/mcp@0.0.79"], env: [], optional_inputs: [], warnings: [], risks: [],
    },
  };
}

mockIPC(
  (cmd, payload) => {
    const request = (payload as { request: unknown } | undefined)?.request;
    if (cmd === "api") return handleApi(request as Request);
    if (cmd === "app") return handleApp(request as AppRequest);
    if (cmd === "registry") return handleRegistry(request as RegistryRequest);
    throw new Error(`unknown command ${cmd}`);
  },
  { shouldMockEvents: true },
);

// Live traffic: heartbeats every 2 s, a request event every 3 s.
if (!empty) {
  let id = 100;
  window.setInterval(() => {
    for (const s of sessions) {
      s.inflight = s.inflight.map((r) => ({ ...r, age_ms: r.age_ms + 2000, idle_ms: s.state === "live" ? 400 : r.idle_ms + 2000 }));
      if (s.state === "live") s.last_heartbeat_ms = 200;
      else s.last_heartbeat_ms += 2000;
      void send({ kind: "session_updated", session: { ...s } });
    }
  }, 2000);
  window.setInterval(() => {
    const e = addEvent("ripgrep", { kind: "request", method: "tools/call", id: id++, tool: "search", duration_ms: 30 + Math.round(Math.random() * 400), outcome: "ok", bytes_in: 200, bytes_out: 4000 + Math.round(Math.random() * 90000) });
    void send({ kind: "event", entry: e });
  }, 3000);
  window.setTimeout(() => {
    void send({ kind: "client", change: "new_servers", client: "cursor", path: "/home/dev/.cursor/mcp.json", servers: ["sqlite"], message: "Cursor has a new stdio server, sqlite: wrap it on the Clients page." });
  }, 4000);
}
