//! The bridge's side of the control socket, against a supervisor stand-in in the test.

#![cfg(unix)]

use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use warden_control::{Action, Command, Message, socket};
use warden_wire::protocol::{Frame, FrameReader};

pub(crate) struct Peer {
    reader: FrameReader<tokio::net::unix::OwnedReadHalf>,
    writer: tokio::net::unix::OwnedWriteHalf,
}

impl Peer {
    pub(crate) async fn next(&mut self) -> Message {
        loop {
            let frame = tokio::time::timeout(SOON, self.reader.next())
                .await
                .expect("a message within 10 s")
                .unwrap();
            let Some(Frame::Message(line)) = frame else {
                panic!("connection closed")
            };
            if let Some(m) = Message::from_line(&line).unwrap() {
                return m;
            }
        }
    }

    pub(crate) async fn until<T>(&mut self, mut pick: impl FnMut(Message) -> Option<T>) -> T {
        loop {
            if let Some(t) = pick(self.next().await) {
                return t;
            }
        }
    }
}

pub(crate) async fn supervisor_for(s: &Session) -> (tokio::net::UnixListener, std::path::PathBuf) {
    let path = s.dir.path().join("run").join("control.sock");
    (socket::bind(&path).await.unwrap(), path)
}

pub(crate) async fn accept(listener: &tokio::net::UnixListener) -> Peer {
    let stream = tokio::time::timeout(SOON, socket::accept(listener))
        .await
        .expect("the bridge connects")
        .unwrap();
    let (r, w) = stream.into_split();
    Peer {
        reader: FrameReader::new(r, 64 << 20),
        writer: w,
    }
}

#[tokio::test]
async fn a_bridge_finds_a_supervisor_started_later_and_reports_to_it() {
    let mut s = bridge().pid_file().spawn();
    s.initialize().await;
    // The supervisor starts after the bridge: the bridge connects within a heartbeat period.
    let (listener, _) = supervisor_for(&s).await;
    let started = Instant::now();
    let mut sup = accept(&listener).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    let hello = sup
        .until(|m| {
            if let Message::Hello(h) = m {
                Some(h)
            } else {
                None
            }
        })
        .await;
    assert_eq!(hello.server, "fake");
    assert_eq!(hello.pid, s.child.id().unwrap());
    assert!(
        hello.command[0].ends_with("mcp-fake-server"),
        "{:?}",
        hello.command
    );

    // A hung request shows in the heartbeats with a growing age.
    let id = s.start_call("hang", json!({}), None).await;
    let first = sup
        .until(|m| match m {
            Message::Heartbeat(hb) if !hb.inflight.is_empty() => Some(hb),
            _ => None,
        })
        .await;
    assert_eq!(first.client.as_deref(), Some("warden-tests 1"));
    assert_eq!(first.inflight[0].id, id);
    assert_eq!(first.inflight[0].tool.as_deref(), Some("hang"));
    assert_eq!(
        first.server_pid,
        Some(read_pids(&s.dir.path().join("pids"))[0])
    );
    let later = sup
        .until(|m| {
            if let Message::Heartbeat(hb) = m {
                Some(hb)
            } else {
                None
            }
        })
        .await;
    assert!(later.inflight[0].age_ms > first.inflight[0].age_ms);

    // Events stream live, and a restart command is obeyed and acknowledged.
    let restart = Message::Command(Command {
        id: 7,
        action: Action::Restart {
            server: "fake".into(),
        },
    });
    sup.writer.write_all(&restart.to_line()).await.unwrap();
    let (ok, message) = sup
        .until(|m| {
            if let Message::Ack { id: 7, ok, message } = m {
                Some((ok, message))
            } else {
                None
            }
        })
        .await;
    assert!(ok, "{message}");
    sup.until(|m| match m {
        Message::Event { event, .. } if event.kind == "restart" => Some(()),
        _ => None,
    })
    .await;
    let hb = sup
        .until(|m| match m {
            Message::Heartbeat(hb) if hb.generation == 2 => Some(hb),
            _ => None,
        })
        .await;
    assert_eq!(hb.stats.restarts, 1);
    // The planned restart is no failure; the session goes on.
    let r = s.call("echo", json!({"text": "after restart"})).await;
    assert_eq!(text_of(&r), "after restart");
}

#[tokio::test]
async fn fallback_and_debug_commands_apply_at_once() {
    let mut s = bridge().spawn();
    s.initialize().await;
    let (listener, _) = supervisor_for(&s).await;
    let mut sup = accept(&listener).await;
    s.request("tools/list", json!({})).await;
    let on = Message::Command(Command {
        id: 1,
        action: Action::Fallback {
            server: "fake".into(),
            on: true,
        },
    });
    sup.writer.write_all(&on.to_line()).await.unwrap();
    sup.until(|m| {
        matches!(
            m,
            Message::Ack {
                id: 1,
                ok: true,
                ..
            }
        )
        .then_some(())
    })
    .await;
    let (note, _) = s.recv_until(|v| v["method"].is_string()).await;
    assert_eq!(note["method"], "notifications/tools/list_changed");
    let debug = Message::Command(Command {
        id: 2,
        action: Action::Debug {
            server: "fake".into(),
            on: true,
        },
    });
    sup.writer.write_all(&debug.to_line()).await.unwrap();
    sup.until(|m| {
        matches!(
            m,
            Message::Ack {
                id: 2,
                ok: true,
                ..
            }
        )
        .then_some(())
    })
    .await;
    let hb = sup
        .until(|m| match m {
            Message::Heartbeat(hb) if hb.fallback && hb.debug => Some(hb),
            _ => None,
        })
        .await;
    assert_eq!(hb.generation, 2);
}

#[tokio::test]
async fn a_bridge_keeps_working_when_the_supervisor_goes_away() {
    let mut s = bridge().spawn();
    s.initialize().await;
    let (listener, path) = supervisor_for(&s).await;
    let sup = accept(&listener).await;
    drop(sup);
    drop(listener);
    std::fs::remove_file(&path).unwrap();
    let r = s.call("echo", json!({"text": "alone"})).await;
    assert_eq!(text_of(&r), "alone");
    // And it reconnects to the next one.
    let (listener, _) = supervisor_for(&s).await;
    let mut sup = accept(&listener).await;
    sup.until(|m| matches!(m, Message::Hello(_)).then_some(()))
        .await;
}
