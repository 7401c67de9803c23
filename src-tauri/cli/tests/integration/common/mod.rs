//! A test client for `warden bridge`: spawns the real binary in front of the fake server (or
//! the fake server alone), writes JSON lines, and awaits the lines it expects.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

mod registry_server;
// Its users are Unix-only modules.
#[cfg_attr(windows, allow(unused_imports))]
pub use registry_server::*;

pub const WARDEN: &str = env!("CARGO_BIN_EXE_warden");
pub const FAKE: &str = env!("CARGO_BIN_EXE_mcp-fake-server");
/// Generous bound for anything that should happen "at once".
pub const SOON: Duration = Duration::from_secs(10);

// Windows builds only the `windows` module of these tests, which asks for no tool.
#[cfg_attr(windows, allow(unused_imports))]
pub use warden_config::testing::{cannot_run, require_tool};

pub struct Session {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::UnboundedReceiver<Vec<u8>>,
    pub stderr: Arc<Mutex<String>>,
    stderr_done: Option<tokio::task::JoinHandle<()>>,
    pub dir: tempfile::TempDir,
    next_id: i64,
}

pub struct Builder {
    sets: Vec<String>,
    fake_flags: Vec<String>,
    config: Option<String>,
    direct: bool,
    command: Option<Vec<String>>,
    pid_file: bool,
    state_files: Vec<(String, Vec<u8>)>,
    exact: Option<Vec<String>>,
    envs: Vec<(String, String)>,
    sdk_env: bool,
    bridge_args: Vec<String>,
    cwd: Option<PathBuf>,
    leaked: Vec<i32>,
}

/// The name of the fake server's own file with `suffix` (`.jsonl`: its event log, `.json`:
/// its pins, none: its sandbox folder): the server's name's stem and a hash of it.
pub fn own_name(suffix: &str) -> String {
    format!("{}{suffix}", warden_config::paths::file_stem("fake"))
}

pub fn bridge() -> Builder {
    Builder {
        sets: Vec::new(),
        fake_flags: Vec::new(),
        config: None,
        direct: false,
        command: None,
        pid_file: false,
        state_files: Vec::new(),
        exact: None,
        envs: Vec::new(),
        sdk_env: false,
        bridge_args: Vec::new(),
        cwd: None,
        leaked: Vec::new(),
    }
}

impl Builder {
    pub fn set(mut self, kv: &str) -> Self {
        self.sets.push(kv.to_owned());
        self
    }
    pub fn fake(mut self, flag: &str) -> Self {
        self.fake_flags.push(flag.to_owned());
        self
    }
    pub fn config(mut self, toml: &str) -> Self {
        self.config = Some(toml.to_owned());
        self
    }
    /// The fake server writes its pid (and its grandchild's) to `<dir>/pids`.
    pub fn pid_file(mut self) -> Self {
        self.pid_file = true;
        self
    }
    /// A file in the state directory before the bridge starts (e.g. `pins/fake.json`).
    pub fn state_file(mut self, path: &str, bytes: &[u8]) -> Self {
        self.state_files.push((path.to_owned(), bytes.to_vec()));
        self
    }
    /// The fake server without the bridge (for comparison).
    pub fn direct(mut self) -> Self {
        self.direct = true;
        self
    }
    /// Another server command instead of the fake server.
    pub fn command(mut self, argv: &[&str]) -> Self {
        self.command = Some(argv.iter().map(|s| s.to_string()).collect());
        self
    }

