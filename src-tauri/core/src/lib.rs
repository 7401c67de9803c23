//! MCP Warden's core: everything but the GUI. The `warden` CLI and the tray app are thin
//! shells over this crate; it never depends on Tauri.

pub mod bridge;
pub mod clients;
pub mod codes;
pub mod config;
#[cfg(unix)]
pub mod control;
pub mod events;
pub mod fallback;
pub mod fswatch;
pub mod paths;
pub mod protocol;
pub mod redact;
#[cfg(unix)]
pub mod supervisor;
