//! The reaper (Linux): a process between the bridge and the server that takes the server's
//! whole process group along when the bridge dies, even by SIGKILL.
//!
//! `PR_SET_PDEATHSIG` on the server alone is not enough: it ends the server, not the
//! processes it started (`npx` → `node`), and it fires when the *thread* that spawned the
//! server exits, not the bridge (bubblewrap#692). So the process std forks (C: the pid the
//! bridge knows and waits for, leader of the new process group) does not exec. In `pre_exec`
//! it splits off the server (S; a `vfork` on x86_64, see [`split`]), which returns from
//! `pre_exec` and execs the command, with the stdio pipes and the group std set up. C never
//! returns; it closes every fd it holds (so it keeps no pipe end, nor std's exec-error pipe:
//! the spawn still reports a command that cannot be executed, from S) but a pidfd of the
//! bridge and one of S, ignores the signals the group gets (SIGTERM…) and waits for either:
//! - the bridge's death (its pidfd: the process, not a thread) → SIGKILL to the group, C
//!   included;
//! - S's exit → S's leftovers (children still in the group) get SIGTERM, [`LEFTOVER_GRACE`],
//!   SIGKILL, and C exits with S's status exactly (its exit code, or its signal re-raised),
//!   so the bridge sees what it saw when it waited for the server itself.
//!
//! To signal the leftovers without signalling itself, C first moves into the bridge's process
//! group (same session, so allowed). S keeps `PR_SET_PDEATHSIG` towards C: if C is killed
//! alone, S goes too.
//!
//! Start-up cost: no exec, no page-table copy (x86_64), a few raw async-signal-safe syscalls
//! (no allocation, no locks). C's memory is the bridge's at the spawn, shared copy-on-write
//! (a release bridge's RssAnon is ~0.6 MB: at most that much more if the bridge rewrites it
//! all). It needs `pidfd_open` (5.3) and `close_range` (5.9); where either is missing or
//! filtered (old kernels, old container seccomp profiles) the server is spawned as before,
//! with `PR_SET_PDEATHSIG` only.

#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use libc::{c_int, pid_t};

/// What S's leftovers get between SIGTERM and SIGKILL once S has exited (as the bridge gives
/// a server's group after it exited: `Generation::finish`).
pub const LEFTOVER_GRACE: Duration = Duration::from_millis(500);

/// The name the reaper shows in `ps -o comm`, `top` and `/proc/PID/comm` (its command line is
/// the bridge's: it did not exec).
pub const NAME: &[u8] = b"warden-reaper\0";

/// Signals the server's group may get that must not end C before S: the bridge's SIGTERM, a
/// user's `kill -- -PGID`, a hang-up. SIGKILL ends C at once; S follows by its parent-death
/// signal.
const IGNORED: [c_int; 7] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGPIPE,
    libc::SIGTERM,
    libc::SIGUSR1,
    libc::SIGUSR2,
];

static AVAILABLE: AtomicU8 = AtomicU8::new(UNKNOWN);
const UNKNOWN: u8 = 0;
const YES: u8 = 1;
const NO: u8 = 2;

/// Whether this kernel (and seccomp filter) lets the reaper run: `pidfd_open` and
/// `close_range` work. Asked once per process (three syscalls); `WARDEN_NO_REAPER=1` in the
/// environment turns the reaper off (for comparison and as an escape hatch).
pub fn available() -> bool {
    match AVAILABLE.load(Ordering::Relaxed) {
        YES => true,
        NO => false,
        _ => {
            let ok = probe();
            AVAILABLE.store(if ok { YES } else { NO }, Ordering::Relaxed);
            ok
        }
    }
}

/// Tests: split by `fork` where `vfork` would be used (the other architectures' path).
#[cfg(test)]
pub static BY_FORK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turns the reaper on or off for this process (tests and measurements).
#[cfg(test)]
pub fn force(on: bool) {
    AVAILABLE.store(if on && probe() { YES } else { NO }, Ordering::Relaxed);
}

fn probe() -> bool {
    if std::env::var_os("WARDEN_NO_REAPER").is_some_and(|v| !v.is_empty() && v != "0") {
        return false;
    }
    // SAFETY: plain syscalls on our own pid and on an fd range that holds nothing.
    unsafe {
        let fd = pidfd_open(libc::getpid());
        if fd < 0 {
            return false;
        }
        libc::close(fd);
        libc::syscall(
            libc::SYS_close_range,
            c_int::MAX as u32 - 1,
            c_int::MAX as u32,
            0,
        ) == 0
    }
}

