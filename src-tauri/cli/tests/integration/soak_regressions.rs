//! Bugs the soak run (tests/soak, scripts/soak.sh) found, each reduced to a deterministic test.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{Value, json};

/// Soak finding 1: a read-only call that reached the bridge after the server had died, but
/// before the bridge had finished with the dead process, was answered twice.
///
/// The call was queued for the dead server. When the bridge settled the crash it re-queued
/// every call it thought in flight — this one included — for the next server, and the next
/// server's writer then also re-routed the copy still sitting in the dead server's queue. Both
/// reached the new server, and the client got two responses with one id.
///
/// A grandchild that keeps the dead server's stdout open makes the window long (the bridge
/// waits for that stdout to end and for the process group to go), as it is for any server
/// whose helper processes outlive it.
#[tokio::test]
async fn a_safe_call_queued_for_a_dead_server_is_answered_once() {
    let mut s = bridge()
        .fake("--grandchild")
        .pid_file()
        .set("idle_timeout_ms=20000")
        .set("backoff_ms=50")
        .spawn();
    s.initialize().await;
    s.request("tools/list", json!({})).await; // teaches the bridge that echo is read-only
    let server = read_pids(&s.dir.path().join("pids"))[0];
    let pipe = stdin_pipe(server);
    let crash = s.start_call("crash", json!({"code": 1}), None).await;
    assert!(
        all_gone(&[server], SOON).await.is_some(),
        "the server did not crash"
    );

    // The server is gone, the bridge has not finished with it yet (that takes it over a
    // second here): these calls are queued for the dead server. The first one's failed write
    // ends the dead server's writer, so the others stay in its queue.
    let mut echoes = HashMap::new();
    for i in 0..5 {
        let id = s
            .start_call("echo", json!({"text": format!("echo {i}")}), None)
            .await;
        echoes.insert(id, format!("echo {i}"));
        if i == 0 {
            writer_gone(&s, &pipe).await;
        }
    }
    let mut answers: HashMap<Value, usize> = HashMap::new();
    let mut crash_answered = false;
    while answers.len() < echoes.len() || !crash_answered {
        let v = s.recv().await;
        if v.get("method").is_some() {
            continue;
        }
        if v["id"] == crash {
            assert_eq!(error_kind(&v), "server_exited", "{v}");
            crash_answered = true;
            continue;
        }
        let want = echoes
            .get(&v["id"])
            .unwrap_or_else(|| panic!("unexpected {v}"));
        assert_eq!(text_of(&v), want, "{v}");
        *answers.entry(v["id"].clone()).or_default() += 1;
    }
    // A last call: its answer comes after any copy of the echoes' (they reached the server
    // before it, and the fake server answers echoes in order).
    let last = s.start_call("echo", json!({"text": "last"}), None).await;
    loop {
        let v = s.recv().await;
        if v.get("method").is_some() {
            continue;
        }
        if v["id"] == last {
            break;
        }
        *answers.entry(v["id"].clone()).or_default() += 1;
    }
    let twice: Vec<_> = answers.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "answered more than once: {twice:?}");
    s.close().await;
}

/// Soak finding 2: the Python SDK (like the TypeScript one) ends a stdio server by closing its
/// stdin, then SIGTERM 2 s later, then SIGKILL 2 s after that. The bridge's own shutdown of
/// its server runs on the same 2 s + 2 s schedule and ignored the SIGTERM, so with a server
/// whose group outlives the stdin close (here a grandchild that ignores SIGTERM), the client's
/// SIGKILL could land before the bridge's, and the grandchild was left behind.
///
/// A signal that arrives while the bridge is already shutting down now means "hurry": the
/// bridge kills the server's group at once.
#[tokio::test]
async fn sigterm_during_shutdown_ends_the_server_group_at_once() {
    let mut s = bridge().fake("--grandchild").pid_file().spawn();
    s.initialize().await;
    let pids = read_pids(&s.dir.path().join("pids"));
    assert_eq!(pids.len(), 2, "server and grandchild");
    // Close stdin: the bridge starts its shutdown and closes the server's stdin; the server
    // exits, its SIGTERM-proof grandchild stays. Then SIGTERM, as a client does after 2 s.
    let bridge_pid = s.child.id().unwrap();
    let server = pids[0];
    let (status, signalled) = tokio::join!(s.close(), async move {
        assert!(
            all_gone(&[server], SOON).await.is_some(),
            "the server did not exit on stdin EOF"
        );
        signal(bridge_pid, "TERM");
        Instant::now()
    });
    let took = signalled.elapsed();
    assert!(status.success(), "{}", s.stderr_text());
    assert!(
        took < Duration::from_millis(1500),
        "the bridge took {took:?} after SIGTERM; a client would SIGKILL it after 2 s"
    );
    assert!(
        all_gone(&pids, Duration::from_secs(1)).await.is_some(),
        "the server's grandchild outlived the bridge"
    );
}

