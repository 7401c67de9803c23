//! The bridge's side doors, tried as a hostile server (and a careless client) would, through
//! the real `warden bridge`: an answer Warden must read that is too large to hold by default
//! (a 9 MB `tools/list`), a server's own question asked under the id of Warden's question
//! (`tools_ask` through the client's elicitation), a JSON-RPC batch from the client that holds
//! a denied call. The fake server records every call it receives (`--record`), so a test sees
//! that a call not allowed never reached it.

use serde_json::{Value, json};

use crate::common::*;

/// The tools the fake server received calls of, in order.
fn received(record: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| {
            panic!(
                "no tools: {}",
                &list.to_string()[..400.min(list.to_string().len())]
            )
        })
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Over the 1 MiB a line is streamed past the bridge from, a listing is still held and
/// checked: the denied tool is not listed, the padded one is.
#[tokio::test]
async fn a_tool_list_of_9_mb_is_checked_like_a_small_one() {
    let mut s = bridge()
        .fake("--pad-tools")
        .fake("9000000")
        .set("tools_deny=[\"crash\"]")
        .spawn();
    s.initialize().await;
    let list = s.request("tools/list", json!({})).await;
    let listed = names(&list);
    assert!(
        listed.contains(&"padded".to_owned()) && !listed.contains(&"crash".to_owned()),
        "{listed:?}"
    );
    assert!(s.close().await.success());
}

/// One over `max_list_bytes` is refused with `W-LIST-TOO-LARGE`, and the session goes on.
#[tokio::test]
async fn a_tool_list_over_max_list_bytes_is_refused_and_the_bridge_goes_on() {
    let mut s = bridge()
        .fake("--pad-tools")
        .fake("9000000")
        .set("max_list_bytes=4000000")
        .spawn();
    s.initialize().await;
    let refused = s.request("tools/list", json!({})).await;
    assert_eq!(
        (
            error_kind(&refused),
            refused["error"]["data"]["code"].as_str()
        ),
        ("list_too_large", Some("W-LIST-TOO-LARGE")),
        "{}",
        &refused.to_string()[..refused.to_string().len().min(600)]
    );
    let msg = refused["error"]["message"].as_str().unwrap();
    assert!(msg.contains("max_list_bytes"), "{msg}");
    assert_eq!(text_of(&s.call("echo", json!({"text": "on"})).await), "on");
    assert!(s.close().await.success());
}

/// A client that can be asked (elicitation), a recording fake server, calls of `big` asked.
async fn asked_through_the_client(record: &std::path::Path) -> Session {
    let mut s = bridge()
        .fake("--record")
        .fake(record.to_str().unwrap())
        .set("tools_ask=[\"big\"]")
        .set("ask_timeout_ms=2000")
        .spawn();
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "warden-tests", "version": "1"}});
    let init = s.request("initialize", params).await;
    assert!(init.get("result").is_some(), "{init}");
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    s
}

/// The answer to request `id`; an answer to `other` that comes first is kept in `kept`.
async fn answer_keeping(
    s: &mut Session,
    id: &Value,
    other: &Value,
    kept: &mut Option<Value>,
) -> Value {
    loop {
        let v = s.recv().await;
        if v.get("method").is_some() {
            continue;
        }
        if &v["id"] == id {
            return v;
        }
        if &v["id"] == other {
            *kept = Some(v);
        }
    }
}

/// The attack of issue 43: while a call waits for the user's yes, the server asks the client
/// its own question ("Enable dark mode?") under the id of Warden's question: the old
/// guessable `__warden/ask/1`, the real one (as if guessed), and one in the space the bridge
/// renames servers' requests into. The user's yes answers the server's question only: the
/// held call is not released, and never reaches the server.
#[tokio::test]
async fn a_servers_question_under_wardens_id_does_not_release_a_held_call() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("calls");
    let mut s = asked_through_the_client(&record).await;
    for forged in ["__warden/ask/1", "the real one", "__warden/s/1"] {
        let held = s.start_call("big", json!({"bytes": 10}), None).await;
        let (ask, _) = s.recv_until(|v| v["method"] == "elicitation/create").await;
        let warden_id = ask["id"].clone();
        let forged = match forged {
            "the real one" => warden_id.clone(),
            id => json!(id),
        };
        let question = s.start_call("elicit", json!({"id": forged}), None).await;
        let (theirs, _) = s
            .recv_until(|v| {
                v["method"] == "elicitation/create" && v["params"]["message"] == "Enable dark mode?"
            })
            .await;
        s.send(&json!({"jsonrpc": "2.0", "id": theirs["id"], "result": {"action": "accept", "content": {"allow": true}}}))
            .await;
        let mut kept = None;
        let outcome = answer_keeping(&mut s, &held, &question, &mut kept).await;
        // The held call was never allowed...
        assert_eq!(
            error_kind(&outcome),
            "tool_not_approved",
            "forged {forged}: {outcome}"
        );
        // ...and the server got the yes to its own question.
        let question = match kept {
            Some(answer) => answer,
            None => s.response(&question).await.0,
        };
        assert!(
            text_of(&question).contains("accept"),
            "forged {forged}: {question}"
        );
        assert_ne!(theirs["id"], warden_id, "{theirs}");
    }
    assert!(s.close().await.success());
    assert_eq!(
        received(&record),
        ["elicit", "elicit", "elicit"],
        "the held calls never reached the server"
    );
}

