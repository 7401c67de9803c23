//! `warden-tray`, MCP Warden at rest: it hosts the supervisor (the library `warden daemon`
//! hosts) on the control socket, draws the tray, and notifies. It never links WebKit: the
//! window is a process of its own (`warden-app`), started from the tray's menu and gone when
//! closed, so Warden at rest costs what a tray costs.
//!
//! - The supervisor answers the window's requests on the socket, the desktop app's own too
//!   ([`Request::App`](warden_core::supervisor::api::Request::App), served by [`TrayHost`]),
//!   and streams its events; the tray's state goes out as `ApiEvent::App`.
//! - The tray ([`menu`]) shows the worst health and a menu that calls the same API.
//! - At start, [`sidecar`] checks the bundled `warden` CLI the wrapped IDE entries run; a
//!   problem shows in the tray and the window.
//! - It quits from its menu, the window's Quit, SIGTERM or Ctrl-C: the supervisor stops and
//!   removes its socket. One tray runs per socket (a lock beside it); a tray that cannot start
//!   (the socket's directory is not private, or `warden daemon` holds the socket) notifies and
//!   exits.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod menu;
mod sidecar;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use tao::event::{Event, StartCause};
use tao::event_loop::{ControlFlow, EventLoopBuilder, EventLoopProxy};
use tokio::sync::Notify;
use tray_icon::menu::MenuEvent;
use warden_core::desktop::{
    self as commands, AppEvent, AppRequest, AppResponse, AppState, Host, Notification, OpenTarget,
    beside_me,
};
use warden_core::supervisor::api::{ApiEvent, ClientChangeKind, Health, Request, Response};
use warden_core::supervisor::{self, Options, Supervisor};

use menu::MenuId;

/// The window's program, beside this one.
const WINDOW: &str = "warden-app";
/// The start-at-login entry's name (the one the Tauri app used, so it is replaced, not doubled).
const APP_NAME: &str = "MCP Warden";
const NOTIFICATIONS_KEPT: usize = 20;
/// How long a tray waits for the lock another tray holds (a quitting tray exits within 3 s).
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// What the event loop's thread is asked to do.
enum UiEvent {
    Draw(menu::Model),
    Quit,
}

