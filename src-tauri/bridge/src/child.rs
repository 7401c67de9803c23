//! The real server process: spawned without a shell in its own process group (on macOS in a
//! session of its own, with no controlling terminal), with no descriptor of the bridge's but
//! the standard three (and the sandbox's hand-off to its proxy: `close_at_exec`), tied to the
//! bridge's life (`tether.rs`), and shut down the way MCP asks (close stdin, wait, SIGTERM,
//! wait, SIGKILL), for the whole group so that grandchildren (npx → node) go too.
//!
//! On Windows (the `sys` module's Windows side) the group is a Job Object that kills its
//! processes when its last handle closes, the bridge's, even when the bridge is killed; the
//! server is assigned to it as soon as it is created, with no console window; `.cmd`/`.bat`
//! launchers are found as the shell finds them (`launcher.rs`). Handles: std makes every
//! handle it opens non-inheritable and passes the server its three pipes; a handle the bridge
//! itself inherited marked inheritable would still pass on (std cannot yet give
//! `CreateProcess` a list of the handles to inherit).

use std::ffi::OsString;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

/// How long the server gets after its stdin closes, and again after SIGTERM (the TS and Python
/// SDKs use the same 2 s + 2 s).
pub const GRACE: Duration = Duration::from_secs(2);

#[derive(Debug, thiserror::Error)]
#[error("cannot start server command {command:?}: {source}. {hint}")]
pub struct SpawnError {
    pub command: String,
    pub source: std::io::Error,
    pub hint: String,
}

/// A running server: its pid (which is also its process-group id) and a watch of its exit,
/// described for people ("exited with status 1"). On Linux `pid` is the reaper's (see
/// reaper.rs), which exits as the server does; [`command_pid`] finds the server's own.
pub struct Server {
    pub pid: u32,
    pub exit: watch::Receiver<Option<String>>,
    group: GroupGuard,
    /// The server runs inside bubblewrap, in a session of its own that the group's signals
    /// do not reach.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    in_bwrap: bool,
    /// A `sandbox_network` list: the proxy's list and listener, until the session starts it
    /// (`Session::started`).
    #[cfg(unix)]
    pub(super) net: Option<(Vec<warden_config::network::Dest>, super::proxy::Listen)>,
    /// The server's proxy, which stops when the server is dropped.
    #[cfg(unix)]
    pub(super) proxy: Option<super::proxy::Proxy>,
}

/// The server's standard streams.
pub struct Pipes {
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

impl Server {
    /// Spawns `command` (program and arguments; no shell) with `env` added to the bridge's
    /// environment. `session` is put in the server's environment as `WARDEN_SESSION`, so a
    /// server left behind can be traced to its bridge.
    pub fn spawn(
        command: &[OsString],
        env: &[(String, String)],
        cwd: Option<&Path>,
        session: &str,
    ) -> Result<(Server, Pipes), SpawnError> {
        Server::launch(
            super::sandbox::Launch::plain(command.to_vec()),
            env,
            cwd,
            session,
        )
    }

