//! The desktop app's own requests ([`AppRequest`]: tray state, start at login, opening files,
//! quitting), answers and events, beside the supervisor's: part of the API because the
//! supervisor carries them ([`Request::App`](super::Request::App) on the control socket,
//! [`ApiEvent::App`](super::ApiEvent::App) to the window) and answers them through the
//! [`AppHandler`] the app's host sets. What they do is the app's (`warden-app`'s desktop.rs).
//! The TypeScript bindings in ui/src/bindings/app.ts are generated from these declarations.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::error::ApiError;
use super::status::Health;

/// What only the desktop app does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum AppRequest {
    /// What the tray shows, and the app's own state.
    State,
    /// Start the app (hidden, in the tray) at login: query with `on: null`, or set.
    Autostart(app_op::Autostart),
    /// Open a file or folder with the user's default application.
    Open(app_op::Open),
    /// Quit the app (the tray's Quit).
    Quit,
    /// The remote servers in the clients' files and their sign-ins (`warden auth list`).
    Signins,
    /// Signs in to remote server `server` (a browser opens), or out of it with `out`
    /// (`warden auth login|logout`); the answer is what it said.
    SignIn(app_op::SignIn),
}

/// A remote server's sign-in as `warden auth list --json` prints it: never a token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Signin {
    pub name: String,
    /// Without its query (it may hold a key).
    pub url: String,
    pub clients: Vec<String>,
    pub signin: SigninState,
    pub issuer: Option<String>,
    /// When the access token expires, in seconds since the epoch.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub expires_at: Option<u64>,
    /// It renews without the browser.
    pub refreshable: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum SigninState {
    SignedIn,
    /// Renewed without the browser at the next call when `refreshable`.
    Expired,
    /// The next call signs in.
    None,
    /// The keychain did not answer.
    Unknown,
}

/// Something the UI can open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OpenTarget {
    /// config.toml.
    Config,
    /// The JSONL event log of a server.
    EventLog { server: String },
    /// The debug log (whole messages, redacted) of a server.
    DebugLog { server: String },
    /// A detected IDE config file (only paths the clients page lists).
    ClientFile { path: PathBuf },
    /// Warden's state directory (logs, history, backups).
    StateDir,
    /// The app's own log ([`warden_config::paths::app_log`]).
    AppLog,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AppResponse {
    State(AppState),
    Autostart { on: bool },
    Opened { path: PathBuf },
    Quitting,
    Signins { servers: Vec<Signin> },
    SignedIn { message: String },
    Error(ApiError),
}

/// The worst health over all servers, as the tray shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum TrayHealth {
    /// No server needs attention.
    Healthy,
    /// Some server is degraded, starting, or served by the fallback.
    Degraded,
    /// Some server is down.
    Down,
    /// No server is known or running.
    #[default]
    Idle,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AppState {
    pub tray: TrayHealth,
    /// The tray's tooltip: the worst servers and why.
    pub tooltip: String,
    /// Why the supervisor is not running (e.g. another one owns the socket).
    pub supervisor_error: Option<String>,
    /// What is wrong with the `warden` CLI (missing, or another version) that the wrapped
    /// IDE entries run.
    pub sidecar_error: Option<String>,
    /// Desktop notifications shown so far, newest last.
    pub notifications: Vec<Notification>,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Notification {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub ts_ms: u64,
    pub title: String,
    pub body: String,
}

/// Pushed to the window as the `warden://app` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AppEvent {
    State(AppState),
}

impl From<Health> for TrayHealth {
    fn from(h: Health) -> TrayHealth {
        match h {
            Health::Down => TrayHealth::Down,
            Health::Degraded | Health::Starting | Health::Fallback => TrayHealth::Degraded,
            Health::Healthy => TrayHealth::Healthy,
            Health::Idle => TrayHealth::Idle,
        }
    }
}

impl TrayHealth {
    pub fn as_str(self) -> &'static str {
        match self {
            TrayHealth::Healthy => "healthy",
            TrayHealth::Degraded => "degraded",
            TrayHealth::Down => "down",
            TrayHealth::Idle => "idle",
        }
    }
}

/// What answers [`AppRequest`]s on the supervisor's socket
/// ([`Supervisor::serve_app`](crate::Supervisor::serve_app)).
pub type AppHandler =
    Arc<dyn Fn(AppRequest) -> Pin<Box<dyn Future<Output = AppResponse> + Send>> + Send + Sync>;

/// Each [`AppRequest`] as a type (see [`warden_rpc::Op`]).
pub mod app_op {
    use serde::{Deserialize, Serialize};

    use super::OpenTarget;

