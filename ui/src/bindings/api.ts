// Generated from src-tauri/supervisor/src/api/ by
// `UPDATE_BINDINGS=1 cargo test -p warden-supervisor --features ts bindings`; do not edit.

import type { AppEvent, AppRequest, AppResponse } from "./app";

export type Request = { "op": "status" } | { "op": "history" } & History | { "op": "restart" } & Restart | { "op": "fallback" } & Fallback | { "op": "debug" } & Debug | { "op": "probe" } & Probe | { "op": "orphans" } | { "op": "stop_orphans" } & StopOrphans | { "op": "known_servers" } | { "op": "subscribe" } | { "op": "approve_tools" } & ApproveTools | { "op": "approvals" } | { "op": "approval_answer" } & ApprovalAnswer | { "op": "approvals_forget" } & ApprovalsForget | { "op": "limits" } & Limits | { "op": "set_limit" } & SetLimit | { "op": "clients" } | { "op": "client_edit" } & ClientEdit | { "op": "backups" } | { "op": "restore" } & Restore | { "op": "auto_rewrite" } & AutoRewrite | { "op": "keep_unwrapped" } & KeepUnwrapped | { "op": "probe_ide" } & ProbeIde | { "op": "server_add" } & ServerAdd | { "op": "set_tool_policy" } & SetToolPolicy | { "op": "server_switch" } & ServerSwitch | { "op": "server_remove" } & ServerRemove | { "op": "projects" } | { "op": "set_apply" } & SetApply | { "op": "set_remove" } & SetRemove | { "op": "app" } & App;

export type History = { server: string | null, since_ms: number | null, limit: number | null, };

export type Restart = { server: string, };

export type Fallback = { server: string, on: boolean, };

export type Debug = { server: string, on: boolean, };

export type Probe = { server: string | null, command: Array<string> | null, 
/**
 * Time the server has to answer each step (default 60 s).
 */
timeout_ms: number | null, 
/**
 * Added to the server's environment (a new entry's `env`).
 */
env: { [key in string]: string }, 
/**
 * The folder it runs in, absolute (`warden probe` sends the caller's, so a relative
 * `python3 server.py` is found); the supervisor's own when absent.
 */
cwd?: string | null, };

export type StopOrphans = { pids: Array<number>, };

export type ApproveTools = { server: string, tools: Array<string>, };

export type ApprovalAnswer = { id: string, allow: boolean, always: boolean, };

export type ApprovalsForget = { server: string, tool: string | null, };

export type Limits = { server: string, };

export type SetLimit = { server: string, key: string, value: JsonValue | null, add?: Array<string>, remove?: Array<string>, };

export type ClientEdit = { wrap: boolean, file: string | null, server: string | null, dry_run: boolean, 
/**
 * Wrap only: also move `env` values whose names look secret into the OS keychain.
 */
move_secrets: boolean, };

export type Restore = { id: string, dry_run: boolean, };

export type AutoRewrite = { on: boolean, without_asking: boolean, };

export type KeepUnwrapped = { file: string, server: string, };

export type ProbeIde = { on: boolean, };

export type ServerAdd = { name: string, clients: Array<ClientId>, command: string, args: Array<string>, 
/**
 * A remote server (Streamable HTTP) in place of `command` and `args`: the entry runs
 * `warden bridge --remote URL` (always through the bridge).
 */
url?: string | null, 
/**
 * With `url`: the bridge's `--header NAME=ENVVAR`s (the variables' values among
 * `secrets` or `env`).
 */
headers?: Array<string>, env: { [key in string]: string }, secrets: { [key in string]: string }, wrap: boolean, 
/**
 * The sandbox's keys set in config.toml before the files (with `wrap`).
 */
sandbox?: AddSandbox | null, 
/**
 * `tools_ask = ["@destructive"]` set before the files (with `wrap`).
 */
ask_destructive?: boolean, 
/**
 * Start it once after writing, as the files run it (the first start).
 */
start?: boolean, dry_run: boolean, };

export type SetToolPolicy = { server: string, tool: string, policy: PolicyKind, };

export type ServerSwitch = { server: string, clients: Array<ClientId>, file: string | null, scope: Array<string> | null, enabled: boolean, dry_run: boolean, };

export type ServerRemove = { server: string, clients: Array<ClientId>, plan: Array<PlannedFile> | null, dry_run: boolean, };