    /// [`Server::spawn`] as the sandbox says (`launch`): its command line, its environment
    /// (`env` then added to it) and what confines it before it execs.
    pub fn launch(
        launch: super::sandbox::Launch,
        env: &[(String, String)],
        cwd: Option<&Path>,
        session: &str,
    ) -> Result<(Server, Pipes), SpawnError> {
        let command = &launch.argv;
        let Some((program, args)) = command.split_first() else {
            return Err(SpawnError {
                command: String::new(),
                source: std::io::ErrorKind::InvalidInput.into(),
                hint: "Give the server command after `--`.".into(),
            });
        };
        let program = sys::program(program, args, env).map_err(|hint| SpawnError {
            command: shown(command),
            source: std::io::ErrorKind::InvalidInput.into(),
            hint,
        })?;
        let mut cmd = Command::new(&program);
        if let Some(only) = &launch.env {
            cmd.env_clear().envs(only.iter().map(|(k, v)| (k, v)));
        }
        cmd.args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("WARDEN_SESSION", session)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(dir) = cwd {
            cmd.current_dir(dir);
        }
        sys::configure(&mut cmd);
        // After the reaper's split, before the sandbox's confinement (so that no filter of
        // its must allow it): every descriptor but the standard three, and the sandbox's
        // hand-off to its proxy, closes at exec.
        #[cfg(unix)]
        sys::close_at_exec(
            &mut cmd,
            launch.net.as_ref().and_then(|n| match &n.way {
                super::sandbox::Way::Inside { theirs, .. } => {
                    Some(std::os::fd::AsRawFd::as_raw_fd(theirs))
                }
                super::sandbox::Way::Host(_) => None,
            }),
        );
        // After the reaper's split: only the server is confined.
        if let Some(confine) = launch.confine {
            confine.apply_before_exec(&mut cmd);
        }
        let mut child = cmd.spawn().map_err(|source| {
            let hint = match source.kind() {
                std::io::ErrorKind::NotFound => format!(
                    "Is {:?} installed and on PATH? Clients often start servers with a minimal PATH; use an absolute path if unsure.",
                    program
                ),
                std::io::ErrorKind::PermissionDenied => "Check that the file is executable.".to_owned(),
                _ => String::new(),
            };
            SpawnError { command: shown(command), source, hint }
        })?;
        let pid = child.id().unwrap_or_default();
        sys::adopt(&child, pid).map_err(|source| SpawnError {
            command: shown(command),
            source,
            hint: "The server could not be tied to the bridge's life; it was stopped.".to_owned(),
        })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(SpawnError {
                command: shown(command),
                source: std::io::ErrorKind::BrokenPipe.into(),
                hint: String::new(),
            });
        };
        sys::grow_pipes(&stdin, &stdout);
        let (tx, exit) = watch::channel(None);
        tokio::spawn(wait(child, tx));
        let server = Server {
            pid,
            exit,
            group: GroupGuard {
                pgid: pid,
                armed: true,
            },
            in_bwrap: launch.mode == super::sandbox::BWRAP,
            // The sandbox's end of the way to the proxy is closed here once the server has it.
            #[cfg(unix)]
            net: launch.net.map(|n| {
                let listen = match n.way {
                    super::sandbox::Way::Inside { ours, .. } => super::proxy::Listen::Inside(ours),
                    super::sandbox::Way::Host(l) => super::proxy::Listen::Host(l),
                };
                (n.list, listen)
            }),
            #[cfg(unix)]
            proxy: None,
        };
        Ok((
            server,
            Pipes {
                stdin,
                stdout,
                stderr,
            },
        ))
    }

    pub fn exited(&self) -> Option<String> {
        self.exit.borrow().clone()
    }

