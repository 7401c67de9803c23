//! `warden bridge` end to end against the fake server: one test per failure in the project's
//! background, and the behaviours of docs/behaviour.md.

use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn relays_a_session_and_logs_metadata_only() {
    let mut s = bridge().spawn();
    let init = s.initialize().await;
    assert_eq!(init["result"]["serverInfo"]["name"], "mcp-fake-server");
    let tools = s.request("tools/list", json!({})).await;
    assert!(tools["result"]["tools"].as_array().unwrap().len() > 5);
    let r = s.call("echo", json!({"text": "secret-payload"})).await;
    assert_eq!(text_of(&r), "secret-payload");
    assert!(s.close().await.success(), "stderr: {}", s.stderr_text());

    let events = s.events();
    let call = events
        .iter()
        .find(|e| e["method"] == "tools/call")
        .expect("tools/call event");
    assert_eq!(call["tool"], "echo");
    assert_eq!(call["outcome"], "ok");
    assert!(
        call["duration_ms"].is_u64() && call["bytes_in"].is_u64() && call["bytes_out"].is_u64()
    );
    assert!(events.iter().any(|e| e["kind"] == "session_end"));
    let raw = std::fs::read_to_string(s.state_dir().join("logs").join(own_name(".jsonl"))).unwrap();
    assert!(
        !raw.contains("secret-payload"),
        "message contents leaked into the event log"
    );
}

/// Regression: a relay with asyncio's 64 KiB readline limit died on the first large result and
/// every later call timed out. A 100 MB line must pass, and the session must go on.
#[tokio::test]
async fn a_100_mb_line_passes_and_the_session_goes_on() {
    let mut s = bridge().spawn();
    s.initialize().await;
    let bytes = 100_000_000u64;
    let id = s.start_call("big", json!({"bytes": bytes}), None).await;
    let line = s
        .recv_raw_within(Duration::from_secs(60))
        .await
        .expect("response");
    assert!(line.len() as u64 > bytes, "got {} bytes", line.len());
    let v: Value = serde_json::from_slice(&line).unwrap();
    assert_eq!(v["id"], id);
    assert_eq!(text_of(&v).len() as u64, bytes);
    let r = s.call("echo", json!({"text": "still alive"})).await;
    assert_eq!(text_of(&r), "still alive");
    // A large request passes the other way too.
    let big_arg = "y".repeat(20 << 20);
    let r = s.call("echo", json!({"text": big_arg})).await;
    assert_eq!(text_of(&r).len(), 20 << 20);
}

/// Regression: a relay that mixed poll() with buffered reads left the rest of a burst in its
/// buffer until the next byte arrived (60 s later). Three init messages in one write must get
/// both answers at once; a burst from the server must arrive whole.
#[tokio::test]
async fn a_burst_in_one_write_is_relayed_at_once() {
    let mut s = bridge().spawn();
    let burst = concat!(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        "\n"
    );
    s.send_raw(burst.as_bytes()).await;
    let start = Instant::now();
    let a = s.recv().await;
    let b = s.recv().await;
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "burst stalled for {:?}",
        start.elapsed()
    );
    let mut ids: Vec<_> = [a, b].iter().map(|v| v["id"].as_i64().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, vec![0, 1]);

    let id = s.start_call("burst", json!({"n": 2000}), None).await;
    let (done, notes) = s.response(&id).await;
    assert_eq!(text_of(&done), "burst done");
    assert_eq!(notes.len(), 2000);
    assert_eq!(notes[1999]["params"]["data"], "burst 1999");
}

