//! `warden-app`, in the role its command line picks (`warden_app::role`): the host, or the
//! window (`--window`). The role is picked first, because what follows depends on it.
//!
//! On Linux, while the process still has one thread, the environment is set before anything
//! reads it: two malloc arenas (`memory::at_start`, glibc); `GDK_GL=disable` unless the user
//! set `GDK_GL` or `WAYLAND_DISPLAY` is set (`desktop::keep_gtk_off_gl`); and, in the window,
//! its WebKit defaults (`window::webkit_defaults`). Then logging starts: the host keeps a log
//! file (`warden-app.log` in the state dir) besides stderr; the window logs to stderr, which
//! the host copies into its log.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use warden_app::Role;

fn main() {
    let role = warden_app::role(std::env::args_os());
    // SAFETY: the first thing the process does, while it has one thread.
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    unsafe {
        warden_app::memory::at_start();
        warden_app::desktop::keep_gtk_off_gl();
        if role == Role::Window {
            warden_app::window::webkit_defaults();
        }
    }
    // The host keeps a log file too; the window's stderr goes to the host's log.
    warden_app::log::init(role != Role::Window);
    match role {
        Role::Host { hidden } => warden_app::host::run(hidden),
        Role::Window => warden_app::window::run(),
    }
}