    /// Waits up to `limit` for the server to exit and its whole group to be gone.
    pub async fn wait_gone(&mut self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        if tokio::time::timeout_at(deadline, self.exit.wait_for(Option::is_some))
            .await
            .is_err()
        {
            return false;
        }
        // Grandchildren have no exit notification we can await; look at the group.
        while sys::group_alive(self.pid) {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        true
    }

    /// The MCP stdio shutdown, after the caller closed the server's stdin: wait, SIGTERM the
    /// group, wait, SIGKILL the group. Returns how the server exited.
    pub async fn shut_down(&mut self, grace: Duration) -> String {
        if !self.wait_gone(grace).await {
            self.terminate();
            if !self.wait_gone(grace).await {
                sys::signal_group(self.pid, sys::Signal::Kill);
                self.wait_gone(grace).await;
            }
        }
        self.group.armed = false;
        self.exited().unwrap_or_else(|| "did not exit".to_owned())
    }

    /// SIGTERM to the server's group and, inside bubblewrap (a session of its own, behind
    /// two bubblewrap processes that would die of it and take the server with them by
    /// SIGKILL), to the server's own processes.
    fn terminate(&self) {
        #[cfg(target_os = "linux")]
        if self.in_bwrap {
            // bwrap (outside) → bwrap (the sandbox's init) → the server and its children.
            let bwrap = command_pid(self.pid);
            for pid in sys::descendants(bwrap, 2) {
                sys::signal_pid(pid, sys::Signal::Term);
            }
            return;
        }
        sys::signal_group(self.pid, sys::Signal::Term);
    }

    /// Ends the group at once (the server is unusable).
    pub async fn kill(&mut self) -> String {
        sys::signal_group(self.pid, sys::Signal::Kill);
        self.wait_gone(GRACE).await;
        self.group.armed = false;
        self.exited().unwrap_or_else(|| "did not exit".to_owned())
    }
}

async fn wait(mut child: Child, tx: watch::Sender<Option<String>>) {
    let text = match child.wait().await {
        Ok(status) => describe(status),
        Err(e) => format!("could not be waited for ({e})"),
    };
    let _ = tx.send(Some(text));
}

/// The pid of the process running the command of server `pid` (a [`Server::pid`]): under
/// the reaper (Linux) its child, else `pid` itself. Reads `/proc`: for status, not the spawn.
pub fn command_pid(pid: u32) -> u32 {
    #[cfg(target_os = "linux")]
    return super::reaper::server_of(pid);
    #[cfg(not(target_os = "linux"))]
    pid
}

fn shown(command: &[OsString]) -> String {
    command
        .iter()
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// "exited with status 1", "was killed by signal 9 (SIGKILL)".
pub fn describe(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("was killed by signal {sig} ({})", sys::signal_name(sig));
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => "exited".to_owned(),
    }
}

/// Kills the group if the bridge unwinds without a clean shutdown.
struct GroupGuard {
    pgid: u32,
    armed: bool,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            sys::signal_group(self.pgid, sys::Signal::Kill);
        }
    }
}

#[cfg(unix)]
#[allow(unsafe_code)]
pub(crate) mod sys {
    use std::os::fd::AsRawFd;

    pub enum Signal {
        Term,
        Kill,
    }

    impl Signal {
        fn number(&self) -> libc::c_int {
            match self {
                Signal::Term => libc::SIGTERM,
                Signal::Kill => libc::SIGKILL,
            }
        }
    }

    /// The program as given: the system's exec searches `PATH`.
    pub fn program(
        program: &std::ffi::OsString,
        _: &[std::ffi::OsString],
        _: &[(String, String)],
    ) -> Result<std::ffi::OsString, String> {
        Ok(program.clone())
    }

    /// The process group made at spawn is the tree's handle: nothing to do after.
    pub fn adopt(_: &tokio::process::Child, _: u32) -> std::io::Result<()> {
        Ok(())
    }

    /// The server leads a process group of its own; on macOS a session of its own too
    /// (`setsid`, which makes it the leader of its group as well): with no controlling
    /// terminal, it cannot open `/dev/tty` and type into the user's shell (`TIOCSTI`) under
    /// a client run in a terminal. (On Linux the server stays in the reaper's group, which a
    /// session of its own would leave; bubblewrap gives it one, `--new-session`.)
    pub fn configure(cmd: &mut tokio::process::Command) {
        #[cfg(not(target_os = "macos"))]
        cmd.process_group(0);
        #[cfg(target_os = "macos")]
        // SAFETY: runs in the forked child before exec; setsid is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        super::super::tether::tie(cmd);
    }

    /// The highest descriptor [`cloexec_from`] looks at where it must look at each one.
    const MAX_FD: libc::c_int = 1 << 20;

