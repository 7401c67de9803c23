//! config.toml edits reach running bridges.

use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::json;

#[tokio::test]
async fn a_lowered_idle_timeout_applies_to_the_next_request() {
    let mut s = bridge()
        .config("[defaults]\nidle_timeout_ms = 60000\n")
        .spawn();
    s.initialize().await;
    s.write_config("[defaults]\nidle_timeout_ms = 60000\n[servers.fake]\nidle_timeout_ms = 400\n");
    s.wait_for_events("config_reloaded", 1).await;
    let start = Instant::now();
    let r = s.call("hang", json!({})).await;
    assert_eq!(error_kind(&r), "timeout");
    assert_eq!(r["error"]["data"]["limit_ms"], 400);
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn an_invalid_edit_is_refused_and_the_last_good_config_stays() {
    let mut s = bridge()
        .config("[defaults]\nidle_timeout_ms = 500\n")
        .spawn();
    s.initialize().await;
    s.write_config("[defaults]\nidle_timeout_ms = 5\n");
    let refused = s.wait_for_events("config_rejected", 1).await;
    assert!(
        refused[0]["detail"]
            .as_str()
            .unwrap()
            .contains("idle_timeout_ms"),
        "{refused:?}"
    );
    assert_eq!(refused[0]["code"], "W-CONFIG-INVALID", "{refused:?}");
    s.write_config("[defaults\nbroken");
    s.wait_for_events("config_rejected", 2).await;
    let r = s.call("hang", json!({})).await;
    assert_eq!(
        r["error"]["data"]["limit_ms"], 500,
        "the last good value stays: {r}"
    );
    assert!(s.stderr_text().contains("config change refused"));
}

#[tokio::test]
async fn force_fallback_switches_a_live_session_both_ways() {
    let tree = tempfile::tempdir().unwrap();
    std::fs::write(tree.path().join("a.txt"), "needle\n").unwrap();
    let roots = format!("fallback_roots = [{:?}]\n", tree.path().to_str().unwrap());
    let mut s = bridge().config(&format!("[defaults]\n{roots}")).spawn();
    s.initialize().await;
    let names = |v: &serde_json::Value| v.to_string();
    assert!(names(&s.request("tools/list", json!({})).await).contains("\"echo\""));

    s.write_config(&format!("[defaults]\n{roots}force_fallback = true\n"));
    let (note, _) = s.recv_until(|v| v["method"].is_string()).await;
    assert_eq!(note["method"], "notifications/tools/list_changed");
    let tools = s.request("tools/list", json!({})).await;
    assert!(names(&tools).contains("\"advanced-search\"") && !names(&tools).contains("\"echo\""));
    let r = s
        .call(
            "count-matches",
            json!({"pattern": "needle", "path": tree.path()}),
        )
        .await;
    assert!(text_of(&r).contains('1'), "{r}");

    s.write_config(&format!("[defaults]\n{roots}force_fallback = false\n"));
    let (note, _) = s.recv_until(|v| v["method"].is_string()).await;
    assert_eq!(note["method"], "notifications/tools/list_changed");
    assert!(names(&s.request("tools/list", json!({})).await).contains("\"echo\""));
}

fn debug_lines(s: &Session) -> Vec<serde_json::Value> {
    let path = s.state_dir().join("logs").join(own_name(".debug.jsonl"));
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn the_debug_flag_file_turns_full_logging_on_and_off_with_secrets_redacted() {
    let mut s = bridge().config("[defaults]\n").spawn();
    s.initialize().await;
    s.call("echo", json!({"text": "before"})).await;
    let flag = s.dir.path().join("fake").join("debug");
    std::fs::create_dir_all(flag.parent().unwrap()).unwrap();
    std::fs::write(&flag, "").unwrap();
    s.wait_for_events("debug", 1).await;
    let secret = json!({"text": "visible", "api_key": "sk-live-123", "headers": {"Authorization": "Bearer tok-456"}});
    s.call("echo", secret).await;
    // Within a second the whole messages are in the debug log, redacted.
    let start = Instant::now();
    let logged = loop {
        let lines = debug_lines(&s);
        if lines.iter().any(|l| l["from"] == "server") {
            break lines;
        }
        assert!(
            start.elapsed() < Duration::from_secs(1),
            "nothing logged within a second"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let text = serde_json::to_string(&logged).unwrap();
    assert!(text.contains("visible"), "{text}");
    assert!(
        !text.contains("sk-live-123") && !text.contains("tok-456"),
        "secret leaked: {text}"
    );
    assert!(
        !text.contains("before"),
        "logging started before it was turned on"
    );
    let client = logged.iter().find(|l| l["from"] == "client").unwrap();
    assert_eq!(
        client["message"]["params"]["arguments"]["api_key"],
        "[redacted]"
    );

    std::fs::remove_file(&flag).unwrap();
    s.wait_for_events("debug", 2).await;
    let count = debug_lines(&s).len();
    s.call("echo", json!({"text": "after"})).await;
    assert!(s.close().await.success());
    assert_eq!(
        debug_lines(&s).len(),
        count,
        "still logging after it was turned off"
    );
}
