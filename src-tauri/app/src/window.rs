//! MCP Warden's window, a process of its own (`warden-app --window`) that the host starts
//! through `tauri-plugin-shell`: a Tauri 2 web view over the supervisor the host serves on the
//! control socket.
//!
//! - Three commands: `api` (the supervisor's typed API, unchanged) and `app` (tray state,
//!   start at login, opening files, quit), both sent over the socket, where the host answers
//!   the latter; and `registry` (the Add flow's MCP Registry requests), run by the
//!   `warden-registry` sidecar through the shell plugin, never over the socket. The window
//!   registers the shell plugin for that sidecar. The supervisor's events go to the page as
//!   `EVENTS_API` (`warden://event`), the tray's state as `EVENTS_APP` (`warden://app`).
//! - Closing the window ends this process and its WebKit processes; Warden lives on in the
//!   host, which has no web view. When the host quits, the window goes too; when it dies, the
//!   window starts it again.
//! - The host: when no supervisor answers a status request on the socket within 5 s, the window
//!   starts `warden-app --hidden` in its own process group (a Ctrl-C meant for the window leaves
//!   the host running), without the WebKit variables this process set, and waits up to 10 s for a
//!   supervisor to answer. A host that exits at once without an error found another host's lock:
//!   that one's supervisor is waited for. After the host died, the window starts it again, at most
//!   3 times, counted afresh once it has followed a host's events for 60 s. A host killed by a
//!   signal while it starts may be started again; one that exits with an error, cannot be started
//!   or does not answer in time is not. When the window gives up, the page shows why.
//! - A line [`SHOW_LINE`](crate::SHOW_LINE) on its stdin (from the host, when `warden-app` is
//!   started again) brings the window to the front.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::desktop::{AppEvent, AppRequest, AppResponse, AppState, TrayHealth, beside_me};
use crate::{HIDDEN_ARG, SHOW_LINE};
use tauri::{AppHandle, Emitter, Manager, WebviewUrl, WebviewWindowBuilder};
use warden_registry::{RegistryAnswer, RegistryRequest};
use warden_supervisor::api::op;
use warden_supervisor::api::{
    ApiError, ApiEvent, EVENTS_API, EVENTS_APP, ErrorCode, Request, Response,
};
use warden_supervisor::connection::{Connection, ConnectionError};

/// The window's label.
pub const MAIN: &str = "main";
/// How long a host this window started may take to answer.
const HOST_START: Duration = Duration::from_secs(10);
/// How many times a window starts the host again after it died.
const HOST_RESTARTS: usize = 3;
/// How long a running supervisor may take to answer a status request or a subscription.
const ANSWER: Duration = Duration::from_secs(5);
/// Events followed this long since the host's last start: it runs well again, and the
/// restarts are counted afresh.
const HOST_SETTLED: Duration = Duration::from_secs(60);

/// Where the supervisor is, and why the host this window started did not answer.
struct Link {
    socket: PathBuf,
    host_error: Mutex<Option<String>>,
}

/// Sets the window's WebKit defaults, each unless the user set that variable (an empty value is
/// as good as none: WebKit ignores it):
/// - `WEBKIT_DISABLE_DMABUF_RENDERER=1` (`0` keeps the renderer on): the DMA-BUF renderer is
///   the usual cause of a blank window on Linux (NVIDIA's driver, some Wayland compositors:
///   tauri-apps/tauri#9394, WebKit bug 261874), and Tauri and Wails apps ship it off the same
///   way. Without it the web process draws the page into shared memory, which this window's
///   page (text, tables, small charts) draws fast enough, and this process needs no GL.
/// - `WEBKIT_WEB_RENDER_DEVICE_FILE=/dev/null`, with the renderer off: WebKit still asks EGL
///   for the GPU's render node when it starts its web process, which loads the GL driver
///   (with Mesa, the LLVM it links: about 50 MB resident) only to learn of a device nothing
///   here uses any more. Naming none (`/dev/null` is no DRM device) skips that query; only
///   WebGL and video would have used the device, and the page has neither.
/// - `JSC_useJIT=false`: the page's script (about 80 kB, run at load and on each event) runs
///   in JavaScriptCore's interpreter, as in Safari's Lockdown Mode. With its JIT on,
///   JavaScriptCore reserves 1 GiB of writable and executable memory in each of the window's
///   three processes: a target for anything that gets past the page's escaping of what it
///   shows (tool names and descriptions from servers the user may not trust). Off, there is
///   none, and the processes hold about 10 MiB less.
///
/// What it sets is for this process's WebKit only: the host it starts does not inherit it (nor,
/// through the host, what the host opens).
///
/// # Safety
///
/// It sets environment variables: call it first thing in `main`, while the process has one
/// thread, so that no other thread reads the environment meanwhile.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub unsafe fn webkit_defaults() {
    let set = webkit_settings(|name| std::env::var_os(name));
    for (name, value) in &set {
        // SAFETY: the caller's promise, one thread.
        unsafe { std::env::set_var(name, value) };
    }
    let _ = WEBKIT_SET.set(set.into_iter().map(|(name, _)| name).collect());
}