    /// Every descriptor but the standard three closes when the server execs, but `keep` (the
    /// sandbox's hand-off to its proxy, kept for this command alone: it stays close-on-exec
    /// for every other process the bridge spawns). What the IDE leaked into the bridge (an
    /// open file, a socket connected to a host service) never reaches the server.
    pub fn close_at_exec(cmd: &mut tokio::process::Command, keep: Option<std::os::fd::RawFd>) {
        // SAFETY: runs in the forked child before exec, and makes only async-signal-safe
        // system calls (close_range, getrlimit, fcntl) on this process's own descriptors.
        unsafe {
            cmd.pre_exec(move || {
                cloexec_from(3);
                if let Some(fd) = keep
                    && libc::fcntl(fd, libc::F_SETFD, 0) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }

    /// Sets close-on-exec on every descriptor from `first` up: Linux 5.11+ in one
    /// `close_range(first, ~0, CLOSE_RANGE_CLOEXEC)`; else (older kernels, macOS) one by one,
    /// up to the soft limit of open files (at most [`MAX_FD`]).
    ///
    /// # Safety
    /// In a forked child before exec (it changes descriptors other code may hold).
    unsafe fn cloexec_from(first: libc::c_int) {
        // SAFETY (whole function): plain system calls on this process's descriptors.
        unsafe {
            #[cfg(target_os = "linux")]
            if libc::syscall(
                libc::SYS_close_range,
                first as libc::c_uint,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            ) == 0
            {
                return;
            }
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            let top = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
                libc::c_int::try_from(limit.rlim_cur).map_or(MAX_FD, |n| n.min(MAX_FD))
            } else {
                MAX_FD
            };
            for fd in first..top {
                let flags = libc::fcntl(fd, libc::F_GETFD);
                if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
                    libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
                }
            }
        }
    }

    /// Bigger pipes mean fewer wake-ups per large message (Linux; best effort).
    pub fn grow_pipes(stdin: &impl AsRawFd, stdout: &impl AsRawFd) {
        grow_pipe(stdin.as_raw_fd());
        grow_pipe(stdout.as_raw_fd());
    }

    /// Asks for a 1 MiB pipe buffer (Linux; best effort: not a pipe, or over the user's
    /// limit, simply stays as it is).
    pub fn grow_pipe(fd: std::os::fd::RawFd) {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: fcntl on a pipe fd we own; failure is harmless.
            unsafe {
                libc::fcntl(fd, libc::F_SETPIPE_SZ, 1 << 20);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = fd;
    }

    pub fn signal_group(pgid: u32, signal: Signal) {
        let Ok(pgid) = libc::pid_t::try_from(pgid) else {
            return;
        };
        if pgid <= 1 {
            return;
        }
        let sig = signal.number();
        // SAFETY: plain syscall; the group id is our child's, which cannot be reused while
        // any member of the group lives.
        unsafe {
            libc::killpg(pgid, sig);
        }
    }

    /// The descendants of `pid` at least `depth` generations below it (Linux: `/proc`'s
    /// children lists), parents before children.
    #[cfg(target_os = "linux")]
    pub fn descendants(pid: u32, depth: usize) -> Vec<u32> {
        let children = |p: u32| -> Vec<u32> {
            let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
                return Vec::new();
            };
            tasks
                .flatten()
                .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
                .flat_map(|s| {
                    s.split_whitespace()
                        .filter_map(|c| c.parse().ok())
                        .collect::<Vec<u32>>()
                })
                .collect()
        };
        let mut level = vec![pid];
        let mut out = Vec::new();
        for d in 1.. {
            level = level.into_iter().flat_map(children).collect();
            if level.is_empty() {
                break;
            }
            if d >= depth {
                out.extend(&level);
            }
        }
        out
    }

    #[cfg(target_os = "linux")]
    pub fn signal_pid(pid: u32, signal: Signal) {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return;
        };
        if pid <= 1 {
            return;
        }
        let sig = signal.number();
        // SAFETY: plain syscall on a process of the server's tree (read from /proc just
        // before: a pid reused in between is the race every `kill` has).
        unsafe {
            libc::kill(pid, sig);
        }
    }

