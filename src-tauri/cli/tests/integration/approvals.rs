//! Tool policy through a real bridge: tools denied by annotation, and calls held until they
//! are allowed (`tools_ask`). The fake server records every call it receives (`--record`), so
//! the tests see that a call not allowed never reached it.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;
use crate::supervisor::Env;

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

/// A bridge with the config key `set` whose fake server records each call it gets in the file
/// returned (in a folder kept while the first value lives).
fn recorded(set: &str) -> (tempfile::TempDir, std::path::PathBuf, Session) {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("calls");
    let s = bridge()
        .fake("--record")
        .fake(record.to_str().unwrap())
        .set(set)
        .spawn();
    (dir, record, s)
}

#[tokio::test]
async fn deny_by_annotation_hides_and_refuses() {
    let (_dir, record, mut s) = recorded("tools_deny=[\"@write\"]");
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

/// The next call waiting for an answer that is not in `seen` (which it joins).
async fn next_pending(env: &Env, seen: &mut Vec<String>) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let list = env.json(&["approvals", "--json"]).await;
        let new = list["pending"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| !seen.iter().any(|s| a["id"] == s.as_str()));
        if let Some(a) = new {
            seen.push(a["id"].as_str().unwrap().to_owned());
            return a.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no new pending approval: {list:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn warden_ok(env: &Env, args: &[&str]) -> String {
    let out = env.warden(args).await;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "warden {args:?}: {text}");
    text
}

#[tokio::test]
async fn ask_holds_the_call_until_warden_approvals_allow_and_deny_and_timeout_never_reach_the_server()
 {
    let env = Env::new();
    let record = env.state().join("calls");
    std::fs::create_dir_all(env.state()).unwrap();
    let daemon = env.daemon(&[]).await;
    let mut b = env.bridge(
        "fake",
        &["tools_ask=[\"@destructive\"]", "ask_timeout_ms=3000"],
        &["--record", record.to_str().unwrap()],
    );
    b.initialize().await;
    // Asked tools stay listed.
    let tools = names(&b.request("tools/list", json!({})).await);
    assert!(tools.contains(&"big".to_owned()), "{tools:?}");
    // A read-only tool runs without a question.
    let echo = b
        .request(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        )
        .await;
    assert_eq!(text_of(&echo), "hi");

    // Held until `warden approvals allow`.
    let asked = std::time::Instant::now();
    let id = b
        .start(
            "tools/call",
            json!({"name": "big", "arguments": {"bytes": 10, "token": "sk-secret-value"}}),
        )
        .await;
    let mut seen = Vec::new();
    let held = next_pending(&env, &mut seen).await;
    let shown = asked.elapsed();
    eprintln!("the held call was listed {shown:?} after it was sent");
    assert_eq!(
        (held["server"].as_str(), held["tool"].as_str()),
        (Some("fake"), Some("big"))
    );
    // The contract's shape: `{"pending": [{"id", "server", "tool", "arguments", "client",
    // "age_ms"}]}`, the arguments as an object with secrets redacted.
    let mut keys: Vec<&str> = held
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["age_ms", "arguments", "client", "id", "server", "tool"],
        "{held}"
    );
    assert_eq!(held["client"], "warden-tests 1", "{held}");
    let args = &held["arguments"];
    assert!(
        args["bytes"] == 10 && !args.to_string().contains("sk-secret-value"),
        "{args}"
    );
    assert_eq!(
        received(&record),
        ["echo"],
        "held: the server has not seen it"
    );
    let approval = held["id"].as_str().unwrap().to_owned();
    let text = warden_ok(&env, &["approvals", "allow", &approval]).await;
    assert!(text.contains("allowed"), "{text}");
    let answer = b.answer(id).await;
    assert!(answer.get("result").is_some(), "{answer}");
    assert_eq!(received(&record), ["echo", "big"]);
    let out = env.warden(&["approvals", "allow", &approval]).await;
    assert!(
        !out.status.success(),
        "an answered call cannot be answered again"
    );

    // Denied.
    let id = b
        .start(
            "tools/call",
            json!({"name": "big", "arguments": {"bytes": 10}}),
        )
        .await;
    let approval = next_pending(&env, &mut seen).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    warden_ok(&env, &["approvals", "deny", &approval]).await;
    let answer = b.answer(id).await;
    assert_eq!(error_kind(&answer), "tool_declined", "{answer}");
    assert_eq!(answer["error"]["data"]["code"], "W-TOOL-DECLINED");

    // No answer in time.
    let id = b
        .start(
            "tools/call",
            json!({"name": "big", "arguments": {"bytes": 10}}),
        )
        .await;
    let answer = b.answer(id).await;
    assert_eq!(error_kind(&answer), "tool_not_approved", "{answer}");
    assert_eq!(answer["error"]["data"]["code"], "W-TOOL-NOT-APPROVED");
    assert_eq!(
        received(&record),
        ["echo", "big"],
        "neither reached the server"
    );

    // Every ask and answer is in the history, and in the server's log.
    let history = env.json(&["history", "--server", "fake", "--json"]).await;
    let approvals: Vec<Value> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"].clone())
        .filter(|e| {
            e["kind"]
                .as_str()
                .is_some_and(|k| k.starts_with("approval_"))
        })
        .collect();
    let summary: Vec<(&str, Option<&str>)> = approvals
        .iter()
        .map(|e| (e["kind"].as_str().unwrap(), e["by"].as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            ("approval_asked", None),
            ("approval_given", Some("supervisor")),
            ("approval_asked", None),
            ("approval_declined", Some("supervisor")),
            ("approval_asked", None),
            ("approval_timeout", None),
        ],
        "{approvals:?}"
    );
    assert!(approvals.iter().all(|e| e["tool"] == "big"));
    assert_eq!(approvals[1]["always"], false);
    b.close().await;
    let log = std::fs::read_to_string(env.state().join("logs").join(own_name(".jsonl"))).unwrap();
    for kind in [
        "approval_asked",
        "approval_given",
        "approval_declined",
        "approval_timeout",
    ] {
        assert!(
            log.contains(&format!("\"kind\":\"{kind}\"")),
            "{kind} not in the log"
        );
    }
    daemon.stop().await;
}

#[tokio::test]
async fn always_stops_the_asking_until_the_definition_changes() {
    let env = Env::new();
    let record = env.state().join("calls");
    let starts = env.state().join("starts");
    std::fs::create_dir_all(env.state()).unwrap();
    let daemon = env.daemon(&[]).await;
    let mut b = env.bridge(
        "fake",
        &["tools_ask=[\"echo\"]"],
        &[
            "--record",
            record.to_str().unwrap(),
            "--rug-pull",
            "--start-count",
            starts.to_str().unwrap(),
        ],
    );
    b.initialize().await;
    b.request("tools/list", json!({})).await;
    let mut seen = Vec::new();
    let call = json!({"name": "echo", "arguments": {"text": "hi"}});
    let id = b.start("tools/call", call.clone()).await;
    let approval = next_pending(&env, &mut seen).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    warden_ok(&env, &["approvals", "allow", &approval, "--always"]).await;
    assert_eq!(text_of(&b.answer(id).await), "hi");
    // Not asked again.
    assert_eq!(text_of(&b.request("tools/call", call.clone()).await), "hi");
    assert_eq!(received(&record), ["echo", "echo"]);

    // The server restarts with another description of `echo`: asked again.
    warden_ok(&env, &["restart", "fake"]).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while std::fs::read_to_string(&starts).unwrap_or_default().trim() != "2" {
        assert!(std::time::Instant::now() < deadline, "no restart");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let listed = b.request("tools/list", json!({})).await;
    let echo = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "echo")
        .unwrap()
        .clone();
    assert!(
        echo["description"].as_str().unwrap().contains("audit@"),
        "{echo}"
    );
    let id = b.start("tools/call", call.clone()).await;
    let approval = next_pending(&env, &mut seen).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    warden_ok(&env, &["approvals", "allow", &approval, "--always"]).await;
    assert_eq!(text_of(&b.answer(id).await), "hi");
    assert_eq!(text_of(&b.request("tools/call", call.clone()).await), "hi");

    // Forgotten: asked again.
    let text = warden_ok(&env, &["approvals", "forget", "fake", "echo"]).await;
    assert!(text.contains("echo"), "{text}");
    // The bridge follows the pin file: a call soon waits again.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let id = b.start("tools/call", call.clone()).await;
        let answer = tokio::time::timeout(Duration::from_millis(500), b.answer(id)).await;
        match answer {
            Ok(answer) => assert_eq!(text_of(&answer), "hi"),
            Err(_) => {
                let approval = next_pending(&env, &mut seen).await["id"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                warden_ok(&env, &["approvals", "deny", &approval]).await;
                assert_eq!(error_kind(&b.answer(id).await), "tool_declined");
                break;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still allowed for good"
        );
    }
    let history = env
        .json(&["history", "--server", "fake", "--limit", "10000", "--json"])
        .await;
    let always: Vec<bool> = history
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"]["kind"] == "approval_given")
        .map(|e| e["event"]["always"].as_bool().unwrap())
        .collect();
    assert_eq!(
        always,
        [true, true],
        "{}",
        crate::supervisor::kinds(&history).join(" ")
    );
    b.close().await;
    daemon.stop().await;
}

#[tokio::test]
async fn a_client_with_elicitation_is_asked_and_its_accept_and_decline_both_work() {
    let (_dir, record, mut s) = recorded("tools_ask=[\"@destructive\"]");
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "warden-tests", "version": "1"}});
    s.request("initialize", params).await;
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    s.request("tools/list", json!({})).await;
    for (allow, answer) in [
        (
            true,
            json!({"action": "accept", "content": {"allow": true}}),
        ),
        (false, json!({"action": "decline"})),
    ] {
        let id = s
            .start_call("big", json!({"bytes": 10}), Some(json!("t1")))
            .await;
        let (ask, _) = s.recv_until(|v| v["method"] == "elicitation/create").await;
        let message = ask["params"]["message"].as_str().unwrap();
        assert!(
            message.contains("`fake`") && message.contains("`big`"),
            "{message}"
        );
        assert_eq!(
            ask["params"]["requestedSchema"]["properties"]["allow"]["type"],
            "boolean"
        );
        s.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": answer}))
            .await;
        let (reply, _) = s.response(&id).await;
        if allow {
            assert!(reply.get("result").is_some(), "{reply}");
        } else {
            assert_eq!(error_kind(&reply), "tool_declined", "{reply}");
        }
    }
    assert!(s.close().await.success());
    assert_eq!(
        received(&record),
        ["big"],
        "the declined call never reached the server"
    );
    let given = s.events_of("approval_given");
    assert_eq!((given.len(), given[0]["by"].as_str()), (1, Some("client")));
    assert_eq!(s.events_of("approval_declined").len(), 1);
    assert_eq!(s.events_of("approval_asked").len(), 2);
}