/// Regression: a blocking read_line on a stuck server hung the relay forever. A request to a
/// server that never answers (or stops mid-line) gets a timeout error, the server gets a
/// cancellation, and the session goes on.
#[tokio::test]
async fn a_stuck_server_times_out_with_an_explanation_and_a_cancel() {
    let mut s = bridge().set("idle_timeout_ms=700").spawn();
    s.initialize().await;
    for tool in ["hang", "partial_then_hang"] {
        let start = Instant::now();
        let id = s.start_call(tool, json!({}), None).await;
        let (err, _) = s.response(&id).await;
        let elapsed = start.elapsed();
        assert_eq!(err["error"]["code"], -32001, "{err}");
        assert_eq!(error_kind(&err), "timeout");
        assert_eq!(err["error"]["data"]["server"], "fake");
        assert_eq!(err["error"]["data"]["limit_ms"], 700);
        let msg = err["error"]["message"].as_str().unwrap();
        assert!(
            msg.starts_with("Request timed out") && msg.contains("idle_timeout_ms"),
            "{msg}"
        );
        assert!(
            elapsed >= Duration::from_millis(650),
            "timed out early: {elapsed:?}"
        );
        if tool == "hang" {
            let cancelled = format!("cancelled {id}");
            s.recv_until(|v| v["params"]["data"] == cancelled.as_str())
                .await;
        }
        // After `partial_then_hang` the server's note about the cancel completes its half
        // line: that garbage line is dropped, never forwarded (`recv` would panic).
    }
    let r = s.call("echo", json!({"text": "ok"})).await;
    assert_eq!(text_of(&r), "ok");
}

/// Regression: a watchdog that ignored progress killed tools that were reporting it.
#[tokio::test]
async fn progress_keeps_a_request_alive_until_it_stops() {
    let mut s = bridge().set("idle_timeout_ms=800").spawn();
    s.initialize().await;
    // 8 × 300 ms = 2.4 s, three times the idle limit, with progress all along.
    let id = s
        .start_call(
            "progress",
            json!({"steps": 8, "interval_ms": 300}),
            Some(json!("tok-1")),
        )
        .await;
    let (done, progress) = s.response(&id).await;
    assert_eq!(text_of(&done), "done", "{done}");
    assert_eq!(progress.len(), 8);
    assert_eq!(progress[7]["params"]["progressToken"], "tok-1");

    // Progress, then silence: timed out one idle period after the last progress.
    let id = s
        .start_call(
            "progress",
            json!({"steps": 3, "interval_ms": 300, "then_hang": true}),
            Some(json!(77)),
        )
        .await;
    let (err, progress) = s.response(&id).await;
    assert_eq!(error_kind(&err), "timeout");
    assert_eq!(progress.len(), 3);
    assert!(
        err["error"]["data"]["elapsed_ms"].as_u64().unwrap() >= 1600,
        "{err}"
    );
}

#[tokio::test]
async fn max_timeout_ends_a_request_even_with_progress() {
    let mut s = bridge()
        .set("idle_timeout_ms=500")
        .set("max_timeout_ms=1500")
        .spawn();
    s.initialize().await;
    let id = s
        .start_call(
            "progress",
            json!({"steps": 1000, "interval_ms": 100}),
            Some(json!("t")),
        )
        .await;
    let (err, _) = s.response(&id).await;
    assert_eq!(error_kind(&err), "max_timeout");
    assert_eq!(err["error"]["data"]["limit_ms"], 1500);
    let cancelled = format!("cancelled {id}");
    // Late progress after the timeout is dropped: nothing with token "t" arrives after it.
    let (_, between) = s
        .recv_until(|v| v["params"]["data"] == cancelled.as_str())
        .await;
    assert!(
        between.iter().all(|v| v["params"]["progressToken"] != "t"),
        "{between:?}"
    );
}

#[tokio::test]
async fn stderr_counts_as_activity_unless_turned_off() {
    let mut s = bridge().set("idle_timeout_ms=800").spawn();
    s.initialize().await;
    let r = s
        .call("stderr", json!({"lines": 6, "interval_ms": 400}))
        .await;
    assert_eq!(text_of(&r), "stderr done", "{r}");
    assert!(
        s.stderr_text().contains("fake server: working 5"),
        "server stderr is passed through"
    );

    let mut s = bridge()
        .set("idle_timeout_ms=800")
        .set("stderr_is_activity=false")
        .spawn();
    s.initialize().await;
    let r = s
        .call("stderr", json!({"lines": 6, "interval_ms": 400}))
        .await;
    assert_eq!(error_kind(&r), "timeout");
}

