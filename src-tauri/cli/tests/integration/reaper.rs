//! The reaper (Linux, `bridge/reaper.rs`): between the bridge and the server, it takes the
//! server's whole process group along when the bridge dies, even by SIGKILL, ends what a
//! server that exited left behind, and exits as the server did.

use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use warden_bridge::child::{Pipes, Server};

/// `(state, ppid, pgrp)` of `pid` from /proc, or `None` once it is gone.
fn stat(pid: u32) -> Option<(char, u32, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut f = stat.rsplit_once(')')?.1.split_whitespace();
    let state = f.next()?.chars().next()?;
    Some((state, f.next()?.parse().ok()?, f.next()?.parse().ok()?))
}

/// The server's and its grandchild's pids (from the fake server's pid file) and the
/// reaper's, after checking where each sits: the reaper is the bridge's child, named
/// `warden-reaper`, leads the group; the server is its child; the grandchild is in the group.
fn tree(s: &Session) -> (u32, u32, u32) {
    let pids = read_pids(&s.dir.path().join("pids"));
    assert_eq!(pids.len(), 2, "the server and its grandchild: {pids:?}");
    let (server, grandchild) = (pids[0], pids[1]);
    let (_, reaper, group) = stat(server).expect("the server runs");
    let bridge = s.child.id().unwrap();
    assert_eq!(
        stat(reaper).map(|s| s.1),
        Some(bridge),
        "the reaper's parent"
    );
    assert_eq!(group, reaper, "the reaper leads the server's group");
    assert_eq!(stat(grandchild).map(|s| s.2), Some(reaper));
    let comm = std::fs::read_to_string(format!("/proc/{reaper}/comm")).unwrap();
    assert_eq!(comm.trim(), "warden-reaper");
    (reaper, server, grandchild)
}