#[tokio::test]
async fn with_no_one_to_ask_an_ask_tool_is_not_approved_at_once() {
    let mut s = bridge().set("tools_ask=[\"big\"]").spawn();
    s.initialize().await;
    let reply = s.call("big", json!({"bytes": 10})).await;
    assert_eq!(error_kind(&reply), "tool_not_approved", "{reply}");
    let msg = reply["error"]["message"].as_str().unwrap();
    assert!(msg.contains("no one to ask"), "{msg}");
    assert!(s.close().await.success());
}

/// A client that calls before it lists the tools: the bridge lists them itself first, so a
/// read-only tool runs under `tools_allow = ["@readonly"]` (it was denied as an unknown tool,
/// which counts as destructive), and a tool that writes is still refused before the server
/// sees it.
#[tokio::test]
async fn a_call_before_any_listing_is_judged_by_the_servers_own_listing() {
    let (_dir, record, mut s) = recorded("tools_allow=[\"@readonly\"]");
    s.initialize().await;
    assert_eq!(
        text_of(&s.call("echo", json!({"text": "first"})).await),
        "first"
    );
    let refused = s.call("hang", json!({})).await;
    assert_eq!(error_kind(&refused), "tool_denied", "{refused}");
    assert!(s.close().await.success());
    assert_eq!(
        received(&record),
        ["echo"],
        "the write never reached the server"
    );
}
