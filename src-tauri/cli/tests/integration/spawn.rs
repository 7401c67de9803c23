//! Servers that never start: the client's `initialize` is answered with why (`spawn_failed`,
//! or `startup_timeout`, with a stable code, the command, the cause, the stderr tail and the
//! fix), the event log holds the `spawn_failed` line, and the bridge exits non-zero with a
//! one-line reason.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::*;
use crate::control::{accept, supervisor_for};
use warden_control::Message;

/// A shell script `name` in `dir` with `body`, executable.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Sends `initialize`, expects the start failure with `code` as its answer, the
/// `spawn_failed` line in the event log and a non-zero exit with a one-line reason. Returns
/// the error's `data`.
async fn refused(mut s: Session, kind: &str, code: &str) -> Value {
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "warden-tests", "version": "1"}});
    let r = s.request("initialize", params).await;
    assert_eq!(error_kind(&r), kind, "{r}");
    let data = r["error"]["data"].clone();
    assert_eq!(data["code"], code, "{r}");
    assert_eq!(data["server"], "fake", "{r}");
    for field in ["command", "cause", "fix"] {
        assert!(
            data[field].as_str().is_some_and(|v| !v.is_empty()),
            "{field}: {r}"
        );
    }
    let message = r["error"]["message"].as_str().unwrap();
    assert!(message.contains(code), "{message}");
    let status = s.wait().await;
    assert!(!status.success(), "{status:?}");
    let stderr = s.stderr_text();
    let reason = stderr
        .lines()
        .find(|l| l.starts_with("warden: "))
        .unwrap_or_else(|| panic!("no reason on stderr: {stderr}"));
    assert!(reason.contains(code), "{reason}");
    let events = s.events();
    let failed = events
        .iter()
        .find(|e| e["kind"] == "spawn_failed")
        .unwrap_or_else(|| panic!("no spawn_failed event: {events:?}"));
    assert_eq!(failed["code"], code, "{failed}");
    assert_eq!(failed["command"], data["command"], "{failed}");
    assert_eq!(failed["cause"], data["cause"], "{failed}");
    assert_eq!(failed["fix"], data["fix"], "{failed}");
    data
}

#[tokio::test]
async fn a_command_not_on_path_is_named_with_the_path_searched_and_the_fix() {
    let s = bridge()
        .command(&["warden-test-no-such-server", "--stdio"])
        .spawn();
    let data = refused(s, "spawn_failed", "W-SPAWN-NOT-FOUND").await;
    assert_eq!(data["command"], "warden-test-no-such-server --stdio");
    let cause = data["cause"].as_str().unwrap();
    let path = std::env::var("PATH").unwrap();
    assert!(cause.contains(&path), "the PATH searched: {cause}");
    let fix = data["fix"].as_str().unwrap();
    assert!(
        fix.contains("absolute path") && fix.contains("command -v warden-test-no-such-server"),
        "{fix}"
    );
}

#[tokio::test]
async fn invalid_settings_answer_initialize_with_the_config_error_and_exit_2() {
    let s = bridge()
        .config("[servers.fake]\nidle_timeout_ms = 3\n")
        .spawn();
    let data = refused(s, "spawn_failed", "W-CONFIG-INVALID").await;
    let cause = data["cause"].as_str().unwrap();
    assert!(
        cause.contains("config.toml:2") && cause.contains("idle_timeout_ms"),
        "{cause}"
    );
}