    /// Whether any process of the group still runs. Zombies do not count: an orphaned
    /// grandchild that was killed waits for init to reap it, which may take a while.
    pub fn group_alive(pgid: u32) -> bool {
        let Ok(pgid) = libc::pid_t::try_from(pgid) else {
            return false;
        };
        // SAFETY: signal 0 only checks for existence.
        if pgid <= 1 || unsafe { libc::killpg(pgid, 0) } != 0 {
            return false;
        }
        #[cfg(target_os = "linux")]
        if let Ok(dir) = std::fs::read_dir("/proc") {
            let group = pgid.to_string();
            return dir.flatten().any(|entry| {
                let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                    return false;
                };
                // Fields after the parenthesised name: state ppid pgrp …
                let mut fields = stat
                    .rsplit_once(')')
                    .map_or("", |(_, rest)| rest)
                    .split_whitespace();
                let state = fields.next();
                let pgrp = fields.nth(1);
                pgrp == Some(group.as_str()) && state != Some("Z")
            });
        }
        true
    }

    pub fn signal_name(sig: i32) -> &'static str {
        match sig {
            libc::SIGHUP => "SIGHUP",
            libc::SIGINT => "SIGINT",
            libc::SIGQUIT => "SIGQUIT",
            libc::SIGABRT => "SIGABRT",
            libc::SIGKILL => "SIGKILL",
            libc::SIGSEGV => "SIGSEGV",
            libc::SIGPIPE => "SIGPIPE",
            libc::SIGTERM => "SIGTERM",
            libc::SIGBUS => "SIGBUS",
            _ => "signal",
        }
    }
}

#[cfg(windows)]
#[allow(unsafe_code)]
pub(crate) mod sys {
    //! A kill-on-close Job Object per server, kept here by the server's pid: the bridge holds
    //! the only handle, so the whole tree ends with the bridge, however it ends
    //! (`TerminateProcess` included). Windows has no SIGTERM for a console-less process:
    //! after the stdin close and its grace, the job is terminated.
    use std::collections::HashMap;
    use std::ffi::OsString;
    use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
    use std::sync::{Mutex, PoisonError};

    use windows_sys::Win32::System::JobObjects::{
        AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
        JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
        JobObjectBasicAccountingInformation, JobObjectExtendedLimitInformation,
        QueryInformationJobObject, SetInformationJobObject, TerminateJobObject,
    };
    use windows_sys::Win32::System::Threading::CREATE_NO_WINDOW;

    pub enum Signal {
        Term,
        Kill,
    }

    /// The servers' jobs by pid.
    static JOBS: Mutex<Option<HashMap<u32, OwnedHandle>>> = Mutex::new(None);

    fn with_jobs<T>(f: impl FnOnce(&mut HashMap<u32, OwnedHandle>) -> T) -> T {
        let mut jobs = JOBS.lock().unwrap_or_else(PoisonError::into_inner);
        f(jobs.get_or_insert_with(HashMap::new))
    }

    /// A bare name (`npx`) resolved with `PATH` and `PATHEXT` (the server's `PATH` when its
    /// environment sets one); a batch file's arguments must be quotable for `cmd.exe`.
    pub fn program(
        program: &OsString,
        args: &[OsString],
        env: &[(String, String)],
    ) -> Result<OsString, String> {
        let path = env
            .iter()
            .rev()
            .find(|(k, _)| k.eq_ignore_ascii_case("PATH"))
            .map(|(_, v)| OsString::from(v))
            .or_else(|| std::env::var_os("PATH"));
        let pathext = std::env::var_os("PATHEXT");
        let found =
            super::super::launcher::resolve(program, path.as_deref(), pathext.as_deref(), |p| {
                p.is_file()
            });
        let program = found.map_or_else(|| program.clone(), OsString::from);
        let as_path = std::path::Path::new(&program);
        if super::super::launcher::is_batch(as_path)
            && let Some(why) = super::super::launcher::batch_refusal(as_path, args)
        {
            return Err(why);
        }
        Ok(program)
    }

    pub fn configure(cmd: &mut tokio::process::Command) {
        cmd.creation_flags(CREATE_NO_WINDOW);
    }