#[tokio::test]
async fn stdout_noise_is_never_forwarded() {
    let mut s = bridge().fake("--banner").spawn();
    s.initialize().await; // `recv` panics on any non-JSON line
    let r = s.call("noise", json!({"lines": 5})).await;
    assert_eq!(text_of(&r), "after noise");
    s.close().await;
    let noise = s.events_of("stdout_noise");
    assert_eq!(noise.len(), 6, "{noise:?}");
}

#[tokio::test]
async fn a_crash_mid_request_fails_it_at_once_with_the_cause() {
    let mut s = bridge().set("idle_timeout_ms=60000").spawn();
    s.initialize().await;
    let hung = s.start_call("hang", json!({}), None).await;
    let start = Instant::now();
    let id = s.start_call("crash", json!({"code": 3}), None).await;
    let mut errors = Vec::new();
    for _ in 0..2 {
        errors.push(s.recv().await);
    }
    assert!(start.elapsed() < Duration::from_secs(5));
    for want in [&hung, &id] {
        let e = errors
            .iter()
            .find(|e| &e["id"] == want)
            .expect("an error for each waiting request");
        assert_eq!(e["error"]["code"], -32000);
        assert_eq!(error_kind(e), "server_exited");
        assert_eq!(e["error"]["data"]["exit"], "exited with status 3");
        assert!(
            e["error"]["data"]["stderr_tail"]
                .as_str()
                .unwrap()
                .contains("crashing on purpose")
        );
    }
    // The bridge restarts the server and the session goes on.
    let r = s.call("echo", json!({"text": "after the crash"})).await;
    assert_eq!(text_of(&r), "after the crash");
    assert!(s.close().await.success());
}

#[tokio::test]
async fn a_partial_line_then_eof_is_an_error_not_a_hang() {
    let mut s = bridge().spawn();
    s.initialize().await;
    // `echo` is read-only: if the next call races the exit, it is re-sent after the restart.
    s.request("tools/list", json!({})).await;
    let id = s.start_call("partial_then_exit", json!({}), None).await;
    let (e, _) = s.response(&id).await;
    // The half line names the request: it fails as an invalid answer; then the server's
    // exit is seen and it is restarted.
    assert_eq!(error_kind(&e), "invalid_response", "{e}");
    assert!(
        e["error"]["data"]["detail"]
            .as_str()
            .unwrap()
            .contains("EOF while parsing"),
        "{e}"
    );
    let r = s.call("echo", json!({"text": "restarted"})).await;
    assert_eq!(text_of(&r), "restarted");
}

#[tokio::test]
async fn invalid_utf8_in_a_response_fails_that_request_at_once() {
    let mut s = bridge().spawn();
    s.initialize().await;
    let r = s.call("invalid_utf8", json!({})).await;
    assert_eq!(r["error"]["code"], -32603);
    assert_eq!(error_kind(&r), "invalid_response");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("UTF-8"),
        "{r}"
    );
    let r = s.call("echo", json!({"text": "next"})).await;
    assert_eq!(text_of(&r), "next");
}

#[tokio::test]
async fn oversize_messages_are_dropped_while_streaming_and_answered() {
    let mut s = bridge().set("max_message_bytes=1048576").spawn();
    s.initialize().await;
    let r = s.call("big", json!({"bytes": 5_000_000})).await;
    assert_eq!(r["error"]["code"], -32603);
    assert_eq!(error_kind(&r), "message_too_large");
    assert_eq!(r["error"]["data"]["limit"], 1_048_576);
    assert!(r["error"]["data"]["bytes"].as_u64().unwrap() > 5_000_000);

    let id = s.next_id();
    let huge = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "z".repeat(3 << 20)}}});
    s.send(&huge).await;
    let (r, _) = s.response(&id).await;
    assert_eq!(r["error"]["code"], -32600);
    assert_eq!(error_kind(&r), "message_too_large");
    let r = s.call("echo", json!({"text": "fine"})).await;
    assert_eq!(text_of(&r), "fine");
}

