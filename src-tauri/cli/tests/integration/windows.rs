//! Windows, as `scripts/cross.sh` runs it under Wine: the Windows `warden.exe` relays the
//! Windows `mcp-fake-server.exe`; `warden daemon` answers `warden status` over the named pipe
//! and lists the bridge's session; the server and its own child end when the client closes
//! the bridge and when the bridge is killed (`TerminateProcess`: the Job Object's last handle
//! closes with it); `sandbox = "on"` is refused, never run bare.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::process::Command;

use crate::common::{self, Session, WARDEN, all_gone, read_pids, text_of, wait_for_file};

/// How soon a server's tree must be gone after its bridge ends.
const GONE_WITHIN: Duration = Duration::from_secs(5);

#[tokio::test]
async fn windows_warden_exe_relays_a_windows_server() {
    let mut s = common::bridge().spawn();
    let init = s.initialize().await;
    assert!(init.get("result").is_some(), "{init}");
    let r = s.call("echo", json!({"text": "hello from Windows"})).await;
    assert_eq!(text_of(&r), "hello from Windows", "{r}");
    let status = s.close().await;
    assert!(status.success(), "{status:?}: {}", s.stderr_text());
}

/// A session whose server started a child of its own (`--grandchild`): both pids, running.
async fn session_with_a_tree() -> (Session, Vec<u32>) {
    let mut s = common::bridge().fake("--grandchild").pid_file().spawn();
    let init = s.initialize().await;
    assert!(init.get("result").is_some(), "{init}");
    let file = s.dir.path().join("pids");
    wait_for_file(&file).await;
    let pids = read_pids(&file);
    assert_eq!(pids.len(), 2, "the server and its child: {pids:?}");
    assert!(pids.iter().all(|&p| common::alive(p)), "both run: {pids:?}");
    (s, pids)
}

#[tokio::test]
async fn windows_the_servers_tree_ends_when_the_client_closes_the_bridge() {
    let (mut s, pids) = session_with_a_tree().await;
    s.close().await;
    assert!(
        all_gone(&pids, GONE_WITHIN).await.is_some(),
        "{pids:?} outlived their bridge by {GONE_WITHIN:?}; stderr:\n{}",
        s.stderr_text()
    );
}

#[tokio::test]
async fn windows_the_servers_tree_ends_when_the_bridge_is_killed() {
    let (mut s, pids) = session_with_a_tree().await;
    // TerminateProcess: the bridge runs no code of its own after it.
    s.child.start_kill().unwrap();
    s.wait().await;
    assert!(
        all_gone(&pids, GONE_WITHIN).await.is_some(),
        "{pids:?} outlived their killed bridge by {GONE_WITHIN:?}"
    );
}

#[tokio::test]
async fn windows_the_sandbox_is_refused_never_run_bare() {
    let mut s = common::bridge()
        .config("[defaults]\nsandbox = \"on\"\n")
        .pid_file()
        .spawn();
    let init = s.initialize().await;
    assert_eq!(
        init.pointer("/error/data/code").and_then(Value::as_str),
        Some("W-SANDBOX-UNAVAILABLE"),
        "{init}"
    );
    assert!(
        !s.dir.path().join("pids").exists(),
        "the server never ran unsandboxed"
    );
}

/// `warden ARGS` with the test's pipe, state and config.
async fn warden(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(WARDEN);
    cmd.args(args).stdin(Stdio::null()).kill_on_drop(true);
    apply(dir, &mut cmd);
    tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("warden did not end")
        .unwrap()
}

fn socket(dir: &Path) -> PathBuf {
    dir.join("run").join("control.sock")
}

fn apply(dir: &Path, cmd: &mut Command) {
    cmd.env("WARDEN_SOCKET", socket(dir))
        .env("WARDEN_STATE_DIR", dir.join("state"))
        .env("WARDEN_CONFIG", dir.join("config.toml"))
        .env("USERPROFILE", dir.join("home"))
        .env("APPDATA", dir.join("home").join("AppData").join("Roaming"))
        .env_remove("WARDEN_LOG");
}

/// Polls `warden status --json` until `pred` holds.
async fn wait_status(dir: &Path, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let out = warden(dir, &["status", "--json"]).await;
        let status = serde_json::from_slice::<Value>(&out.stdout).ok();
        if let Some(v) = &status
            && pred(v)
        {
            return v.clone();
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{what}: not within 30 s; last status: {status:?}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn windows_the_daemon_answers_status_over_the_pipe_and_lists_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut daemon = Command::new(WARDEN);
    daemon
        .arg("daemon")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    apply(dir.path(), &mut daemon);
    let mut daemon = daemon.spawn().unwrap();
    wait_status(dir.path(), "the daemon answers", |_| true).await;

    let mut s = common::bridge()
        .env("WARDEN_SOCKET", &socket(dir.path()).to_string_lossy())
        .spawn();
    s.initialize().await;
    let bridge_pid = s.child.id().unwrap();
    let status = wait_status(dir.path(), "the bridge's session is listed", |v| {
        v["sessions"].as_array().is_some_and(|l| {
            l.iter()
                .any(|s| s["server"] == "fake" && s["pid"] == bridge_pid)
        })
    })
    .await;
    assert!(
        status["servers"]
            .as_array()
            .is_some_and(|l| l.iter().any(|s| s["name"] == "fake")),
        "{status:#}"
    );
    let table = String::from_utf8(warden(dir.path(), &["status"]).await.stdout).unwrap();
    assert!(table.contains("fake"), "{table}");
    s.close().await;
    daemon.start_kill().unwrap();
    let _ = daemon.wait().await;
}