export type SetApply = { set: string, project: string | null, clients: Array<ClientId>, plan: Array<PlannedFile> | null, dry_run: boolean, };

export type SetRemove = { set: string, project: string | null, clients: Array<ClientId>, plan: Array<PlannedFile> | null, dry_run: boolean, };

export type App = { request: AppRequest, };

export type Response = { "kind": "status" } & StatusReport | { "kind": "history", entries: Array<HistoryEntry>, } | { "kind": "command" } & CommandOutcome | { "kind": "probe" } & ProbeReport | { "kind": "orphans", orphans: Array<Orphan>, } | { "kind": "stopped", stopped: Array<StopResult>, } | { "kind": "known_servers", servers: Array<KnownServer>, } | { "kind": "subscribed" } | { "kind": "limits" } & LimitsReport | { "kind": "approvals", approvals: Array<PendingApproval>, } | { "kind": "clients" } & ClientsReport | { "kind": "client_edit", changes: Array<FileChangeView>, } | { "kind": "server_remove", changes: Array<FileChangeView>, plan: Array<PlannedFile>, } | { "kind": "server_add" } & AddAnswer | { "kind": "projects" } & Overview | { "kind": "set" } & SetAnswer | { "kind": "backups", backups: Array<Backup>, } | { "kind": "restore" } & RestoreView | { "kind": "auto_rewrite", on: boolean, without_asking: boolean, } | { "kind": "app", response: AppResponse, } | { "kind": "kept_unwrapped", servers: Array<string>, } | { "kind": "probe_ide", on: boolean, } | { "kind": "error" } & ApiError;

export type ApiError = { code: ErrorCode, message: string, };

export type ErrorCode = "not_found" | "invalid" | "config" | "io";

export type StatusReport = { servers: Array<ServerStatus>, sessions: Array<SessionStatus>, supervisor: SupervisorInfo, };

export type SupervisorInfo = { pid: number, socket: string, config: string | null, history: string | null, started_ms: number, 
/**
 * Events kept in memory (loaded from the persisted history, then live).
 */
history_events: number, };

export type Health = "starting" | "healthy" | "degraded" | "down" | "fallback" | "idle";

export type ServerStatus = { name: string, health: Health, 
/**
 * Why the health is what it is, for a person.
 */
reason: string, 
/**
 * Live sessions (unresponsive ones included).
 */
sessions: number, unresponsive: number, inflight: number, p50_ms: number, p95_ms: number, p99_ms: number, requests: number, errors: number, timeouts: number, retries: number, restarts: number, bytes_in: number, bytes_out: number, last_error: string | null, 
/**
 * The stable failure code of `last_error` (`W-SPAWN-NOT-FOUND` …), when it has one.
 */
code: string | null, 
/**
 * Wall-clock ms of the last event or heartbeat of this server.
 */
last_seen_ms: number | null, 
/**
 * The server command, from a session's hello.
 */
command: Array<string> | null, circuit_open: boolean, fallback: boolean, debug: boolean, 
/**
 * The sandbox its sessions run the server in: `off`, `bwrap` or `landlock` (`sandbox = "on"`).
 */
sandbox: string, last_probe: ProbeReport | null, 
/**
 * Figures per tool (of `tools/call`), by name.
 */
tools: Array<ToolStatus>, 
/**
 * Per minute of the last hour with requests, oldest first: the server page's chart.
 */
latency: Array<LatencyPoint>, 
/**
 * The destinations its sandbox's proxy refused lately (`network_denied`: not in its
 * `sandbox_network` list), each once, the latest first, the last few.
 */
network_denied: Array<NetworkDenial>, };

export type ToolStatus = { name: string, calls: number, errors: number, timeouts: number, 
/**
 * Of its recent answered calls.
 */
p50_ms: number, p95_ms: number, bytes_out: number, pin: PinState, 
/**
 * For a changed or new tool: what changed since it was pinned, word by word
 * (`[-old-]{+new+}`), as `warden tools diff` shows it.
 */
diff: string | null, };

export type PinState = "approved" | "changed" | "new" | "off";

export type LatencyPoint = { 
/**
 * Wall-clock ms when the minute began.
 */
t_ms: number, requests: number, errors: number, timeouts: number, 
/**
 * Of the minute's answered requests (null when none was answered).
 */
p50_ms: number | null, p95_ms: number | null, };