/// A batch holding a denied call: nothing of it reaches the server, and each request in it
/// gets `batch_refused`.
#[tokio::test]
async fn a_batch_holding_a_denied_call_never_reaches_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("calls");
    let mut s = bridge()
        .fake("--record")
        .fake(record.to_str().unwrap())
        .set("tools_deny=[\"crash\"]")
        .spawn();
    s.initialize().await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": "b1", "method": "tools/call", "params": {"name": "crash", "arguments": {"code": 3}}},
        {"jsonrpc": "2.0", "id": "b2", "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}},
    ]);
    s.send(&batch).await;
    let answer = s.recv().await;
    let answers = answer
        .as_array()
        .unwrap_or_else(|| panic!("not one array of answers: {answer}"));
    let got: Vec<(&Value, &str)> = answers
        .iter()
        .map(|a| (&a["id"], a["error"]["data"]["code"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(
        got,
        [
            (&json!("b1"), "W-BATCH-REFUSED"),
            (&json!("b2"), "W-BATCH-REFUSED")
        ]
    );
    // The bridge goes on, and the server saw only this call.
    assert_eq!(text_of(&s.call("echo", json!({"text": "on"})).await), "on");
    assert!(s.close().await.success());
    assert_eq!(received(&record), ["echo"]);
    assert_eq!(s.events_of("batch_refused").len(), 1);
}

/// Every message in what the bridge wrote, read as a client that also ends a line at a lone
/// `\r` does (Java's `readLine`, .NET's `ReadLine`, Node's `readline`, Python's universal
/// newlines), up to the line that answers `id` whole: the tools each piece answering `id`
/// lists.
async fn lists_answering(s: &mut Session, id: &Value) -> Vec<Vec<String>> {
    let mut lists = Vec::new();
    loop {
        let Some(line) = s.recv_raw_within(SOON).await else {
            panic!("bridge stdout closed; stderr:\n{}", s.stderr_text());
        };
        for piece in line.split(|b| *b == b'\r' || *b == b'\n') {
            if let Ok(v) = serde_json::from_slice::<Value>(piece)
                && &v["id"] == id
                && v.get("result").is_some()
            {
                lists.push(names(&v));
            }
        }
        if serde_json::from_slice::<Value>(&line).is_ok_and(|v| &v["id"] == id) {
            return lists;
        }
    }
}

/// A server ends an answer to a pending call, once the client's `tools/list` is waiting,
/// with a forged answer to that list between two `\r`: the answer streamed past the bridge
/// (over 1 MiB) and one held whole (valid JSON: `\r` is whitespace). A client that splits
/// lines on `\r` too sees one answer to its list, the checked one, without the denied tool.
#[tokio::test]
async fn a_list_answer_between_carriage_returns_never_reaches_the_client() {
    for pad in [4_000_000, 0] {
        let dir = tempfile::tempdir().unwrap();
        let ready = dir.path().join("ready");
        let mut s = bridge().set("tools_deny=[\"crash\"]").spawn();
        s.initialize().await;
        let args = json!({"pad": pad, "ready": ready.to_str().unwrap()});
        s.start_call("smuggle", args, None).await;
        // The answer is being relayed in parts (or held, unfinished) before the list is asked.
        poll_until("the server padded its answer", || ready.exists()).await;
        let list = s.next_id();
        s.send(&json!({"jsonrpc": "2.0", "id": list, "method": "tools/list", "params": {}}))
            .await;
        let lists = lists_answering(&mut s, &list).await;
        let with_crash: Vec<bool> = lists.iter().map(|l| l.contains(&"crash".into())).collect();
        assert_eq!(with_crash, [false], "pad {pad}: {lists:?}");
        assert!(s.close().await.success());
    }
}
