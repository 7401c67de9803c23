//! A short busy poll before the bridge's thread sleeps (`busy_poll_us`).
//!
//! A thread asleep in `epoll_wait` that a pipe write wakes costs a wake-up of an idle core (in
//! a virtual machine, a halted vCPU's exit and re-entry): tens of µs. A direct pipe pays that
//! twice per round trip (server, client); a relay would add two more, its own for the request
//! and for the answer. So before parking, the runtime thread polls the two read ends that carry
//! messages, the client's stdin and the current server's stdout, for up to the window: an answer
//! or a next request that arrives meanwhile finds a thread that never slept, and the runtime's
//! own `epoll_wait` then returns at once. Each poll yields the core first, so a process that
//! is ready to run (the server computing its answer, the client) is not held up by the spin.
//! The spin follows work only (an idle bridge sleeps and uses no CPU) and is bounded. On one
//! CPU (the bridge's affinity or its cgroup's quota allows no more) it is off: nothing can
//! arrive while this thread holds the only core, so each poll would only add system calls.

use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};

/// The window in µs (`busy_poll_us`); 0 is off.
static WINDOW_US: AtomicU64 = AtomicU64::new(0);

/// The current server's stdout (a duplicate); none between server processes.
static SERVER_OUT: Mutex<Option<OwnedFd>> = Mutex::new(None);

/// Sets the window, at start and when the config changes (0 on one CPU).
pub fn set_window(window: Duration) {
    static ONE_CPU: OnceLock<bool> = OnceLock::new();
    let one_cpu =
        *ONE_CPU.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() == 1));
    let us = if one_cpu {
        0
    } else {
        u64::try_from(window.as_micros()).unwrap_or(u64::MAX)
    };
    WINDOW_US.store(us, Ordering::Relaxed);
}

/// The server process whose stdout is polled from now on (`None` once it ended).
pub fn set_server_out(fd: Option<BorrowedFd<'_>>) {
    let dup = fd.and_then(|fd| fd.try_clone_to_owned().ok());
    *SERVER_OUT.lock().unwrap_or_else(PoisonError::into_inner) = dup;
}

/// The runtime's `on_thread_park`.
pub fn before_park() {
    let window = Duration::from_micros(WINDOW_US.load(Ordering::Relaxed));
    if window.is_zero() {
        return;
    }
    let server = SERVER_OUT.lock().unwrap_or_else(PoisonError::into_inner);
    let stdin = std::io::stdin();
    let client = PollFd::new(&stdin, PollFlags::IN);
    match server.as_ref() {
        Some(s) => spin(&mut [client, PollFd::new(s, PollFlags::IN)], window),
        None => spin(&mut [client], window),
    };
}

/// Polls `fds` until one is ready (or closed, or cannot be polled) or `window` is over;
/// whether one was ready.
fn spin(fds: &mut [PollFd<'_>], window: Duration) -> bool {
    let now = Timespec::default();
    let start = Instant::now();
    while start.elapsed() < window {
        std::thread::yield_now();
        if poll(fds, Some(&now)).map_or(true, |n| n > 0) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::io::Write as _;

    #[test]
    fn a_spin_ends_when_a_read_end_is_ready_and_else_after_its_window() {
        let (reader, writer) = std::io::pipe().unwrap();
        let mut fds = [PollFd::new(&reader, PollFlags::IN)];
        assert!(!spin(&mut fds, Duration::from_millis(1)), "nothing to read");
        (&writer).write_all(b"{}\n").unwrap();
        assert!(spin(&mut fds, Duration::from_secs(10)), "a line to read");
    }
}
