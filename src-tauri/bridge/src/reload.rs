//! The config reload task: edits of config.toml (and the debug flag file) reach the running
//! session, and so do approvals in the server's tool pin file.
//!
//! The watch is deferred: the task first waits 50 ms ([`WATCH_AFTER`]), so that the server's start
//! and the first exchange come first, then sets the watch up on a thread of its own (adding a watch
//! can block while a watched directory is written without pause). Once it is armed, the task looks
//! once more, for an edit made meanwhile.
//!
//! Each change reloads the pins. The settings are reloaded only when config.toml or the debug flag
//! file changed: a change of the pin file alone keeps the settings a control command changed (a
//! forced fallback, debug logging) in force.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::links::Links;
use warden_config::pins::PinFile;
use warden_config::{Config, ConfigWatch, Overrides, debug_flag_path};
use warden_wire::events::Event;

/// How long a session waits before it sets up its watch: the server's start and the first
/// exchange come first (a thread competing for the CPU meanwhile would add to the client's
/// wait for `initialize`). An edit made meanwhile is seen once the watch is armed.
const WATCH_AFTER: Duration = Duration::from_millis(50);

/// Applies edits of config.toml to the running session; an invalid edit is refused (with an
/// event and a line on stderr) and the last good settings stay. Also follows the debug flag
/// file: debug logging is on while `debug = true` or the flag file exists.
pub(super) async fn reload_config(
    links: Links,
    path: PathBuf,
    server: String,
    overrides: Overrides,
) {
    let flag = debug_flag_path(&path, &server);
    let set_debug = |limits_debug: bool| {
        let on = limits_debug || flag.exists();
        if on != links.sink.debug_on() {
            links.sink.set_debug(on);
            let detail = if on {
                format!(
                    "on: whole messages, secrets redacted, go to the debug log (turn off: debug = false and remove {})",
                    flag.display()
                )
            } else {
                "off".to_owned()
            };
            links.sink.event(Event::new("debug").detail(detail));
        }
    };
    set_debug(links.router().limits().debug);
    let pins = warden_config::pins::path(&server);
    // Settings a command changed (fallback, debug) stay until config.toml itself changes.
    let config_state = || (std::fs::read(&path).ok(), flag.exists());
    let mut last = config_state();
    tokio::time::sleep(WATCH_AFTER).await;
    let mut watch = match watch_off_thread(vec![path.clone(), flag.clone(), pins.clone()]).await {
        Ok(watch) => watch,
        Err(e) => {
            let why = format!(
                "edits of {} apply to new sessions only: {e}",
                path.display()
            );
            links.sink.event(Event::new("config_rejected").detail(why));
            return;
        }
    };
    // Once armed, a first look: for an edit made while the session started.
    let mut look = true;
    while std::mem::take(&mut look) || watch.changed().await.is_some() {
        links.route_now(|r, out| r.set_pins(PinFile::load(&pins), out));
        let now = config_state();
        if now == last {
            continue;
        }
        last = now;
        match Config::load(&path).and_then(|c| c.limits_for(&server, &overrides)) {
            Ok(limits) => {
                set_debug(limits.debug);
                #[cfg(unix)]
                super::spin::set_window(limits.busy_poll);
                if **links.router().limits() == limits {
                    continue;
                }
                links.route_now(|r, out| r.set_limits(Arc::new(limits), Instant::now(), out));
                links
                    .sink
                    .event(Event::new("config_reloaded").detail(path.display().to_string()));
            }
            Err(e) => {
                tracing::warn!("config change refused, the previous settings stay in force: {e}");
                links.sink.event(
                    Event::new("config_rejected")
                        .code(warden_wire::codes::Code::ConfigInvalid)
                        .detail(e.to_string()),
                );
            }
        }
    }
}

/// Sets the watch up on a thread of its own. notify's thread takes a new watch only between
/// bursts of events, so while something writes into a watched directory without pause (seen
/// with a tracer logging there) adding one never returns; on the session's only thread that
/// would hold up the relay, and the client's `initialize` would wait for it.
async fn watch_off_thread(files: Vec<PathBuf>) -> Result<ConfigWatch, String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("config-watch".into())
        .spawn(move || {
            let _ = tx.send(ConfigWatch::new(&files).map_err(|e| e.to_string()));
        })
        .map_err(|e| format!("cannot start a thread to watch it: {e}"))?;
    rx.await
        .map_err(|_| "the thread setting up the watch ended".to_owned())?
}