    /// What the tray shows, and the app's own state.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct State;

    /// Start the app (hidden, in the tray) at login: query with `on: null`, or set.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
    pub struct Autostart {
        pub on: Option<bool>,
    }

    /// Open a file or folder with the user's default application.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
    pub struct Open {
        pub target: OpenTarget,
    }

    /// Quit the app (the tray's Quit).
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct Quit;

    /// The remote servers in the clients' files and their sign-ins.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct Signins;

    /// Signs in to remote server `server`, or out of it with `out`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
    pub struct SignIn {
        pub server: String,
        #[serde(default)]
        pub out: bool,
    }

    macro_rules! into_apprequest {
        ($($unit:ident),*; $($newtype:ident),*) => {
            $(impl From<$unit> for super::AppRequest {
                fn from(_: $unit) -> super::AppRequest {
                    super::AppRequest::$unit
                }
            })*
            $(impl From<$newtype> for super::AppRequest {
                fn from(r: $newtype) -> super::AppRequest {
                    super::AppRequest::$newtype(r)
                }
            })*
        };
    }
    into_apprequest!(State, Quit, Signins; Autostart, Open, SignIn);
}

warden_rpc::pairs! {
    /// Each [`AppRequest`] with its answer (see [`warden_rpc`]).
    app_op: AppRequest => AppResponse {
        State(AppState) => |r| AppResponse::State(r);
        Autostart(bool) => |on| AppResponse::Autostart { on };
        Open(PathBuf) => |path| AppResponse::Opened { path };
        Quit(()) => |()| AppResponse::Quitting {};
        Signins(Vec<Signin>) => |servers| AppResponse::Signins { servers };
        SignIn(String) => |message| AppResponse::SignedIn { message };
    }
}

impl From<ApiError> for AppResponse {
    fn from(e: ApiError) -> AppResponse {
        AppResponse::Error(e)
    }
}

/// The TypeScript declarations of the app's own commands (`ui/src/bindings/app.ts`).
#[cfg(feature = "ts")]
pub fn typescript() -> String {
    use ts_rs::TS;
    use warden_rpc;
    let cfg = ts_rs::Config::new().with_large_int("number");
    let decls = [
        AppRequest::decl(&cfg),
        app_op::Autostart::decl(&cfg),
        app_op::Open::decl(&cfg),
        app_op::SignIn::decl(&cfg),
        Signin::decl(&cfg),
        SigninState::decl(&cfg),
        warden_registry::RegistryRequest::decl(&cfg),
        warden_registry::registry_op::Search::decl(&cfg),
        warden_registry::registry_op::Plan::decl(&cfg),
        warden_registry::registry_op::Document::decl(&cfg),
        warden_registry::RegistryAnswer::decl(&cfg),
        OpenTarget::decl(&cfg),
        AppResponse::decl(&cfg),
        TrayHealth::decl(&cfg),
        AppState::decl(&cfg),
        Notification::decl(&cfg),
        AppEvent::decl(&cfg),
        warden_registry::Found::decl(&cfg),
        warden_registry::PlanView::decl(&cfg),
        warden_registry::InstallPlan::decl(&cfg),
        warden_registry::RemotePlan::decl(&cfg),
        warden_registry::PlannedPackage::decl(&cfg),
        warden_registry::PlannedEnv::decl(&cfg),
        warden_registry::ValueSource::decl(&cfg),
        warden_registry::Warning::decl(&cfg),
        warden_registry::WarningKind::decl(&cfg),
        warden_registry::InputRequest::decl(&cfg),
        warden_registry::InputKind::decl(&cfg),
        warden_rpc::answers_map("AppAnswers", "AppResponse", AppRequest::ANSWERS),
        warden_rpc::answers_map(
            "RegistryAnswers",
            "RegistryAnswer",
            warden_registry::RegistryRequest::ANSWERS,
        ),
    ];
    warden_rpc::bindings::bindings_file(
        "// Generated from src-tauri/supervisor/src/api/app.rs by\n\
         // `UPDATE_BINDINGS=1 cargo test -p warden-supervisor --features ts bindings`; do not edit.\n\n\
         import type { ApiError, Risk } from \"./api\";\n",
        &decls,
    )
}

#[cfg(all(test, feature = "ts"))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::path::Path;

    use super::*;

    /// The committed bindings match these declarations (CI fails on drift).
    #[cfg(feature = "ts")]
    #[test]
    fn bindings() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/bindings/app.ts");
        let regenerate = "cargo test -p warden-supervisor --features ts bindings";
        warden_rpc::bindings::check_bindings(&path, &typescript(), regenerate).unwrap();
    }
}
