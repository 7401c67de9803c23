//! The server's process group ends with the bridge, even when the bridge is killed (SIGKILL):
//! each system's way of tying the server spawned by [`super::child::Server`] to the bridge's
//! life, set up in the forked child before it execs (the child is already the leader of its
//! own process group).
//! - Linux: the reaper (`reaper.rs`: a process between the bridge and the server that waits
//!   on the bridge's pidfd), else `PR_SET_PDEATHSIG`.
//! - macOS, which has neither pidfds nor a parent-death signal: a watcher process, split off
//!   from the child before it execs and detached from it (its parent is launchd, its session
//!   its own: the server never sees it as a child of its own, nor does the bridge see it in
//!   the server's group), that waits with kqueue (`EVFILT_PROC`, `NOTE_EXIT`) for the bridge's
//!   exit and then SIGKILLs the server's group. Once the server has exited it keeps watching
//!   while anything of the group lives (what the server left behind), then exits. It holds no
//!   descriptor of the bridge's or the server's (so no pipe stays open because of it).
//! - Other Unix systems: nothing yet.

#[cfg(target_os = "linux")]
pub use linux::tie;
#[cfg(target_os = "macos")]
pub use macos::tie;

/// No tie on this system.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub fn tie(_: &mut tokio::process::Command) {}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod linux {
    /// Ties the server `cmd` will run to this process: through the reaper where the kernel
    /// allows it, else by `PR_SET_PDEATHSIG`.
    pub fn tie(cmd: &mut tokio::process::Command) {
        let parent = std::process::id() as libc::pid_t;
        if super::super::reaper::available() {
            // SAFETY: getpgrp cannot fail.
            let group = unsafe { libc::getpgrp() };
            // SAFETY: runs in the forked child before exec; `fork_server` only makes
            // async-signal-safe syscalls (see reaper.rs).
            unsafe {
                cmd.pre_exec(move || super::super::reaper::fork_server(parent, group));
            }
            return;
        }
        // SAFETY: the closure runs in the forked child before exec and only calls
        // async-signal-safe functions (prctl, getppid).
        unsafe {
            cmd.pre_exec(move || {
                // Die with the bridge, even if it is killed with SIGKILL.
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The bridge may have died before prctl took effect.
                if libc::getppid() != parent {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
    }
}

#[cfg(target_os = "macos")]
#[allow(unsafe_code)]
mod macos {
    use libc::{c_int, pid_t};

    /// How often the watcher looks whether the group is empty, once the server has exited.
    const POLL_MS: libc::c_long = 250;

    /// The highest descriptor the watcher closes (more than any bridge holds).
    const MAX_FD: c_int = 1 << 16;

    /// Ties the server `cmd` will run to this process: a watcher process kills the server's
    /// group when this process exits.
    pub fn tie(cmd: &mut tokio::process::Command) {
        let bridge = std::process::id() as pid_t;
        // SAFETY: the closure runs in the forked child before exec and makes only
        // async-signal-safe system calls (fork, waitpid, getpid, getpgrp, getppid, and in
        // the watcher setsid, chdir, close, kqueue, kevent, killpg, _exit), allocating nothing.
        unsafe {
            cmd.pre_exec(move || split_watcher(bridge));
        }
    }

    fn errno() -> std::io::Error {
        std::io::Error::last_os_error()
    }

    /// In the child (the server-to-be, leader of its group): forks a process that forks the
    /// watcher and exits at once, so the watcher is launchd's, not the server's; waits for
    /// the middle one. Fails when the watcher could not be made, or the bridge is gone.
    unsafe fn split_watcher(bridge: pid_t) -> std::io::Result<()> {
        // SAFETY (whole function): raw system calls in a forked child, on no shared data.
        unsafe {
            let server = libc::getpid();
            let group = libc::getpgrp();
            let middle = libc::fork();
            if middle < 0 {
                return Err(errno());
            }
            if middle == 0 {
                let watcher = libc::fork();
                if watcher == 0 {
                    watch(bridge, server, group);
                }
                libc::_exit(if watcher < 0 { 1 } else { 0 });
            }
            let mut status: c_int = 0;
            loop {
                let r = libc::waitpid(middle, &mut status, 0);
                if r == middle {
                    break;
                }
                let e = errno();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    // SIGCHLD ignored: the middle one was reaped by the system.
                    Some(libc::ECHILD) => {
                        status = 0;
                        break;
                    }
                    _ => return Err(e),
                }
            }
            if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
                return Err(std::io::Error::from_raw_os_error(libc::EAGAIN));
            }
            // The bridge may have died before the watcher watched it.
            if libc::getppid() != bridge {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        }
    }

    /// An `EVFILT_PROC` `NOTE_EXIT` event on `pid`.
    fn exit_of(pid: pid_t) -> libc::kevent {
        libc::kevent {
            ident: pid as libc::uintptr_t,
            filter: libc::EVFILT_PROC,
            flags: libc::EV_ADD | libc::EV_ONESHOT,
            fflags: libc::NOTE_EXIT,
            data: 0,
            udata: std::ptr::null_mut(),
        }
    }

    /// The watcher: never returns.
    unsafe fn watch(bridge: pid_t, server: pid_t, group: pid_t) -> ! {
        // SAFETY (whole function): raw system calls in a forked child on its own stack
        // variables; it never returns into the code it was forked from.
        unsafe {
            libc::setsid();
            libc::chdir(c"/".as_ptr());
            for fd in 0..MAX_FD {
                libc::close(fd);
            }
            let kill_group = || -> ! {
                libc::killpg(group, libc::SIGKILL);
                libc::_exit(0)
            };
            let kq = libc::kqueue();
            if kq < 0 {
                // Cannot watch: the group goes now rather than outlive the bridge unwatched.
                kill_group();
            }
            let mut change = exit_of(bridge);
            if libc::kevent(kq, &change, 1, std::ptr::null_mut(), 0, std::ptr::null()) != 0 {
                // The bridge is gone already (ESRCH), or cannot be watched.
                kill_group();
            }
            change = exit_of(server);
            let mut server_gone =
                libc::kevent(kq, &change, 1, std::ptr::null_mut(), 0, std::ptr::null()) != 0;
            let poll = libc::timespec {
                tv_sec: 0,
                tv_nsec: POLL_MS * 1_000_000,
            };
            loop {
                let mut event = exit_of(0);
                let timeout = if server_gone {
                    &poll as *const libc::timespec
                } else {
                    std::ptr::null()
                };
                let n = libc::kevent(kq, std::ptr::null(), 0, &mut event, 1, timeout);
                if n > 0 {
                    if event.ident == bridge as libc::uintptr_t {
                        kill_group();
                    }
                    server_gone = true;
                } else if n < 0 && errno().raw_os_error() != Some(libc::EINTR) {
                    kill_group();
                }
                // After the server: until nothing of its group is left.
                if server_gone && libc::killpg(group, 0) != 0 {
                    libc::_exit(0);
                }
            }
        }
    }
}
