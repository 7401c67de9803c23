//! config.toml edits reach running bridges.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::*;
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