/// What [`webkit_defaults`] sets, given the user's environment (`var`).
#[cfg(target_os = "linux")]
fn webkit_settings(
    var: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Vec<(&'static str, &'static str)> {
    let users = |name| var(name).filter(|v| !v.is_empty());
    let dmabuf_off = users(DMABUF_OFF);
    let mut set = Vec::new();
    if dmabuf_off.is_none() {
        set.push((DMABUF_OFF, "1"));
    }
    // WebKit's own test: anything but 0 is off.
    if dmabuf_off.is_none_or(|v| v != "0") && users(RENDER_NODE).is_none() {
        set.push((RENDER_NODE, "/dev/null"));
    }
    if users(JIT).is_none() {
        set.push((JIT, "false"));
    }
    set
}

#[cfg(target_os = "linux")]
const DMABUF_OFF: &str = "WEBKIT_DISABLE_DMABUF_RENDERER";
#[cfg(target_os = "linux")]
const RENDER_NODE: &str = "WEBKIT_WEB_RENDER_DEVICE_FILE";
#[cfg(target_os = "linux")]
const JIT: &str = "JSC_useJIT";

/// The variables [`webkit_defaults`] set (not the user's).
static WEBKIT_SET: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();

/// One request over the socket; a failure to reach the supervisor is an `io` error that says
/// what to do.
async fn ask(socket: &Path, request: Request) -> Response {
    let unreachable = |e: String| {
        Response::Error(ApiError::new(
            ErrorCode::Io,
            format!(
                "cannot reach Warden's supervisor at {}: {e}. Is MCP Warden running? Start MCP Warden again.",
                socket.display()
            ),
        ))
    };
    match Connection::connect(socket).await {
        Ok(mut conn) => conn
            .request(request)
            .await
            .unwrap_or_else(|e| unreachable(e.to_string())),
        Err(e) => unreachable(e.to_string()),
    }
}

/// What the window shows when no host answers: the supervisor's error, and nothing else.
fn without_host(error: String) -> AppState {
    AppState {
        tray: TrayHealth::Down,
        tooltip: format!("MCP Warden: {error}"),
        supervisor_error: Some(error),
        sidecar_error: None,
        notifications: Vec::new(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    }
}

/// The desktop app's `request`, answered by the host; without one, the state carries
/// `host_error` (why it did not start), else why the socket did not answer.
async fn ask_app(socket: &Path, request: AppRequest, host_error: Option<String>) -> AppResponse {
    let state = matches!(request, AppRequest::State);
    match ask(socket, Request::App(op::App { request })).await {
        Response::App { response } => response,
        Response::Error(e) if state => {
            AppResponse::State(without_host(host_error.unwrap_or(e.message)))
        }
        Response::Error(e) => AppResponse::Error(e),
        other => AppResponse::Error(ApiError::new(
            ErrorCode::Io,
            format!("the supervisor answered {other:?}"),
        )),
    }
}

/// The supervisor's API, as is.
#[tauri::command]
async fn api(link: tauri::State<'_, Link>, request: Request) -> Result<Response, ()> {
    Ok(ask(&link.socket, request).await)
}

/// What only the desktop app does.
#[tauri::command]
async fn app(
    app: AppHandle,
    link: tauri::State<'_, Link>,
    request: AppRequest,
) -> Result<AppResponse, ()> {
    let quit = matches!(request, AppRequest::Quit);
    let host_error = link.host_error.lock().ok().and_then(|e| e.clone());
    let answer = ask_app(&link.socket, request, host_error).await;
    // A host that quits ends the event stream, which closes the window; without one, close
    // it here.
    if quit && !matches!(answer, AppResponse::Quitting) {
        app.exit(0);
    }
    Ok(answer)
}

/// The window's Add flow asks the MCP Registry: `warden-registry` fetches (the sidecar, run
/// through the shell plugin), the plan is made here. Never over the control socket, so none of
/// the registry's code is in `warden`.
#[tauri::command]
async fn registry(app: AppHandle, request: RegistryRequest) -> Result<RegistryAnswer, ()> {
    let printed = match request.args() {
        Some(args) => crate::sidecar::registry(&app, &args).await,
        None => Ok(String::new()),
    };
    Ok(request.answer(printed))
}

/// Whether a supervisor answers on `socket` within [`ANSWER`] (a dying or stopped one may
/// still accept a connection).
async fn answers(socket: &Path) -> bool {
    let status = async {
        let mut conn = Connection::connect(socket).await.ok()?;
        conn.request(Request::Status).await.ok()
    };
    matches!(tokio::time::timeout(ANSWER, status).await, Ok(Some(_)))
}

/// Why the host this window started did not answer.
#[derive(Debug, PartialEq)]
struct NoHost {
    why: String,
    /// By a signal, as a host that dies in use: starting it again may help, where a host that
    /// exits with an error, cannot be started or hangs would do the same again.
    killed: bool,
}

impl NoHost {
    fn new(why: String) -> Self {
        Self { why, killed: false }
    }
}

/// Starts the host (`host` [`HIDDEN_ARG`]) when no supervisor answers on `socket`, and waits
/// until one does.
async fn ensure_host(socket: &Path, host: &Path) -> Result<(), NoHost> {
    if answers(socket).await {
        return Ok(());
    }
    let mut command = std::process::Command::new(host);
    command.arg(HIDDEN_ARG).stdin(std::process::Stdio::null());
    for name in WEBKIT_SET.get().into_iter().flatten() {
        command.env_remove(name);
    }
    // Its own process group: a Ctrl-C meant for this window leaves the host running.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let child = command.spawn().map_err(|e| {
        NoHost::new(format!(
            "cannot start the host {}: {e}. Reinstall MCP Warden (from source: `cargo build -p warden-app`).",
            host.display()
        ))
    })?;
    await_host(socket, child, host).await
}

