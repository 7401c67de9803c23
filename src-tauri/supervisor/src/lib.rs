//! The supervisor: a library service hosted by the tray app or, headless, by `warden daemon`.
//! It never relays MCP traffic; it watches.
//!
//! - Sessions (`sessions`): each bridge connects to the control socket, says hello and
//!   heartbeats every [`HEARTBEAT_MS`](warden_control::HEARTBEAT_MS); a session that misses
//!   three heartbeats is `unresponsive`, one whose pid is gone is reaped
//!   ([`Supervisor::tick`] judges them).
//! - Health and metrics per server ([`health`], [`metrics`]), from the events bridges stream.
//! - The event history ([`history`]), in memory and in `$WARDEN_STATE_DIR/history.jsonl`, so a
//!   restarted supervisor shows the last hours; what bridges logged while none ran is taken
//!   in at start ([`import`]).
//! - Commands (`commands`): restart (sent to the sessions, acknowledged), fallback, debug
//!   and limits (written to config.toml with a format-preserving edit; running bridges pick
//!   it up, and the outcome says which did).
//! - Probes ([`probe`]), scheduled or asked for, pre-warming of `npx`/`uvx` caches, and the
//!   orphan sweeper ([`orphans`]); `checks` runs them for the supervisor.
//! - The IDE config watcher and requests on the IDE configs (`clients_host`).
//!
//! Everything is served through one typed API ([`api`]): [`Supervisor::handle`] (the
//! dispatcher, `dispatch`) and [`Supervisor::subscribe`] in-process, the same enums on the
//! socket (`serve`, and [`connection`] for the command line and the window).
//! [`Supervisor::run`] (`run`) serves the socket and the periodic work.
//!
//! Modules depend downwards only: the leaves (`api`, `metrics`, `health`, `history`,
//! `import`, `probe`, `orphans`, ...), then `service` (options, state, primitives), one
//! `impl Supervisor` per concern, `dispatch`, `serve`, and `run` at the top. This file only
//! declares and re-exports; no module imports from it.

#[cfg(all(test, unix))]
mod layers;
#[cfg(all(test, target_os = "linux"))]
mod paths_pinned;

pub mod api;
mod checks;
mod clients_api;
mod clients_host;
mod clients_probe;
mod commands;
pub mod connection;
mod dispatch;
pub mod flows;
pub mod health;
pub mod history;
pub mod import;
mod known;
pub mod metrics;
pub mod orphans;
pub mod probe;
mod run;
mod serve;
mod service;
mod sessions;
pub mod settings;
mod status;
mod switches;

pub use dispatch::Access;
pub use health::UNRESPONSIVE_AFTER;
pub use known::unknown_command_message;
pub use run::TICK;
pub use service::{Options, OrphanPolicy, Supervisor};
pub use warden_wire::events::now_ms;
