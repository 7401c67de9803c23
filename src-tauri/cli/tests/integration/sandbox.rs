//! The sandbox (`sandbox = "on"`, Linux) with the real bubblewrap: what a sandboxed server
//! may read, write and reach, and that it is never run without its sandbox. The fake server's
//! `echo` reads, writes and connects on request and answers what happened.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::common::{Session, bridge, require_tool, text_of};

/// A home with a key in ~/.ssh, a file outside any grant and a granted folder.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        // In the target folder (under /tmp too, for a clone there: such folders stay readable
        // under the sandbox's own /tmp).
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE-KEY-7f3a").unwrap();
        std::fs::create_dir_all(home.join("notes")).unwrap();
        std::fs::create_dir_all(home.join("private")).unwrap();
        std::fs::write(home.join("private/diary.txt"), "DIARY-91c2").unwrap();
        std::fs::write(home.join("readable.txt"), "PUBLIC-22").unwrap();
        World { dir }
    }
    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    fn path(&self, rel: &str) -> String {
        self.home().join(rel).to_string_lossy().into_owned()
    }
    async fn session(&self, config: &str) -> Option<Session> {
        require_tool("bwrap")?;
        let mut s = bridge()
            .config(config)
            .env("HOME", &self.home().to_string_lossy())
            .spawn();
        let init = s.initialize().await;
        assert!(init.get("result").is_some(), "{init}");
        let ran = s.wait_for_events("sandbox", 1).await;
        assert_eq!(ran[0]["detail"], "bwrap", "the sandbox that ran");
        Some(s)
    }
}

fn grants(w: &World, extra: &str) -> String {
    format!(
        "[defaults]\nsandbox = \"on\"\nsandbox_write = [\"{}\"]\nsandbox_deny = [\"{}\"]\n{extra}",
        w.path("notes"),
        w.path("private")
    )
}

async fn echo(s: &mut Session, args: serde_json::Value) -> String {
    text_of(&s.call("echo", args).await).to_owned()
}

#[tokio::test]
async fn a_denied_file_cannot_be_read_and_its_content_never_reaches_the_client() {
    let w = World::new();
    let Some(mut s) = w.session(&grants(&w, "")).await else {
        return;
    };
    for (file, secret) in [
        (".ssh/id_ed25519", "PRIVATE-KEY"),
        ("private/diary.txt", "DIARY"),
    ] {
        let said = echo(&mut s, json!({"read": w.path(file)})).await;
        assert!(
            said.starts_with("error:") && !said.contains(secret),
            "{file}: {said}"
        );
    }
    assert_eq!(
        echo(&mut s, json!({"read": w.path("readable.txt")})).await,
        "PUBLIC-22"
    );
    s.close().await;
}

#[tokio::test]
async fn writes_land_only_in_the_granted_folders() {
    let w = World::new();
    let Some(mut s) = w.session(&grants(&w, "")).await else {
        return;
    };
    let outside = w.path("outside.txt");
    let said = echo(&mut s, json!({"write": outside, "text": "x"})).await;
    assert!(said.contains("Read-only file system"), "{said}");
    assert!(
        !Path::new(&outside).exists(),
        "nothing created outside the grants"
    );
    let inside = w.path("notes/n.txt");
    assert_eq!(
        echo(&mut s, json!({"write": inside, "text": "kept"})).await,
        "written"
    );
    assert_eq!(std::fs::read_to_string(&inside).unwrap(), "kept");
    // Its /tmp is its own.
    assert_eq!(
        echo(
            &mut s,
            json!({"write": "/tmp/warden-sandbox-test", "text": "t"})
        )
        .await,
        "written"
    );
    assert!(!Path::new("/tmp/warden-sandbox-test").exists());
    s.close().await;
}

#[tokio::test]
async fn the_network_is_off_unless_the_host_network_is_granted() {
    let w = World::new();
    // Loopback only, ever.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let Some(mut s) = w.session(&grants(&w, "")).await else {
        return;
    };
    let said = echo(&mut s, json!({"connect": addr})).await;
    assert!(said.starts_with("error:"), "{said}");
    s.close().await;
    let Some(mut s) = w.session(&grants(&w, "sandbox_network = \"host\"\n")).await else {
        return;
    };
    assert_eq!(echo(&mut s, json!({"connect": addr})).await, "connected");
    s.close().await;
}

#[tokio::test]
async fn without_bubblewrap_or_landlock_the_server_is_not_started_and_the_client_is_told_why() {
    let w = World::new();
    let empty = tempfile::tempdir().unwrap();
    let mut s = bridge()
        .config("[defaults]\nsandbox = \"on\"\n")
        .env("HOME", &w.home().to_string_lossy())
        .env(
            "WARDEN_TEST_BWRAP",
            &empty.path().join("bwrap").to_string_lossy(),
        )
        .env("WARDEN_NO_LANDLOCK", "1")
        .pid_file()
        .spawn();
    let init = s.initialize().await;
    assert_eq!(
        init.pointer("/error/data/code").and_then(|c| c.as_str()),
        Some("W-SANDBOX-UNAVAILABLE"),
        "{init}"
    );
    let pids = s.dir.path().join("pids");
    assert!(!pids.exists(), "the server never ran unsandboxed");
}