#[tokio::test]
async fn kill_9_of_the_bridge_ends_the_whole_group_with_the_reaper() {
    let mut s = bridge().fake("--grandchild").pid_file().spawn();
    s.initialize().await;
    let (reaper, server, grandchild) = tree(&s);
    signal(s.child.id().unwrap(), "KILL");
    s.wait().await;
    let gone = all_gone(&[reaper, server, grandchild], Duration::from_secs(5)).await;
    assert!(
        gone.is_some(),
        "left behind by a killed bridge: {:?}",
        [reaper, server, grandchild]
            .iter()
            .filter(|p| alive(**p))
            .collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn a_server_that_exits_leaves_no_grandchild_and_its_status_is_reported() {
    // The grandchild ignores SIGTERM: the reaper's SIGKILL after its grace ends it.
    let mut s = bridge()
        .fake("--grandchild")
        .pid_file()
        .set("backoff_ms=20")
        .spawn();
    s.initialize().await;
    let (reaper, server, grandchild) = tree(&s);
    let r = s.call("crash", json!({"code": 7})).await;
    assert_eq!(error_kind(&r), "server_exited", "{r}");
    assert_eq!(r["error"]["data"]["exit"], "exited with status 7", "{r}");
    assert!(
        all_gone(&[reaper, server, grandchild], SOON)
            .await
            .is_some(),
        "the crashed server's grandchild outlived it"
    );
    // The next server is up (a new reaper); killed by a signal the reaper itself ignores, it
    // is reported with that signal.
    s.call("echo", json!({"text": "again"})).await;
    let (_, server, grandchild) = tree(&s);
    let hang = s.start_call("hang", json!({}), None).await;
    // Answered after `hang` was read: the server has it when the signal comes.
    assert!(s.request("ping", json!({})).await.get("result").is_some());
    signal(server, "TERM");
    let (r, _) = s.response(&hang).await;
    assert_eq!(error_kind(&r), "server_exited", "{r}");
    assert_eq!(
        r["error"]["data"]["exit"], "was killed by signal 15 (SIGTERM)",
        "{r}"
    );
    assert!(all_gone(&[server, grandchild], SOON).await.is_some());
    assert!(s.close().await.success(), "{}", s.stderr_text());
}

#[tokio::test]
async fn closing_stdin_ends_server_grandchild_and_reaper_within_the_grace() {
    let mut s = bridge().fake("--grandchild").pid_file().spawn();
    s.initialize().await;
    let (reaper, server, grandchild) = tree(&s);
    let start = Instant::now();
    assert!(s.close().await.success(), "{}", s.stderr_text());
    assert!(
        all_gone(&[reaper, server, grandchild], SOON)
            .await
            .is_some(),
        "left behind after the client closed stdin"
    );
    // The server exits at EOF; the grandchild ignores SIGTERM and gets the reaper's SIGKILL
    // 500 ms later, well within the 2 s the bridge gives before its own SIGTERM.
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "took {:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn warden_no_reaper_spawns_the_server_directly() {
    let mut s = bridge()
        .env("WARDEN_NO_REAPER", "1")
        .fake("--grandchild")
        .pid_file()
        .spawn();
    s.initialize().await;
    let server = read_pids(&s.dir.path().join("pids"))[0];
    let (_, parent, group) = stat(server).unwrap();
    assert_eq!(parent, s.child.id().unwrap());
    assert_eq!(group, server);
    assert!(s.close().await.success(), "{}", s.stderr_text());
}

/// The PDEATHSIG thread trap (bubblewrap#692): a parent-death signal set in the child fires
/// when the *thread* that forked it exits. A server spawned (through the bridge's own
/// `Server::spawn`) from a thread that exits at once must live on.
#[test]
fn a_spawn_from_a_thread_that_exits_at_once_does_not_end_the_server() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let handle = rt.handle().clone();
    let (tid, (mut server, pipes)) = std::thread::spawn(move || {
        let _runtime = handle.enter();
        // "PID/task/TID"
        let me = std::fs::read_link("/proc/thread-self").unwrap();
        let tid = me.file_name().unwrap().to_string_lossy().into_owned();
        let argv = vec![std::ffi::OsString::from("cat")];
        (tid, Server::spawn(&argv, &[], None, "test").unwrap())
    })
    .join()
    .unwrap();
    // The thread's exit is over (and a parent-death signal, if any, sent) once its task entry
    // is gone.
    let task = format!("/proc/self/task/{tid}");
    let start = Instant::now();
    while std::path::Path::new(&task).exists() {
        assert!(start.elapsed() < SOON, "the spawning thread never went");
        std::thread::sleep(Duration::from_millis(10));
    }
    rt.block_on(async {
        let Pipes {
            mut stdin, stdout, ..
        } = pipes;
        stdin.write_all(b"still here\n").await.unwrap();
        let mut line = String::new();
        let mut stdout = BufReader::new(stdout);
        tokio::time::timeout(SOON, stdout.read_line(&mut line))
            .await
            .expect("the server answers")
            .unwrap();
        assert_eq!(line, "still here\n");
        assert_eq!(server.exited(), None);
        assert_eq!(server.kill().await, "was killed by signal 9 (SIGKILL)");
    });
}

/// The processes whose environment marks them as servers of the bridge `bridge` (its
/// `WARDEN_SESSION`, which the sandbox passes on): seen from outside its pid namespace.
fn marked_by(bridge: u32) -> Vec<u32> {
    let mark = format!("WARDEN_SESSION={bridge}-");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| {
                env.split(|b| *b == 0)
                    .any(|v| v.starts_with(mark.as_bytes()))
            })
        })
        .filter(|pid| stat(*pid).is_some_and(|s| s.0 != 'Z'))
        .collect()
}

#[tokio::test]
async fn kill_9_of_a_sandboxed_bridge_leaves_nothing_in_the_sandbox() {
    if require_tool("bwrap").is_none() {
        return;
    }
    let mut s = bridge().fake("--grandchild").set("sandbox=\"on\"").spawn();
    s.initialize().await;
    let bridge = s.child.id().unwrap();
    // bubblewrap outside and inside its pid namespace, the server, its grandchild.
    let inside = marked_by(bridge);
    assert!(inside.len() >= 3, "{inside:?}");
    signal(bridge, "KILL");
    s.wait().await;
    assert!(
        all_gone(&inside, Duration::from_secs(5)).await.is_some(),
        "left behind by a killed sandboxed bridge: {:?}",
        marked_by(bridge)
    );
}
