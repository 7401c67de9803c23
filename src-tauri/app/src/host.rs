//! The host, MCP Warden at rest (`warden-app --hidden`, what the start-at-login entry runs;
//! also a plain `warden-app` when none runs): a Tauri app with no window. It hosts the
//! supervisor (the library `warden daemon` hosts) on the control socket, draws Tauri's tray,
//! notifies, and starts the window, a process of its own, through `tauri-plugin-shell`. It
//! never creates a web view, so no WebKit process runs while the window is closed.
//!
//! - The supervisor answers the window's requests on the socket, the desktop app's own too
//!   ([`Request::App`](warden_supervisor::api::Request::App), served by [`HostSide`]),
//!   and streams its events; the tray's state goes out as `ApiEvent::App`.
//! - The tray ([`menu`]) shows the worst health and a menu that calls the same API.
//! - At start, [`sidecar`] checks the bundled `warden` CLI the wrapped IDE entries run; a
//!   problem shows in the tray and the window.
//! - It quits from its menu, the window's Quit, SIGTERM or Ctrl-C: the supervisor stops and
//!   removes its socket (and so the window closes). One host runs: a second `warden-app` hands
//!   its arguments to the running one (`tauri-plugin-single-instance`), which opens or focuses
//!   the window; one per socket, too (a lock beside it). A host that cannot start (the socket's
//!   directory is not private, or `warden daemon` holds the socket) notifies and exits.
//! - Only the window and the sidecars ([`sidecar`]) run through `tauri-plugin-shell`. The servers
//!   the supervisor probes and pre-warms do not: each needs a process group of its own and the MCP
//!   shutdown (stdin closed, then SIGTERM and SIGKILL to its group), which the plugin's commands do
//!   not offer; `warden_bridge::child` starts them (`warden_supervisor::probe`).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use crate::desktop::{
    self as commands, AppEvent, AppRequest, AppResponse, AppState, ApprovalAction, ApprovalNotices,
    ApprovalPresentation, Desktop, Notification, OpenTarget,
};
use tauri::tray::TrayIcon;
use tauri::{AppHandle, Manager, RunEvent};
use tauri_plugin_autostart::{MacosLauncher, ManagerExt as _};
use tauri_plugin_notification::NotificationExt as _;
use tauri_plugin_opener::OpenerExt as _;
use tauri_plugin_shell::ShellExt as _;
use tauri_plugin_shell::process::{CommandChild, CommandEvent};
use tokio::sync::Notify;
use warden_supervisor::api::PendingApproval;
use warden_supervisor::api::{ApiEvent, Request, Response};
use warden_supervisor::{self as supervisor, Options, Supervisor};

use crate::menu::{self, MenuId};
use crate::{HIDDEN_ARG, SHOW_LINE, WINDOW_ARG, sidecar};
use warden_supervisor::api::app::app_op;
use warden_supervisor::api::op;

mod actions;
mod lock;

const NOTIFICATIONS_KEPT: usize = 20;
/// How long after its start the host is at rest (its first round of work done).
const SETTLED: Duration = Duration::from_secs(5);

