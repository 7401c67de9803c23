//! `sandbox_network` as a list (issue 35), through the real bridge, bubblewrap and Landlock:
//! a listed destination answers through the proxy (plain HTTP and CONNECT), an unlisted one
//! gets 403 and never sees a connection, a listed name that resolves to loopback is refused,
//! a connection that skips the proxy fails, and each refusal is a `network_denied` event;
//! `@npm` adds no loopback mirror from an `.npmrc` (the working folder's is never read).
//! Loopback only: nothing but 127.0.0.1 is ever contacted.

use std::io::{Read as _, Write as _};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;

use crate::common::{Session, bridge, require_tool, text_of};
use crate::sandbox::refused_bwrap;

/// A tiny HTTP server on 127.0.0.1 that answers every request with `BODY-<port>` and counts
/// the connections it accepted.
struct Origin {
    port: u16,
    accepted: Arc<AtomicUsize>,
}

impl Origin {
    fn start() -> Origin {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&accepted);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                count.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match conn.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let body = format!("BODY-{port}");
                    let _ = write!(
                        conn,
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                });
            }
        });
        Origin { port, accepted }
    }

    fn connections(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// A bridge with `config` and `home`, its server sandboxed in `mode` ("bwrap", or "landlock"
/// with a `bwrap` that fails as AppArmor makes it fail), initialized.
async fn sandboxed(mode: &str, config: &str, home: &std::path::Path) -> Session {
    sandboxed_in(mode, config, home, None).await
}

/// [`sandboxed`], the bridge (and its server) started in `cwd`.
async fn sandboxed_in(
    mode: &str,
    config: &str,
    home: &std::path::Path,
    cwd: Option<&std::path::Path>,
) -> Session {
    let bin = refused_bwrap();
    let mut builder = bridge().config(config).env("HOME", &home.to_string_lossy());
    if let Some(dir) = cwd {
        builder = builder.cwd(dir);
    }
    if mode == "landlock" {
        builder = builder.env(
            "WARDEN_TEST_BWRAP",
            &bin.path().join("bwrap").to_string_lossy(),
        );
    }
    let mut s = builder.spawn();
    let init = s.initialize().await;
    assert!(init.get("result").is_some(), "{init}");
    let ran = s.wait_for_events("sandbox", 1).await;
    assert_eq!(ran[0]["detail"], mode, "the sandbox that ran");
    s
}

async fn echo(s: &mut Session, args: serde_json::Value) -> String {
    text_of(&s.call("echo", args).await).to_owned()
}

/// Runs the checks in `mode` ("bwrap" or "landlock").
async fn a_list_lets_through_only_what_it_names(mode: &str) {
    if require_tool("bwrap").is_none() {
        return;
    }
    // Not under /tmp: the sandbox's /tmp is its own.
    let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let listed = Origin::start();
    let unlisted = Origin::start();
    let (a, b) = (listed.port, unlisted.port);
    let config = format!(
        "[defaults]\nsandbox = \"on\"\nsandbox_network = [\"127.0.0.1:{a}\", \"localhost:{a}\"]\n"
    );
    let mut s = sandboxed(mode, &config, home.path()).await;

    // Its environment names the proxy.
    let proxy = echo(&mut s, json!({"env": "HTTPS_PROXY"})).await;
    assert!(proxy.starts_with("http://127.0.0.1:"), "{proxy}");
    if mode == "bwrap" {
        assert_eq!(proxy, "http://127.0.0.1:3128");
    }
    for var in [
        "HTTP_PROXY",
        "http_proxy",
        "https_proxy",
        "npm_config_proxy",
        "npm_config_https_proxy",
    ] {
        assert_eq!(echo(&mut s, json!({"env": var})).await, proxy, "{var}");
    }
    assert_eq!(
        echo(&mut s, json!({"env": "NODE_USE_ENV_PROXY"})).await,
        "1"
    );

    // The listed address answers, over plain HTTP and through a CONNECT tunnel.
    let got = echo(&mut s, json!({"fetch": format!("http://127.0.0.1:{a}/x")})).await;
    assert!(
        got.starts_with("HTTP/1.1 200") && got.ends_with(&format!("BODY-{a}")),
        "{got}"
    );
    let got = echo(&mut s, json!({"tunnel": format!("127.0.0.1:{a}")})).await;
    assert!(
        got.starts_with("tunnel: HTTP/1.1 200") && got.ends_with(&format!("BODY-{a}")),
        "{got}"
    );
    assert_eq!(listed.connections(), 2);

    // An unlisted one gets 403, naming it and the key, and never sees a connection.
    for _ in 0..2 {
        let got = echo(&mut s, json!({"fetch": format!("http://127.0.0.1:{b}/")})).await;
        assert!(got.starts_with("HTTP/1.1 403"), "{got}");
        assert!(
            got.contains(&format!("127.0.0.1:{b}")) && got.contains("`sandbox_network`"),
            "{got}"
        );
        let got = echo(&mut s, json!({"tunnel": format!("127.0.0.1:{b}")})).await;
        assert!(got.starts_with("HTTP/1.1 403"), "{got}");
    }
    // A listed name that resolves to loopback is refused: only an address reaches it.
    let got = echo(&mut s, json!({"fetch": format!("http://localhost:{a}/")})).await;
    assert!(
        got.starts_with("HTTP/1.1 403") && got.contains("loopback"),
        "{got}"
    );

    // Skipping the proxy gets nowhere.
    let got = echo(&mut s, json!({"connect": format!("127.0.0.1:{a}")})).await;
    assert!(got.starts_with("error:"), "{got}");
    assert_eq!(listed.connections(), 2);
    assert_eq!(
        unlisted.connections(),
        0,
        "the unlisted server saw a connection"
    );
    s.close().await;

    let denied: Vec<(String, u64)> = s
        .events_of("network_denied")
        .iter()
        .map(|e| {
            (
                e["host"].as_str().unwrap_or("").to_owned(),
                e["port"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        denied,
        [
            ("127.0.0.1".to_owned(), u64::from(b)),
            ("localhost".to_owned(), u64::from(a))
        ],
        "once per destination"
    );
}

#[tokio::test]
async fn under_bubblewrap_a_list_lets_through_only_what_it_names() {
    a_list_lets_through_only_what_it_names("bwrap").await;
}

#[tokio::test]
async fn under_landlock_a_list_lets_through_only_what_it_names() {
    a_list_lets_through_only_what_it_names("landlock").await;
}

/// What a hostile server with a list may try besides asking the proxy, in `mode`: find the
/// proxy's listener or the helper's socket among its descriptors, take the proxy's port,
/// send UDP, bind a listener or listen unbound, reach another address on the proxy's port.
async fn a_server_finds_no_other_way_out(mode: &str) {
    if require_tool("bwrap").is_none() {
        return;
    }
    let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let listed = Origin::start();
    let a = listed.port;
    let config = format!("[defaults]\nsandbox = \"on\"\nsandbox_network = [\"127.0.0.1:{a}\"]\n");
    let mut s = sandboxed(mode, &config, home.path()).await;

    // Neither the proxy's listener nor the helper's socket to the bridge is among its
    // descriptors (its own socket pairs may be: their peer is itself).
    let sockets = echo(&mut s, json!({"sockets": true})).await;
    assert!(!sockets.starts_with("error:"), "{sockets}");
    assert!(
        !sockets.contains("inet") && !sockets.contains("peer=other"),
        "{sockets}"
    );

    let proxy = echo(&mut s, json!({"env": "HTTP_PROXY"})).await;
    let port: u16 = proxy.rsplit(':').next().unwrap().parse().unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(std::time::Duration::from_millis(500)))
        .unwrap();
    let udp_at = udp.local_addr().unwrap().to_string();
    let _ = echo(&mut s, json!({"udp": udp_at, "text": "leak"})).await;
    let mut buf = [0u8; 16];
    let got_udp = udp.recv(&mut buf).is_ok();
    // Its way out is the proxy's TCP port: no datagram leaves (under Landlock the filter
    // allows no UDP socket with a list).
    assert!(!got_udp, "{mode}: a datagram left the sandbox");
    if mode == "bwrap" {
        // Its own network: the proxy's port is taken there, by the listener the bridge holds.
        let got = echo(&mut s, json!({"bind": format!("127.0.0.1:{port}")})).await;
        assert!(got.starts_with("error:"), "{got}");
    } else {
        // Landlock: no TCP listener at all (nor one the kernel binds by itself at `listen()`),
        // no connection but to the proxy's port...
        for addr in ["127.0.0.1:0", "0.0.0.0:0", "[::1]:0"] {
            let got = echo(&mut s, json!({"bind": addr})).await;
            assert!(got.starts_with("error:"), "{addr}: {got}");
        }
        let got = echo(&mut s, json!({"listen_unbound": true})).await;
        assert!(got.starts_with("error:"), "listen unbound: {got}");
        let got = echo(&mut s, json!({"connect": format!("127.0.0.1:{a}")})).await;
        assert!(got.starts_with("error:"), "{got}");
        // ...but its rules name a port, not a host: that port number on another address is
        // reached (here 127.0.0.2; on the network, any machine listening on it).
        // docs/sandbox.md says so.
        let _other = std::net::TcpListener::bind(("127.0.0.2", port)).unwrap();
        let got = echo(&mut s, json!({"connect": format!("127.0.0.2:{port}")})).await;
        assert_eq!(got, "connected");
    }
    s.close().await;
    if mode == "landlock" {
        // ...which the degraded report says, not only the docs.
        let degraded = s.events_of("sandbox_degraded");
        assert!(
            degraded.iter().any(|e| e["detail"]
                .as_str()
                .is_some_and(|d| d.contains("proxy's port number, on any address"))),
            "{degraded:?}"
        );
    }
}

#[tokio::test]
async fn under_bubblewrap_a_server_finds_no_other_way_out() {
    a_server_finds_no_other_way_out("bwrap").await;
}

#[tokio::test]
async fn under_landlock_a_server_finds_no_other_way_out_but_its_ports_number() {
    a_server_finds_no_other_way_out("landlock").await;
}

/// `@npm` opens no way to this machine's own services, in `mode`: a cloned repository's
/// `.npmrc` in the server's working folder (which the server may also write, then be
/// restarted) and even the user's own in HOME point a scope and the registry at a loopback
/// service (a listener standing for Redis); the server asks the proxy for it, plain and
/// through a tunnel, and the service never sees a connection.
async fn npm_preset_never_reaches_loopback_from_an_npmrc(mode: &str) {
    if require_tool("bwrap").is_none() {
        return;
    }
    let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let service = Origin::start();
    let p = service.port;
    let npmrc = format!("registry=http://127.0.0.1:{p}/\n@x:registry=http://127.0.0.1:{p}/\n");
    std::fs::write(work.path().join(".npmrc"), &npmrc).unwrap();
    std::fs::write(home.path().join(".npmrc"), &npmrc).unwrap();
    let config = "[defaults]\nsandbox = \"on\"\nsandbox_network = [\"@npm\"]\n";
    let mut s = sandboxed_in(mode, config, home.path(), Some(work.path())).await;
    let fetched = echo(&mut s, json!({"fetch": format!("http://127.0.0.1:{p}/")})).await;
    let tunneled = echo(&mut s, json!({"tunnel": format!("127.0.0.1:{p}")})).await;
    s.close().await;
    assert_eq!(
        service.connections(),
        0,
        "{mode}: the loopback service was reached: {fetched} / {tunneled}"
    );
}

#[tokio::test]
async fn under_bubblewrap_the_npm_preset_never_reaches_loopback_from_an_npmrc() {
    npm_preset_never_reaches_loopback_from_an_npmrc("bwrap").await;
}

#[tokio::test]
async fn under_landlock_the_npm_preset_never_reaches_loopback_from_an_npmrc() {
    npm_preset_never_reaches_loopback_from_an_npmrc("landlock").await;
}