/// Waits until a supervisor answers on `socket` after `child` (the host, `program`) was
/// started: an error when it exits with one first, or after [`HOST_START`] (it is killed).
async fn await_host(
    socket: &Path,
    child: std::process::Child,
    program: &Path,
) -> Result<(), NoHost> {
    let mut child = Some(child);
    let deadline = Instant::now() + HOST_START;
    while Instant::now() < deadline {
        if answers(socket).await {
            if let Some(mut child) = child {
                // Reaped when it exits while this window still runs.
                std::thread::spawn(move || child.wait());
            }
            return Ok(());
        }
        match child.as_mut().map(std::process::Child::try_wait) {
            // Another host held the socket's lock through this one's wait: it serves, or is
            // starting; wait for that one.
            Some(Ok(Some(status))) if status.success() => child = None,
            Some(Ok(Some(status))) => {
                #[cfg(unix)]
                let killed = std::os::unix::process::ExitStatusExt::signal(&status).is_some();
                #[cfg(not(unix))]
                let killed = false;
                return Err(NoHost {
                    why: format!(
                        "the host {} exited ({status}) before its supervisor answered on {}. Run it in a terminal to see why.",
                        program.display(),
                        socket.display()
                    ),
                    killed,
                });
            }
            _ => {}
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if let Some(mut child) = child {
        let _ = child.kill();
        let _ = child.wait();
    }
    Err(NoHost::new(format!(
        "the host {} did not answer on {} within {} s. Run it in a terminal to see why.",
        program.display(),
        socket.display(),
        HOST_START.as_secs()
    )))
}

/// Forwards the supervisor's events to the page. When the stream ends because the host quit
/// (its supervisor removed the socket), the window closes too; when the host died (the socket
/// is left behind), the window starts a new one and follows it, a few times at most, then
/// shows why it stopped.
async fn follow(app: AppHandle, socket: PathBuf, host: PathBuf) {
    let mut restarts = 0;
    loop {
        let followed = Instant::now();
        if let Err(e) = forward_events(&app, &socket).await {
            tracing::error!("cannot follow the supervisor's events: {e}");
        }
        if followed.elapsed() >= HOST_SETTLED {
            restarts = 0;
        }
        if !socket.exists() {
            tracing::info!("the host quit: the window closes");
            app.exit(0);
            return;
        }
        if let Err(e) = start_again(&socket, &host, &mut restarts).await {
            no_host(&app, e);
            return;
        }
        // What happened meanwhile: the page reloads its state.
        if let AppResponse::State(state) = ask_app(&socket, AppRequest::State, None).await {
            let _ = app.emit(EVENTS_APP, AppEvent::State(state));
        }
    }
}

/// Starts the host again after it died, counting each start in `restarts`, [`HOST_RESTARTS`]
/// at most; one killed while starting counts too. Why it gave up, otherwise: at once when a
/// start fails in a way that would fail again.
async fn start_again(socket: &Path, host: &Path, restarts: &mut usize) -> Result<(), String> {
    while *restarts < HOST_RESTARTS {
        *restarts += 1;
        tracing::warn!("the host ended without quitting: starting it again");
        match ensure_host(socket, host).await {
            Ok(()) => return Ok(()),
            Err(e) if e.killed => tracing::warn!("{}", e.why),
            Err(e) => return Err(e.why),
        }
    }
    Err(format!(
        "the host ended {} times without quitting. Run {} {HIDDEN_ARG} in a terminal to see why, then open the window again.",
        *restarts + 1,
        host.display()
    ))
}

/// No host runs, for reason `e`: the page's state says so from now on (it asks for it when it
/// loads, and is told if it already runs).
fn no_host(app: &AppHandle, e: String) {
    tracing::error!("{e}");
    if let Ok(mut error) = app.state::<Link>().host_error.lock() {
        *error = Some(e.clone());
    }
    let _ = app.emit(EVENTS_APP, AppEvent::State(without_host(e)));
}

/// The supervisor's events, to the page, until its stream ends.
async fn forward_events(app: &AppHandle, socket: &Path) -> Result<(), String> {
    let subscribed = async {
        let mut conn = Connection::connect(socket).await?;
        conn.subscribe().await?;
        Ok::<_, ConnectionError>(conn)
    };
    let mut conn = tokio::time::timeout(ANSWER, subscribed)
        .await
        .map_err(|_| {
            format!(
                "the supervisor did not answer within {} s",
                ANSWER.as_secs()
            )
        })?
        .map_err(|e| e.to_string())?;
    while let Ok(event) = conn.next_event().await {
        let _ = match event {
            ApiEvent::App { event } => app.emit(EVENTS_APP, event),
            event => app.emit(EVENTS_API, event),
        };
    }
    Ok(())
}

/// Shows the window, creating it (and its webview) when there is none.
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

/// Brings the window to the front at each [`SHOW_LINE`] on stdin (the host's way to focus it
/// when `warden-app` is started again); ends with stdin.
fn follow_stdin(app: AppHandle) {
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { return };
            if line == SHOW_LINE.trim_end() {
                let shown = app.clone();
                let _ = app.run_on_main_thread(move || show_window(&shown));
            }
        }
    });
}