    /// Puts the new server in a kill-on-close job of its own, at once (before it has had
    /// time to start children of its own, in practice). On failure the server is killed.
    pub fn adopt(child: &tokio::process::Child, pid: u32) -> std::io::Result<()> {
        let result = (|| {
            let process = child
                .raw_handle()
                .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?;
            // SAFETY: plain calls; the job's handle is owned at once, and the structures
            // are valid for their sizes.
            unsafe {
                let raw = CreateJobObjectW(std::ptr::null(), std::ptr::null());
                if raw.is_null() {
                    return Err(std::io::Error::last_os_error());
                }
                let job = OwnedHandle::from_raw_handle(raw);
                let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
                limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
                if SetInformationJobObject(
                    raw,
                    JobObjectExtendedLimitInformation,
                    (&raw const limits).cast(),
                    size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
                ) == 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                if AssignProcessToJobObject(raw, process as _) == 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(job)
            }
        })();
        match result {
            Ok(job) => {
                with_jobs(|jobs| jobs.insert(pid, job));
                Ok(())
            }
            Err(e) => {
                if let Some(process) = child.raw_handle() {
                    // SAFETY: our child's handle, still open.
                    unsafe {
                        windows_sys::Win32::System::Threading::TerminateProcess(process as _, 1)
                    };
                }
                Err(e)
            }
        }
    }

    pub fn grow_pipes<A, B>(_: &A, _: &B) {}

    /// Ends every process of the server's job (Term too: see the module's comment); after
    /// Kill the job is let go.
    pub fn signal_group(pid: u32, signal: Signal) {
        with_jobs(|jobs| {
            if let Some(job) = jobs.get(&pid) {
                // SAFETY: a job handle we own.
                unsafe { TerminateJobObject(job.as_raw_handle() as _, 1) };
            }
            if matches!(signal, Signal::Kill) {
                jobs.remove(&pid);
            }
        });
    }