#[tokio::test]
async fn client_garbage_gets_a_parse_error_and_the_session_goes_on() {
    let mut s = bridge().spawn();
    s.initialize().await;
    s.send_raw(b"this is not json\n\xff\xfe\n\r\n\n").await;
    for _ in 0..2 {
        let e = s.recv().await;
        assert!(e["id"].is_null());
        assert_eq!(e["error"]["code"], -32700);
        assert_eq!(error_kind(&e), "parse_error");
    }
    let r = s.call("echo", json!({"text": "ok"})).await;
    assert_eq!(text_of(&r), "ok");
}

#[tokio::test]
async fn server_requests_are_relayed_and_pause_the_idle_clock() {
    let mut s = bridge().set("idle_timeout_ms=500").spawn();
    s.initialize().await;
    // The client's request id 0 and the server's request id 0 are live at the same time; the
    // server's reaches the client renamed, and the answer goes back under the server's id.
    s.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": "sample", "arguments": {}}})).await;
    let req = s.recv().await;
    assert_eq!(req["method"], "sampling/createMessage");
    let renamed = req["id"].clone();
    assert!(
        renamed
            .as_str()
            .is_some_and(|id| id.starts_with("__warden/s/")),
        "{req}"
    );
    // A person takes longer than the idle limit to answer.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    s.send(&json!({"jsonrpc": "2.0", "id": renamed, "result": {"role": "assistant", "content": {"type": "text", "text": "yes"}}})).await;
    let (r, _) = s.response(&json!(0)).await;
    assert!(text_of(&r).contains("yes"), "{r}");
}

#[tokio::test]
async fn client_cancellation_is_forwarded() {
    let mut s = bridge().spawn();
    s.initialize().await;
    let id = s.start_call("hang", json!({}), None).await;
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id, "reason": "user"}})).await;
    let cancelled = format!("cancelled {id}");
    s.recv_until(|v| v["params"]["data"] == cancelled.as_str())
        .await;
    s.close().await;
    let events = s.events();
    assert!(
        events
            .iter()
            .any(|e| e["outcome"] == "cancelled" && e["tool"] == "hang"),
        "{events:?}"
    );
}

#[tokio::test]
async fn slow_start_within_and_beyond_startup_timeout() {
    let mut s = bridge()
        .fake("--slow-start-ms")
        .fake("1500")
        .set("startup_timeout_ms=10000")
        .spawn();
    let r = s.initialize().await;
    assert!(r.get("result").is_some(), "{r}");

    let mut s = bridge()
        .fake("--slow-start-ms")
        .fake("5000")
        .set("startup_timeout_ms=800")
        .spawn();
    let r = s.initialize().await;
    assert_eq!(error_kind(&r), "startup_timeout");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("startup_timeout_ms")
    );
}

#[tokio::test]
async fn no_orphans_when_the_client_goes_away() {
    let mut s = bridge()
        .fake("--grandchild")
        .fake("--ignore-stdin-eof")
        .fake("--ignore-sigterm")
        .pid_file()
        .spawn();
    s.initialize().await;
    let pids = read_pids(&s.dir.path().join("pids"));
    assert_eq!(pids.len(), 2);
    let start = Instant::now();
    let status = s.close().await;
    assert!(status.success(), "{}", s.stderr_text());
    let gone = all_gone(&pids, Duration::from_secs(5)).await;
    assert!(
        gone.is_some(),
        "server tree still alive 5 s after the client left"
    );
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "took {:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn sigterm_shuts_down_cleanly_and_sigkill_takes_the_server_along() {
    let mut s = bridge().pid_file().spawn();
    s.initialize().await;
    let pids = read_pids(&s.dir.path().join("pids"));
    signal(s.child.id().unwrap(), "TERM");
    assert!(s.wait().await.success());
    assert!(all_gone(&pids, Duration::from_secs(5)).await.is_some());

    let mut s = bridge().pid_file().spawn();
    s.initialize().await;
    let pids = read_pids(&s.dir.path().join("pids"));
    signal(s.child.id().unwrap(), "KILL");
    s.wait().await;
    assert!(
        all_gone(&pids, Duration::from_secs(5)).await.is_some(),
        "server outlived a killed bridge"
    );
}