/// Runs the window until it closes (or the host quits).
pub fn run() {
    let socket = warden_supervisor::Options::from_env().socket;
    let host = std::env::current_exe().unwrap_or_else(|_| beside_me("warden-app"));
    let builder = tauri::Builder::default()
        .plugin(tauri_plugin_shell::init())
        .invoke_handler(tauri::generate_handler![api, app, registry])
        .manage(Link {
            socket: socket.clone(),
            host_error: Mutex::new(None),
        })
        .setup(move |tauri_app| {
            let handle = tauri_app.handle().clone();
            follow_stdin(handle.clone());
            tauri::async_runtime::spawn(async move {
                match ensure_host(&socket, &host).await {
                    Ok(()) => {
                        show_window(&handle);
                        follow(handle, socket, host).await;
                    }
                    Err(e) => {
                        no_host(&handle, e.why);
                        show_window(&handle);
                    }
                }
            });
            Ok(())
        });
    let app = crate::build(builder);
    app.run(|_, _| {});
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A host that exits at once without error is one that found another host's lock (the
    /// login's host, still starting): the window waits for that one's supervisor instead of
    /// reporting a failure.
    #[tokio::test]
    async fn a_host_that_defers_to_a_starting_one_is_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("run/control.sock");
        let mut deferring = std::process::Command::new("true").spawn().unwrap();
        deferring.wait().unwrap();
        let opts = warden_supervisor::Options {
            socket: socket.clone(),
            config: None,
            history: None,
            logs: None,
            auto_rewrite_file: None,
            watch_clients: false,
            ..warden_supervisor::Options::from_env()
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        // `join!` polls in order: the wait sees no socket and the exited host first, then the
        // other host's supervisor starts.
        let (waited, ()) = tokio::join!(await_host(&socket, deferring, Path::new("true")), async {
            let sup = warden_supervisor::Supervisor::new(opts).unwrap();
            tokio::spawn(async move {
                sup.run(async {
                    let _ = stopped.await;
                })
                .await
            });
        });
        let _ = stop.send(());
        assert_eq!(waited, Ok(()));
    }

    /// A host that exits with an error before answering is reported, with its status.
    #[tokio::test]
    async fn a_host_that_fails_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("control.sock");
        let failing = std::process::Command::new("false").spawn().unwrap();
        let e = await_host(&socket, failing, Path::new("false"))
            .await
            .unwrap_err();
        assert!(e.why.contains("exited (exit status: 1)"), "{e:?}");
    }

    /// A host that cannot be started (its program is missing) is not tried again: it
    /// would fail the same way. The reason says what to do.
    #[tokio::test]
    async fn a_host_that_cannot_be_started_is_not_tried_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut restarts = 0;
        let missing = dir.path().join("warden-app");
        let e = start_again(&dir.path().join("control.sock"), &missing, &mut restarts)
            .await
            .unwrap_err();
        assert_eq!(
            (
                restarts,
                e.contains("cannot start the host") && e.contains("Reinstall")
            ),
            (1, true),
            "{e}"
        );
    }

    /// A host killed while starting (as one that dies in use) may be started again.
    #[tokio::test]
    async fn a_host_killed_while_starting_may_be_started_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut host = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        host.kill().unwrap();
        let e = await_host(&dir.path().join("control.sock"), host, Path::new("sleep"))
            .await
            .unwrap_err();
        assert!(e.killed, "{e:?}");
    }

    /// Each default yields to the user's own value: `0` keeps the renderer (and WebKit's own
    /// node query), a node or a JIT setting of theirs stays; unset and empty are alike.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_webkit_settings_leave_the_users_own() {
        let cases: [&[(&str, &str)]; 5] = [
            &[],
            &[(DMABUF_OFF, ""), (RENDER_NODE, ""), (JIT, "")],
            &[(DMABUF_OFF, "0"), (JIT, "true")],
            &[(DMABUF_OFF, "1"), (RENDER_NODE, "/dev/dri/renderD129")],
            &[(JIT, "1")],
        ];
        let got: Vec<_> = cases
            .iter()
            .map(|users| {
                webkit_settings(|name| {
                    users
                        .iter()
                        .find(|(n, _)| *n == name)
                        .map(|(_, v)| v.into())
                })
            })
            .collect();
        let all = vec![
            (DMABUF_OFF, "1"),
            (RENDER_NODE, "/dev/null"),
            (JIT, "false"),
        ];
        assert_eq!(
            got,
            [
                all.clone(),
                all.clone(),
                vec![],
                vec![(JIT, "false")],
                all[..2].to_vec()
            ]
        );
    }

    /// The webview may listen to events, and nothing else: no `shell:` permission (the host
    /// and the window use tauri-plugin-shell from Rust only), no opener, no other plugin's
    /// (docs/ARCHITECTURE.md says why); its three commands are the app's own.
    #[test]
    fn the_capabilities_allow_events_only() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src-tauri/app/capabilities");
        let mut granted = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let capability: serde_json::Value = serde_json::from_str(&text).unwrap();
            granted.extend(
                capability["permissions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .cloned(),
            );
        }
        let events = granted
            .iter()
            .filter(|p| p.as_str().is_some_and(|p| p.starts_with("core:event:")))
            .count();
        assert_eq!((events, granted.len()), (2, 2), "{granted:?}");
    }

    /// Without a host, the page still gets its state: the supervisor's error to show.
    #[tokio::test]
    async fn without_a_host_the_state_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let answer = ask_app(&dir.path().join("control.sock"), AppRequest::State, None).await;
        let AppResponse::State(state) = answer else {
            panic!("{answer:?}")
        };
        let error = state.supervisor_error.unwrap();
        assert!(error.contains("Is MCP Warden running?"), "{error}");
    }
}
