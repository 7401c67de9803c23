//! Containment, tried as a hostile server would: a sandboxed server started the way MCP SDK
//! clients start servers (only HOME, LOGNAME, PATH, SHELL, TERM and USER in the bridge's
//! environment) tries every way out it can, through the real bridge, in both modes (the real
//! bubblewrap, and Landlock as `sandbox_mode = "landlock"` forces it). The fake server's
//! `echo` does what it is asked and answers what happened.

use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Session, WARDEN, bridge, cannot_run, poll_until, require_tool, text_of};

/// Both sandboxes, where this machine can make them (under CI it must: a missing one fails).
fn modes() -> Vec<&'static str> {
    let mut modes = Vec::new();
    if require_tool("bwrap").is_some() {
        modes.push("bwrap");
    }
    if landlock_abi() >= 6 {
        modes.push("landlock");
    } else {
        cannot_run("Landlock ABI 6 (Linux 6.12) is not available");
    }
    modes
}

#[allow(unsafe_code)]
fn landlock_abi() -> i64 {
    // SAFETY: the version query creates nothing.
    unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1 as libc::c_uint,
        )
    }
}

/// A home with an agent socket's folder and a package cache, outside /tmp.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        for d in ["home/.npm/_cacache", "home/notes", "runtime", "sup"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        World { dir }
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    fn home(&self) -> String {
        self.path("home").to_string_lossy().into_owned()
    }

    /// A hostile server's session in `mode`, its sandbox checked.
    async fn session(
        &self,
        mode: &str,
        extra: &str,
        build: impl FnOnce(crate::common::Builder) -> crate::common::Builder,
    ) -> Session {
        let config = format!(
            "[defaults]\nsandbox = \"on\"\nsandbox_mode = \"{mode}\"\nsandbox_write = [\"{}\"]\n{extra}",
            self.path("home/notes").display()
        );
        let mut s = build(bridge().sdk_env().config(&config).env("HOME", &self.home())).spawn();
        let init = s.initialize().await;
        assert!(init.get("result").is_some(), "{mode}: {init}");
        let ran: Vec<Value> = s
            .wait_for_events("sandbox", 1)
            .await
            .iter()
            .map(|e| e["detail"].clone())
            .collect();
        assert_eq!(ran, [json!(mode)], "the sandbox that ran");
        s
    }
}

async fn echo(s: &mut Session, args: Value) -> String {
    text_of(&s.call("echo", args).await).to_owned()
}