#[tokio::test]
async fn a_missing_path_or_interpreter_is_not_found_with_its_own_fix() {
    let s = bridge().command(&["/no/such/dir/mcp-server"]).spawn();
    let data = refused(s, "spawn_failed", "W-SPAWN-NOT-FOUND").await;
    assert!(
        data["cause"]
            .as_str()
            .unwrap()
            .contains("`/no/such/dir/mcp-server` does not exist"),
        "{data}"
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.js");
    std::fs::write(&path, "#!/no/such/node\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let s = bridge().command(&[path.to_str().unwrap()]).spawn();
    let data = refused(s, "spawn_failed", "W-SPAWN-NOT-FOUND").await;
    assert!(
        data["cause"].as_str().unwrap().contains("interpreter"),
        "{data}"
    );
    assert!(data["fix"].as_str().unwrap().contains("#!"), "{data}");
}

#[tokio::test]
async fn a_file_that_is_not_executable_is_permission_denied() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.sh");
    std::fs::write(&path, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let s = bridge().command(&[path.to_str().unwrap()]).spawn();
    let data = refused(s, "spawn_failed", "W-SPAWN-PERMISSION-DENIED").await;
    assert!(data["fix"].as_str().unwrap().contains("chmod +x"), "{data}");
}

#[tokio::test]
async fn a_server_that_exits_at_once_shows_its_status_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let path = script(
        dir.path(),
        "needs-key.sh",
        "echo 'error: EXAMPLE_API_KEY is not set' >&2\nexit 3",
    );
    let s = bridge()
        .command(&[path.to_str().unwrap()])
        .set("backoff_ms=20")
        .spawn();
    let data = refused(s, "spawn_failed", "W-SPAWN-EXITED").await;
    let cause = data["cause"].as_str().unwrap();
    assert!(
        cause.contains("exited with status 3") && cause.contains("EXAMPLE_API_KEY is not set"),
        "{cause}"
    );
    assert!(
        data["stderr_tail"]
            .as_str()
            .unwrap()
            .contains("EXAMPLE_API_KEY is not set"),
        "{data}"
    );
}

#[tokio::test]
async fn a_server_killed_by_a_signal_says_which() {
    let dir = tempfile::tempdir().unwrap();
    let path = script(dir.path(), "killed.sh", "kill -KILL $$");
    let s = bridge()
        .command(&[path.to_str().unwrap()])
        .set("backoff_ms=20")
        .spawn();
    let data = refused(s, "spawn_failed", "W-SPAWN-SIGNAL").await;
    assert!(
        data["cause"].as_str().unwrap().contains("SIGKILL"),
        "{data}"
    );
}

#[tokio::test]
async fn a_crash_loop_at_start_stops_the_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let s = bridge()
        .fake("--start-count")
        .fake(starts.to_str().unwrap())
        .fake("--crash-until")
        .fake("1000")
        .set("circuit_failures=3")
        .set("backoff_ms=20")
        .spawn();
    // The bridge gives up before the client says anything; the initialize is answered later.
    s.wait_for_events("spawn_failed", 1).await;
    let data = refused(s, "spawn_failed", "W-SPAWN-CRASH-LOOP").await;
    assert!(
        data["cause"].as_str().unwrap().contains("3 starts"),
        "{data}"
    );
    assert!(
        data["stderr_tail"]
            .as_str()
            .unwrap()
            .contains("crashes on purpose"),
        "{data}"
    );
    assert_eq!(std::fs::read_to_string(&starts).unwrap().trim(), "3");
}

#[tokio::test]
async fn no_answer_within_startup_timeout_has_its_own_code() {
    let s = bridge()
        .fake("--slow-start-ms")
        .fake("30000")
        .set("startup_timeout_ms=500")
        .spawn();
    let data = refused(s, "startup_timeout", "W-SPAWN-STARTUP-TIMEOUT").await;
    assert!(
        data["cause"]
            .as_str()
            .unwrap()
            .contains("startup_timeout_ms"),
        "{data}"
    );
}

#[tokio::test]
async fn a_server_writing_only_non_json_to_stdout_shows_the_first_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = script(
        dir.path(),
        "http.sh",
        "echo 'Server listening on http://localhost:8080'\nexec sleep 30",
    );
    let s = bridge()
        .command(&[path.to_str().unwrap()])
        .set("startup_timeout_ms=500")
        .spawn();
    let data = refused(s, "startup_timeout", "W-SPAWN-STDOUT-NOISE").await;
    assert!(
        data["cause"]
            .as_str()
            .unwrap()
            .contains("Server listening on http://localhost:8080"),
        "{data}"
    );
}

#[tokio::test]
async fn a_client_that_leaves_without_initialize_ends_the_bridge() {
    let mut s = bridge().command(&["warden-test-no-such-server"]).spawn();
    let status = s.close().await;
    assert!(!status.success(), "{status:?}");
    assert!(
        s.stderr_text().contains("W-SPAWN-NOT-FOUND"),
        "{}",
        s.stderr_text()
    );
    let events = s.events();
    assert!(
        events.iter().any(|e| e["kind"] == "spawn_failed"),
        "{events:?}"
    );
    // Nothing reached stdout but what the client asked for (nothing).
    assert!(s.recv_raw_within(SOON).await.is_none());
}

/// A supervisor that the bridge reaches only after the failure (its socket appears later) is
/// sent the `spawn_failed` event on connecting, before the session's end.
#[tokio::test]
async fn a_supervisor_hears_of_the_failure() {
    let mut s = bridge().command(&["warden-test-no-such-server"]).spawn();
    let (listener, _) = supervisor_for(&s).await;
    let mut sup = accept(&listener).await;
    let failed = sup
        .until(|m| match m {
            Message::Event { event, .. } if event.kind == "spawn_failed" => Some(event),
            _ => None,
        })
        .await;
    assert_eq!(failed.code.as_deref(), Some("W-SPAWN-NOT-FOUND"));
    assert_eq!(
        failed.command.as_deref(),
        Some("warden-test-no-such-server")
    );
    assert!(failed.fix.is_some() && failed.cause.is_some(), "{failed:?}");
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "warden-tests", "version": "1"}});
    let r = s.request("initialize", params).await;
    assert_eq!(r["error"]["data"]["code"], "W-SPAWN-NOT-FOUND", "{r}");
    sup.until(|m| match m {
        Message::Event { event, .. } if event.kind == "session_end" => Some(()),
        _ => None,
    })
    .await;
    assert!(!s.wait().await.success());
}
