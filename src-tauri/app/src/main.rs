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
    // On X11, GTK picks its visuals at start by asking the GL driver, and Mesa then loads its
    // whole driver (LLVM included): about 50 MB resident for a window that never draws with GL
    // (WebKit renders in its own process and falls back to shared memory). Wayland loads GL
    // only on demand. A GDK_GL the user set wins.
    #[cfg(target_os = "linux")]
    if std::env::var_os("GDK_GL").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
        // SAFETY: the first thing the process does, while it has one thread: nothing else
        // reads or writes the environment meanwhile.
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var("GDK_GL", "disable");
        }
    }
    warden_app::run();
}
