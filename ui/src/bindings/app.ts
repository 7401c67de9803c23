// Generated from src-tauri/supervisor/src/api/app.rs by
// `UPDATE_BINDINGS=1 cargo test -p warden-supervisor --features ts bindings`; do not edit.

import type { ApiError, Risk } from "./api";

export type AppRequest = { "op": "state" } | { "op": "autostart" } & Autostart | { "op": "open" } & Open | { "op": "quit" } | { "op": "signins" } | { "op": "sign_in" } & SignIn;

export type Autostart = { on: boolean | null, };

export type Open = { target: OpenTarget, };

export type SignIn = { server: string, out: boolean, };

export type Signin = { name: string, 
/**
 * Without its query (it may hold a key).
 */
url: string, clients: Array<string>, signin: SigninState, issuer: string | null, 
/**
 * When the access token expires, in seconds since the epoch.
 */
expires_at: number | null, 
/**
 * It renews without the browser.
 */
refreshable: boolean, };

export type SigninState = "signed_in" | "expired" | "none" | "unknown";

export type RegistryRequest = { "op": "search" } & Search | { "op": "plan" } & Plan | { "op": "document" } & Document;

export type Search = { term: string, };

export type Plan = { name: string, version: string | null, inputs: { [key in string]: string }, as_name: string | null, };

export type Document = { document: string, inputs: { [key in string]: string }, as_name: string | null, };

export type RegistryAnswer = { "kind": "found", servers: Array<Found>, } | { "kind": "plan" } & PlanView | { "kind": "error", message: string, };

export type OpenTarget = { "kind": "config" } | { "kind": "event_log", server: string, } | { "kind": "debug_log", server: string, } | { "kind": "client_file", path: string, } | { "kind": "state_dir" } | { "kind": "app_log" };

export type AppResponse = { "kind": "state" } & AppState | { "kind": "autostart", on: boolean, } | { "kind": "opened", path: string, } | { "kind": "quitting" } | { "kind": "signins", servers: Array<Signin>, } | { "kind": "signed_in", message: string, } | { "kind": "error" } & ApiError;

export type TrayHealth = "healthy" | "degraded" | "down" | "idle";

export type AppState = { tray: TrayHealth, 
/**
 * The tray's tooltip: the worst servers and why.
 */
tooltip: string, 
/**
 * Why the supervisor is not running (e.g. another one owns the socket).
 */
supervisor_error: string | null, 
/**
 * What is wrong with the `warden` CLI (missing, or another version) that the wrapped
 * IDE entries run.
 */
sidecar_error: string | null, 
/**
 * Desktop notifications shown so far, newest last.
 */
notifications: Array<Notification>, version: string, };

export type Notification = { ts_ms: number, title: string, body: string, };

export type AppEvent = { "kind": "state" } & AppState;

export type Found = { 
/**
 * The registry name, e.g. `io.github.microsoft/playwright-mcp`.
 */
name: string, title: string | null, version: string | null, description: string, repository: string | null, 
/**
 * What it can be installed as: package types (`npm`, `pypi`, `oci`, ...), and `remote`
 * when it has remotes.
 */
kinds: Array<string>, deprecated: boolean, };

export type PlanView = { name: string, title: string | null, version: string | null, description: string, 
/**
 * The publisher's namespace: the name before its `/`.
 */
namespace: string, repository: string | null, website: string | null, 
/**
 * The entry name written into the clients' files.
 */
entry_name: string, 
/**
 * Versions the registry has, newest first (empty when it did not say).
 */
versions: Array<string>, 
/**
 * What would be written, once every required value is given.
 */
plan: InstallPlan | null, 
/**
 * For a server that lists only `remotes`: its URL and headers, in place of `plan`
 * (written as `warden bridge --remote`).
 */
remote: RemotePlan | null, 
/**
 * Values still needed (then `plan` is `null`): ask for them and plan again.
 */
missing: Array<InputRequest>, 
/**
 * Why it cannot be installed (or what is missing), with what to do.
 */
refused: string | null, };

