//! The bridge's side of the control socket: it connects to the supervisor when one runs
//! (retrying every heartbeat period, so a supervisor started later is found), says hello,
//! reports a heartbeat with its in-flight requests every 2 s, forwards its events, and obeys
//! commands. Without a supervisor nothing changes: the bridge relays and logs as before.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

use super::links::Links;
use warden_control::{
    Action, Approval, HEARTBEAT_MS, Heartbeat, Hello, Inflight, Message, SessionStats, socket,
};
use warden_wire::events::{Event, now_ms};
use warden_wire::protocol::{Frame, FrameReader};

/// What `connected` returns after relaying the session's last event.
const ENDED: &str = "the session ended";

/// Keeps a connection to the supervisor at `path` for as long as the session lives.
pub(super) async fn run(links: Links, path: PathBuf, hello: Hello) {
    let period = Duration::from_millis(HEARTBEAT_MS);
    loop {
        if let Ok(stream) = socket::connect(&path).await {
            // Held calls are asked through the supervisor too while it is connected.
            links.route_now(|r, _| r.set_supervised(true));
            let reason = connected(&links, stream, &hello).await;
            links.route_now(|r, _| r.set_supervised(false));
            links.sink.set_subscriber(None);
            if reason == ENDED {
                return;
            }
            tracing::debug!("control connection ended: {reason}");
        }
        tokio::time::sleep(period).await;
    }
}

async fn connected(links: &Links, stream: socket::Stream, hello: &Hello) -> String {
    let (read, mut write) = socket::split(stream);
    let (events_tx, mut events) = mpsc::unbounded_channel::<Event>();
    links.sink.set_subscriber(Some(events_tx));
    if let Err(e) = write
        .write_all(&Message::Hello(hello.clone()).to_line())
        .await
    {
        return e.to_string();
    }
    // A start failure logged before we were connected (the first spawn failed at once).
    let missed = links.router().start_failure_event();
    if let Some(event) = missed {
        let message = Message::Event {
            session: hello.session.clone(),
            event,
        };
        if let Err(e) = write.write_all(&message.to_line()).await {
            return e.to_string();
        }
    }
    let mut reader = FrameReader::new(read, 1 << 20);
    let mut tick = tokio::time::interval(Duration::from_millis(HEARTBEAT_MS));
    // A new connection gets the stderr tail with its first heartbeat.
    let mut stderr_seq = 0;
    // The server's pid as users know it (under the reaper: its child), looked up once per
    // server process.
    let mut shown_pid = (0, 0);
    // An event (an answer, a server's exit, a restart) or a request that began changes what
    // the heartbeat says: one follows it within PROMPT instead of up to a heartbeat period
    // later, so status, tray and window follow the bridge within one refresh; a burst shares it.
    let prompt = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(prompt);
    let mut due = false;
    loop {
        let out = tokio::select! {
            _ = tick.tick() => {
                due = false;
                Message::Heartbeat(heartbeat(links, &hello.session, &mut stderr_seq, &mut shown_pid))
            }
            () = &mut prompt, if due => {
                due = false;
                tick.reset();
                Message::Heartbeat(heartbeat(links, &hello.session, &mut stderr_seq, &mut shown_pid))
            }
            () = links.started.notified() => {
                if !due {
                    prompt.as_mut().reset(tokio::time::Instant::now() + PROMPT);
                    due = true;
                }
                continue;
            }
            Some(event) = events.recv() => {
                if !due {
                    prompt.as_mut().reset(tokio::time::Instant::now() + PROMPT);
                    due = true;
                }
                let last = event.kind == "session_end";
                let message = Message::Event { session: hello.session.clone(), event };
                if last {
                    // The supervisor learns the session closed cleanly (not a crash).
                    let _ = write.write_all(&message.to_line()).await;
                    return ENDED.to_owned();
                }
                message
            }frame = reader.next() => match frame {
                Ok(Some(Frame::Message(line))) => match Message::from_line(&line) {
                    Ok(Some(Message::Command(cmd))) => {
                        let (ok, message) = obey(links, cmd.action);
                        Message::Ack { id: cmd.id, ok, message }
                    }
                    Ok(Some(Message::Error { message })) => return format!("the supervisor refused us: {message}"),
                    _ => continue,
                },
                Ok(Some(_)) => continue,
                Ok(None) => return "the supervisor closed the connection".to_owned(),
                Err(e) => return e.to_string(),
            },
        };
        if let Err(e) = write.write_all(&out.to_line()).await {
            return e.to_string();
        }
    }
}