export type NetworkDenial = { 
/**
 * As the server asked for it (a name, or an address).
 */
host: string, port: number, 
/**
 * Wall-clock ms of its last `network_denied` (logged once per destination per session).
 */
ts_ms: number, };

export type SessionState = "live" | "unresponsive" | "disconnected";

export type SessionStatus = { id: string, server: string, 
/**
 * The bridge's pid.
 */
pid: number, 
/**
 * `name version` of the MCP client, once it said so.
 */
client: string | null, 
/**
 * The client's protocol era (`modern`: 2026-07-28), once its first request said it.
 */
era: Era | null, 
/**
 * The bridge adapts between a legacy client and a server that speaks only 2026-07-28.
 */
adapted: boolean, 
/**
 * Milliseconds since the last heartbeat (or the hello).
 */
last_heartbeat_ms: number, state: SessionState, server_pid: number | null, generation: number, circuit_open: boolean, fallback: boolean, debug: boolean, 
/**
 * The current server process's sandbox: `off`, `bwrap` or `landlock`.
 */
sandbox: string, config_hash: string, started_ms: number, command: Array<string>, inflight: Array<InflightStatus>, 
/**
 * The ids of the calls it holds for an answer (`warden approvals`): the window re-reads
 * that list when these change.
 */
approvals: Array<string>, 
/**
 * The end of the server's stderr (redacted by the bridge).
 */
stderr_tail: string, };

export type InflightStatus = { id: JsonValue, method: string, tool: string | null, 
/**
 * Age now: the age reported in the last heartbeat plus the time since.
 */
age_ms: number, idle_ms: number, progress: string | null, };

export type HistoryEntry = { server: string, session?: string, event: Event, 
/**
 * On `session_open`: the server command, so it can be probed later.
 */
command?: Array<string>, };

export type Event = { ts_ms: number, kind: string, method?: string, id?: JsonValue, tool?: string, duration_ms?: number, outcome?: string, bytes_in?: number, bytes_out?: number, detail?: string, 
/**
 * The stable failure code (`crate::codes`) of a failure.
 */
code?: string, 
/**
 * `spawn_failed`: the server's command line as given (program and arguments).
 */
command?: string, 
/**
 * `spawn_failed`: why it failed, in one line for a person.
 */
cause?: string, 
/**
 * `spawn_failed`: the end of the server's stderr (redacted).
 */
stderr_tail?: string, 
/**
 * `spawn_failed`: what to do about it, in one line.
 */
fix?: string, 
/**
 * `network_denied`: the destination's host, as the sandboxed server asked for it.
 */
host?: string, 
/**
 * `network_denied`: the destination's port.
 */
port?: number, 
/**
 * `approval_*`: who answered (`client` or `supervisor`).
 */
by?: string, 
/**
 * `approval_given`: the tool is allowed from now on, while its definition is unchanged.
 */
always?: boolean, };

export type PendingApproval = { 
/**
 * What [`super::Request::ApprovalAnswer`] names.
 */
id: string, server: string, session: string, tool: string, 
/**
 * The call's arguments as JSON text, secrets redacted and long values cut.
 */
args: string, age_ms: number, 
/**
 * Time left before the call fails with `tool_not_approved`.
 */
left_ms: number, 
/**
 * The client was asked as well (elicitation); the first answer wins.
 */
client_asked: boolean, };

export type CommandOutcome = { ok: boolean, message: string, 
/**
 * The config.toml that was edited (fallback, debug).
 */
config: string | null, 
/**
 * Each live session of the server, and whether it acknowledged or picked up the change.
 */
sessions: Array<SessionAck>, };

export type SessionAck = { session: string, pid: number, ok: boolean, message: string, };

export type ProbeReport = { server: string | null, command: Array<string>, ok: boolean, 
/**
 * Wall-clock ms when the probe started.
 */
ts_ms: number, 
/**
 * Spawn to the server's first answer (to `server/discover`, else to `initialize`).
 */
cold_start_ms: number | null, 
/**
 * Spawn to the end of shutdown.
 */
total_ms: number, tools: number | null, tool_names: Array<string>, 
/**
 * `serverInfo` from the answer to `server/discover` or `initialize`.
 */
server_info: JsonValue | null, protocol_version: string | null, 
/**
 * The era the probe spoke with the server: `modern` when it answered `server/discover`,
 * `legacy` when it answered `initialize` instead (`modern` too when it refused `initialize`
 * naming only versions Warden does not speak); absent when it answered neither.
 */
era?: Era, error: string | null, 
/**
 * The stable code of `error` (`W-SPAWN-NOT-FOUND` …; docs/errors.md).
 */
code: string | null, 
/**
 * How the process ended ("exited with status 0" …).
 */
shutdown: string, stderr_tail: string, };