#[tokio::test]
async fn bad_config_is_refused_with_file_line_key_and_fix() {
    let mut s = bridge()
        .config("[defaults]\nretries = 1\n\n[servers.fake]\nidle_timeout_ms = 3\n")
        .spawn();
    let status = s.close().await;
    assert_eq!(status.code(), Some(2));
    let err = s.stderr_text();
    assert!(err.contains("config.toml:5"), "{err}");
    assert!(
        err.contains("servers.fake.idle_timeout_ms") && err.contains("Fix:"),
        "{err}"
    );

    let mut s = bridge().set("idle_timeout_ms=fast").spawn();
    assert_eq!(s.close().await.code(), Some(2));
    assert!(
        s.stderr_text().contains("--set: `idle_timeout_ms`"),
        "{}",
        s.stderr_text()
    );
}

#[tokio::test]
async fn a_missing_server_command_is_a_clear_error() {
    let mut s = bridge().command(&["/no/such/mcp-server"]).spawn();
    assert_eq!(s.wait().await.code(), Some(1));
    let err = s.stderr_text();
    assert!(
        err.contains("cannot start server command") && err.contains("/no/such/mcp-server"),
        "{err}"
    );
}

/// Lines over 1 MiB are relayed as they arrive. When such a line then passes
/// max_message_bytes, the client's copy of it is ended early (one line that is not valid
/// JSON, which clients drop), and the request gets message_too_large.
#[tokio::test]
async fn a_streamed_line_over_the_limit_is_ended_and_answered() {
    let mut s = bridge().set("max_message_bytes=3000000").spawn();
    s.initialize().await;
    let id = s.start_call("big", json!({"bytes": 5_000_000}), None).await;
    let cut = s.recv_raw_within(SOON).await.expect("the cut line");
    assert!(serde_json::from_slice::<Value>(&cut).is_err());
    assert!(cut.len() <= 3_000_001, "{}", cut.len());
    let (err, _) = s.response(&id).await;
    assert_eq!(error_kind(&err), "message_too_large", "{err}");
    let r = s.call("echo", json!({"text": "fine"})).await;
    assert_eq!(text_of(&r), "fine");
}

/// On Linux the rest of a line over 1 MiB moves from the server's pipe to the client's by
/// splice(2), and only a tee'd copy is read: the line still arrives whole and exact, with
/// its id (written last) found, and the debug log says how much of it was spliced.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_rest_of_a_large_line_is_spliced_and_arrives_exact() {
    let mut s = bridge().config("[defaults]\ndebug = true\n").spawn();
    s.initialize().await;
    let bytes = 20_000_000;
    let id = s.start_call("big", json!({"bytes": bytes}), None).await;
    let (answer, _) = s.response(&id).await;
    let text = text_of(&answer);
    assert!(text.len() == bytes && text.bytes().all(|b| b == b'x'));
    s.close().await;
    let debug =
        std::fs::read_to_string(s.state_dir().join("logs").join(own_name(".debug.jsonl"))).unwrap();
    let spliced = debug
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|l| l["message"]["spliced"].as_u64())
        .unwrap_or_else(|| panic!("no streamed-line note in {debug}"));
    assert!(spliced > (bytes as u64) / 2, "spliced {spliced} of {bytes}");
}