pub struct Host {
    app: AppHandle,
    sup: Arc<Supervisor>,
    icon: Mutex<Option<TrayIcon>>,
    /// What is wrong with the `warden` CLI the wrapped IDE entries run (see [`sidecar`]).
    sidecar_error: Mutex<Option<String>>,
    notifications: Mutex<VecDeque<Notification>>,
    model: Mutex<Option<menu::Model>>,
    /// The count of servers awaiting approval (in the tray's model) is out of date: a
    /// client's config changed.
    awaiting_stale: AtomicBool,
    /// Held while the tray is recomputed, so an older model never replaces a newer one.
    refreshing: tokio::sync::Mutex<()>,
    /// The held calls notified (`tools_ask`), and how to withdraw each one's notification.
    approval_notices: Mutex<ApprovalNotices>,
    withdraw: Mutex<std::collections::HashMap<String, tokio::sync::oneshot::Sender<()>>>,
    /// The window's process, while it runs.
    window: Mutex<Option<CommandChild>>,
    quitting: AtomicBool,
    stop: Notify,
    stopped: Notify,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Host {
    fn state(&self) -> AppState {
        let model = lock(&self.model).clone().unwrap_or_default();
        AppState {
            tray: model.health,
            tooltip: model.tooltip,
            // A host whose supervisor cannot listen exits (see `start`).
            supervisor_error: None,
            sidecar_error: lock(&self.sidecar_error).clone(),
            notifications: lock(&self.notifications).iter().cloned().collect(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }

    fn draw(&self, model: &menu::Model) {
        let icon = lock(&self.icon).clone();
        if let Some(icon) = icon
            && let Err(e) = menu::draw(&icon, model)
        {
            tracing::warn!("cannot update the tray: {e}");
        }
    }

    /// Tells the window (when open) the tray's state.
    fn publish(&self) {
        self.sup.publish_app(AppEvent::State(self.state()));
    }

    fn notify(&self, title: String, body: String) {
        let (title, body) = commands::notification_text(&title, &body);
        show_notification(&self.app, &title, &body);
        self.remember(title, body);
    }

    /// Keeps a notification (already made safe) in the window's list, and tells the window.
    fn remember(&self, title: String, body: String) {
        {
            let mut notes = lock(&self.notifications);
            notes.push_back(Notification {
                ts_ms: supervisor::now_ms(),
                title,
                body,
            });
            while notes.len() > NOTIFICATIONS_KEPT {
                notes.pop_front();
            }
        }
        // The window's bell, at once: the tray may already show what the note is about, and
        // then its refresh tells the window nothing new.
        self.publish();
    }

    /// Recomputes the tray from the supervisor's status and its `Limits` answers (the
    /// switches); redraws the icon, tooltip and menu when they changed, and tells the window.
    async fn refresh(&self) {
        let _one_at_a_time = self.refreshing.lock().await;
        let status = self.sup.status();
        let mut limits = Vec::with_capacity(status.servers.len());
        for s in &status.servers {
            let server = s.name.clone();
            if let Response::Limits(report) = self
                .sup
                .handle(Request::Limits(op::Limits { server }))
                .await
            {
                limits.push(report);
            }
        }
        let sidecar_error = lock(&self.sidecar_error).clone();
        let auto_rewrite = self.sup.auto_rewrite();
        let (switched, mut awaiting) = lock(&self.model)
            .as_ref()
            .map_or((false, 0), |m| (m.auto_rewrite != auto_rewrite, m.awaiting));
        if self.awaiting_stale.swap(false, Ordering::SeqCst) || switched {
            // The clients report reads the IDE configs: only after they (or the switch) changed.
            if let Response::Clients(r) = self.sup.handle(Request::Clients).await {
                awaiting = r.awaiting.len();
            }
        }
        let model =
            menu::Model::from_status(&status, &limits, auto_rewrite, awaiting, sidecar_error);
        let changed = {
            let mut current = lock(&self.model);
            let changed = current.as_ref() != Some(&model);
            *current = Some(model.clone());
            changed
        };
        if changed {
            self.draw(&model);
            self.publish();
        }
    }

    /// Keeps the tray current and notifies.
    async fn follow(self: Arc<Self>, mut events: tokio::sync::broadcast::Receiver<Arc<ApiEvent>>) {
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
                self.refresh().await;
                self.notify_approvals().await;
                continue;
            };
            if let Some((title, body)) = commands::notification(&event) {
                self.notify(title, body);
            }
            if matches!(
                *event,
                ApiEvent::ConfigChanged { .. } | ApiEvent::Client { .. }
            ) {
                self.awaiting_stale.store(true, Ordering::SeqCst);
            }
            // A call held or let go: the `approval_*` events, and the heartbeats that carry
            // the held calls' ids (`approval_asked` comes before the one that holds it).
            let approvals_changed = match &*event {
                ApiEvent::Event { entry } => entry.event.kind.starts_with("approval_"),
                ApiEvent::SessionUpdated { .. } | ApiEvent::SessionClosed { .. } => true,
                _ => false,
            };
            if approvals_changed {
                self.notify_approvals().await;
            }
            if matches!(
                *event,
                ApiEvent::Health { .. }
                    | ApiEvent::SessionOpened { .. }
                    | ApiEvent::SessionClosed { .. }
                    | ApiEvent::ConfigChanged { .. }
                    | ApiEvent::Client { .. }
            ) {
                self.refresh().await;
            }
        }
    }

    /// One notification per call held for an answer (`tools_ask`), withdrawn once the call is
    /// no longer held (answered anywhere, timed out, or its session gone).
    async fn notify_approvals(self: &Arc<Self>) {
        let Response::Approvals { approvals } = self.sup.handle(Request::Approvals).await else {
            return;
        };
        let (new, gone) = lock(&self.approval_notices).update(&approvals);
        for id in gone {
            if let Some(withdraw) = lock(&self.withdraw).remove(&id) {
                let _ = withdraw.send(());
            }
        }
        for a in new {
            let (withdraw, withdrawn) = tokio::sync::oneshot::channel();
            lock(&self.withdraw).insert(a.id.clone(), withdraw);
            tauri::async_runtime::spawn(Arc::clone(self).approval_notice(a.clone(), withdrawn));
        }
    }

    /// Shows held call `a`'s notification: with Allow, Always allow and Deny where the
    /// desktop shows actions (a click on it opens the window), until it is answered there or
    /// `withdrawn`; else a plain one, and the window opens (it lists the call on top).
    async fn approval_notice(
        self: Arc<Self>,
        a: PendingApproval,
        mut withdrawn: tokio::sync::oneshot::Receiver<()>,
    ) {
        let presentation = actions::presentation().await;
        if withdrawn.try_recv().is_ok() {
            return; // answered meanwhile (a client's prompt is often quicker)
        }
        let (title, body) = commands::approval_notification(&a);
        self.remember(title.clone(), body.clone());
        let action = match presentation {
            ApprovalPresentation::Actions => {
                match actions::show(&title, &body, a.left_ms, withdrawn).await {
                    Ok(action) => action,
                    Err(e) => {
                        tracing::warn!("cannot show a notification with actions: {e}");
                        ApprovalAction::OpenWindow
                    }
                }
            }
            ApprovalPresentation::OpenWindow => {
                let body = format!("{body} Answer in Warden's window.");
                show_notification(&self.app, &title, &body);
                ApprovalAction::OpenWindow
            }
        };
        match action {
            ApprovalAction::Answer { allow, always } => {
                let request = Request::ApprovalAnswer(op::ApprovalAnswer {
                    id: a.id.clone(),
                    allow,
                    always,
                });
                let failed = match self.sup.handle(request).await {
                    Response::Command(c) if c.ok => None,
                    Response::Command(c) => Some(c.message),
                    Response::Error(e) => Some(e.message),
                    other => Some(format!("unexpected answer: {other:?}")),
                };
                if let Some(why) = failed {
                    let title = format!("Answering {} of {} failed", a.tool, a.server);
                    self.notify(title, why);
                }
            }
            ApprovalAction::OpenWindow => self.show_window(),
            ApprovalAction::Nothing => {}
        }
    }

    /// Stops the supervisor (it removes its socket, which closes the window) and exits.
    fn quit(self: &Arc<Self>) {
        if self.quitting.swap(true, Ordering::SeqCst) {
            return;
        }
        let host = Arc::clone(self);
        tauri::async_runtime::spawn(async move {
            let stopped = host.stopped.notified();
            host.stop.notify_one();
            let _ = tokio::time::timeout(Duration::from_secs(3), stopped).await;
            host.app.exit(0);
        });
    }

    /// Focuses the window when it runs (a line on its stdin), else starts its process: this
    /// executable with [`WINDOW_ARG`], through the shell plugin. Its output goes to the log.
    pub fn show_window(self: &Arc<Self>) {
        let mut window = lock(&self.window);
        if let Some(child) = window.as_mut() {
            match child.write(SHOW_LINE.as_bytes()) {
                Ok(()) => return,
                Err(e) => tracing::info!("the window does not listen ({e}): starting another"),
            }
        }
        let spawned = std::env::current_exe()
            .map_err(|e| e.to_string())
            .and_then(|me| {
                self.app
                    .shell()
                    .command(me)
                    .arg(WINDOW_ARG)
                    .spawn()
                    .map_err(|e| e.to_string())
            });
        match spawned {
            Ok((events, child)) => {
                let pid = child.pid();
                *window = Some(child);
                tauri::async_runtime::spawn(Arc::clone(self).window_output(events, pid));
            }
            Err(e) => {
                drop(window);
                let title = "Opening Warden's window failed".to_owned();
                self.notify(title, format!("cannot start the window's process: {e}"));
            }
        }
    }

    /// Logs what the window's process `pid` writes, and forgets it when it ends.
    async fn window_output(
        self: Arc<Self>,
        mut events: tauri::async_runtime::Receiver<CommandEvent>,
        pid: u32,
    ) {
        while let Some(event) = events.recv().await {
            match event {
                // What the window logs passed its own filter (`WARDEN_LOG`, as here).
                CommandEvent::Stdout(line) | CommandEvent::Stderr(line) => {
                    tracing::warn!("window: {}", String::from_utf8_lossy(&line).trim_end());
                }
                CommandEvent::Terminated(end) => {
                    tracing::info!(
                        "the window ended (code {:?}, signal {:?})",
                        end.code,
                        end.signal
                    );
                }
                CommandEvent::Error(e) => tracing::warn!("the window's output: {e}"),
                _ => {}
            }
        }
        {
            let mut window = lock(&self.window);
            if window.as_ref().is_some_and(|c| c.pid() == pid) {
                *window = None;
            }
        }
        // The window's session (its subscription, the answers it asked for) is over.
        crate::memory::give_back();
    }

    async fn on_menu(self: Arc<Self>, id: MenuId) {
        match id {
            MenuId::Open => self.show_window(),
            MenuId::Quit => self.quit(),
            MenuId::Log(server) => {
                let target = OpenTarget::EventLog {
                    server: server.clone(),
                };
                let open = AppRequest::Open(app_op::Open { target });
                if let AppResponse::Error(e) = self.dispatch(open).await {
                    let title = format!("Opening the event log of {server} failed");
                    self.notify(title, e.message);
                }
            }
            id => {
                let model = lock(&self.model).clone().unwrap_or_default();
                let Some(request) = menu::request_for(&id, &model) else {
                    return;
                };
                let what = menu::action_title(&request);
                let response = self.sup.handle(request).await;
                tracing::info!("tray: {response:?}");
                let failed = menu::failure(&response);
                self.refresh().await;
                if let Some(why) = failed {
                    self.notify(format!("{what} failed"), why);
                    // The menu ticked its check item when it was clicked; the model did not
                    // change, so draw it again to untick it.
                    if let Some(model) = lock(&self.model).clone() {
                        self.draw(&model);
                    }
                }
            }
        }
    }

    /// Carries out an [`AppRequest`] for the window or the tray. Opening files and reading the
    /// autostart entry block, so they run off the async threads.
    async fn dispatch(self: &Arc<Self>, request: AppRequest) -> AppResponse {
        let host = Arc::clone(self);
        let answer = tauri::async_runtime::spawn_blocking(move || {
            commands::dispatch(&HostSide(&host), request)
        })
        .await;
        answer.unwrap_or_else(|e| {
            AppResponse::Error(warden_supervisor::api::ApiError::new(
                warden_supervisor::api::ErrorCode::Io,
                format!("the request failed: {e}"),
            ))
        })
    }
}

/// A desktop notification (`tauri-plugin-notification`; shown off the calling thread) of text
/// made safe by [`commands::notification_text`].
fn show_notification(app: &AppHandle, title: &str, body: &str) {
    let shown = app.notification().builder().title(title).body(body).show();
    if let Err(e) = shown {
        tracing::warn!("cannot show a desktop notification: {e}");
    }
}

/// The desktop side of [`AppRequest`]s: start at login (`tauri-plugin-autostart`), opening
/// files (`tauri-plugin-opener`), quitting.
struct HostSide<'a>(&'a Arc<Host>);