export type Era = "modern" | "legacy";

export type Orphan = { pid: number, ppid: number, pgid: number, 
/**
 * `WARDEN_SESSION` of its environment, when it has one.
 */
session: string | null, bridge_pid: number | null, server: string | null, command: Array<string>, reason: string, };

export type StopResult = { pid: number, ok: boolean, message: string, };

export type KnownServer = { name: string, command: Array<string> | null, 
/**
 * Where it is known from: `session` (live), `history`, `config`, `ide` (a detected
 * client config file).
 */
source: string, };

export type LimitsReport = { server: string, 
/**
 * The config.toml read (and edited by `SetLimit`).
 */
config: string | null, keys: Array<LimitValue>, 
/**
 * Unknown keys and tables of the file.
 */
warnings: Array<string>, 
/**
 * Why the file could not be used (the values shown are then the defaults).
 */
error: string | null, 
/**
 * The home folder of the supervisor's user, the `~` of the sandbox's paths.
 */
home: string | null, 
/**
 * What a sandboxed run of this server may not read: `/run`, the home's keys (~/.ssh, …),
 * Warden's config, state, socket and runtime folders, and its `sandbox_deny`; whether
 * they exist or not. The window grants no folder that holds one or lies in one.
 */
sandbox_hidden: Array<string>, 
/**
 * The names that stay read-only inside every folder a sandboxed server may write
 * (`.git/config`, `.vscode`, `.mcp.json`, ...: what other programs run later).
 */
sandbox_read_only_names: Array<string>, 
/**
 * Each folder of this server's `sandbox_write` that exists, with what of those names
 * it holds.
 */
sandbox_grants: Array<GrantReadOnly>, 
/**
 * Each tool Warden knows of this server (pinned, seen since, or called) and its policy,
 * as the bridges decide it ([`warden_config::policy`]) from these lists and its pinned definition.
 */
tools: Array<ToolPolicy>, };

export type LimitValue = { key: string, 
/**
 * The effective value.
 */
value: JsonValue, default: JsonValue, source: LimitSource, 
/**
 * The line of config.toml the value is on.
 */
line: number | null, 
/**
 * What it means and why the default is what it is.
 */
doc: string, 
/**
 * What a good value looks like.
 */
fix: string, 
/**
 * The strings it takes when it takes one of a few (the window offers them as a choice;
 * `config::CHOICES`); absent for the others.
 */
choices?: Array<string>, };

export type LimitSource = "default" | "defaults" | "server";

export type ToolPolicy = { tool: string, policy: PolicyKind, 
/**
 * The list that decided (`tools_deny`, `tools_ask`, `tools_allow`); `None` for a tool
 * allowed because no list names it.
 */
key: string | null, 
/**
 * The entry of that list that matched: a name glob, or a selector (`@destructive` …);
 * `None` for a tool denied because a non-empty `tools_allow` does not list it.
 */
entry: string | null, 
/**
 * The list entry that names this tool and no other ([`warden_config::policy::name_entry`]):
 * what the page adds to or removes from a list to move it by name.
 */
name_entry: string, 
/**
 * `tools_allow` lets it through: it is empty, or an entry matches.
 */
allow_listed: boolean, 
/**
 * The annotation selectors its newest definition matches.
 */
selectors: Array<string>, 
/**
 * Its definition is pinned; else the spec's defaults are assumed (a destructive,
 * open-world write), as the bridge does for a tool it has not seen listed.
 */
known: boolean, 
/**
 * An "always" answer is kept for it (`warden approvals forget` undoes it).
 */
always: boolean, 
/**
 * That answer matches its definitions now (else the next call is asked about again).
 */
always_current: boolean, };

export type GrantReadOnly = { grant: string, 
/**
 * The read-only names it holds, resolved.
 */
read_only: Array<string>, 
/**
 * Whether it is a git work tree (its `.git` config and hooks stay read-only).
 */
git: boolean, };

