//! The control socket, supervisor side. The first message of a connection says who speaks:
//! `hello` (a bridge: heartbeats, events and acks follow, commands go back), or an
//! `api_request` of the typed API (the command line, the window). A line of the retired
//! protocol the command line spoke before the API (`status`, `command`) is answered with an
//! error that says to update `warden`.
//!
//! Each peer is judged once, at connect (`Peer::origin`, by its pidfd where the kernel gives one).
//! A peer outside the supervisor's user and pid namespaces (a sandboxed server, a container) may do
//! only what is [`Access::Observe`]: reading the supervisor's state, and a bridge's hello,
//! heartbeats and events. Anything else it sends gets `W-CONTROL-FOREIGN` (an API error, a failed
//! ack for a command, an error line for another message) and is logged with the peer's pid.

use std::ops::ControlFlow;
use std::sync::Arc;

use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::sync::{broadcast, mpsc};

use super::api::{ApiError, ApiMessage, ErrorCode, Request, Response};
use super::dispatch::Access;
use super::service::Supervisor;
use warden_control::socket::{Listener, PeerOrigin, Stream, WriteHalf};
use warden_control::{self as control, Message, VERSION};
use warden_wire::codes::Code;
use warden_wire::protocol::{Frame, FrameReader};

/// The answer to a line of the protocol the command line spoke before the typed API.
const RETIRED: &str = "this `warden` speaks a control protocol the supervisor no longer serves (it answers the typed API only); update `warden` to the supervisor's version";

/// Largest control line (a heartbeat with many requests in flight stays far below).
const MAX_LINE: usize = 16 << 20;
/// Lines queued towards one peer; a subscriber that does not read loses events, not memory.
const QUEUE: usize = 1024;

/// Serves until aborted; aborting it ends every connection too.
pub(super) async fn serve(sup: Arc<Supervisor>, listener: Listener) {
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

async fn connection(sup: Arc<Supervisor>, stream: Stream) {
    // The kernel's word for the peer (a bridge's own `pid` may be in another pid namespace,
    // inside a container): its pid in ours and, where the kernel has it, its pidfd.
    let peer = control::socket::Peer::of(&stream);
    // Judged once, at connect (on the process itself where there is a pidfd).
    let foreign = match peer.origin() {
        PeerOrigin::Own => None,
        PeerOrigin::Foreign(why) => Some(why),
    };
    let (read, write) = control::socket::split(stream);
    let (tx, rx) = mpsc::channel::<Vec<u8>>(QUEUE);
    let writer = tokio::spawn(write_lines(write, rx));
    let mut conn = Conn {
        id: sup.new_conn(),
        sup,
        peer,
        foreign,
        tx,
        session: None,
        forwarders: Vec::new(),
    };
    let mut reader = FrameReader::new(read, MAX_LINE);
    loop {
        let line = match reader.next().await {
            Ok(Some(Frame::Message(line))) => line,
            Ok(Some(_)) => continue,
            Ok(None) | Err(_) => break,
        };
        let Ok(value) = serde_json::from_slice::<Value>(&line) else {
            conn.send_error("not a JSON line; closing".to_owned()).await;
            break;
        };
        let is_api = value
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.starts_with("api_"));
        if is_api {
            conn.on_api(value).await;
            continue;
        }
        let Ok(message) = serde_json::from_value::<Message>(value) else {
            if conn.session.is_none() {
                conn.send_error(RETIRED.to_owned()).await;
            }
            continue; // from a bridge: a type of a newer version
        };
        if conn.on_control(message).await.is_break() {
            break;
        }
    }
    if let Some(s) = &conn.session {
        conn.sup.on_close(conn.id, s);
    }
    for f in conn.forwarders {
        f.abort();
    }
    drop(conn.tx);
    let _ = writer.await;
}

/// Writes the queued lines to the peer, in batches, until the queue closes.
async fn write_lines(mut write: WriteHalf, mut rx: mpsc::Receiver<Vec<u8>>) {
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
}

/// One connection: a bridge's once it said hello, else a client's.
struct Conn {
    sup: Arc<Supervisor>,
    id: u64,
    peer: control::socket::Peer,
    /// Why the peer is in other namespaces than ours, if it is: it may only observe.
    foreign: Option<String>,
    /// Lines to the peer.
    tx: mpsc::Sender<Vec<u8>>,
    /// The bridge's session, once it said hello.
    session: Option<String>,
    /// Event streams to a subscribed client.
    forwarders: Vec<tokio::task::JoinHandle<()>>,
}

impl Conn {
    async fn send_error(&self, message: String) {
        let _ = self.tx.send(Message::Error { message }.to_line()).await;
    }

