//! MCP Warden's desktop app, one Tauri 2 program (`warden-app`) in two roles:
//!
//! - the **host** ([`host`]): the supervisor, Tauri's tray and menu, the IDE config watcher
//!   and prober, notifications, start at login and one instance. What runs at rest: it never
//!   creates a web view, so no WebKit process runs while the window is closed.
//! - the **window** ([`window`], `warden-app --window`): the web view, a process of its own
//!   that the host starts through `tauri-plugin-shell` and that ends with its window, so a
//!   crash of the web view never takes the supervisor down and the window's memory goes when
//!   it closes. It talks to the supervisor over the control socket.
//!
//! [`role`] picks one from the command line.

pub mod desktop;
pub mod host;
pub mod log;
pub mod memory;
mod menu;
mod sidecar;
pub mod window;

use std::ffi::OsStr;
use std::path::Path;

/// Started at login: the host, in the tray only.
pub const HIDDEN_ARG: &str = "--hidden";
/// The window's process, as the host starts it.
pub const WINDOW_ARG: &str = "--window";
/// What the host writes to the window's stdin to bring it to the front.
pub const SHOW_LINE: &str = "show\n";
/// The tray program of earlier versions; their start-at-login entry runs it, and the package
/// links it to `warden-app`.
const OLD_TRAY: &str = "warden-tray";

/// What this process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The host; `hidden`: in the tray only, else it opens the window too.
    Host {
        hidden: bool,
    },
    Window,
}

/// The role the command line (`args`, the program first) asks for: the window with
/// [`WINDOW_ARG`], else the host, hidden with [`HIDDEN_ARG`] or when run as the old tray's
/// program (an earlier version's start-at-login entry).
pub fn role<I, S>(args: I) -> Role
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<S> = args.into_iter().collect();
    if args.iter().skip(1).any(|a| a.as_ref() == WINDOW_ARG) {
        return Role::Window;
    }
    let hidden = hidden(args.iter().map(|a| a.as_ref().to_str().unwrap_or_default()));
    Role::Host { hidden }
}

/// Whether a command line (the program first) starts the host hidden.
pub(crate) fn hidden<'a>(mut args: impl Iterator<Item = &'a str>) -> bool {
    let old_tray = args.next().is_some_and(|p| is_old_tray(Path::new(p)));
    old_tray || args.any(|a| a == HIDDEN_ARG)
}

/// Whether `program` is the tray program of earlier versions.
pub(crate) fn is_old_tray(program: &Path) -> bool {
    program
        .file_stem()
        .is_some_and(|name| name == OsStr::new(OLD_TRAY))
}

/// Builds the app of either role with its Tauri context (tauri.conf.json, the UI's files);
/// says why and exits when it cannot.
pub(crate) fn build(builder: tauri::Builder<tauri::Wry>) -> tauri::App {
    match builder.build(tauri::generate_context!()) {
        Ok(app) => app,
        Err(e) => {
            eprintln!("warden-app: cannot start: {e}");
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The desktop entry (no argument), the login entry (`--hidden`), the host's window
    /// process (`--window`), and an earlier version's login entry (the old tray's program,
    /// now a link to this one).
    #[test]
    fn each_command_line_has_its_role() {
        let roles = [
            role(["/usr/bin/warden-app"]),
            role(["/usr/bin/warden-app", "--hidden"]),
            role(["/usr/bin/warden-app", "--window"]),
            role(["/usr/bin/warden-tray"]),
        ];
        assert_eq!(
            roles,
            [
                Role::Host { hidden: false },
                Role::Host { hidden: true },
                Role::Window,
                Role::Host { hidden: true },
            ]
        );
    }
}