    /// Whether any process of the server's job still runs; a job found empty is let go.
    pub fn group_alive(pid: u32) -> bool {
        with_jobs(|jobs| {
            let Some(job) = jobs.get(&pid) else {
                return false;
            };
            // SAFETY: a job handle we own; the structure is valid for its size.
            let active = unsafe {
                let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = std::mem::zeroed();
                let ok = QueryInformationJobObject(
                    job.as_raw_handle() as _,
                    JobObjectBasicAccountingInformation,
                    (&raw mut info).cast(),
                    size_of::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>() as u32,
                    std::ptr::null_mut(),
                );
                ok == 0 || info.ActiveProcesses > 0
            };
            if !active {
                jobs.remove(&pid);
            }
            active
        })
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn argv(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    /// The bridge waits for the reaper, which exits as the server did.
    #[tokio::test]
    async fn the_servers_exit_code_and_signal_are_reported_as_they_were() {
        exit_code_and_signal().await;
    }

    /// The same through the reaper's `fork` (other architectures, or vfork refused).
    #[tokio::test]
    async fn the_same_when_the_server_is_forked_off() {
        use std::sync::atomic::Ordering;
        super::super::reaper::BY_FORK.store(true, Ordering::Relaxed);
        exit_code_and_signal().await;
        super::super::reaper::BY_FORK.store(false, Ordering::Relaxed);
    }

    async fn exit_code_and_signal() {
        for (script, want) in [
            ("exit 42", "exited with status 42"),
            ("kill -TERM $$", "was killed by signal 15 (SIGTERM)"),
            ("kill -SEGV $$", "was killed by signal 11 (SIGSEGV)"),
        ] {
            let (mut server, _pipes) =
                Server::spawn(&argv(&["sh", "-c", script]), &[], None, "test").unwrap();
            assert!(server.wait_gone(Duration::from_secs(5)).await, "{script}");
            assert_eq!(server.exited().as_deref(), Some(want), "{script}");
        }
        let e = match Server::spawn(&argv(&["warden-test-no-such-command"]), &[], None, "t") {
            Ok(_) => panic!("spawned a missing command"),
            Err(e) => e,
        };
        assert_eq!(e.source.kind(), std::io::ErrorKind::NotFound);
    }

    /// What a server leaves behind when it exits (here a child that ignores SIGTERM) is
    /// ended by the reaper, not left to the bridge.
    #[tokio::test]
    async fn a_servers_leftovers_end_with_it() {
        let pid_file = tempfile::NamedTempFile::new().unwrap();
        let path = pid_file.path().to_str().unwrap().to_owned();
        let script = format!("trap '' TERM; sleep 300 & echo $! > {path}; exit 3");
        let (mut server, _pipes) =
            Server::spawn(&argv(&["sh", "-c", &script]), &[], None, "test").unwrap();
        // No group kill from here on: the reaper alone must end the sleeper.
        server.group.armed = false;
        tokio::time::timeout(
            Duration::from_secs(5),
            server.exit.wait_for(Option::is_some),
        )
        .await
        .unwrap()
        .unwrap();
        assert_eq!(server.exited().as_deref(), Some("exited with status 3"));
        let sleeper: u32 = std::fs::read_to_string(&path)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The reaper's SIGKILL is sent before it exits; the sleeper dies when next scheduled
        // (a loaded machine may take a moment). Its pidfd turns readable when it has; no
        // pidfd (ESRCH) means it is gone already.
        let pid = rustix::process::Pid::from_raw(i32::try_from(sleeper).unwrap()).unwrap();
        if let Ok(fd) = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) {
            use rustix::event::{PollFd, PollFlags, Timespec, poll};
            let five_s = Timespec {
                tv_sec: 5,
                tv_nsec: 0,
            };
            let _ = poll(&mut [PollFd::new(&fd, PollFlags::IN)], Some(&five_s));
        }
        assert!(
            !sys::group_alive(server.pid),
            "the group outlived the reaper"
        );
        let stat = std::fs::read_to_string(format!("/proc/{sleeper}/stat")).unwrap_or_default();
        assert!(
            stat.is_empty()
                || stat
                    .rsplit(')')
                    .next()
                    .unwrap()
                    .trim_start()
                    .starts_with('Z'),
            "{stat}"
        );
    }

    /// A descriptor the bridge holds without close-on-exec (as from an IDE that leaked it)
    /// is not the server's.
    #[tokio::test]
    async fn a_descriptor_the_bridge_inherited_is_not_the_servers() {
        use std::os::fd::AsRawFd as _;
        let file = tempfile::tempfile().unwrap();
        let fd = file.as_raw_fd();
        // SAFETY: clears the flag of a descriptor this test owns, kept open below.
        #[allow(unsafe_code)]
        let cleared = unsafe { libc::fcntl(fd, libc::F_SETFD, 0) };
        assert_eq!(cleared, 0);
        let out = tempfile::NamedTempFile::new().unwrap();
        // `[` is the shell's own: /proc/self is the server's process.
        let script = format!(
            "if [ -e /proc/self/fd/{fd} ]; then echo open; else echo closed; fi > {}",
            out.path().display()
        );
        let (mut server, _pipes) =
            Server::spawn(&argv(&["sh", "-c", &script]), &[], None, "t").unwrap();
        assert!(server.wait_gone(Duration::from_secs(5)).await);
        assert_eq!(std::fs::read_to_string(out.path()).unwrap(), "closed\n");
        drop(file);
    }

    /// How long `Server::spawn` takes (it returns once the command was exec'd: std waits for
    /// its exec-error pipe to close), with and without the reaper. A measurement, not a check:
    /// `cargo test -p warden-bridge --lib spawn_cost -- --ignored --nocapture`.
    #[tokio::test]
    #[ignore = "a measurement: cargo test -p warden-bridge --release --lib spawn_cost -- --ignored --nocapture"]
    async fn spawn_cost() {
        for on in [false, true, false, true] {
            super::super::reaper::force(on);
            let mut times = Vec::new();
            for _ in 0..300 {
                let start = std::time::Instant::now();
                let (mut server, pipes) = Server::spawn(&argv(&["true"]), &[], None, "t").unwrap();
                times.push(start.elapsed());
                drop(pipes);
                server.wait_gone(Duration::from_secs(5)).await;
            }
            times.sort();
            let mean = times.iter().sum::<Duration>() / times.len() as u32;
            println!(
                "reaper {on}: median {:?}, mean {mean:?}, p90 {:?}",
                times[times.len() / 2],
                times[times.len() * 9 / 10]
            );
        }
    }
}