/// Nothing connected to `listener` (it was never asked).
fn untouched(listener: &UnixListener) -> bool {
    listener.set_nonblocking(true).unwrap();
    matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

/// `warden daemon` on `socket`, waited for.
async fn daemon(w: &World, socket: &Path) -> tokio::process::Child {
    let child = tokio::process::Command::new(WARDEN)
        .arg("daemon")
        .env("WARDEN_SOCKET", socket)
        .env("WARDEN_STATE_DIR", w.path("sup/state"))
        .env("WARDEN_CONFIG", w.path("sup/config.toml"))
        .env("HOME", w.home())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    poll_until("the daemon listens", || socket.exists()).await;
    child
}

/// A `probe` request whose command writes `file` (outside any sandbox, were it run).
fn probe_line(file: &Path) -> String {
    json!({"type": "api_request", "id": 1, "request": {"op": "probe", "timeout_ms": 2000,
        "command": ["sh", "-c", format!("id > {}", file.display())]}})
    .to_string()
}

/// Warden's control socket (where the hiding of paths does not reach: a readable folder),
/// a probe sent through it, an agent socket in HOME, a socket in /run, and an abstract
/// socket with the host's network: none is reachable, and the probe never runs.
#[tokio::test]
async fn no_unix_socket_outside_the_sandbox_is_reachable() {
    let w = World::new();
    // The daemon makes the socket's folder, private.
    let control = w.path("sup/run/control.sock");
    let _daemon = daemon(&w, &control).await;
    let agent = UnixListener::bind(w.path("home/agent.sock")).unwrap();
    let pid = std::process::id();
    let in_run = PathBuf::from(format!("/run/warden-containment-{pid}.sock"));
    let run = UnixListener::bind(&in_run).ok();
    if run.is_none() {
        cannot_run("no socket can be made in /run (the test needs root)");
    }
    for mode in modes() {
        let name = format!("warden-containment-{pid}-{mode}");
        let abstract_ = {
            use std::os::linux::net::SocketAddrExt as _;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(&name).unwrap();
            UnixListener::bind_addr(&addr).unwrap()
        };
        let mut s = w.session(mode, "sandbox_network = \"host\"\n", |b| b).await;
        let pwned = w.path(&format!("home/PWNED-{mode}"));
        let said = echo(&mut s, json!({"unix": control, "send": probe_line(&pwned)})).await;
        assert!(
            said.starts_with("error:"),
            "{mode}: the control socket: {said}"
        );
        let said = echo(&mut s, json!({"unix": w.path("home/agent.sock")})).await;
        assert!(
            said.starts_with("error:"),
            "{mode}: an agent socket: {said}"
        );
        if run.is_some() {
            let said = echo(&mut s, json!({"unix": in_run})).await;
            assert!(
                said.starts_with("error:"),
                "{mode}: a socket in /run: {said}"
            );
        }
        let said = echo(&mut s, json!({"abstract": name})).await;
        assert!(
            said.starts_with("error:"),
            "{mode}: an abstract socket: {said}"
        );
        s.close().await;
        assert!(untouched(&abstract_), "{mode}");
        assert!(!pwned.exists(), "{mode}: the probe ran");
    }
    assert!(untouched(&agent));
    if let Some(run) = &run {
        assert!(untouched(run));
        let _ = std::fs::remove_file(&in_run);
    }
    // The same probe from outside runs: what the sandbox refused was a real way out.
    let outside = w.path("home/PWNED-outside");
    let mut conn = std::os::unix::net::UnixStream::connect(&control).unwrap();
    std::io::Write::write_all(&mut conn, format!("{}\n", probe_line(&outside)).as_bytes()).unwrap();
    poll_until("the probe from outside ran", || outside.exists()).await;
}

/// The runtime dir's files (as the IDE's `XDG_RUNTIME_DIR` names it, and all of /run), and
/// Warden's own state: unreadable.
#[tokio::test]
async fn the_runtime_dir_run_and_wardens_state_are_hidden() {
    let w = World::new();
    std::fs::write(w.path("runtime/bus-token"), "RUNTIME-5e1").unwrap();
    let in_run = PathBuf::from(format!("/run/warden-containment-{}", std::process::id()));
    let run = std::fs::write(&in_run, "RUN-77a").is_ok();
    if !run {
        cannot_run("no file can be made in /run (the test needs root)");
    }
    for mode in modes() {
        let runtime = w.path("runtime");
        let mut s = w
            .session(mode, "", |b| {
                b.env("XDG_RUNTIME_DIR", &runtime.to_string_lossy())
            })
            .await;
        let said = echo(&mut s, json!({"read": w.path("runtime/bus-token")})).await;
        assert!(!said.contains("RUNTIME"), "{mode}: {said}");
        if run {
            let said = echo(&mut s, json!({"read": in_run})).await;
            assert!(!said.contains("RUN-"), "{mode}: {said}");
        }
        let log = s.state_dir().join("logs/fake.jsonl");
        let said = echo(&mut s, json!({"read": log})).await;
        assert!(said.starts_with("error:"), "{mode}: Warden's state: {said}");
        s.close().await;
    }
    let _ = std::fs::remove_file(&in_run);
}

/// The IDE's environment stays outside: only the short list, `--pass-env`'s names and the
/// server's own folders' variables reach the server.
#[tokio::test]
async fn the_ides_environment_stays_outside() {
    let w = World::new();
    for mode in modes() {
        let mut s = w
            .session(mode, "", |b| {
                b.env("GITHUB_TOKEN", "ghp_SECRET1")
                    .env("SSH_AUTH_SOCK", "/agent.sock")
                    .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/bus")
                    .env("API_KEY", "passed-2")
                    .bridge_arg("--pass-env")
                    .bridge_arg("API_KEY")
            })
            .await;
        for var in [
            "GITHUB_TOKEN",
            "SSH_AUTH_SOCK",
            "DBUS_SESSION_BUS_ADDRESS",
            "XDG_RUNTIME_DIR",
            "WARDEN_SOCKET",
        ] {
            assert_eq!(echo(&mut s, json!({"env": var})).await, "", "{mode}: {var}");
        }
        assert_eq!(
            echo(&mut s, json!({"env": "API_KEY"})).await,
            "passed-2",
            "{mode}"
        );
        assert_eq!(
            echo(&mut s, json!({"env": "HOME"})).await,
            w.home(),
            "{mode}"
        );
        s.close().await;
    }
}

/// The user's package caches are read-only (their code runs later outside); the server
/// writes a cache of its own, which npm's variable names.
#[tokio::test]
async fn the_shared_caches_are_read_only_and_the_server_has_its_own() {
    let w = World::new();
    for mode in modes() {
        let mut s = w.session(mode, "", |b| b).await;
        let planted = w.path("home/.npm/_cacache/planted");
        let said = echo(&mut s, json!({"write": planted, "text": "evil"})).await;
        assert!(said.starts_with("error:"), "{mode}: {said}");
        assert!(!planted.exists(), "{mode}");
        let own = echo(&mut s, json!({"env": "npm_config_cache"})).await;
        assert!(
            own.starts_with(
                &s.state_dir()
                    .canonicalize()
                    .unwrap()
                    .join("sandbox/fake")
                    .to_string_lossy()
                    .into_owned()
            ),
            "{mode}: {own}"
        );
        let said = echo(&mut s, json!({"write": format!("{own}/x"), "text": "ok"})).await;
        assert_eq!(said, "written", "{mode}");
        s.close().await;
    }
}

/// A process of the user's (here a `sleep` of this test's) gets no signal from inside.
#[tokio::test]
async fn no_signal_reaches_a_process_outside() {
    let w = World::new();
    let mut victim = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    for mode in modes() {
        let mut s = w.session(mode, "", |b| b).await;
        let said = echo(&mut s, json!({"kill": victim.id()})).await;
        assert!(said.starts_with("error:"), "{mode}: {said}");
        s.close().await;
        assert!(
            victim.try_wait().unwrap().is_none(),
            "{mode}: the victim died"
        );
    }
    let _ = victim.kill();
    let _ = victim.wait();
}

/// The bridge's graceful stop reaches the server inside with SIGTERM (before any SIGKILL):
/// a server that ignores its closed stdin gets it and writes what it saw.
#[tokio::test]
async fn sigterm_reaches_the_server_inside() {
    let w = World::new();
    for mode in modes() {
        let seen = w.path(&format!("home/notes/term-{mode}"));
        let mut s = w
            .session(mode, "", |b| {
                b.fake("--ignore-stdin-eof")
                    .fake("--on-sigterm")
                    .fake(&seen.to_string_lossy())
            })
            .await;
        s.close().await;
        assert_eq!(
            std::fs::read_to_string(&seen).ok().as_deref(),
            Some("sigterm"),
            "{mode}"
        );
    }
}

/// `docker run` under `sandbox = "on"` would run outside any sandbox: refused, named.
#[tokio::test]
async fn a_container_runner_is_refused() {
    let w = World::new();
    let mut s = bridge()
        .sdk_env()
        .config("[defaults]\nsandbox = \"on\"\n")
        .env("HOME", &w.home())
        .command(&["docker", "run", "--rm", "-i", "mcp/everything"])
        .spawn();
    let init = s.initialize().await;
    assert_eq!(
        init.pointer("/error/data/code").and_then(Value::as_str),
        Some("W-SANDBOX-CONTAINER"),
        "{init}"
    );
    let _ = tokio::time::timeout(Duration::from_secs(10), s.close()).await;
}