export type InstallPlan = { 
/**
 * The registry name, e.g. `io.github.microsoft/playwright-mcp`.
 */
server: string, 
/**
 * The server's version (a `${VERSION}` template filled).
 */
version: string | null, package: PlannedPackage, 
/**
 * The program: `npx`, `uvx`, `docker` or `dnx`.
 */
command: string, args: Array<string>, 
/**
 * Declared variables (set or not), then the user's undeclared ones.
 */
env: Array<PlannedEnv>, 
/**
 * Inputs of arguments left out because nobody gave them (none of them is required).
 */
optional_inputs: Array<InputRequest>, warnings: Array<Warning>, 
/**
 * What the consent screen flags: the command's (`clients::risks`: root, a shell line, a
 * runner option that widens what the server gets), then the variables set that steer
 * loading or paths, as high risk when the document itself sets them.
 */
risks: Array<Risk>, };

export type RemotePlan = { 
/**
 * The registry name.
 */
server: string, 
/**
 * The server's version, as the registry lists it (what was agreed to).
 */
version: string | null, 
/**
 * `streamable-http`.
 */
transport: string, 
/**
 * The URL, its `{variables}` filled.
 */
url: string, 
/**
 * The bridge's `--header NAME=ENVVAR`s: one for each header that has a value.
 */
headers: Array<string>, 
/**
 * The headers' variables (set or not), then the user's undeclared values.
 */
env: Array<PlannedEnv>, warnings: Array<Warning>, };

export type PlannedPackage = { 
/**
 * Its index in the document's `packages`.
 */
index: number, registry_type: string, identifier: string, 
/**
 * The exact version: the package version, the image tag or digest.
 */
version: string, 
/**
 * As on the command line: `ID@VERSION`, `ID==VERSION`, `IMAGE:TAG`.
 */
reference: string, };

export type PlannedEnv = { name: string, required: boolean, 
/**
 * Goes to the keychain, not the IDE file.
 */
secret: boolean, default: string | null, description: string | null, 
/**
 * What to set; `None`: not set (optional, and nobody gave a value).
 */
value: string | null, source: ValueSource, 
/**
 * False for the user's values that the document does not declare.
 */
declared: boolean, };

export type ValueSource = "user" | "document" | "default" | "unset";

export type Warning = { kind: WarningKind, message: string, };

export type WarningKind = "runtime_hint" | "no_transport" | "template_filled" | "runtime_arguments_moved" | "runner_flags_dropped" | "tty_dropped" | "tag_mismatch" | "placeholder" | "optional_left_out" | "secret_in_arguments" | "secret_moved_to_env" | "input_overrides_value" | "undeclared_input" | "argument_type_inferred";

export type InputRequest = { key: string, kind: InputKind, secret: boolean, description: string | null, choices: Array<string>, placeholder: string | null, };

export type InputKind = "env" | "positional" | "named" | "variable";

export type AppAnswers = {
  // Each request's answer, declared once in Rust (`pairs!`); the UI's `ask` is typed by it.
  "state": Extract<AppResponse, { "kind": "state" | "error" }>,
  "autostart": Extract<AppResponse, { "kind": "autostart" | "error" }>,
  "open": Extract<AppResponse, { "kind": "opened" | "error" }>,
  "quit": Extract<AppResponse, { "kind": "quitting" | "error" }>,
  "signins": Extract<AppResponse, { "kind": "signins" | "error" }>,
  "sign_in": Extract<AppResponse, { "kind": "signed_in" | "error" }>,
};

export type RegistryAnswers = {
  // Each request's answer, declared once in Rust (`pairs!`); the UI's `ask` is typed by it.
  "search": Extract<RegistryAnswer, { "kind": "found" | "error" }>,
  "plan": Extract<RegistryAnswer, { "kind": "plan" | "error" }>,
  "document": Extract<RegistryAnswer, { "kind": "plan" | "error" }>,
};