struct Tray {
    sup: Arc<Supervisor>,
    ui: Mutex<EventLoopProxy<UiEvent>>,
    rt: tokio::runtime::Handle,
    /// What is wrong with the `warden` CLI the wrapped IDE entries run (see [`sidecar`]).
    sidecar_error: Mutex<Option<String>>,
    notifications: Mutex<VecDeque<Notification>>,
    model: Mutex<Option<menu::Model>>,
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

impl Tray {
    fn state(&self) -> AppState {
        let model = lock(&self.model).clone().unwrap_or_default();
        AppState {
            tray: model.health,
            tooltip: model.tooltip,
            // A tray whose supervisor cannot listen exits (see `run`).
            supervisor_error: None,
            sidecar_error: lock(&self.sidecar_error).clone(),
            notifications: lock(&self.notifications).iter().cloned().collect(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }

    fn ui(&self, event: UiEvent) {
        let _ = lock(&self.ui).send_event(event);
    }

    /// Tells the window (when open) the tray's state.
    fn publish(&self) {
        self.sup.publish_app(AppEvent::State(self.state()));
    }

    fn notify(&self, title: String, body: String) {
        let (t, b) = (title.clone(), body.clone());
        // A D-Bus round trip on Linux: off the async threads.
        self.rt.spawn_blocking(move || show_notification(&t, &b));
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
            if let Response::Limits(report) = self.sup.handle(Request::Limits { server }).await {
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
            self.ui(UiEvent::Draw(model));
            self.publish();
        }
    }

    /// Keeps the tray current and notifies.
    async fn follow(self: Arc<Self>, mut events: tokio::sync::broadcast::Receiver<ApiEvent>) {
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
                continue;
            };
            if let Some((title, body)) = notification(&event) {
                self.notify(title, body);
            }
            if matches!(
                event,
                ApiEvent::ConfigChanged { .. } | ApiEvent::Client { .. }
            ) {
                self.awaiting_stale.store(true, Ordering::SeqCst);
            }
            if matches!(
                event,
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

    /// Stops the supervisor (it removes its socket) and exits.
    fn quit(self: &Arc<Self>) {
        if self.quitting.swap(true, Ordering::SeqCst) {
            return;
        }
        let tray = Arc::clone(self);
        self.rt.spawn(async move {
            let stopped = tray.stopped.notified();
            tray.stop.notify_one();
            let _ = tokio::time::timeout(Duration::from_secs(3), stopped).await;
            tray.ui(UiEvent::Quit);
        });
    }

    /// Starts the window's process (it shows the running one when there is one), and reaps it.
    fn show_window(self: &Arc<Self>) {
        let program = beside_me(WINDOW);
        let mut command = tokio::process::Command::new(&program);
        command.stdin(std::process::Stdio::null());
        let _guard = self.rt.enter();
        match command.spawn() {
            Ok(mut child) => {
                self.rt.spawn(async move {
                    let _ = child.wait().await;
                });
            }
            Err(e) => {
                let title = "Opening Warden's window failed".to_owned();
                self.notify(title, format!("cannot run {}: {e}", program.display()));
            }
        }
    }

    async fn on_menu(self: Arc<Self>, id: MenuId) {
        match id {
            MenuId::Open => self.show_window(),
            MenuId::Quit => self.quit(),
            MenuId::Log(server) => {
                let target = OpenTarget::EventLog {
                    server: server.clone(),
                };
                let open = AppRequest::Open { target };
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
                        self.ui(UiEvent::Draw(model));
                    }
                }
            }
        }
    }

    /// Carries out an [`AppRequest`] for the window or the tray. Opening files and reading the
    /// autostart entry block, so they run off the async threads.
    async fn dispatch(self: &Arc<Self>, request: AppRequest) -> AppResponse {
        let tray = Arc::clone(self);
        let answer = self
            .rt
            .spawn_blocking(move || commands::dispatch(&TrayHost(&tray), request))
            .await;
        answer.unwrap_or_else(|e| {
            AppResponse::Error(warden_core::supervisor::api::ApiError::new(
                warden_core::supervisor::api::ErrorCode::Io,
                format!("the request failed: {e}"),
            ))
        })
    }
}

fn show_notification(title: &str, body: &str) {
    let shown = notify_rust::Notification::new()
        .appname(APP_NAME)
        .summary(title)
        .body(body)
        .auto_icon()
        .show();
    if let Err(e) = shown {
        tracing::warn!("cannot show a desktop notification: {e}");
    }
}

/// The desktop notification an event deserves, if any.
fn notification(event: &ApiEvent) -> Option<(String, String)> {
    match event {
        ApiEvent::Health {
            server,
            health: Health::Down,
            reason,
        } => Some((format!("{server} is down"), reason.clone())),
        ApiEvent::Event { entry } if matches!(&*entry.event.kind, "tool_changed" | "tool_new") => {
            let tool = entry.event.tool.as_deref().unwrap_or("?");
            Some((
                format!("{}: tool {tool} is not as pinned", entry.server),
                format!(
                    "{}. Review and approve it on the server's page.",
                    entry
                        .event
                        .detail
                        .as_deref()
                        .unwrap_or("its definition changed")
                ),
            ))
        }
        ApiEvent::Client {
            change: ClientChangeKind::Awaiting,
            message,
            ..
        } => Some((
            "A new MCP server awaits your approval".into(),
            message.clone(),
        )),
        ApiEvent::Client {
            change: ClientChangeKind::Reverted | ClientChangeKind::GaveUp,
            message,
            ..
        } => Some(("A client reverted Warden's edit".into(), message.clone())),
        _ => None,
    }
}

struct TrayHost<'a>(&'a Arc<Tray>);

/// The start-at-login entry: this program. In an AppImage (whose files are mounted anew at
/// each start), the AppImage with `--hidden`, which makes its window program exec the tray.
fn autolaunch() -> Result<auto_launch::AutoLaunch, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut builder = auto_launch::AutoLaunchBuilder::new();
    builder
        .set_app_name(APP_NAME)
        .set_app_path(&me.to_string_lossy())
        .set_use_launch_agent(true);
    if let Some(appimage) = std::env::var_os("APPIMAGE").filter(|p| !p.is_empty()) {
        builder
            .set_app_path(&appimage.to_string_lossy())
            .set_args(&["--hidden"]);
    }
    builder.build().map_err(|e| e.to_string())
}

