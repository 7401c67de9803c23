//! MCP Warden's tray app: a thin Tauri 2 shell over warden-core's supervisor.
//!
//! - The supervisor runs in-process (the same library `warden daemon` hosts) on Tauri's tokio
//!   runtime; bridges find it on the control socket.
//! - Two commands ([`commands`]): `api` (the supervisor's typed API, unchanged) and `app`
//!   (tray state, start at login, opening files, quit). Events go to the window as
//!   `warden://event` (every supervisor [`ApiEvent`]) and `warden://app` (tray state).
//! - The tray ([`tray`]) shows the worst health and a menu that calls the same API.
//! - At start, [`sidecar`] checks the bundled `warden` CLI the wrapped IDE entries run; a
//!   problem shows in the window (`AppState::sidecar_error`) and the tray.
//! - Closing the window destroys its webview (idle memory stays low); the app lives on in the
//!   tray and quits only from the menu (or the UI's Quit).

pub mod commands;
pub mod sidecar;
pub mod tray;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tauri::{AppHandle, Emitter, Manager, RunEvent, WebviewUrl, WebviewWindowBuilder};
use tauri_plugin_autostart::ManagerExt as _;
use tauri_plugin_notification::NotificationExt as _;
use tauri_plugin_opener::OpenerExt as _;
use tokio::sync::Notify;
use warden_core::supervisor::api::{ApiEvent, ClientChangeKind, Health, Request, Response};
use warden_core::supervisor::{self, Options, Supervisor};

use commands::{AppEvent, AppRequest, AppResponse, AppState, Host, Notification};

/// The window's label.
pub const MAIN: &str = "main";
/// Started at login: stay in the tray.
pub const HIDDEN_ARG: &str = "--hidden";
const NOTIFICATIONS_KEPT: usize = 20;