export type PolicyKind = "allow" | "ask" | "deny";

export type ClientsReport = { files: Array<ClientFile>, 
/**
 * Whether new stdio servers are wrapped as they appear.
 */
auto_rewrite: boolean, 
/**
 * With auto-rewrite on: wrap them without asking first.
 */
without_asking: boolean, 
/**
 * With auto-rewrite on and asking: the unwrapped servers that await the user's approval
 * (or "keep unwrapped"), each with its exact command and what deserves a look.
 */
awaiting: Array<AwaitingServer>, 
/**
 * Whether the IDE configs' servers are probed before they are used; `null` when this
 * supervisor never does (`warden daemon` without `--probe-ide`).
 */
probe_ide: boolean | null, 
/**
 * Whether the watcher runs (it does in the tray app and `warden daemon`).
 */
watching: boolean, 
/**
 * The `warden` binary written into wrapped entries.
 */
warden: string | null, 
/**
 * Whether a server can run sandboxed here (`sandbox = "on"`: bubblewrap works).
 */
sandbox_works: boolean, };

export type ClientFile = { client: ClientId, client_name: string, path: string, 
/**
 * `json`, `jsonc`, `toml` or `yaml`.
 */
format: string, 
/**
 * The project directory of a project-level file.
 */
project: string | null, 
/**
 * Whether the client reads this file.
 */
active: boolean, exists: boolean, servers: Array<ServerEntry>, 
/**
 * Entries `disable` took out of this file (a client without a switch of its own) and
 * Warden keeps until they are enabled again (`enabled: false`).
 */
kept_aside: Array<ServerEntry>, 
/**
 * Why the file cannot be read or parsed (it is then left alone).
 */
error: string | null, 
/**
 * What the client needs after Warden changes this file (restart, approval, reload).
 */
notices: Array<Notice>, 
/**
 * The client kept reverting Warden's edits: the watcher leaves the file alone.
 */
given_up: boolean, };

export type AwaitingServer = { client: ClientId, client_name: string, path: string, server: ServerEntry, };

export type FileChangeView = { client: ClientId, path: string, 
/**
 * Servers changed.
 */
changed: Array<string>, 
/**
 * Servers left alone, with the reason.
 */
skipped: Array<SkippedEntry>, 
/**
 * Unified diff; empty when nothing changes.
 */
diff: string, written: boolean, 
/**
 * The id of the backup taken before writing.
 */
backup: string | null, 
/**
 * Values moved into the OS keychain (wrap) or written back (unwrap): `SERVER/VAR`.
 */
secrets: Array<string>, notices: Array<Notice>, error: string | null, };

export type AddSandbox = { 
/**
 * Its runner's package registry only (the preset of `flows::add::runner_preset`), where the
 * command starts a package runner; on unless unticked.
 */
registry: boolean, 
/**
 * The network for the first start only (the package runner downloads the package).
 */
first_start: boolean, 
/**
 * The network kept on (a server that calls an API).
 */
keep: boolean, };

export type AddAnswer = { changes: Array<FileChangeView>, risks: Array<Risk>, 
/**
 * The `sandbox_network` preset of its package runner (`@npm`, `@pypi`), if it has one:
 * with a sandbox, the network is that registry only unless asked otherwise.
 */
preset: string | null, 
/**
 * The first start's report (`start`, once every file was written).
 */
probe: ProbeReport | null, 
/**
 * The first start's network at the end, when it was allowed for that start only.
 */
network: FirstStartNetwork | null, };

export type AddStep = { "step": "written", changes: Array<FileChangeView>, } | { "step": "first_start" } | { "step": "network", state: FirstStartNetwork, };

export type FirstStartNetwork = "allowed" | "taken";

export type PlannedFile = { path: string, 
/**
 * The file's fingerprint when the preview read it (`FileChange::fingerprint`).
 */
fingerprint: string, 
/**
 * The entries that go, as shown (`name`, or `name (projects /abs/path)`), those kept
 * aside by `disable` included.
 */
changed: Array<string>, };

export type SkippedEntry = { name: string, reason: string, };

export type RestoreView = { backup: Backup, written: boolean, 
/**
 * The backup taken of the contents that were replaced.
 */
previous: string | null, diff: string, };

