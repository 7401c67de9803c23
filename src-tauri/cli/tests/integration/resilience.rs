//! Restart, safe retries and the circuit breaker, with faults injected into the fake server.

use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{Value, json};

fn server_pid(s: &Session) -> u32 {
    read_pids(&s.dir.path().join("pids"))[0]
}

fn counted(b: Builder, dir_flag: &str) -> Builder {
    b.fake("--start-count").fake(dir_flag)
}

#[tokio::test]
async fn kill_9_mid_request_fails_unsafe_calls_retries_safe_ones_and_goes_on() {
    let mut s = bridge().pid_file().set("idle_timeout_ms=20000").spawn();
    s.initialize().await;
    s.request("tools/list", json!({})).await; // teaches the bridge which tools are read-only
    let pid = server_pid(&s);
    let hang = s.start_call("hang", json!({}), None).await;
    let sleep = s.start_call("sleep", json!({"ms": 1500}), None).await;
    // Both calls are with the server (it echoes nothing until it answers): kill it now.
    let ping = s.request("ping", json!({})).await;
    assert!(ping.get("result").is_some());
    let start = Instant::now();
    signal(pid, "KILL");

    let (err, _) = s.response(&hang).await;
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "error took {:?}",
        start.elapsed()
    );
    assert_eq!(error_kind(&err), "server_exited");
    assert_eq!(
        err["error"]["data"]["exit"],
        "was killed by signal 9 (SIGKILL)"
    );
    let msg = err["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("did not re-send") && msg.contains("idempotent_tools"),
        "{msg}"
    );

    // `sleep` is read-only: re-sent to the restarted server, answered once.
    let (ok, _) = s.response(&sleep).await;
    assert_eq!(text_of(&ok), "slept", "{ok}");
    // The client never initialized again: the bridge replayed the handshake.
    let r = s.call("echo", json!({"text": "same session"})).await;
    assert_eq!(text_of(&r), "same session");
    assert_ne!(server_pid(&s), pid);
    assert!(s.close().await.success());

    let events = s.events();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["kind"].as_str()).collect();
    for want in ["server_exit", "retry", "restart", "replayed"] {
        assert!(kinds.contains(&want), "no {want} event in {kinds:?}");
    }
    let sleeps = events
        .iter()
        .filter(|e| e["tool"] == "sleep" && e["outcome"] == "ok")
        .count();
    assert_eq!(sleeps, 1, "the retried call is answered exactly once");
}

