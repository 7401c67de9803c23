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