/// What the shell keeps besides the supervisor.
pub struct Shared {
    pub sup: Arc<Supervisor>,
    supervisor_error: Mutex<Option<String>>,
    /// What is wrong with the `warden` CLI the wrapped IDE entries run (see [`sidecar`]).
    sidecar_error: Mutex<Option<String>>,
    notifications: Mutex<VecDeque<Notification>>,
    tray: Mutex<Option<tray::Model>>,
    /// The count of servers awaiting approval (in the tray's model) is out of date: a
    /// client's config changed.
    awaiting_stale: AtomicBool,
    /// Held while the tray is recomputed, so an older model never replaces a newer one.
    refreshing: tokio::sync::Mutex<()>,
    quitting: AtomicBool,
    stop: Notify,
    stopped: Notify,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    fn state(&self) -> AppState {
        let model = lock(&self.tray).clone().unwrap_or_default();
        AppState {
            tray: model.health,
            tooltip: model.tooltip,
            supervisor_error: lock(&self.supervisor_error).clone(),
            sidecar_error: lock(&self.sidecar_error).clone(),
            notifications: lock(&self.notifications).iter().cloned().collect(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

/// The supervisor's options in the app: the environment's paths, the IDE config watcher on,
/// and the `warden` binary the wrapped entries run ([`sidecar::command`]).
pub fn supervisor_options(app: &AppHandle) -> Options {
    let mut opts = Options::from_env();
    opts.watch_clients = true;
    opts.probe_ide = Some(warden_core::paths::state_dir().join("probe-ide"));
    opts.warden_bin = warden_bin(app);
    opts
}

/// `$WARDEN_BIN` as given, else the sidecar when it is there (its canonical path).
fn warden_bin(app: &AppHandle) -> Option<PathBuf> {
    let path = sidecar::path(sidecar::command(app).ok()?);
    if std::env::var_os("WARDEN_BIN").is_some_and(|p| !p.is_empty()) {
        return Some(path);
    }
    path.is_file()
        .then(|| std::fs::canonicalize(&path).unwrap_or(path))
}

struct TauriHost<'a> {
    app: &'a AppHandle,
    shared: &'a Shared,
}

impl Host for TauriHost<'_> {
    fn state(&self) -> AppState {
        self.shared.state()
    }
    fn autostart(&self) -> Result<bool, String> {
        self.app
            .autolaunch()
            .is_enabled()
            .map_err(|e| e.to_string())
    }
    fn set_autostart(&self, on: bool) -> Result<(), String> {
        let a = self.app.autolaunch();
        if on { a.enable() } else { a.disable() }.map_err(|e| e.to_string())
    }
    fn open(&self, path: &Path) -> Result<(), String> {
        self.app
            .opener()
            .open_path(path.to_string_lossy(), None::<&str>)
            .map_err(|e| e.to_string())
    }
    fn quit(&self) {
        quit(self.app);
    }
    fn config_path(&self) -> Option<PathBuf> {
        self.shared.sup.options().config.clone()
    }
    fn state_dir(&self) -> PathBuf {
        warden_core::paths::state_dir()
    }
    fn client_files(&self) -> Vec<PathBuf> {
        warden_core::clients::ClientEnv::from_process()
            .map(|env| {
                warden_core::clients::detect(&env)
                    .into_iter()
                    .map(|f| f.path)
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The supervisor's API, as is.
#[tauri::command]
async fn api(shared: tauri::State<'_, Arc<Shared>>, request: Request) -> Result<Response, ()> {
    Ok(shared.sup.handle(request).await)
}

/// What only the desktop app does.
#[tauri::command]
async fn app(
    app: AppHandle,
    shared: tauri::State<'_, Arc<Shared>>,
    request: AppRequest,
) -> Result<AppResponse, ()> {
    dispatch_app(app, Arc::clone(&shared), request).await
}

/// Carries out an [`AppRequest`] for the window or the tray. Opening files and reading the
/// autostart entry block, so they run off the async threads.
pub(crate) async fn dispatch_app(
    app: AppHandle,
    shared: Arc<Shared>,
    request: AppRequest,
) -> Result<AppResponse, ()> {
    tauri::async_runtime::spawn_blocking(move || {
        commands::dispatch(
            &TauriHost {
                app: &app,
                shared: &shared,
            },
            request,
        )
    })
    .await
    .map_err(|_| ())
}

/// Shows the window, creating it (and its webview) when it was closed.
pub fn show_window(app: &AppHandle) {
    if let Some(w) = app.get_webview_window(MAIN) {
        let _ = w.unminimize();
        let _ = w.show();
        let _ = w.set_focus();
        return;
    }
    let built = WebviewWindowBuilder::new(app, MAIN, WebviewUrl::App("index.html".into()))
        .title("MCP Warden")
        .inner_size(1120.0, 780.0)
        .min_inner_size(720.0, 480.0)
        .build();
    if let Err(e) = built {
        tracing::error!("cannot open the window: {e}");
    }
}

/// Stops the supervisor (it removes its socket) and exits.
pub fn quit(app: &AppHandle) {
    let shared = Arc::clone(&app.state::<Arc<Shared>>());
    if shared.quitting.swap(true, Ordering::SeqCst) {
        return;
    }
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let stopped = shared.stopped.notified();
        shared.stop.notify_one();
        let _ = tokio::time::timeout(Duration::from_secs(3), stopped).await;
        app.exit(0);
    });
}

pub(crate) fn notify(app: &AppHandle, shared: &Shared, title: String, body: String) {
    if let Err(e) = app
        .notification()
        .builder()
        .title(&title)
        .body(&body)
        .show()
    {
        tracing::warn!("cannot show a desktop notification: {e}");
    }
    {
        let mut notes = lock(&shared.notifications);
        notes.push_back(Notification {
            ts_ms: supervisor::now_ms(),
            title,
            body,
        });
        while notes.len() > NOTIFICATIONS_KEPT {
            notes.pop_front();
        }
    }
    // The window's bell, at once: the tray may already show what the note is about, and then
    // its refresh tells the window nothing new.
    let _ = app.emit("warden://app", AppEvent::State(shared.state()));
}

/// Recomputes the tray from the supervisor's status and its `Limits` answers (the switches);
/// updates the icon, tooltip and menu when they changed, and tells the window.
pub async fn refresh_tray(app: &AppHandle) {
    let shared = Arc::clone(&app.state::<Arc<Shared>>());
    let _one_at_a_time = shared.refreshing.lock().await;
    let status = shared.sup.status();
    let mut limits = Vec::with_capacity(status.servers.len());
    for s in &status.servers {
        let server = s.name.clone();
        if let Response::Limits(report) = shared.sup.handle(Request::Limits { server }).await {
            limits.push(report);
        }
    }
    let sidecar_error = lock(&shared.sidecar_error).clone();
    let auto_rewrite = shared.sup.auto_rewrite();
    let (switched, mut awaiting) = lock(&shared.tray)
        .as_ref()
        .map_or((false, 0), |m| (m.auto_rewrite != auto_rewrite, m.awaiting));
    if shared.awaiting_stale.swap(false, Ordering::SeqCst) || switched {
        // The clients report reads the IDE configs: only after they (or the switch) changed.
        if let Response::Clients(r) = shared.sup.handle(Request::Clients).await {
            awaiting = r.awaiting.len();
        }
    }
    let model = tray::Model::from_status(&status, &limits, auto_rewrite, awaiting, sidecar_error);
    let changed = {
        let mut current = lock(&shared.tray);
        let changed = current.as_ref() != Some(&model);
        *current = Some(model.clone());
        changed
    };
    if changed {
        if let Err(e) = tray::apply(app, &model) {
            tracing::warn!("cannot update the tray: {e}");
        }
        let _ = app.emit("warden://app", AppEvent::State(shared.state()));
    }
}

/// Checks the `warden` CLI; a problem goes to the window and the tray.
async fn check_sidecar(app: &AppHandle) {
    if let Err(error) = sidecar::check(app).await {
        tracing::error!("{error}");
        *lock(&app.state::<Arc<Shared>>().sidecar_error) = Some(error);
        refresh_tray(app).await;
    }
}

/// Forwards supervisor events to the window, keeps the tray current, and notifies.
async fn follow(
    app: AppHandle,
    shared: Arc<Shared>,
    mut events: tokio::sync::broadcast::Receiver<ApiEvent>,
) {
    let mut every = tokio::time::interval(Duration::from_secs(2));
    loop {
        let event = tokio::select! {
            e = events.recv() => match e {
                Ok(e) => Some(e),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => None,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            },
            _ = every.tick() => None,
        };
        let Some(event) = event else {
            refresh_tray(&app).await;
            continue;
        };
        match &event {
            ApiEvent::Health {
                server,
                health: Health::Down,
                reason,
            } => notify(&app, &shared, format!("{server} is down"), reason.clone()),
            ApiEvent::Event { entry }
                if matches!(&*entry.event.kind, "tool_changed" | "tool_new") =>
            {
                let tool = entry.event.tool.as_deref().unwrap_or("?");
                notify(
                    &app,
                    &shared,
                    format!("{}: tool {tool} is not as pinned", entry.server),
                    format!(
                        "{}. Review and approve it on the server's page.",
                        entry
                            .event
                            .detail
                            .as_deref()
                            .unwrap_or("its definition changed")
                    ),
                )
            }
            ApiEvent::Client {
                change: ClientChangeKind::Awaiting,
                message,
                ..
            } => notify(
                &app,
                &shared,
                "A new MCP server awaits your approval".into(),
                message.clone(),
            ),
            ApiEvent::Client {
                change: ClientChangeKind::Reverted | ClientChangeKind::GaveUp,
                message,
                ..
            } => notify(
                &app,
                &shared,
                "A client reverted Warden's edit".into(),
                message.clone(),
            ),
            _ => {}
        }
        let structural = matches!(
            event,
            ApiEvent::Health { .. }
                | ApiEvent::SessionOpened { .. }
                | ApiEvent::SessionClosed { .. }
                | ApiEvent::ConfigChanged { .. }
                | ApiEvent::Client { .. }
        );
        if app.get_webview_window(MAIN).is_some() {
            let _ = app.emit("warden://event", &event);
        }
        if matches!(
            event,
            ApiEvent::ConfigChanged { .. } | ApiEvent::Client { .. }
        ) {
            shared.awaiting_stale.store(true, Ordering::SeqCst);
        }
        if structural {
            refresh_tray(&app).await;
        }
    }
}

pub fn run() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("WARDEN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    let hidden = std::env::args().any(|a| a == HIDDEN_ARG);

    let built = tauri::Builder::default()
        .plugin(tauri_plugin_single_instance::init(|app, _argv, _cwd| {
            show_window(app);
        }))
        .plugin(tauri_plugin_autostart::init(
            tauri_plugin_autostart::MacosLauncher::LaunchAgent,
            Some(vec![HIDDEN_ARG]),
        ))
        .plugin(tauri_plugin_notification::init())
        .plugin(tauri_plugin_opener::init())
        .plugin(tauri_plugin_shell::init())
        .invoke_handler(tauri::generate_handler![api, app])
        .setup(move |tauri_app| {
            let sup = Supervisor::new(supervisor_options(tauri_app.handle()))?;
            let shared = Arc::new(Shared {
                sup: Arc::clone(&sup),
                supervisor_error: Mutex::new(None),
                sidecar_error: Mutex::new(None),
                notifications: Mutex::new(VecDeque::new()),
                tray: Mutex::new(None),
                awaiting_stale: AtomicBool::new(true),
                refreshing: tokio::sync::Mutex::new(()),
                quitting: AtomicBool::new(false),
                stop: Notify::new(),
                stopped: Notify::new(),
            });
            tauri_app.manage(Arc::clone(&shared));
            tray::build(tauri_app.handle())?;
            // Subscribed before the supervisor runs: its first health judgement (of what it
            // loaded and took in from the bridges' logs) is notified too.
            let events = sup.subscribe();
            let handle = tauri_app.handle().clone();
            let s = Arc::clone(&shared);
            tauri::async_runtime::spawn(async move {
                let run = sup.run(s.stop.notified()).await;
                if let Err(e) = run {
                    let message = format!(
                        "the supervisor cannot listen on {}: {e}. Is `warden daemon` or another Warden app running? Stop it, then restart this app.",
                        sup.options().socket.display()
                    );
                    tracing::error!("{message}");
                    *lock(&s.supervisor_error) = Some(message);
                    let _ = handle.emit("warden://app", AppEvent::State(s.state()));
                }
                s.stopped.notify_waiters();
            });
            // `follow` draws the tray at once (its first tick). Never wait for that here:
            // drawing runs on this (the main) thread, so setup would wait for itself.
            tauri::async_runtime::spawn(follow(tauri_app.handle().clone(), shared, events));
            let handle = tauri_app.handle().clone();
            tauri::async_runtime::spawn(async move { check_sidecar(&handle).await });
            if !hidden {
                show_window(tauri_app.handle());
            }
            Ok(())
        })
        .build(tauri::generate_context!());
    let app = match built {
        Ok(app) => app,
        Err(e) => {
            eprintln!("warden-app: cannot start: {e}");
            std::process::exit(1);
        }
    };
    app.run(|app, event| {
        if let RunEvent::ExitRequested { api, code, .. } = event {
            // The last window closed: stay in the tray. Quit comes from the menu.
            let quitting = app.state::<Arc<Shared>>().quitting.load(Ordering::SeqCst);
            if code.is_none() && !quitting {
                api.prevent_exit();
            }
        }
    });
}