#[tokio::test]
async fn a_crash_loop_opens_the_breaker_and_a_trial_closes_it() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let mut s = bridge()
        .fake("--start-count")
        .fake(starts.to_str().unwrap())
        .fake("--crash-from")
        .fake("2")
        .fake("--crash-until")
        .fake("4")
        .set("circuit_failures=3")
        .set("backoff_ms=20")
        .set("circuit_cooldown_ms=1500")
        .spawn();
    // Start 1 works; then the server crashes and starts 2-3 crash at once, so the breaker
    // opens. (A server that never answered the first initialize is a start failure instead:
    // spawn.rs.) A request now is refused at once, with the reason.
    s.initialize().await;
    s.call("crash", json!({"code": 1})).await;
    s.wait_for_events("circuit", 1).await;
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    let r = s.request("initialize", params.clone()).await;
    assert_eq!(error_kind(&r), "circuit_open", "{r}");
    assert!(r.to_string().contains("crashes on purpose"), "{r}");
    assert_eq!(r["error"]["code"], -32000);
    let retry_after = r["error"]["data"]["retry_after_ms"].as_u64().unwrap();
    assert!(retry_after > 0 && retry_after <= 1500);
    // While open, errors are immediate.
    let start = Instant::now();
    let r = s.request("tools/list", json!({})).await;
    assert_eq!(error_kind(&r), "circuit_open");
    assert!(start.elapsed() < Duration::from_millis(500));

    // After the cool-down one trial starts the server: start 4 crashes during the replayed
    // handshake, so the trial fails and the breaker reopens, refusing the trial request with
    // the reason.
    let start = Instant::now();
    loop {
        let r = s.request("tools/list", json!({})).await;
        assert_eq!(error_kind(&r), "circuit_open", "{r}");
        if r.to_string().contains("start #4 crashes") {
            break;
        }
        assert!(
            start.elapsed() < SOON,
            "the server was not tried again: {r}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let r = s.request("tools/list", json!({})).await;
    assert_eq!(error_kind(&r), "circuit_open", "{r}");

    // Start 5 works: the trial succeeds and the breaker closes.
    let r = s.request_past_breaker("initialize", params).await;
    assert_eq!(r["result"]["serverInfo"]["name"], "mcp-fake-server", "{r}");
    let r = s.call("echo", json!({"text": "closed"})).await;
    assert_eq!(text_of(&r), "closed");
    assert_eq!(std::fs::read_to_string(&starts).unwrap().trim(), "5");
    assert!(s.close().await.success());
    let circuit: Vec<String> = s
        .events_of("circuit")
        .iter()
        .map(|e| {
            e["detail"]
                .as_str()
                .unwrap_or("")
                .split(':')
                .next()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    assert_eq!(
        circuit,
        ["open", "half_open", "open", "half_open", "closed"]
    );
}

#[tokio::test]
async fn sigstop_times_out_then_recovers_after_sigcont() {
    let mut s = bridge().pid_file().set("idle_timeout_ms=500").spawn();
    s.initialize().await;
    let pid = server_pid(&s);
    signal(pid, "STOP");
    let r = s.call("echo", json!({"text": "frozen"})).await;
    assert_eq!(error_kind(&r), "timeout");
    signal(pid, "CONT");
    let r = s.call("echo", json!({"text": "thawed"})).await;
    assert_eq!(text_of(&r), "thawed");
    assert_eq!(server_pid(&s), pid, "no restart was needed");
}

#[tokio::test]
async fn a_stuck_server_is_restarted_once_the_breaker_opens() {
    let mut s = bridge()
        .pid_file()
        .set("idle_timeout_ms=300")
        .set("circuit_failures=2")
        .set("circuit_cooldown_ms=300")
        .spawn();
    s.initialize().await;
    let pid = server_pid(&s);
    signal(pid, "STOP");
    for _ in 0..2 {
        let r = s.call("echo", json!({"text": "x"})).await;
        assert_eq!(error_kind(&r), "timeout");
    }
    // Two timeouts in a row: the breaker opened and the stuck server was killed.
    let r = s.call("echo", json!({"text": "x"})).await;
    assert_eq!(error_kind(&r), "circuit_open", "{r}");
    let echo = json!({"name": "echo", "arguments": {"text": "fresh server"}});
    let r = s.request_past_breaker("tools/call", echo).await;
    assert_eq!(text_of(&r), "fresh server", "{r}");
    assert_ne!(server_pid(&s), pid);
    assert!(!alive(pid), "the stuck server was not stopped");
}

#[tokio::test]
async fn ids_never_collide_with_the_bridge_replay() {
    let mut s = bridge().pid_file().spawn();
    s.initialize().await;
    s.request("tools/list", json!({})).await; // `echo` is read-only: safe to re-send
    let pid = server_pid(&s);
    signal(pid, "KILL");
    // Right away, while the bridge restarts and replays with its own ids, the client uses
    // 0, "0" and a string id.
    for id in [json!(0), json!("0"), json!("__client/1")] {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": id.to_string()}}});
        s.send(&call).await;
    }
    for id in [json!(0), json!("0"), json!("__client/1")] {
        let (r, _) = s.response(&id).await;
        assert_eq!(text_of(&r), id.to_string(), "{r}");
    }
}

#[tokio::test]
async fn a_changed_tool_list_after_restart_is_announced() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let mut s = counted(
        bridge().pid_file().fake("--tools-by-start"),
        starts.to_str().unwrap(),
    )
    .spawn();
    s.initialize().await;
    let tools = s.request("tools/list", json!({})).await;
    assert!(tools.to_string().contains("\"v1\""));
    signal(server_pid(&s), "KILL");
    let (note, _) = s.recv_until(|v| v["method"].is_string()).await;
    assert_eq!(note["method"], "notifications/tools/list_changed");
    let tools = s.request("tools/list", json!({})).await;
    assert!(tools.to_string().contains("\"v2\""), "{tools}");
}

#[tokio::test]
async fn a_session_without_initialize_restarts_without_replay() {
    let mut s = bridge().pid_file().spawn();
    let r = s.request("tools/list", json!({})).await;
    assert!(r["result"]["tools"].is_array());
    let pid = server_pid(&s);
    signal(pid, "KILL");
    let r = s.request("tools/list", json!({})).await;
    assert!(r["result"]["tools"].is_array(), "{r}");
    assert!(s.close().await.success());
    assert!(!s.events().iter().any(|e| e["kind"] == "replayed"));
    let _ = Value::Null;
}

#[tokio::test]
async fn guardrails_clamp_arguments_and_cut_oversized_results() {
    let mut s = bridge()
        .set("clamp={ sleep = { ms = 10 } }")
        .set("result_soft_cap_bytes=100000")
        .spawn();
    s.initialize().await;
    let start = Instant::now();
    let r = s.call("sleep", json!({"ms": 60000})).await;
    assert_eq!(text_of(&r), "slept");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "the call was not clamped"
    );

    let r = s.call("big", json!({"bytes": 3_000_000})).await;
    let text = text_of(&r);
    assert!(text.len() < 101_000, "{}", text.len());
    assert!(
        text.contains("[Warden cut this result at 100000 of 3000000 bytes"),
        "{}",
        &text[text.len() - 300..]
    );
    assert!(s.close().await.success());
    let events = s.events();
    assert!(
        events
            .iter()
            .any(|e| e["kind"] == "clamped" && e["detail"] == "ms 60000 lowered to 10"),
        "{events:?}"
    );
    assert!(events.iter().any(|e| e["kind"] == "truncated"));
}

fn search_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\nneedle one\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "needle two\nomega\n").unwrap();
    dir
}

