//! Tool filters and pins through a real bridge: a server whose tool description changes on
//! restart (`--rug-pull`) is caught, and `warden tools` shows and approves the change while
//! the session runs.

use std::process::Command;

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

fn warden_tools(s: &Session, args: &[&str]) -> (bool, String) {
    let out = Command::new(WARDEN)
        .arg("tools")
        .args(args)
        .env("WARDEN_STATE_DIR", s.state_dir())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[tokio::test]
async fn a_changed_description_is_held_back_until_warden_tools_approve() {
    let starts = tempfile::tempdir().unwrap();
    let starts = starts.path().join("starts");
    let mut s = bridge()
        .pid_file()
        .fake("--rug-pull")
        .fake("--start-count")
        .fake(starts.to_str().unwrap())
        .set("pin_tools=\"block\"")
        .spawn();
    s.initialize().await;
    assert!(
        names(&s.request("tools/list", json!({})).await).contains(&"echo".to_owned()),
        "first sight: pinned and shown"
    );
    // The bridge saves the pins off the relay: the file follows the answer.
    let pins = s.state_dir().join("pins").join(own_name(".json"));
    poll_until("the pins are saved", || pins.exists()).await;
    assert!(
        warden_tools(&s, &["list", "fake"])
            .1
            .contains("approved  echo")
    );

    signal(read_pids(&s.dir.path().join("pids"))[0], "KILL");
    let (note, _) = s.recv_until(|v| v["method"].is_string()).await;
    assert_eq!(note["method"], "notifications/tools/list_changed");
    let tools = names(&s.request("tools/list", json!({})).await);
    assert!(
        !tools.contains(&"echo".to_owned()) && tools.contains(&"big".to_owned()),
        "{tools:?}"
    );
    let refused = s.call("echo", json!({"text": "hi"})).await;
    assert_eq!(
        (
            error_kind(&refused),
            refused["error"]["data"]["code"].as_str()
        ),
        ("tool_quarantined", Some("W-TOOL-QUARANTINED")),
        "{refused}"
    );

    let (ok, diff) = warden_tools(&s, &["diff", "fake"]);
    assert!(
        ok && diff.contains("{+Also+}") && diff.contains("{+audit@example.com"),
        "{diff}"
    );
    let (ok, text) = warden_tools(&s, &["approve", "fake", "echo"]);
    assert!(ok, "{text}");
    let (note, _) = s.recv_until(|v| v["method"].is_string()).await;
    assert_eq!(
        note["method"], "notifications/tools/list_changed",
        "the running session releases it"
    );
    assert!(names(&s.request("tools/list", json!({})).await).contains(&"echo".to_owned()));
    assert_eq!(text_of(&s.call("echo", json!({"text": "hi"})).await), "hi");
    assert!(s.close().await.success());
    let changed = s.events_of("tool_changed");
    assert_eq!(changed.len(), 1, "{changed:?}");
    assert_eq!(
        (changed[0]["tool"].as_str(), changed[0]["code"].as_str()),
        (Some("echo"), Some("W-TOOL-CHANGED"))
    );
}

#[tokio::test]
async fn a_corrupt_pin_file_is_reported_left_alone_and_checks_nothing() {
    let mut s = bridge()
        .state_file("pins/fake.json", b"{\"pinned\": [")
        .spawn();
    let pins = s.state_dir().join("pins").join(own_name(".json"));
    s.initialize().await;
    assert!(names(&s.request("tools/list", json!({})).await).contains(&"echo".to_owned()));
    let (ok, text) = warden_tools(&s, &["approve", "fake"]);
    assert!(
        !ok && text.contains(&own_name(".json")) && text.contains("delete it"),
        "{text}"
    );
    assert!(s.close().await.success());
    assert_eq!(std::fs::read(&pins).unwrap(), b"{\"pinned\": [");
    let invalid = s.events_of("pins_invalid");
    assert_eq!(invalid.len(), 1, "{invalid:?}");
    assert_eq!(invalid[0]["code"], "W-PINS-INVALID");
}

#[tokio::test]
async fn tools_of_a_server_never_pinned_say_how_they_get_pinned() {
    let s = bridge().spawn();
    let (ok, text) = warden_tools(&s, &["list", "nobody"]);
    assert!(
        !ok && text.contains("no tools of server `nobody` are pinned yet"),
        "{text}"
    );
}
