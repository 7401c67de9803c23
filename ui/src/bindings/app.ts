// Generated from src-tauri/core/src/desktop.rs by
// `UPDATE_BINDINGS=1 cargo test -p warden-core --features ts bindings`; do not edit.

import type { ApiError } from "./api";

export type AppRequest = { "op": "state" } | { "op": "autostart", on: boolean | null, } | { "op": "open", target: OpenTarget, } | { "op": "quit" };

export type OpenTarget = { "kind": "config" } | { "kind": "event_log", server: string, } | { "kind": "debug_log", server: string, } | { "kind": "client_file", path: string, } | { "kind": "state_dir" };

export type AppResponse = { "kind": "state" } & AppState | { "kind": "autostart", on: boolean, } | { "kind": "opened", path: string, } | { "kind": "quitting" } | { "kind": "error" } & ApiError;

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