/// Soak finding 3: after one edit of config.toml, every running bridge re-read it about ten
/// times a second, for good. The watcher (notify 8 on Linux) also reports a file being
/// *opened*, so the bridge's own read of the file counted as a change, and so did every other
/// bridge's: with an invalid file, each bridge logged `config_rejected` ten times a second
/// (the soak saw 155 refusals for 5 invalid edits), pushing real events out of the rotated log.
#[tokio::test]
async fn one_edit_of_config_toml_is_one_reload() {
    let mut s = bridge()
        .config("[defaults]\nidle_timeout_ms = 1500\n")
        .spawn();
    s.initialize().await;
    s.write_config("[defaults]\nidle_timeout_ms = \"soon\"\n");
    s.wait_for_events("config_rejected", 1).await;
    // The bug was a rate (ten reloads a second, with nothing changing), and its absence has
    // no event to await: this is a window to count in, not a wait for something to happen.
    // (A later edit would not do: the watcher merges edits less than 100 ms apart.)
    tokio::time::sleep(Duration::from_secs(1)).await;
    let refused = s.events_of("config_rejected").len();
    assert_eq!(refused, 1, "one invalid edit was refused {refused} times");
}

/// Soak finding 4: a session stopped answering for good. Calls that reached the bridge while
/// it was finishing with a dead server were queued for that server; a burst of them filled the
/// queue (64 lines), so the bridge stopped reading the client while it waited for room. With
/// the circuit breaker open, the next server starts only when a call arrives, and no call could
/// arrive: every later call, even a ping, went unanswered.
#[tokio::test]
async fn a_burst_queued_for_a_dead_server_does_not_wedge_the_session() {
    let mut s = bridge()
        .fake("--grandchild")
        .pid_file()
        .set("idle_timeout_ms=20000")
        .set("circuit_failures=1")
        .set("circuit_cooldown_ms=200")
        .spawn();
    s.initialize().await;
    let server = read_pids(&s.dir.path().join("pids"))[0];
    let pipe = stdin_pipe(server);
    let crash = s.start_call("crash", json!({"code": 1}), None).await;
    assert!(
        all_gone(&[server], SOON).await.is_some(),
        "the server did not crash"
    );
    // As in the first test: the first call's failed write ends the dead server's writer...
    let mut pending = vec![crash];
    pending.push(s.start_call("echo", json!({"text": "first"}), None).await);
    writer_gone(&s, &pipe).await;
    // ...and a burst of calls (more than the queue holds) waits for it.
    for i in 0..100 {
        pending.push(
            s.start_call("echo", json!({"text": format!("burst {i}")}), None)
                .await,
        );
    }
    // Every call is answered (the crash, and the calls sent to the dead server, fail).
    for id in &pending {
        let (v, _) = s.response(id).await;
        assert!(v.get("error").is_some() || v.get("result").is_some(), "{v}");
    }
    // And the session goes on: a call after the cool-down starts the server again.
    let echo = json!({"name": "echo", "arguments": {"text": "after"}});
    let r = s.request_past_breaker("tools/call", echo).await;
    assert_eq!(text_of(&r), "after", "{r}");
    s.close().await;
}

/// The pipe `pid` reads as its stdin (`pipe:[inode]`).
fn stdin_pipe(pid: u32) -> String {
    std::fs::read_link(format!("/proc/{pid}/fd/0"))
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// Waits until the bridge no longer holds `pipe` (a dead server's stdin) open: its writer for
/// that server has ended. Nothing reports that, so this polls the bridge's open files.
async fn writer_gone(s: &Session, pipe: &str) {
    let fds = format!("/proc/{}/fd", s.child.id().unwrap());
    let start = Instant::now();
    loop {
        let holds = std::fs::read_dir(&fds)
            .unwrap()
            .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
            .any(|target| target.as_os_str() == pipe);
        if !holds {
            return;
        }
        assert!(start.elapsed() < SOON, "the bridge still writes to {pipe}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