/// A `bwrap` that fails as Ubuntu's AppArmor makes it fail (the bridge's debug build takes
/// it from `WARDEN_TEST_BWRAP`; a release build looks only in the system's folders), so that
/// Landlock confines the server (network.rs too).
pub(crate) fn refused_bwrap() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt as _;
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("bwrap");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

#[tokio::test]
async fn without_namespaces_or_landlock_the_refusal_names_the_fix() {
    let w = World::new();
    let bin = refused_bwrap();
    let mut s = bridge()
        .config("[defaults]\nsandbox = \"on\"\n")
        .env("HOME", &w.home().to_string_lossy())
        .env(
            "WARDEN_TEST_BWRAP",
            &bin.path().join("bwrap").to_string_lossy(),
        )
        .env("WARDEN_NO_LANDLOCK", "1")
        .spawn();
    let init = s.initialize().await;
    assert_eq!(
        init.pointer("/error/data/code").and_then(|c| c.as_str()),
        Some("W-SANDBOX-USERNS-DENIED"),
        "{init}"
    );
}

/// Where bubblewrap may not create namespaces, Landlock confines the server: reads, writes
/// and TCP as configured, reported as degraded.
#[tokio::test]
async fn landlock_confines_the_server_where_bubblewrap_cannot() {
    let w = World::new();
    let bin = refused_bwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let mut s = bridge()
        .config(&grants(&w, ""))
        .env("HOME", &w.home().to_string_lossy())
        .env(
            "WARDEN_TEST_BWRAP",
            &bin.path().join("bwrap").to_string_lossy(),
        )
        .spawn();
    let init = s.initialize().await;
    assert!(init.get("result").is_some(), "{init}");
    let ran = s.wait_for_events("sandbox", 1).await;
    assert_eq!(ran[0]["detail"], "landlock", "the sandbox that ran");
    let said = echo(&mut s, json!({"read": w.path(".ssh/id_ed25519")})).await;
    assert!(
        said.starts_with("error:") && !said.contains("PRIVATE"),
        "{said}"
    );
    assert_eq!(
        echo(&mut s, json!({"read": w.path("readable.txt")})).await,
        "PUBLIC-22"
    );
    let outside = w.path("outside.txt");
    assert!(
        echo(&mut s, json!({"write": outside, "text": "x"}))
            .await
            .starts_with("error:")
    );
    assert!(!Path::new(&outside).exists());
    assert_eq!(
        echo(&mut s, json!({"write": w.path("notes/l.txt"), "text": "k"})).await,
        "written"
    );
    assert!(
        echo(&mut s, json!({"connect": addr}))
            .await
            .starts_with("error:")
    );
    s.close().await;
    let degraded = s
        .events()
        .into_iter()
        .find(|e| e["kind"] == "sandbox_degraded")
        .expect("a sandbox_degraded event");
    assert_eq!(degraded["code"], "W-SANDBOX-DEGRADED");
}

#[tokio::test]
async fn what_the_sandbox_refused_is_reported_once_for_the_window_to_allow() {
    let w = World::new();
    let Some(mut s) = w.session(&grants(&w, "")).await else {
        return;
    };
    let outside = w.path("outside.txt");
    for _ in 0..2 {
        echo(&mut s, json!({"write": outside, "text": "x"})).await;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    echo(
        &mut s,
        json!({"connect": listener.local_addr().unwrap().to_string()}),
    )
    .await;
    s.close().await;
    let denied: Vec<String> = s
        .events()
        .iter()
        .filter(|e| e["kind"] == "sandbox_denied")
        .map(|e| e["detail"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(denied, [outside, "network".to_owned()]);
}

/// A program kept under /tmp (a venv, a download) still runs: its folder stays readable under
/// the sandbox's private /tmp.
#[tokio::test]
async fn a_server_under_tmp_still_runs_in_the_sandbox() {
    if require_tool("bwrap").is_none() {
        return;
    }
    let w = World::new();
    let tmp = tempfile::tempdir_in("/tmp").unwrap();
    let copy = tmp.path().join("mcp-fake-server");
    std::fs::copy(crate::common::FAKE, &copy).unwrap();
    let mut s = bridge()
        .config(&grants(&w, ""))
        .env("HOME", &w.home().to_string_lossy())
        .command(&[&copy.to_string_lossy()])
        .spawn();
    let init = s.initialize().await;
    assert!(init.get("result").is_some(), "{init}");
    s.close().await;
}
