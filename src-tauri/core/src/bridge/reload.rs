//! The config reload task: edits of config.toml (and the debug flag file) reach the running
//! session, and so do approvals in the server's tool pin file.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use super::links::Links;
use crate::config::{Config, ConfigWatch, Overrides, debug_flag_path};
use crate::events::Event;
use crate::pins::PinFile;

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
    let pins = crate::pins::path(&server);
    let mut watch = match ConfigWatch::new(&[path.clone(), flag.clone(), pins.clone()]) {
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
    // Settings a command changed (fallback, debug) stay until config.toml itself changes.
    let config_state = || (std::fs::read(&path).ok(), flag.exists());
    let mut last = config_state();
    while watch.changed().await.is_some() {
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
                        .code(crate::codes::Code::ConfigInvalid)
                        .detail(e.to_string()),
                );
            }
        }
    }
}