/// How soon a heartbeat follows an event.
const PROMPT: Duration = Duration::from_millis(50);

fn heartbeat(
    links: &Links,
    session: &str,
    stderr_seq: &mut u64,
    shown_pid: &mut (u32, u32),
) -> Heartbeat {
    let now = Instant::now();
    let stderr_tail = {
        let recent = links
            .recent_stderr
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (recent.0 != *stderr_seq).then(|| {
            *stderr_seq = recent.0;
            let bytes: Vec<u8> = recent.1.iter().copied().collect();
            warden_wire::redact::redact_text(&String::from_utf8_lossy(&bytes))
        })
    };
    let r = links.router();
    let inflight = r
        .inflight(now)
        .into_iter()
        .map(|v| Inflight {
            id: v.id.to_value(),
            method: v.method,
            tool: v.tool,
            age_ms: v.age.as_millis() as u64,
            idle_ms: v.idle.as_millis() as u64,
            progress: v.progress,
        })
        .collect();
    let approvals = r
        .asking(now)
        .into_iter()
        .map(|a| Approval {
            id: a.approval,
            tool: a.tool,
            args: a.args,
            age_ms: a.age.as_millis() as u64,
            left_ms: a.left.as_millis() as u64,
            client_asked: a.client_asked,
        })
        .collect();
    let s = r.stats;
    let pid = links.server_pid.load(Ordering::Relaxed);
    if shown_pid.0 != pid || shown_pid.1 == pid {
        *shown_pid = (pid, super::child::command_pid(pid));
    }
    let pid = shown_pid.1;
    Heartbeat {
        session: session.to_owned(),
        ts_ms: now_ms(),
        client: r.client.clone(),
        era: r.client_era(),
        adapted: r.adapting(),
        server_pid: (pid != 0).then_some(pid),
        generation: r.generation(),
        circuit_open: r.circuit_open(),
        fallback: r.serving_fallback(),
        debug: links.sink.debug_on(),
        sandbox: super::sandbox::mode_name(links.sandbox.load(Ordering::Relaxed)).to_owned(),
        inflight,
        stats: SessionStats {
            requests: s.requests,
            errors: s.errors,
            timeouts: s.timeouts,
            cancelled: s.cancelled,
            restarts: s.restarts,
            retries: s.retries,
            bytes_from_client: s.bytes_from_client,
            bytes_from_server: s.bytes_from_server,
        },
        stderr_tail,
        approvals,
    }
}

/// Carries out a command now. Fallback and debug are also settings: the supervisor writes
/// them to config.toml, which keeps them after this session.
fn obey(links: &Links, action: Action) -> (bool, String) {
    match action {
        Action::Restart { .. } => {
            links.route_now(|r, out| r.request_restart(out));
            (true, "restarting the server".to_owned())
        }
        Action::Fallback { on, .. } => {
            links.route_now(|r, out| {
                let limits = warden_config::Limits {
                    force_fallback: on,
                    ..(**r.limits()).clone()
                };
                r.set_limits(Arc::new(limits), Instant::now(), out);
            });
            (true, format!("fallback {}", if on { "on" } else { "off" }))
        }
        Action::Answer {
            approval,
            allow,
            always,
        } => {
            let mut found = false;
            links.route_now(|r, out| {
                found = r.answer_approval(&approval, allow, always, Instant::now(), out);
            });
            if found {
                (
                    true,
                    format!("{} {approval}", if allow { "allowed" } else { "denied" }),
                )
            } else {
                (
                    false,
                    format!(
                        "no call waits for approval {approval} (answered already, or timed out)"
                    ),
                )
            }
        }
        Action::Debug { on, .. } => {
            links.sink.set_debug(on);
            links.sink.event(Event::new("debug").detail(if on {
                "on: by command"
            } else {
                "off: by command"
            }));
            (
                true,
                format!("debug logging {}", if on { "on" } else { "off" }),
            )
        }
    }
}
