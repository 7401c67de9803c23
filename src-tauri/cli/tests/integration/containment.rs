//! Containment, tried as a hostile server would: a sandboxed server started the way MCP SDK
//! clients start servers (only HOME, LOGNAME, PATH, SHELL, TERM and USER in the bridge's
//! environment) tries every way out it can, through the real bridge, in both modes (the real
//! bubblewrap, and Landlock as `sandbox_mode = "landlock"` forces it). The fake server's
//! `echo` does what it is asked and answers what happened.

use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{
    Session, WARDEN, bridge, cannot_run, own_name, poll_until, require_tool, text_of,
};

/// Both sandboxes, where this machine can make them (under CI it must: a missing one fails).
pub(crate) fn modes() -> Vec<&'static str> {
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
pub(crate) struct World {
    dir: tempfile::TempDir,
}

impl World {
    pub(crate) fn new() -> World {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        for d in ["home/.npm/_cacache", "home/notes", "runtime", "sup"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        World { dir }
    }
    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    pub(crate) fn home(&self) -> String {
        self.path("home").to_string_lossy().into_owned()
    }

    /// A hostile server's session in `mode`, its sandbox checked.
    pub(crate) async fn session(
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

pub(crate) async fn echo(s: &mut Session, args: Value) -> String {
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
        let log = s.state_dir().join("logs").join(own_name(".jsonl"));
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
                    .join("sandbox")
                    .join(own_name(""))
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

/// The server writes its own folder under Warden's state: it replaces the folder of its uv
/// caches with a link to a folder of the user's outside its grants, and is started again (a
/// new bridge on the same state). Warden follows no link there: nothing appears in the
/// user's folder.
#[tokio::test]
async fn a_link_planted_in_the_own_folder_is_not_followed_at_the_next_start() {
    let w = World::new();
    for mode in modes() {
        let victim = w.path(&format!("home/victim-{mode}"));
        std::fs::create_dir_all(&victim).unwrap();
        let mut s = w.session(mode, "", |b| b).await;
        let cache = echo(&mut s, json!({"env": "UV_CACHE_DIR"})).await;
        let uv = Path::new(&cache).parent().unwrap().to_owned();
        let said = echo(&mut s, json!({"symlink": uv, "to": victim})).await;
        assert_eq!(said, "linked", "{mode}");
        s.close().await;

        let config = format!(
            "[defaults]\nsandbox = \"on\"\nsandbox_mode = \"{mode}\"\nsandbox_write = [\"{}\"]\n",
            w.path("home/notes").display()
        );
        let mut again = bridge()
            .sdk_env()
            .config(&config)
            .env("HOME", &w.home())
            .env("WARDEN_STATE_DIR", &s.state_dir().to_string_lossy())
            .spawn();
        let _ = again.initialize().await;
        let _ = tokio::time::timeout(Duration::from_secs(10), again.close()).await;
        let made: Vec<PathBuf> = std::fs::read_dir(&victim)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(made, Vec::<PathBuf>::new(), "{mode}");
    }
}

/// The same runner behind `env` (a server's command may be any program that starts one) is
/// refused as well: the refusal looks through `env`, shells' `-c` and the usual wrappers.
#[tokio::test]
async fn a_container_runner_behind_env_is_refused() {
    let w = World::new();
    let mut s = bridge()
        .sdk_env()
        .config("[defaults]\nsandbox = \"on\"\n")
        .env("HOME", &w.home())
        .command(&["env", "docker", "run", "--rm", "-i", "mcp/everything"])
        .spawn();
    let init = s.initialize().await;
    assert_eq!(
        init.pointer("/error/data/code").and_then(Value::as_str),
        Some("W-SANDBOX-CONTAINER"),
        "{init}"
    );
    let _ = tokio::time::timeout(Duration::from_secs(10), s.close()).await;
}

/// A TCP listener on the host's loopback, and its address, for a side door to miss.
fn host_listener() -> (std::net::TcpListener, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let at = listener.local_addr().unwrap().to_string();
    (listener, at)
}

/// No connection reached `listener` (on loopback a connection is queued by the time the
/// client's `connect` or first send returns).
fn unreached(listener: &std::net::TcpListener) -> bool {
    matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

/// The two networks that cut the host's: none, and a list (a proxy's port alone).
const CUT: [&str; 2] = [
    "sandbox_network = \"none\"\n",
    "sandbox_network = [\"example.org\"]\n",
];

/// MPTCP, which Landlock's TCP rules do not see, reaches no host port: with no network, nor
/// with a list (the system-call filter allows TCP and UDP only).
#[tokio::test]
async fn mptcp_reaches_no_host_port() {
    let w = World::new();
    let (listener, at) = host_listener();
    for mode in modes() {
        for network in CUT {
            let mut s = w.session(mode, network, |b| b).await;
            let said = echo(&mut s, json!({"mptcp": at})).await;
            s.close().await;
            assert!(unreached(&listener), "{mode}, {}: {said}", network.trim());
        }
    }
}

/// TCP Fast Open (`sendto` with `MSG_FASTOPEN`: the kernel connects without `connect()`, so
/// without Landlock's connect rule) reaches no host port under a list.
#[tokio::test]
async fn tcp_fast_open_reaches_no_host_port() {
    let w = World::new();
    let (listener, at) = host_listener();
    for mode in modes() {
        let mut s = w.session(mode, CUT[1], |b| b).await;
        let said = echo(&mut s, json!({"fastopen": at})).await;
        s.close().await;
        assert!(unreached(&listener), "{mode}: {said}");
    }
}

/// `TCP_FASTOPEN_CONNECT` needs no rule of the filter: its connection is made by `connect()`,
/// which meets Landlock's connect rule (the LSM hook runs before the protocol's connect).
#[tokio::test]
async fn tcp_fastopen_connect_still_meets_the_connect_rule() {
    let w = World::new();
    let (listener, at) = host_listener();
    for mode in modes() {
        let mut s = w.session(mode, CUT[1], |b| b).await;
        let said = echo(&mut s, json!({"fastopen_connect": at})).await;
        s.close().await;
        assert!(unreached(&listener), "{mode}: {said}");
    }
}

/// With no network there is no socket at all: a UDP datagram (which Landlock's rules do not
/// cut) reaches no host port.
#[tokio::test]
async fn with_no_network_no_datagram_leaves() {
    let w = World::new();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let at = udp.local_addr().unwrap().to_string();
    for mode in modes() {
        let mut s = w.session(mode, CUT[0], |b| b).await;
        let said = echo(&mut s, json!({"udp": at, "text": "leak"})).await;
        s.close().await;
        // Loopback delivers a datagram before its `sendto` returns.
        let mut buf = [0u8; 16];
        assert!(
            matches!(udp.recv(&mut buf), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "{mode}: {said}"
        );
    }
}

/// An AF_UNIX datagram pair's end, re-pointed by `sendto` at a host's datagram socket by its
/// path, delivers nothing, even with the host's network: datagram pairs are refused.
#[tokio::test]
async fn a_datagram_pair_reaches_no_host_socket() {
    let w = World::new();
    let path = w.path("home/notes/dgram.sock");
    let host = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
    host.set_nonblocking(true).unwrap();
    for mode in modes() {
        let mut s = w.session(mode, "sandbox_network = \"host\"\n", |b| b).await;
        let said = echo(&mut s, json!({"dgram_pair": path})).await;
        s.close().await;
        // A UNIX datagram is queued on its receiver before `sendto` returns.
        let mut buf = [0u8; 16];
        assert!(
            matches!(host.recv(&mut buf), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "{mode}: {said}"
        );
    }
}

/// Sockets are TCP or UDP over IPv4 or IPv6 (and rtnetlink, which only reads the interfaces),
/// whatever the network: no UNIX, other netlink, packet, raw, ping, MPTCP or SCTP socket is
/// created, even with the host's network.
#[tokio::test]
async fn no_socket_but_tcp_and_udp_over_ip() {
    let w = World::new();
    let tried = [
        ("unix", libc::AF_UNIX, libc::SOCK_STREAM, 0),
        (
            "netlink uevent",
            libc::AF_NETLINK,
            libc::SOCK_RAW,
            libc::NETLINK_KOBJECT_UEVENT,
        ),
        ("packet", libc::AF_PACKET, libc::SOCK_DGRAM, 0),
        ("raw", libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_UDP),
        ("ping", libc::AF_INET, libc::SOCK_DGRAM, libc::IPPROTO_ICMP),
        (
            "mptcp",
            libc::AF_INET6,
            libc::SOCK_STREAM,
            libc::IPPROTO_MPTCP,
        ),
        ("sctp", libc::AF_INET, libc::SOCK_STREAM, libc::IPPROTO_SCTP),
    ];
    for mode in modes() {
        let mut s = w.session(mode, "sandbox_network = \"host\"\n", |b| b).await;
        let mut created = Vec::new();
        for (name, domain, ty, protocol) in tried {
            let said = echo(&mut s, json!({"socket": [domain, ty, protocol]})).await;
            if !said.starts_with("error:") {
                created.push(name);
            }
        }
        s.close().await;
        assert!(created.is_empty(), "{mode}: created {created:?}");
    }
}

/// Descriptors the IDE leaked into the bridge (an open file of a hidden key, a socket
/// connected to a host's service) do not reach the server, sandboxed or not, nor past the
/// hand-off to the proxy of a `sandbox_network` list: it has its standard three only.
#[tokio::test]
async fn descriptors_the_ide_leaked_do_not_reach_the_server() {
    use std::os::fd::AsRawFd as _;
    let w = World::new();
    std::fs::create_dir_all(w.path("home/.ssh")).unwrap();
    std::fs::write(w.path("home/.ssh/id_leaked"), "KEY-LEAKED-3c9").unwrap();
    // At numbers the server's own descriptors (its runtime's) never reach.
    let high = |fd: std::os::fd::OwnedFd| rustix::io::fcntl_dupfd_cloexec(&fd, 500).unwrap();
    let key = high(
        std::fs::File::open(w.path("home/.ssh/id_leaked"))
            .unwrap()
            .into(),
    );
    let _host = UnixListener::bind(w.path("home/host.sock")).unwrap();
    let socket = high(
        std::os::unix::net::UnixStream::connect(w.path("home/host.sock"))
            .unwrap()
            .into(),
    );
    let fds = [key.as_raw_fd(), socket.as_raw_fd()];
    let leak = |b: crate::common::Builder| b.leak_fd(fds[0]).leak_fd(fds[1]);
    let mut runs = vec![("off", "")];
    runs.extend(modes().into_iter().map(|m| (m, "")));
    if require_tool("bwrap").is_some() {
        runs.push(("bwrap", "sandbox_network = [\"127.0.0.1:9\"]\n"));
    }
    for (mode, extra) in runs {
        let mut s = if mode == "off" {
            let mut s = leak(bridge().sdk_env().env("HOME", &w.home())).spawn();
            assert!(s.initialize().await.get("result").is_some());
            s
        } else {
            w.session(mode, extra, leak).await
        };
        // The bridge has them: what the server is refused is a real way out.
        let bridge_pid = s.child.id().unwrap();
        for fd in fds {
            let path = format!("/proc/{bridge_pid}/fd/{fd}");
            assert!(Path::new(&path).exists(), "{mode}: {path}");
        }
        let said = echo(&mut s, json!({"fd": fds[0]})).await;
        assert!(
            said.starts_with("error:") && !said.contains("KEY-"),
            "{mode} {}: the key's file: {said}",
            extra.trim()
        );
        let said = echo(&mut s, json!({"fd": fds[1]})).await;
        assert!(
            said.starts_with("error:"),
            "{mode} {}: the host's socket: {said}",
            extra.trim()
        );
        s.close().await;
    }
}
