// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use warden_app::Role;

fn main() {
    let role = warden_app::role(std::env::args_os());
    // SAFETY: the first thing the process does, while it has one thread.
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    unsafe {
        // Two malloc arenas, not glibc's eight per core: the host is a dozen mostly idle
        // threads (Tauri's, tokio's, D-Bus's), and each arena a thread touches stays dirty.
        // About 0.5 MiB of private dirty at rest (docs/bench/app-idle.md).
        #[cfg(target_env = "gnu")]
        libc::mallopt(libc::M_ARENA_MAX, 2);
        warden_core::desktop::keep_gtk_off_gl();
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