fn tool_names(list: &Value) -> Vec<String> {
    let mut names: Vec<String> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn force_fallback_serves_ripgrep_tools_from_the_start() {
    let tree = search_tree();
    let root = tree.path().to_str().unwrap();
    let mut s = bridge()
        .set("force_fallback=true")
        .set(&format!("fallback_roots=[{root:?}]"))
        .spawn();
    s.initialize().await;
    let list = s.request("tools/list", json!({})).await;
    assert_eq!(
        tool_names(&list),
        [
            "advanced-search",
            "count-matches",
            "list-file-types",
            "list-files",
            "search"
        ]
    );
    let r = s
        .call("search", json!({"pattern": "needle", "path": root}))
        .await;
    let text = text_of(&r);
    assert!(
        text.contains("needle one") && text.contains("needle two"),
        "{text}"
    );
    let r = s
        .call("search", json!({"pattern": "x", "path": "/etc"}))
        .await;
    assert_eq!(r["result"]["isError"], true, "outside the roots: {r}");
}

#[tokio::test]
async fn an_open_breaker_falls_back_to_ripgrep_and_a_later_trial_goes_back() {
    let tree = search_tree();
    let root = tree.path().to_str().unwrap();
    let starts = tree.path().join("starts");
    let mut s = counted(bridge(), starts.to_str().unwrap())
        .fake("--crash-until")
        .fake("3")
        .set("fallback=rg")
        .set(&format!("fallback_roots=[{root:?}]"))
        .set("circuit_failures=2")
        .set("backoff_ms=10")
        .set("circuit_cooldown_ms=700")
        .spawn();
    // Starts 1 and 2 crash: the breaker opens and local ripgrep answers instead.
    s.initialize().await;
    let list = s.request("tools/list", json!({})).await;
    assert!(tool_names(&list).contains(&"search".to_owned()), "{list}");
    let r = s
        .call("search", json!({"pattern": "needle", "path": root}))
        .await;
    assert!(text_of(&r).contains("needle one"), "{r}");

    // After the cool-down a request tries the server again: start 3 crashes, so the
    // fallback comes back and answers it. The cool-down ends without an event: search until
    // the server was tried (the start count says so), every answer coming from ripgrep.
    let started = || std::fs::read_to_string(&starts).unwrap().trim().to_owned();
    let start = Instant::now();
    loop {
        let r = s
            .call("search", json!({"pattern": "needle", "path": root}))
            .await;
        assert!(text_of(&r).contains("needle two"), "{r}");
        if started() == "3" {
            break;
        }
        assert!(start.elapsed() < SOON, "the server was not tried again");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // After the next cool-down start 4 works: the real server is back.
    let start = Instant::now();
    loop {
        let names = tool_names(&s.request("tools/list", json!({})).await);
        if names.contains(&"echo".to_owned()) {
            break;
        }
        assert!(names.contains(&"search".to_owned()), "{names:?}");
        assert!(start.elapsed() < SOON, "the real server did not come back");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(std::fs::read_to_string(&starts).unwrap().trim(), "4");
    assert!(s.close().await.success());
    let fallback: Vec<String> = s
        .events_of("fallback")
        .iter()
        .map(|e| {
            e["detail"]
                .as_str()
                .unwrap()
                .split(':')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(fallback, ["on", "off", "on", "off"]);
}