impl Desktop for HostSide<'_> {
    fn state(&self) -> AppState {
        self.0.state()
    }
    fn autostart(&self) -> Result<bool, String> {
        self.0
            .app
            .autolaunch()
            .is_enabled()
            .map_err(|e| e.to_string())
    }
    fn set_autostart(&self, on: bool) -> Result<(), String> {
        let a = self.0.app.autolaunch();
        // auto-launch creates ~/.config/autostart, but not a missing ~/.config.
        #[cfg(target_os = "linux")]
        if let Some(dir) = autostart_dir().filter(|_| on) {
            let _ = std::fs::create_dir_all(dir);
        }
        if on { a.enable() } else { a.disable() }.map_err(|e| e.to_string())
    }
    fn open(&self, path: &Path) -> Result<(), String> {
        let path = path.to_string_lossy();
        let opened = self.0.app.opener().open_path(path, None::<&str>);
        opened.map_err(|e| e.to_string())
    }
    fn quit(&self) {
        self.0.quit();
    }
    fn config_path(&self) -> Option<PathBuf> {
        self.0.sup.options().config.clone()
    }
    fn state_dir(&self) -> PathBuf {
        warden_config::paths::state_dir()
    }
    fn warden(&self, args: &[&str]) -> Result<String, String> {
        let program = crate::sidecar::path();
        let ran = std::process::Command::new(&program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
        if ran.status.success() {
            return Ok(String::from_utf8_lossy(&ran.stdout).into_owned());
        }
        let stderr = String::from_utf8_lossy(&ran.stderr);
        let said = stderr.lines().rev().find(|l| !l.trim().is_empty());
        Err(said.map_or_else(
            || format!("warden {} failed without saying why", args.join(" ")),
            |l| {
                let l = l.trim();
                l.strip_prefix("warden: ")
                    .or_else(|| l.strip_prefix("warden-remote: "))
                    .unwrap_or(l)
                    .to_owned()
            },
        ))
    }
    fn client_files(&self) -> Vec<PathBuf> {
        warden_clients::ClientEnv::from_process()
            .map(|env| {
                warden_clients::detect(&env)
                    .into_iter()
                    .map(|f| f.path)
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Where auto-launch writes the start-at-login entry on Linux.
#[cfg(target_os = "linux")]
fn autostart_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|home| Path::new(&home).join(".config/autostart"))
}

/// An entry that runs `warden-tray` (written by versions before the host was `warden-app`)
/// is written anew, to run this program with [`HIDDEN_ARG`]. Until then it still works: the
/// package links `warden-tray` to `warden-app`, which runs hidden under that name.
#[cfg(target_os = "linux")]
fn renew_old_autostart(app: &AppHandle) {
    let entry = autostart_dir().map(|d| d.join(format!("{}.desktop", app.package_info().name)));
    let Some(text) = entry.and_then(|e| std::fs::read_to_string(e).ok()) else {
        return;
    };
    if runs_old_tray(&text)
        && let Err(e) = app.autolaunch().enable()
    {
        tracing::warn!("cannot renew the start-at-login entry: {e}");
    }
}

/// Whether a start-at-login entry's `Exec` runs the old tray program.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn runs_old_tray(desktop_entry: &str) -> bool {
    desktop_entry.lines().any(|line| {
        line.strip_prefix("Exec=")
            .and_then(|exec| exec.split_whitespace().next())
            .is_some_and(|program| crate::is_old_tray(program.as_ref()))
    })
}

/// The supervisor's options in the host: the environment's paths, the IDE config watcher
/// on, and the `warden` binary the wrapped entries run ([`sidecar::path`]).
fn supervisor_options() -> Options {
    let mut opts = Options::from_env();
    opts.watch_clients = true;
    opts.probe_ide = Some(warden_config::paths::state_dir().join("probe-ide"));
    let warden = sidecar::path();
    opts.warden_bin = (sidecar::given().is_some() || warden.is_file()).then_some(warden);
    opts
}

/// SIGTERM (as at logout) or Ctrl-C: quit as the menu's Quit does.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// Runs the host; `hidden`: in the tray only (at login), else the window opens too.
pub fn run(hidden: bool) {
    let builder = tauri::Builder::default()
        .plugin(tauri_plugin_single_instance::init(|app, argv, _cwd| {
            // A second `warden-app`: open or focus the window, unless it was started hidden.
            if !crate::hidden(argv.iter().map(String::as_str))
                && let Some(host) = app.try_state::<Arc<Host>>()
            {
                host.show_window();
            }
        }))
        .plugin(tauri_plugin_shell::init())
        .plugin(tauri_plugin_notification::init())
        .plugin(tauri_plugin_opener::init())
        .plugin(tauri_plugin_autostart::init(
            MacosLauncher::LaunchAgent,
            Some(vec![HIDDEN_ARG]),
        ))
        .setup(move |app| {
            // A tray app on macOS: a menu bar icon, with no Dock icon (the window, a process
            // of its own, has one while it is open). Not built on this project's CI (Linux).
            #[cfg(target_os = "macos")]
            app.set_activation_policy(tauri::ActivationPolicy::Accessory);
            if let Err(e) = start(app.handle(), hidden) {
                cannot_start(app.handle(), &e);
            }
            Ok(())
        });
    let app = crate::build(builder);
    app.run(|_, event| {
        // The host has no window whose closing could end it: only Quit (`exit`) does.
        if let RunEvent::ExitRequested {
            code: None, api, ..
        } = event
        {
            api.prevent_exit();
        }
    });
}

/// Says why the host cannot start, and exits.
fn cannot_start(app: &AppHandle, e: &str) -> ! {
    tracing::error!("cannot start: {e}");
    let (title, body) = commands::notification_text("MCP Warden cannot start", e);
    show_notification(app, &title, &body);
    // Started at login, nobody reads its stderr: give the notification (sent from another
    // thread) a moment to be shown.
    std::thread::sleep(Duration::from_secs(1));
    std::process::exit(1);
}

/// Starts the supervisor, the tray and what follows them.
fn start(app: &AppHandle, hidden: bool) -> Result<(), String> {
    let opts = supervisor_options();
    let Some(held) = lock::one_host(&opts.socket, || {})? else {
        tracing::warn!("a Warden host already serves {}", opts.socket.display());
        std::process::exit(0);
    };
    // Held for the process's life.
    std::mem::forget(held);
    let sup = Supervisor::new(opts).map_err(|e| e.to_string())?;
    let host = Arc::new(Host {
        app: app.clone(),
        sup: Arc::clone(&sup),
        icon: Mutex::new(None),
        sidecar_error: Mutex::new(None),
        notifications: Mutex::new(VecDeque::new()),
        approval_notices: Mutex::new(ApprovalNotices::default()),
        withdraw: Mutex::new(std::collections::HashMap::new()),
        model: Mutex::new(None),
        awaiting_stale: AtomicBool::new(true),
        refreshing: tokio::sync::Mutex::new(()),
        window: Mutex::new(None),
        quitting: AtomicBool::new(false),
        stop: Notify::new(),
        stopped: Notify::new(),
    });
    app.manage(Arc::clone(&host));
    // Weak: the supervisor holds the handler, the host the supervisor.
    let weak: Weak<Host> = Arc::downgrade(&host);
    sup.serve_app(Arc::new(move |request| {
        let weak = weak.clone();
        Box::pin(async move {
            match weak.upgrade() {
                Some(host) => host.dispatch(request).await,
                None => AppResponse::Quitting,
            }
        })
    }));
    // Subscribed before the supervisor runs: its first health judgement (of what it loaded
    // and took in from the bridges' logs) is notified too.
    let events = sup.subscribe();
    let t = Arc::clone(&host);
    tauri::async_runtime::spawn(async move {
        if let Err(e) = sup.run(t.stop.notified()).await {
            // A host without its supervisor serves nothing: say why, and go.
            let message = format!(
                "the supervisor cannot listen on {}: {e}. Is `warden daemon` running? Stop it, then restart MCP Warden.",
                sup.options().socket.display()
            );
            let app = t.app.clone();
            let _ =
                tauri::async_runtime::spawn_blocking(move || cannot_start(&app, &message)).await;
        }
        t.stopped.notify_waiters();
    });
    tauri::async_runtime::spawn(Arc::clone(&host).follow(events));
    let t = Arc::clone(&host);
    tauri::async_runtime::spawn(async move {
        stop_signal().await;
        t.quit();
    });
    let t = Arc::clone(&host);
    tauri::async_runtime::spawn(async move {
        if let Err(error) = sidecar::check(&t.app).await {
            tracing::error!("{error}");
            *lock(&t.sidecar_error) = Some(error);
            t.refresh().await;
        }
    });
    let (on_menu, on_click) = (Arc::clone(&host), Arc::clone(&host));
    let built = menu::build(
        app,
        &menu::Model::default(),
        move |id| {
            tauri::async_runtime::spawn(Arc::clone(&on_menu).on_menu(id));
        },
        move || on_click.show_window(),
    );
    match built {
        Ok(icon) => *lock(&host.icon) = Some(icon),
        Err(e) => tracing::error!("cannot create the tray icon: {e}"),
    }
    #[cfg(target_os = "linux")]
    renew_old_autostart(app);
    if !hidden {
        host.show_window();
    }
    // At rest from here on: what the start allocated and freed goes back to the system once
    // the supervisor's first round (the clients' files, the history, the first probes' start)
    // and the tray's first model are done.
    tauri::async_runtime::spawn(async {
        tokio::time::sleep(SETTLED).await;
        crate::memory::give_back();
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The entry earlier versions wrote (it runs the tray program) is recognised, so that it
    /// is written anew; this version's entry is not.
    #[test]
    fn an_old_start_at_login_entry_is_recognised() {
        let old = "[Desktop Entry]\nType=Application\nVersion=1.0\nName=MCP Warden\nComment=MCP Warden startup script\nExec=/usr/bin/warden-tray\nStartupNotify=false\nTerminal=false\n";
        let new = old.replace(
            "Exec=/usr/bin/warden-tray",
            "Exec=/usr/bin/warden-app --hidden",
        );
        assert_eq!((runs_old_tray(old), runs_old_tray(&new)), (true, false));
    }
}