    /// Runs this command line as it is (a client config entry's command and args).
    pub fn exact(mut self, argv: Vec<String>) -> Self {
        self.exact = Some(argv);
        self
    }
    /// An environment variable for the bridge (or the command).
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.envs.push((key.to_owned(), value.to_owned()));
        self
    }

    /// The bridge gets only what MCP SDK clients give a server (HOME, LOGNAME, PATH, SHELL,
    /// TERM, USER, from this process), then Warden's test paths and [`Builder::env`]'s.
    /// An argument of `warden bridge` before `--` (e.g. `--pass-env`).
    pub fn bridge_arg(mut self, arg: &str) -> Self {
        self.bridge_args.push(arg.to_owned());
        self
    }

    /// The bridge's (and so its server's) working folder.
    pub fn cwd(mut self, dir: &Path) -> Self {
        self.cwd = Some(dir.to_owned());
        self
    }

    pub fn sdk_env(mut self) -> Self {
        self.sdk_env = true;
        self
    }

    /// The bridge inherits descriptor `fd` of this process (which the caller keeps open until
    /// `spawn`), as from an IDE that leaked it: its close-on-exec flag is cleared in the
    /// bridge's process alone.
    pub fn leak_fd(mut self, fd: i32) -> Self {
        self.leaked.push(fd);
        self
    }

    pub fn spawn(self) -> Session {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        if let Some(text) = &self.config {
            std::fs::write(&config, text).unwrap();
        }
        for (path, bytes) in &self.state_files {
            let path = dir.path().join("state").join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        let mut server: Vec<String> = self.command.clone().unwrap_or_else(|| {
            let mut v = vec![FAKE.to_owned()];
            v.extend(self.fake_flags.iter().cloned());
            if self.pid_file {
                v.push("--pid-file".to_owned());
                v.push(dir.path().join("pids").to_string_lossy().into_owned());
            }
            v
        });
        let mut cmd = if let Some(argv) = &self.exact {
            let mut c = Command::new(&argv[0]);
            c.args(&argv[1..]);
            c
        } else if self.direct {
            let mut c = Command::new(server.remove(0));
            c.args(&server);
            c
        } else {
            let mut c = Command::new(WARDEN);
            c.args(["bridge", "--server", "fake"]);
            for s in &self.sets {
                c.args(["--set", s]);
            }
            c.args(&self.bridge_args);
            c.arg("--").args(&server);
            c
        };
        if self.sdk_env {
            cmd.env_clear();
            for k in ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"] {
                if let Some(v) = std::env::var_os(k) {
                    cmd.env(k, v);
                }
            }
        }
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        cmd.env("WARDEN_CONFIG", &config)
            .env("WARDEN_STATE_DIR", dir.path().join("state"))
            // Never the user's own supervisor.
            .env("WARDEN_SOCKET", dir.path().join("run").join("control.sock"))
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        for &fd in &self.leaked {
            leak(&mut cmd, fd);
        }
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut err = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            loop {
                let mut line = Vec::new();
                match stdout.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr);
        let stderr_done = tokio::spawn(async move {
            let mut buf = vec![0; 4096];
            while let Ok(n) = err.read(&mut buf).await {
                if n == 0 {
                    return;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Session {
            child,
            stdin,
            lines,
            stderr,
            stderr_done: Some(stderr_done),
            dir,
            next_id: 100,
        }
    }
}

/// Clears the close-on-exec flag of `fd` in the process `cmd` starts.
#[cfg(unix)]
#[allow(unsafe_code)]
fn leak(cmd: &mut Command, fd: i32) {
    // SAFETY: runs in the forked child before exec; fcntl is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

impl Session {
    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("config.toml")
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).await.unwrap();
        stdin.flush().await.unwrap();
    }

    pub async fn send(&mut self, msg: &Value) {
        let mut line = msg.to_string().into_bytes();
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    /// The next line from the bridge's stdout, raw; `None` at EOF.
    pub async fn recv_raw_within(&mut self, limit: Duration) -> Option<Vec<u8>> {
        tokio::time::timeout(limit, self.lines.recv())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "nothing from the bridge within {limit:?}; stderr:\n{}",
                    self.stderr.lock().unwrap()
                )
            })
    }

    /// The next message; panics on EOF, on a non-JSON line, or after [`SOON`].
    pub async fn recv(&mut self) -> Value {
        let Some(line) = self.recv_raw_within(SOON).await else {
            panic!("bridge stdout closed; stderr:\n{}", self.stderr_text());
        };
        serde_json::from_slice(&line).unwrap_or_else(|e| {
            panic!(
                "bridge wrote a non-JSON line ({e}): {:?}",
                String::from_utf8_lossy(&line[..line.len().min(200)])
            )
        })
    }

    /// Messages until one satisfies `pred` (returned); the others are returned too.
    pub async fn recv_until(&mut self, pred: impl Fn(&Value) -> bool) -> (Value, Vec<Value>) {
        let mut skipped = Vec::new();
        loop {
            let v = self.recv().await;
            if pred(&v) {
                return (v, skipped);
            }
            skipped.push(v);
        }
    }

    pub async fn response(&mut self, id: &Value) -> (Value, Vec<Value>) {
        let id = id.clone();
        self.recv_until(move |v| v.get("id") == Some(&id) && v.get("method").is_none())
            .await
    }

    pub fn next_id(&mut self) -> Value {
        self.next_id += 1;
        json!(self.next_id)
    }

    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.response(&id).await.0
    }

    /// Sends a tools/call and returns its id without waiting.
    pub async fn start_call(&mut self, tool: &str, args: Value, token: Option<Value>) -> Value {
        let id = self.next_id();
        let mut params = json!({"name": tool, "arguments": args});
        if let Some(t) = token {
            params["_meta"] = json!({"progressToken": t});
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await;
        id
    }

    pub async fn call(&mut self, tool: &str, args: Value) -> Value {
        let id = self.start_call(tool, args, None).await;
        self.response(&id).await.0
    }

    pub async fn initialize(&mut self) -> Value {
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "warden-tests", "version": "1"}});
        let r = self.request("initialize", params).await;
        // As a client does: `initialized` follows a successful answer only. A bridge whose
        // server was refused ends the session once it has answered, so a write could fail.
        if r.get("result").is_some() {
            self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .await;
        }
        r
    }

    /// Closes the bridge's stdin and waits for it to exit.
    pub async fn close(&mut self) -> ExitStatus {
        self.stdin.take();
        self.wait().await
    }

    /// Waits for the process to exit and for all it wrote to stderr.
    pub async fn wait(&mut self) -> ExitStatus {
        let status = tokio::time::timeout(Duration::from_secs(20), self.child.wait())
            .await
            .expect("bridge did not exit")
            .unwrap();
        if let Some(done) = self.stderr_done.take() {
            let _ = tokio::time::timeout(SOON, done).await;
        }
        status
    }

    pub fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub fn events(&self) -> Vec<Value> {
        let path = self.state_dir().join("logs").join(own_name(".jsonl"));
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The events of one kind, in the order they were logged.
    pub fn events_of(&self, kind: &str) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|e| e["kind"] == kind)
            .collect()
    }
}