unsafe fn pidfd_open(pid: pid_t) -> c_int {
    // SAFETY: a syscall with plain integer arguments.
    unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) as c_int }
}

/// The pid of the server under reaper `pid` (its only child), or `pid` itself when the
/// reaper is not in use or the server is gone. Reads `/proc`; not for the spawn path.
pub fn server_of(pid: u32) -> u32 {
    if pid == 0 || AVAILABLE.load(Ordering::Relaxed) != YES {
        return pid;
    }
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(pid)
}

/// Runs in the child std forked, before exec (C). Splits off S, which returns `Ok` and goes on to
/// exec the command; C never returns. An error before the fork fails the spawn as usual.
///
/// # Safety
/// Only in a `pre_exec` closure: the caller is a freshly forked, single-threaded child.
pub unsafe fn fork_server(bridge: pid_t, bridge_group: pid_t) -> std::io::Result<()> {
    // SAFETY: async-signal-safe syscalls only, in the single-threaded child (see above).
    unsafe {
        let bridge_fd = pidfd_open(bridge);
        if bridge_fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // The bridge may have died before we held its pidfd (then the pid may even be
        // another process's by now): our parent must still be it.
        if libc::getppid() != bridge {
            libc::close(bridge_fd);
            return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
        }
        let me = libc::getpid();
        // In S this returns 0; in C it returns only on failure (see `split`).
        let server = split(bridge_fd, me, bridge_group);
        if server < 0 {
            let e = std::io::Error::from_raw_os_error(-server);
            libc::close(bridge_fd);
            return Err(e);
        }
        // S: dies with C (which is single-threaded: no thread trap), then execs.
        libc::close(bridge_fd);
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::getppid() != me {
            return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
        }
        Ok(())
    }
}

/// Splits C into C and S. Returns 0 in S, `-errno` in C when it failed; C itself goes on in
/// [`reap`] and never returns.
///
/// On x86_64 it is a `vfork`: S borrows C's memory until it execs, so no page table is
/// copied (a `fork` of the bridge's copy cost ~0.2 ms more before the server could exec).
/// C, suspended meanwhile, resumes once S has exec'd, and then must not touch the stack S
/// ran on (S returned through it into std and `execvp`): still inside the assembly, it
/// switches to a stack of its own (a static: each forked C has its own copy) and calls
/// [`reap`] with its arguments in registers. Elsewhere a plain `fork`.
#[cfg(target_arch = "x86_64")]
unsafe fn split(bridge_fd: c_int, group: pid_t, bridge_group: pid_t) -> c_int {
    #[cfg(test)]
    if BY_FORK.load(Ordering::Relaxed) {
        // SAFETY: as for `split_by_fork`.
        return unsafe { split_by_fork(bridge_fd, group, bridge_group) };
    }
    const STACK_SIZE: usize = 64 * 1024;
    #[repr(C, align(16))]
    struct Stack([u8; STACK_SIZE]);
    static mut STACK: Stack = Stack([0; STACK_SIZE]);
    let top = (&raw mut STACK) as usize + STACK_SIZE;
    let ret: isize;
    // SAFETY: see above. In S, only rax changed (and rcx/r11, by `syscall`); in C the block
    // does not return. `top` is 16-aligned, so `reap` is entered with the ABI's alignment.
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jle 2f",
            "mov rsp, {top}",
            "mov rcx, rax",
            "call {entry}",
            "ud2",
            "2:",
            top = in(reg) top,
            entry = sym reap_entry,
            inlateout("rax") libc::SYS_vfork as isize => ret,
            in("rdi") bridge_fd,
            in("rsi") group,
            in("rdx") bridge_group,
            out("rcx") _,
            out("r11") _,
        );
    }
    let ret = ret as c_int;
    if ret == -libc::ENOSYS || ret == -libc::EPERM {
        // A seccomp filter that refuses vfork (but let pidfd_open through): fork.
        // SAFETY: as for `split_by_fork`.
        return unsafe { split_by_fork(bridge_fd, group, bridge_group) };
    }
    ret
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn split(bridge_fd: c_int, group: pid_t, bridge_group: pid_t) -> c_int {
    // SAFETY: as for `split_by_fork`.
    unsafe { split_by_fork(bridge_fd, group, bridge_group) }
}