    /// The refusal of a request (named `op`, doing what `access` says) when the peer is
    /// foreign, logged.
    fn refusal(&self, access: Access, op: impl FnOnce() -> String) -> Option<String> {
        let why = self.foreign.as_deref()?;
        if access == Access::Observe {
            return None;
        }
        let op = op();
        let pid = self
            .peer
            .pid()
            .map_or_else(|| "unknown".to_owned(), |p| p.to_string());
        tracing::warn!("control socket: refused `{op}` of pid {pid} ({why})");
        Some(foreign_refusal(&op, access, why))
    }

    /// A line of the typed API: requests are served concurrently, a subscription streams.
    async fn on_api(&mut self, value: Value) {
        match serde_json::from_value::<ApiMessage>(value) {
            Ok(ApiMessage::ApiRequest {
                id,
                request: Request::Subscribe,
            }) => {
                let reply = ApiMessage::ApiResponse {
                    id,
                    response: Response::Subscribed,
                };
                let _ = self.tx.send(reply.to_line()).await;
                let events = self.sup.subscribe();
                self.forwarders
                    .push(tokio::spawn(forward_events(events, self.tx.clone())));
            }
            Ok(ApiMessage::ApiRequest { id, request }) => {
                if let Some(message) = self.refusal(request.access(), || request.op()) {
                    let response = Response::Error(ApiError::new(ErrorCode::Invalid, message));
                    let reply = ApiMessage::ApiResponse { id, response };
                    let _ = self.tx.send(reply.to_line()).await;
                    return;
                }
                let sup = Arc::clone(&self.sup);
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    let response = sup.handle(request).await;
                    let _ = tx
                        .send(ApiMessage::ApiResponse { id, response }.to_line())
                        .await;
                });
            }
            Ok(_) => {}
            Err(e) => {
                self.send_error(format!(
                    "unknown request ({e}); is this `warden` newer than the supervisor? Restart the tray app or `warden daemon` after updating"
                ))
                .await;
            }
        }
    }

    /// A control message: a bridge's hello, heartbeat, event or ack. `Break` closes the
    /// connection.
    async fn on_control(&mut self, message: Message) -> ControlFlow<()> {
        if let Some(refusal) =
            self.refusal(message_access(&message), || message_op(&message).to_owned())
        {
            match message {
                Message::Command(cmd) => {
                    let ack = Message::Ack {
                        id: cmd.id,
                        ok: false,
                        message: refusal,
                    };
                    let _ = self.tx.send(ack.to_line()).await;
                }
                _ => self.send_error(refusal).await,
            }
            return ControlFlow::Continue(());
        }
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
                    self.send_error(message).await;
                    return ControlFlow::Break(());
                }
                self.session = Some(hello.session.clone());
                self.sup
                    .on_hello(self.id, hello, &self.peer, self.tx.clone());
            }
            Message::Heartbeat(hb) => {
                if let Some(s) = &self.session {
                    self.sup.on_heartbeat(s, hb);
                }
            }
            Message::Event { event, .. } => {
                if let Some(s) = &self.session {
                    self.sup.on_event(s, event);
                }
            }
            Message::Ack { id, ok, message } => self.sup.on_ack(id, ok, message),
            Message::Command(cmd) => {
                // Only the supervisor sends commands: this peer speaks the retired protocol.
                let ack = Message::Ack {
                    id: cmd.id,
                    ok: false,
                    message: RETIRED.to_owned(),
                };
                let _ = self.tx.send(ack.to_line()).await;
            }
            Message::Error { message } => {
                tracing::warn!("control socket: a peer reports: {message}");
            }
        }
        ControlFlow::Continue(())
    }
}

/// What a control message does (exhaustive: a new message must be classified). A bridge's
/// reports only observe; a command acts, and an ack answers for a bridge.
fn message_access(message: &Message) -> Access {
    match message {
        Message::Hello(_)
        | Message::Heartbeat(_)
        | Message::Event { .. }
        | Message::Error { .. } => Access::Observe,
        Message::Command(_) | Message::Ack { .. } => Access::Act,
    }
}

/// A control message's name on the wire, for messages.
fn message_op(message: &Message) -> &'static str {
    match message {
        Message::Hello(_) => "hello",
        Message::Heartbeat(_) => "heartbeat",
        Message::Event { .. } => "event",
        Message::Command(_) => "command",
        Message::Ack { .. } => "ack",
        Message::Error { .. } => "error",
    }
}

/// The message of a request refused because its peer is in other namespaces (`why`).
fn foreign_refusal(op: &str, access: Access, why: &str) -> String {
    format!(
        "refused `{op}`, which {}: it comes from a process outside the supervisor's user and pid namespaces ({why}), such as a sandboxed server or a container, which may watch but not act; run it from your own session [{}]",
        access.what(),
        Code::ControlForeign.as_str()
    )
}

async fn forward_events(
    mut events: broadcast::Receiver<std::sync::Arc<super::api::ApiEvent>>,
    tx: mpsc::Sender<Vec<u8>>,
) {
    loop {
        match events.recv().await {
            Ok(event) => {
                let line = ApiMessage::ApiEvent {
                    event: (*event).clone(),
                }
                .to_line();
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