impl Host for TrayHost<'_> {
    fn state(&self) -> AppState {
        self.0.state()
    }
    fn autostart(&self) -> Result<bool, String> {
        autolaunch()?.is_enabled().map_err(|e| e.to_string())
    }
    fn set_autostart(&self, on: bool) -> Result<(), String> {
        let a = autolaunch()?;
        // auto-launch creates ~/.config/autostart, but not a missing ~/.config.
        #[cfg(target_os = "linux")]
        if let Some(home) = std::env::var_os("HOME").filter(|_| on) {
            let _ = std::fs::create_dir_all(Path::new(&home).join(".config/autostart"));
        }
        if on { a.enable() } else { a.disable() }.map_err(|e| e.to_string())
    }
    fn open(&self, path: &Path) -> Result<(), String> {
        open::that_detached(path).map_err(|e| e.to_string())
    }
    fn quit(&self) {
        self.0.quit();
    }
    fn config_path(&self) -> Option<PathBuf> {
        self.0.sup.options().config.clone()
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

/// The supervisor's options in the tray: the environment's paths, the IDE config watcher on,
/// and the `warden` binary the wrapped entries run ([`sidecar::path`]).
fn supervisor_options() -> Options {
    let mut opts = Options::from_env();
    opts.watch_clients = true;
    opts.probe_ide = Some(warden_core::paths::state_dir().join("probe-ide"));
    let warden = sidecar::path();
    let given = std::env::var_os("WARDEN_BIN").is_some_and(|p| !p.is_empty());
    opts.warden_bin = (given || warden.is_file()).then_some(warden);
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

/// The lock one tray per socket holds for its life (`<socket>.tray.lock`, beside the socket
/// in its private directory): `None` when another tray still holds it after [`LOCK_WAIT`]
/// (one that is quitting lets go sooner; `waiting` is called each time it is still held). The
/// kernel drops it when the process ends, however it ends.
fn one_tray(socket: &Path, mut waiting: impl FnMut()) -> Result<Option<std::fs::File>, String> {
    use rustix::fs::{Mode, OFlags};
    let mut path = socket.as_os_str().to_owned();
    path.push(".tray.lock");
    let path = PathBuf::from(path);
    // The socket's own rule (`bind`'s), checked before the lock is taken: another user must
    // not be able to hold the lock, or plant a link in its place, and so keep this tray from
    // starting.
    let dir = path.parent().unwrap_or(Path::new("."));
    warden_core::control::socket::private_dir(dir).map_err(|e| e.to_string())?;
    let flags = OFlags::CREATE | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let file = rustix::fs::open(&path, flags, Mode::from_raw_mode(0o600))
        .map(std::fs::File::from)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(Some(file)),
            Err(rustix::io::Errno::WOULDBLOCK) if Instant::now() < deadline => {
                waiting();
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(rustix::io::Errno::WOULDBLOCK) => return Ok(None),
            Err(e) => return Err(format!("cannot lock {}: {e}", path.display())),
        }
    }
}

fn main() {
    // SAFETY: the first thing the process does, while it has one thread.
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    unsafe {
        warden_core::desktop::keep_gtk_off_gl();
    }
    let filter = tracing_subscriber::EnvFilter::try_from_env("WARDEN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    if let Err(e) = run() {
        eprintln!("warden-tray: cannot start: {e}");
        // Started at login or from the window, nobody reads its stderr. A notification
        // service that does not answer must not hold the exit up.
        let (shown, wait) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            show_notification("MCP Warden cannot start", &e);
            let _ = shown.send(());
        });
        let _ = wait.recv_timeout(Duration::from_secs(2));
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let opts = supervisor_options();
    let Some(_lock) = one_tray(&opts.socket, || {})? else {
        tracing::warn!("a Warden tray already serves {}", opts.socket.display());
        return Ok(());
    };
    let sup = Supervisor::new(opts).map_err(|e| e.to_string())?;
    #[cfg_attr(not(target_os = "macos"), expect(unused_mut))]
    let mut event_loop = EventLoopBuilder::<UiEvent>::with_user_event().build();
    // A tray app on macOS: a menu bar icon, with no Dock icon and no app menu of its own
    // (the window, a separate app, has those while it is open). Not built on this project's
    // CI (Linux); the call is tao's, as documented for 0.35.
    #[cfg(target_os = "macos")]
    tao::platform::macos::EventLoopExtMacOS::set_activation_policy(
        &mut event_loop,
        tao::platform::macos::ActivationPolicy::Accessory,
    );
    let tray = Arc::new(Tray {
        sup: Arc::clone(&sup),
        ui: Mutex::new(event_loop.create_proxy()),
        rt: rt.handle().clone(),
        sidecar_error: Mutex::new(None),
        notifications: Mutex::new(VecDeque::new()),
        model: Mutex::new(None),
        awaiting_stale: AtomicBool::new(true),
        refreshing: tokio::sync::Mutex::new(()),
        quitting: AtomicBool::new(false),
        stop: Notify::new(),
        stopped: Notify::new(),
    });
    // Weak: the supervisor holds the handler, the tray the supervisor.
    let host: Weak<Tray> = Arc::downgrade(&tray);
    sup.serve_app(Arc::new(move |request| {
        let host = host.clone();
        Box::pin(async move {
            match host.upgrade() {
                Some(tray) => tray.dispatch(request).await,
                None => AppResponse::Quitting,
            }
        })
    }));
    // Subscribed before the supervisor runs: its first health judgement (of what it loaded
    // and took in from the bridges' logs) is notified too.
    let events = sup.subscribe();
    let t = Arc::clone(&tray);
    rt.spawn(async move {
        if let Err(e) = sup.run(t.stop.notified()).await {
            // A tray without its supervisor serves nothing: say why, and go.
            let message = format!(
                "the supervisor cannot listen on {}: {e}. Is `warden daemon` running? Stop it, then restart MCP Warden.",
                sup.options().socket.display()
            );
            tracing::error!("{message}");
            let title = "MCP Warden cannot start its supervisor";
            let _ = tokio::task::spawn_blocking(move || show_notification(title, &message)).await;
            std::process::exit(1);
        }
        t.stopped.notify_waiters();
    });
    rt.spawn(Arc::clone(&tray).follow(events));
    let t = Arc::clone(&tray);
    rt.spawn(async move {
        stop_signal().await;
        t.quit();
    });
    let t = Arc::clone(&tray);
    rt.spawn(async move {
        if let Err(error) = sidecar::check().await {
            tracing::error!("{error}");
            *lock(&t.sidecar_error) = Some(error);
            t.refresh().await;
        }
    });
    let t = Arc::clone(&tray);
    MenuEvent::set_event_handler(Some(move |event: MenuEvent| {
        if let Some(id) = MenuId::parse(event.id().as_ref()) {
            t.rt.spawn(Arc::clone(&t).on_menu(id));
        }
    }));
    let t = Arc::clone(&tray);
    tray_icon::TrayIconEvent::set_event_handler(Some(move |event| {
        // Not sent on Linux (the tray there is a menu only).
        if let tray_icon::TrayIconEvent::Click {
            button: tray_icon::MouseButton::Left,
            button_state: tray_icon::MouseButtonState::Up,
            ..
        } = event
        {
            t.show_window();
        }
    }));
    let mut icon = None;
    event_loop.run(move |event, _, flow| {
        *flow = ControlFlow::Wait;
        match event {
            // Created once the loop runs (macOS needs it so).
            Event::NewEvents(StartCause::Init) => {
                let model = lock(&tray.model).clone().unwrap_or_default();
                match menu::build(&model) {
                    Ok(built) => icon = Some(built),
                    Err(e) => tracing::error!("cannot create the tray icon: {e}"),
                }
            }
            Event::UserEvent(UiEvent::Draw(model)) => {
                if let Some(icon) = &icon
                    && let Err(e) = menu::draw(icon, &model)
                {
                    tracing::warn!("cannot update the tray: {e}");
                }
            }
            Event::UserEvent(UiEvent::Quit) => *flow = ControlFlow::Exit,
            _ => {}
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    /// The lock is taken only in a directory the socket could be bound in: one other users
    /// can write to could hold a tray back, so it is refused, saying what to do.
    #[test]
    fn the_lock_is_refused_in_a_directory_open_to_others() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = one_tray(&dir.path().join("control.sock"), || {}).unwrap_err();
        assert!(e.contains("chmod 700"), "{e}");
    }

    /// A link planted where the lock goes is not followed.
    #[test]
    fn a_link_in_place_of_the_lock_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::os::unix::fs::symlink(&elsewhere, dir.path().join("control.sock.tray.lock")).unwrap();
        let e = one_tray(&dir.path().join("control.sock"), || {}).unwrap_err();
        assert!(e.contains("cannot open") && !elsewhere.exists(), "{e}");
    }

    /// A tray started while another quits waits for its lock instead of giving up (and the
    /// window for its supervisor).
    #[test]
    fn a_lock_let_go_within_the_wait_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let socket = dir.path().join("control.sock");
        let quitting = one_tray(&socket, || {}).unwrap().unwrap();
        let (waiting, waits) = std::sync::mpsc::channel();
        let next = std::thread::spawn({
            let socket = socket.clone();
            move || {
                one_tray(&socket, || {
                    let _ = waiting.send(());
                })
                .unwrap()
            }
        });
        // Let go only once the other tray has found the lock held.
        waits.recv().unwrap();
        drop(quitting);
        assert!(next.join().unwrap().is_some());
    }
}
