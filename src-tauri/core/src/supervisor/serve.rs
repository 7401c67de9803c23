//! The control socket, supervisor side. The first message of a connection says who speaks:
//! `hello` (a bridge: heartbeats, events and acks follow, commands go back), or a request of
//! a command-line client (`status`, `command`, or an `api_request` of the typed API).

use std::sync::Arc;

use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::UnixListener;
use tokio::net::UnixStream;
use tokio::sync::{broadcast, mpsc};

use super::api::{ApiMessage, Request, Response};
use super::service::Supervisor;
use crate::control::{self, Action, Message, VERSION};
use crate::protocol::{Frame, FrameReader};

/// Largest control line (a heartbeat with many requests in flight stays far below).
const MAX_LINE: usize = 16 << 20;
/// Lines queued towards one peer; a subscriber that does not read loses events, not memory.
const QUEUE: usize = 1024;

/// Serves until aborted; aborting it ends every connection too.
pub(super) async fn serve(sup: Arc<Supervisor>, listener: UnixListener) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        match control::socket::accept(&listener).await {
            Ok(stream) => {
                connections.spawn(connection(Arc::clone(&sup), stream));
            }
            Err(e) => {
                // Out of file descriptors, most likely: wait instead of spinning.
                tracing::warn!("control socket: cannot accept a connection: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    }
}

async fn connection(sup: Arc<Supervisor>, stream: UnixStream) {
    // The kernel's word for the peer's pid, in our pid namespace (a bridge's own `pid` may be
    // in another one, inside a container).
    let peer_pid = stream
        .peer_cred()
        .ok()
        .and_then(|c| c.pid())
        .and_then(|p| u32::try_from(p).ok());
    let (read, mut write) = stream.into_split();
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(QUEUE);
    let writer = tokio::spawn(async move {
        while let Some(line) = rx.recv().await {
            let mut batch = line;
            while let Ok(more) = rx.try_recv() {
                batch.extend_from_slice(&more);
            }
            if write.write_all(&batch).await.is_err() {
                return;
            }
        }
        let _ = write.shutdown().await;
    });
    let conn = sup.new_conn();
    let mut session: Option<String> = None;
    let mut forwarders = Vec::new();
    let mut reader = FrameReader::new(read, MAX_LINE);
    loop {
        let line = match reader.next().await {
            Ok(Some(Frame::Message(line))) => line,
            Ok(Some(_)) => continue,
            Ok(None) | Err(_) => break,
        };
        let Ok(value) = serde_json::from_slice::<Value>(&line) else {
            let _ = tx
                .send(
                    Message::Error {
                        message: "not a JSON line; closing".to_owned(),
                    }
                    .to_line(),
                )
                .await;
            break;
        };
        let is_api = value
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.starts_with("api_"));
        if is_api {
            match serde_json::from_value::<ApiMessage>(value) {
                Ok(ApiMessage::ApiRequest {
                    id,
                    request: Request::Subscribe,
                }) => {
                    let reply = ApiMessage::ApiResponse {
                        id,
                        response: Response::Subscribed,
                    };
                    let _ = tx.send(reply.to_line()).await;
                    forwarders.push(tokio::spawn(forward_events(sup.subscribe(), tx.clone())));
                }
                Ok(ApiMessage::ApiRequest { id, request }) => {
                    let sup = Arc::clone(&sup);
                    let tx = tx.clone();
                    tokio::spawn(async move {
                        let response = sup.handle(request).await;
                        let _ = tx
                            .send(ApiMessage::ApiResponse { id, response }.to_line())
                            .await;
                    });
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = tx
                        .send(
                            Message::Error {
                                message: format!(
                                    "unknown request ({e}); is this `warden` newer than the supervisor? Restart the tray app or `warden daemon` after updating"
                                ),
                            }
                            .to_line(),
                        )
                        .await;
                }
            }
            continue;
        }
        let Ok(message) = serde_json::from_value::<Message>(value) else {
            continue; // a type of a newer version
        };
        match message {
            Message::Hello(hello) => {
                if hello.v != VERSION {
                    let message = format!(
                        "this supervisor speaks control protocol v{VERSION} and the bridge v{}: update warden so that the tray app, `warden daemon` and the bridges are the same version",
                        hello.v
                    );
                    tracing::warn!(
                        "control socket: refused bridge pid {}: {message}",
                        hello.pid
                    );
                    let _ = tx.send(Message::Error { message }.to_line()).await;
                    break;
                }
                session = Some(hello.session.clone());
                sup.on_hello(conn, hello, peer_pid, tx.clone());
            }
            Message::Heartbeat(hb) => {
                if let Some(s) = &session {
                    sup.on_heartbeat(s, hb);
                }
            }
            Message::Event { event, .. } => {
                if let Some(s) = &session {
                    sup.on_event(s, event);
                }
            }
            Message::Ack { id, ok, message } => sup.on_ack(id, ok, message),
            Message::Status { id } => {
                let status = serde_json::to_value(sup.status()).unwrap_or(Value::Null);
                let _ = tx.send(Message::StatusReply { id, status }.to_line()).await;
            }
            Message::Command(cmd) => {
                let sup = Arc::clone(&sup);
                let tx = tx.clone();
                tokio::spawn(async move {
                    let request = match cmd.action {
                        Action::Restart { server } => Request::Restart { server },
                        Action::Fallback { server, on } => Request::Fallback { server, on },
                        Action::Debug { server, on } => Request::Debug { server, on },
                    };
                    let (ok, message) = match sup.handle(request).await {
                        Response::Command(o) => (o.ok, o.message),
                        Response::Error(e) => (false, e.message),
                        _ => (false, "unexpected answer".to_owned()),
                    };
                    let _ = tx
                        .send(
                            Message::Ack {
                                id: cmd.id,
                                ok,
                                message,
                            }
                            .to_line(),
                        )
                        .await;
                });
            }
            Message::Error { message } => {
                tracing::warn!("control socket: a peer reports: {message}");
            }
            Message::StatusReply { .. } => {}
        }
    }
    if let Some(s) = &session {
        sup.on_close(conn, s);
    }
    for f in forwarders {
        f.abort();
    }
    drop(tx);
    let _ = writer.await;
}

async fn forward_events(
    mut events: broadcast::Receiver<super::api::ApiEvent>,
    tx: mpsc::Sender<Vec<u8>>,
) {
    loop {
        match events.recv().await {
            Ok(event) => {
                let line = ApiMessage::ApiEvent { event }.to_line();
                match tx.try_send(line) {
                    Ok(()) | Err(mpsc::error::TrySendError::Full(_)) => {}
                    Err(mpsc::error::TrySendError::Closed(_)) => return,
                }
            }
            Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}
