//! The host's memory at rest (glibc's malloc; nothing to do elsewhere): fewer arenas from the
//! start, and the pages freed after a burst of work given back to the system.

/// Two malloc arenas, not glibc's eight per core: the host is a dozen mostly idle threads
/// (Tauri's, tokio's, D-Bus's), and each arena a thread touches stays dirty. About 0.5 MiB of
/// private dirty at rest (docs/bench/app-idle.md).
///
/// # Safety
///
/// Call it first thing in `main`, while the process has one thread.
#[allow(unsafe_code)]
pub unsafe fn at_start() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: the caller's promise: no other thread allocates meanwhile.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Gives back to the system the heap pages free after a burst of work (the host's start: the
/// supervisor's first reading of the clients' files and the history, the tray's first model;
/// a window's session). glibc returns only the top of a heap by itself; what was freed below
/// a block still in use stays resident, and counts as the host's own memory, until then.
pub fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: malloc_trim has no precondition; it takes malloc's own locks.
    unsafe {
        libc::malloc_trim(0);
    }
}