pub fn error_kind(v: &Value) -> &str {
    v.pointer("/error/data/kind")
        .and_then(Value::as_str)
        .unwrap_or("")
}

pub fn text_of(v: &Value) -> &str {
    v.pointer("/result/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or("")
}

#[cfg(windows)]
pub fn alive(pid: u32) -> bool {
    warden_supervisor::orphans::alive(pid)
}

#[cfg(unix)]
pub fn alive(pid: u32) -> bool {
    // A zombie has exited; only its parent's wait is missing.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// Waits until none of `pids` lives; returns how long it took, or `None` after `limit`.
/// (A process that is not our child has no exit event to await, so this polls.)
pub async fn all_gone(pids: &[u32], limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if pids.iter().all(|&p| !alive(p)) {
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

pub fn read_pids(path: &Path) -> Vec<u32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

pub async fn wait_for_file(path: &Path) {
    poll_until(&format!("{} appeared", path.display()), || {
        path.exists() && !read_pids(path).is_empty()
    })
    .await;
}

/// Polls until `done` holds, for what another process does without an event to await (a file
/// it writes); fails after `SOON`.
pub async fn poll_until(what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < SOON, "never: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

impl Session {
    /// Replaces config.toml the way editors do: a new file renamed over the old one.
    pub fn write_config(&self, text: &str) {
        let tmp = self.dir.path().join(".config.toml.tmp");
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, self.config_path()).unwrap();
    }

    /// Waits until the event log has `n` events of `kind` (the log is the bridge's only
    /// report of a reload, so this polls it).
    pub async fn wait_for_events(&self, kind: &str, n: usize) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let found = self.events_of(kind);
            if found.len() >= n {
                return found;
            }
            assert!(
                start.elapsed() < SOON,
                "no {kind} event #{n}: {:?}",
                self.events()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Session {
    /// Sends a request until the circuit breaker lets it through, and returns that answer.
    /// The cool-down ends without an event (the first request after it half-opens the
    /// breaker), so this polls; while the breaker is open a request is refused at once and
    /// changes nothing.
    pub async fn request_past_breaker(&mut self, method: &str, params: Value) -> Value {
        let start = Instant::now();
        loop {
            let r = self.request(method, params.clone()).await;
            if error_kind(&r) != "circuit_open" {
                return r;
            }
            assert!(start.elapsed() < SOON, "the breaker stayed open: {r}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Sends a signal with `kill(1)` (tests signal processes they did not spawn themselves).
pub fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{sig} {pid}");
}

/// A private OS keychain for one test: its own D-Bus session bus and a gnome-keyring Secret
/// Service with an unlocked login keyring, all in a temp directory (never the user's own
/// keychain). Stopped when dropped.
pub struct Keychain {
    pub bus: String,
    procs: Vec<std::process::Child>,
    _dir: tempfile::TempDir,
}

impl Keychain {
    /// `None` (after [`cannot_run`]) without dbus-daemon, gnome-keyring-daemon or gdbus.
    pub fn start() -> Option<Keychain> {
        use std::io::{BufRead as _, Write as _};
        use std::process::Command;
        for tool in [
            "dbus-daemon",
            "gnome-keyring-daemon",
            "gdbus",
            "secret-tool",
        ] {
            require_tool(tool)?;
        }
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir_all(&run).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        let mut daemon = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .arg(format!(
                "--address=unix:path={}",
                dir.path().join("bus").display()
            ))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The address is printed once the bus listens.
        let mut bus = String::new();
        std::io::BufReader::new(daemon.stdout.take().unwrap())
            .read_line(&mut bus)
            .unwrap();
        let bus = bus.trim().to_owned();
        let mut keyring = Command::new("gnome-keyring-daemon")
            .args(["--foreground", "--unlock", "--components=secrets"])
            .env("DBUS_SESSION_BUS_ADDRESS", &bus)
            .env("HOME", dir.path())
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env("XDG_RUNTIME_DIR", &run)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The password of the new login keyring, then EOF.
        keyring.stdin.take().unwrap().write_all(b"test").unwrap();
        let keychain = Keychain {
            bus,
            procs: vec![keyring, daemon],
            _dir: dir,
        };
        let ready = Command::new("gdbus")
            .args([
                "wait",
                "--session",
                "--timeout",
                "20",
                "org.freedesktop.secrets",
            ])
            .env("DBUS_SESSION_BUS_ADDRESS", &keychain.bus)
            .status()
            .unwrap();
        assert!(
            ready.success(),
            "gnome-keyring did not register on the test bus"
        );
        Some(keychain)
    }

    /// The value stored for `account` (`SERVER/VAR`), read with libsecret's `secret-tool`.
    pub fn lookup(&self, account: &str) -> Option<String> {
        let out = std::process::Command::new("secret-tool")
            .args(["lookup", "service", "mcp-warden", "username", account])
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus)
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8(out.stdout).unwrap())
    }
}

impl Drop for Keychain {
    fn drop(&mut self) {
        for p in &mut self.procs {
            let _ = p.kill();
            let _ = p.wait();
        }
    }
}
