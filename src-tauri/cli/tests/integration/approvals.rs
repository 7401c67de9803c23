//! Tool policy through a real bridge: tools denied by annotation, and calls held until they
//! are allowed (`tools_ask`). The fake server records every call it receives (`--record`), so
//! the tests see that a call not allowed never reached it.

use serde_json::{Value, json};

use crate::common::*;

fn names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The tools the fake server received calls of, in order.
fn received(record: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn deny_by_annotation_hides_and_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("calls");
    let mut s = bridge()
        .fake("--record")
        .fake(record.to_str().unwrap())
        .set("tools_deny=[\"@write\"]")
        .spawn();
    s.initialize().await;
    // `echo` and `sleep` are read-only; every other tool of the fake server says nothing, so
    // counts as a write.
    assert_eq!(
        names(&s.request("tools/list", json!({})).await),
        ["echo", "sleep"]
    );
    let refused = s.call("hang", json!({})).await;
    assert_eq!(
        (
            error_kind(&refused),
            refused["error"]["data"]["code"].as_str()
        ),
        ("tool_denied", Some("W-TOOL-DENIED")),
        "{refused}"
    );
    let msg = refused["error"]["message"].as_str().unwrap();
    assert!(msg.contains("tools_deny has \"@write\""), "{msg}");
    assert_eq!(text_of(&s.call("echo", json!({"text": "hi"})).await), "hi");
    assert!(s.close().await.success());
    assert_eq!(
        received(&record),
        ["echo"],
        "the denied call never reached the server"
    );
    assert_eq!(s.events_of("tool_denied").len(), 1);
}