/// [`split`] by `fork`: S gets a copy of C's memory (its page tables copied before it can
/// exec).
unsafe fn split_by_fork(bridge_fd: c_int, group: pid_t, bridge_group: pid_t) -> c_int {
    // SAFETY: fork in the single-threaded child.
    unsafe {
        match libc::fork() {
            0 => 0,
            n if n < 0 => -std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EAGAIN),
            server => reap(bridge_fd, server, group, bridge_group),
        }
    }
}

/// [`reap`] called from `split`'s assembly (C's side of the vfork), arguments in the C ABI's
/// registers.
#[cfg(target_arch = "x86_64")]
extern "C" fn reap_entry(bridge_fd: c_int, group: pid_t, bridge_group: pid_t, server: pid_t) -> ! {
    // SAFETY: C after the vfork: single-threaded, S has exec'd or exited.
    unsafe { reap(bridge_fd, server, group, bridge_group) }
}

/// C's life: see the module's documentation.
unsafe fn reap(bridge_fd: c_int, server: pid_t, group: pid_t, bridge_group: pid_t) -> ! {
    // SAFETY: async-signal-safe syscalls on fds and pids this process owns.
    unsafe {
        let server_fd = pidfd_open(server);
        close_all_but(bridge_fd, server_fd);
        libc::prctl(libc::PR_SET_NAME, NAME.as_ptr());
        for sig in IGNORED {
            libc::signal(sig, libc::SIG_IGN);
        }

        // Until S exits or the bridge dies. Without S's pidfd (cannot happen once the probe
        // passed, short of running out of fds), poll for S every 20 ms.
        let status = loop {
            let mut fds = [
                libc::pollfd {
                    fd: bridge_fd,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: server_fd,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let timeout = if server_fd < 0 { 20 } else { -1 };
            let n = libc::poll(fds.as_mut_ptr(), 2, timeout);
            if n < 0 && !interrupted() {
                // Nothing sensible left to wait with: do not leave the group behind.
                kill_group_and_die(group);
            }
            if fds[0].revents != 0 {
                kill_group_and_die(group);
            }
            let mut status = 0;
            let r = libc::waitpid(server, &mut status, libc::WNOHANG);
            if r == server {
                break status;
            }
            if r < 0 && !interrupted() {
                kill_group_and_die(group);
            }
        };

        // S is gone; its leftovers in the group get SIGTERM, a grace, SIGKILL. C leaves the
        // group first so as not to be among them; if it cannot (the bridge's group is gone:
        // the bridge is), nobody waits for its status any more.
        if libc::setpgid(0, bridge_group) != 0 {
            kill_group_and_die(group);
        }
        if libc::killpg(group, 0) == 0 {
            libc::killpg(group, libc::SIGTERM);
            let step = 20;
            let mut left = LEFTOVER_GRACE.as_millis() as c_int;
            while left > 0 && libc::killpg(group, 0) == 0 {
                let mut fd = libc::pollfd {
                    fd: bridge_fd,
                    events: libc::POLLIN,
                    revents: 0,
                };
                if libc::poll(&mut fd, 1, step) > 0 {
                    break; // the bridge died: no grace left
                }
                left -= step;
            }
            libc::killpg(group, libc::SIGKILL);
        }
        exit_like(status)
    }
}

fn interrupted() -> bool {
    std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
}

/// Closes every fd but `a` and `b` (either may be -1), stdio included: C holds no end of the
/// server's pipes, of std's exec-error pipe, or of anything the bridge had open.
unsafe fn close_all_but(a: c_int, b: c_int) {
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    let mut from: u32 = 0;
    for keep in [lo, hi] {
        if keep < 0 {
            continue;
        }
        let keep = keep as u32;
        if keep > from {
            // SAFETY: closing fds of this process.
            unsafe { libc::syscall(libc::SYS_close_range, from, keep - 1, 0) };
        }
        from = keep + 1;
    }
    // SAFETY: as above.
    unsafe { libc::syscall(libc::SYS_close_range, from, u32::MAX, 0) };
}

/// SIGKILL to C's group, C included.
unsafe fn kill_group_and_die(group: pid_t) -> ! {
    // SAFETY: signalling our own group, then exiting.
    unsafe {
        libc::killpg(group, libc::SIGKILL);
        libc::_exit(137)
    }
}

/// Exits as S did: the same code, or the same signal (default action, no core dump of C).
unsafe fn exit_like(status: c_int) -> ! {
    // SAFETY: async-signal-safe calls ending this process.
    unsafe {
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            libc::prctl(libc::PR_SET_DUMPABLE, 0);
            libc::signal(sig, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), sig);
            libc::_exit(128 + sig)
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}