export type SetAnswer = { files: Array<SetFileView>, 
/**
 * The clients asked for that have no project file Warden knows of (nothing written).
 */
skipped: Array<ClientId>, 
/**
 * A dry run's plan: sent back with the request, it writes exactly what was shown, only
 * while every file reads as it did then (else `W-CLIENT-CHANGED`, nothing written).
 */
plan: Array<PlannedFile>, 
/**
 * Apply into a project: its entries run this Warden by its absolute path (`warden` on
 * PATH is not this one), and why that matters.
 */
warning: string | null, };

export type SetFileView = { 
/**
 * The change; `changed` names the set's servers added (apply) or taken out (remove).
 */
change: FileChangeView, 
/**
 * Apply: the set's servers already in the file, left as they are.
 */
kept: Array<string>, 
/**
 * Apply: the file is (would be) created; remove: it is (would be) deleted, as Warden
 * created it.
 */
whole_file: boolean, };

export type Overview = { sets: Array<SetView>, projects: Array<ProjectView>, };

export type SetView = { name: string, servers: Array<string>, 
/**
 * Servers of the set no client's file has (apply refuses the set until they are).
 */
unknown: Array<string>, 
/**
 * The files that have every server of the set, or entries apply added for it.
 */
applied: Array<Applied>, };

export type Applied = { client: ClientId, file: string, 
/**
 * The project's directory; `None`: a user file.
 */
project: string | null, 
/**
 * The set's servers the file has (by entry name, or the bridge's `--server`).
 */
present: Array<string>, 
/**
 * The set's servers it has not.
 */
missing: Array<string>, 
/**
 * `warden sets apply` added entries of the set there (its remove takes them out).
 */
by_warden: boolean, };

export type ProjectView = { dir: string, exists: boolean, 
/**
 * Where it was found: `claude-code` (`projects` in `~/.claude.json`), `codex`
 * (`[projects."DIR"]` in `~/.codex/config.toml`), `vscode` and `cursor` (their recently
 * opened folders), `warden` (a set applied there).
 */
found_in: Array<string>, 
/**
 * The sets applied there (in any client's project file).
 */
sets: Array<string>, 
/**
 * Per client with a file: what it starts in this project.
 */
clients: Array<ProjectClient>, };

export type ProjectClient = { client: ClientId, 
/**
 * Its project file there, if it has one.
 */
project_file: string | null, starts: Array<Starts>, };

export type Starts = { 
/**
 * The entry's name.
 */
name: string, 
/**
 * The bridge's `--server` when wrapped, else the entry's name.
 */
server: string, wrapped: boolean, 
/**
 * By the client's own switch.
 */
enabled: boolean, 
/**
 * `project` (the project's file), `local` (Claude Code's servers of this project in
 * `~/.claude.json`) or `user`.
 */
from: string, };

export type ClientChangeKind = "new_servers" | "awaiting" | "wrapped" | "reverted" | "gave_up" | "failed";

export type ClientId = "claude-desktop" | "claude-code" | "cursor" | "vscode" | "cline" | "windsurf" | "zed" | "gemini-cli" | "codex" | "opencode" | "kiro" | "lm-studio" | "continue" | "goose";

export type ServerEntry = { name: string, 
/**
 * Where the entry sits inside the file when that matters (Claude Code's per-project
 * servers: `["projects", "/abs/path"]`); empty for the file's own server list.
 */
scope: Array<string>, 
/**
 * Names of the environment variables the entry sets (never their values).
 */
env_keys: Array<string>, 
/**
 * What deserves a look in its (original) command: sudo, a shell line, an unpinned package.
 */
risks: Array<Risk>, 
/**
 * Warden wrapped it, and it runs unwrapped again without `warden clients unwrap`: the
 * client (or someone) rewrote it. Wrap re-applies.
 */
reverted: boolean, 
/**
 * Whether the client starts it, by the client's own switch where it has one (Cline's
 * `"disabled": true`, Codex's `enabled = false`, ...); an entry of a client without
 * such a switch is enabled.
 */
enabled: boolean, } & ({ "state": "unwrapped", command: string, args: Array<string>, } | { "state": "wrapped", bridge: string, server: string | null, command: string, args: Array<string>, } | { "state": "skipped", reason: string, });

export type EntryState = { "state": "unwrapped", command: string, args: Array<string>, } | { "state": "wrapped", bridge: string, server: string | null, command: string, args: Array<string>, } | { "state": "skipped", reason: string, };

