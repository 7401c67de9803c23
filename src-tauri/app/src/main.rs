// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // The start-at-login entry of earlier versions: the tray, with no WebKit in it.
    if std::env::args()
        .skip(1)
        .any(|a| a == warden_app::HIDDEN_ARG)
    {
        warden_app::become_tray();
    }
    // SAFETY: the first thing the process does, while it has one thread.
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    unsafe {
        warden_core::desktop::keep_gtk_off_gl();
        warden_app::webkit_defaults();
    }
    warden_app::run();
}