export type Risk = { kind: RiskKind, detail: string, };

export type RiskKind = "sudo" | "shell" | "unpinned" | "runner_option" | "loader_env" | "loader_env_by_document";

export type Notice = { client: ClientId, kind: NoticeKind, message: string, };

export type NoticeKind = "restart" | "reload" | "approval" | "allowlist" | "note";

export type Backup = { id: string, 
/**
 * The backup's own file (`<id>.bak`).
 */
file: string, 
/**
 * The config file it is a copy of.
 */
original: string, client: ClientId | null, created_unix_ms: number, 
/**
 * `created_unix_ms` as UTC, e.g. `2026-03-14T09:30:15.123Z`.
 */
created: string, size: number, };

export type ApiEvent = { "kind": "session_opened", session: SessionStatus, } | { "kind": "session_updated", session: SessionStatus, } | { "kind": "session_closed", session: string, server: string, reason: string, } | { "kind": "event", entry: HistoryEntry, } | { "kind": "server", server: ServerStatus, } | { "kind": "health", server: string, health: Health, reason: string, } | { "kind": "probe", report: ProbeReport, } | { "kind": "orphans", orphans: Array<Orphan>, } | { "kind": "client", change: ClientChangeKind, client: ClientId, path: string, servers: Array<string>, message: string, } | { "kind": "config_changed", server: string, } | { "kind": "add_progress", server: string, step: AddStep, } | { "kind": "app", event: AppEvent, };

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]: JsonValue } | null;

export type Answers = {
  // Each request's answer, declared once in Rust (`pairs!`); the UI's `ask` is typed by it.
  "status": Extract<Response, { "kind": "status" | "error" }>,
  "history": Extract<Response, { "kind": "history" | "error" }>,
  "restart": Extract<Response, { "kind": "command" | "error" }>,
  "fallback": Extract<Response, { "kind": "command" | "error" }>,
  "debug": Extract<Response, { "kind": "command" | "error" }>,
  "probe": Extract<Response, { "kind": "probe" | "error" }>,
  "orphans": Extract<Response, { "kind": "orphans" | "error" }>,
  "stop_orphans": Extract<Response, { "kind": "stopped" | "error" }>,
  "known_servers": Extract<Response, { "kind": "known_servers" | "error" }>,
  "subscribe": Extract<Response, { "kind": "subscribed" | "error" }>,
  "approve_tools": Extract<Response, { "kind": "command" | "error" }>,
  "approvals": Extract<Response, { "kind": "approvals" | "error" }>,
  "approval_answer": Extract<Response, { "kind": "command" | "error" }>,
  "approvals_forget": Extract<Response, { "kind": "command" | "error" }>,
  "limits": Extract<Response, { "kind": "limits" | "error" }>,
  "set_limit": Extract<Response, { "kind": "command" | "error" }>,
  "clients": Extract<Response, { "kind": "clients" | "error" }>,
  "client_edit": Extract<Response, { "kind": "client_edit" | "error" }>,
  "backups": Extract<Response, { "kind": "backups" | "error" }>,
  "restore": Extract<Response, { "kind": "restore" | "error" }>,
  "auto_rewrite": Extract<Response, { "kind": "auto_rewrite" | "error" }>,
  "keep_unwrapped": Extract<Response, { "kind": "kept_unwrapped" | "error" }>,
  "probe_ide": Extract<Response, { "kind": "probe_ide" | "error" }>,
  "server_add": Extract<Response, { "kind": "server_add" | "error" }>,
  "set_tool_policy": Extract<Response, { "kind": "command" | "error" }>,
  "server_switch": Extract<Response, { "kind": "client_edit" | "error" }>,
  "server_remove": Extract<Response, { "kind": "server_remove" | "error" }>,
  "projects": Extract<Response, { "kind": "projects" | "error" }>,
  "set_apply": Extract<Response, { "kind": "set" | "error" }>,
  "set_remove": Extract<Response, { "kind": "set" | "error" }>,
  "app": Extract<Response, { "kind": "app" | "error" }>,
};

export const CHANNELS = { api: "warden://event", app: "warden://app" } as const;

/** The kinds of the supervisor's events, which `useApi` refetches on. */
export type ApiEventKind = ApiEvent["kind"];
