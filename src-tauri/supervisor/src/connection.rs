//! A connection to a running supervisor over the control socket (the command line's and the
//! window's side): `warden status`, commands and the typed API.

use std::path::{Path, PathBuf};

use serde::Deserialize as _;
use serde_json::Value;
use tokio::io::AsyncWriteExt;

use super::api::{ApiError, ApiEvent, ApiMessage, Request, Response, StatusReport};
use warden_control as control;
use warden_control::socket::{ReadHalf, WriteHalf};
use warden_rpc::Op;
use warden_wire::protocol::{Frame, FrameReader};

const MAX_LINE: usize = 64 << 20;

#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    #[error("no supervisor is running; start the tray app or `warden daemon` (no control socket answers at {})", .0.display())]
    NotRunning(PathBuf),
    #[error("cannot use the control socket {}: {reason}", path.display())]
    Refused { path: PathBuf, reason: String },
    #[error("the supervisor refused: {0}")]
    Supervisor(String),
    /// The supervisor's answer to a request: it could not be carried out, and why.
    #[error("{}", .0.message)]
    Api(ApiError),
    #[error(
        "the supervisor closed the connection without answering (it refuses connections of other users; check that it runs as you)"
    )]
    Closed,
    #[error("control socket: {0}")]
    Io(#[from] std::io::Error),
}

pub struct Connection {
    reader: FrameReader<ReadHalf>,
    writer: WriteHalf,
    next_id: u64,
}

impl Connection {
    /// Connects to the supervisor at `path` (see [`control::socket::socket_path`]).
    pub async fn connect(path: &Path) -> Result<Connection, ConnectionError> {
        let stream = match control::socket::connect(path).await {
            Ok(s) => s,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
                ) =>
            {
                return Err(ConnectionError::NotRunning(path.to_owned()));
            }
            Err(e) => {
                return Err(ConnectionError::Refused {
                    path: path.to_owned(),
                    reason: e.to_string(),
                });
            }
        };
        let (read, writer) = control::socket::split(stream);
        Ok(Connection {
            reader: FrameReader::new(read, MAX_LINE),
            writer,
            next_id: 1,
        })
    }

    async fn send(&mut self, line: &[u8]) -> Result<(), ConnectionError> {
        self.writer.write_all(line).await?;
        Ok(())
    }

    async fn next_line(&mut self) -> Result<Value, ConnectionError> {
        loop {
            match self.reader.next().await? {
                None => return Err(ConnectionError::Closed),
                Some(Frame::Message(line)) => {
                    if let Ok(v) = serde_json::from_slice::<Value>(&line) {
                        if v.get("type").and_then(Value::as_str) == Some("error") {
                            let msg = v
                                .get("message")
                                .and_then(Value::as_str)
                                .unwrap_or("no reason given");
                            return Err(ConnectionError::Supervisor(msg.to_owned()));
                        }
                        return Ok(v);
                    }
                }
                Some(_) => {}
            }
        }
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// `status` as the supervisor sent it ([`StatusReport`]'s shape, plus what newer
    /// versions add: `warden status --json` passes it on whole).
    pub async fn status_value(&mut self) -> Result<Value, ConnectionError> {
        let mut v = self.answer(Request::Status).await?;
        match v.get("kind").and_then(Value::as_str) {
            Some("status") => {
                if let Some(fields) = v.as_object_mut() {
                    fields.remove("kind");
                }
                Ok(v)
            }
            _ => Err(unexpected(&v)),
        }
    }

    pub async fn status(&mut self) -> Result<StatusReport, ConnectionError> {
        self.ask(super::api::op::Status).await
    }

    /// `request` (`ask(op::History { .. })`), answered with the value its type declares
    /// (`Vec<HistoryEntry>`); the supervisor's refusal is [`ConnectionError::Api`].
    pub async fn ask<O: Op<Request = Request, Response = Response>>(
        &mut self,
        request: O,
    ) -> Result<O::Answer, ConnectionError> {
        match O::unwrap(self.request(request.request()).await?) {
            Ok(answer) => Ok(answer),
            Err(Response::Error(e)) => Err(ConnectionError::Api(e)),
            Err(other) => Err(unexpected(&serde_json::to_value(other).unwrap_or_default())),
        }
    }

    /// One request of the typed API, its answer whichever it is.
    pub async fn request(&mut self, request: Request) -> Result<Response, ConnectionError> {
        let v = self.answer(request).await?;
        Response::deserialize(&v).map_err(|_| unexpected(&v))
    }

    /// The answer to `request`, as the supervisor sent it.
    async fn answer(&mut self, request: Request) -> Result<Value, ConnectionError> {
        let id = self.id();
        self.send(&ApiMessage::ApiRequest { id, request }.to_line())
            .await?;
        loop {
            let mut v = self.next_line().await?;
            if v.get("type").and_then(Value::as_str) == Some("api_response")
                && v.get("id").and_then(Value::as_u64) == Some(id)
            {
                return Ok(v.get_mut("response").map(Value::take).unwrap_or_default());
            }
        }
    }

    /// Turns this connection into the event stream; then call [`Connection::next_event`].
    pub async fn subscribe(&mut self) -> Result<(), ConnectionError> {
        self.request(Request::Subscribe).await.map(|_| ())
    }

    /// The next event of a subscribed connection.
    pub async fn next_event(&mut self) -> Result<ApiEvent, ConnectionError> {
        loop {
            let v = self.next_line().await?;
            if let Ok(ApiMessage::ApiEvent { event }) = serde_json::from_value::<ApiMessage>(v) {
                return Ok(event);
            }
        }
    }
}

/// An answer this version cannot read: the supervisor's error if it is one, else a version
/// mismatch.
fn unexpected(answer: &Value) -> ConnectionError {
    if let Some(message) = answer.get("message").and_then(Value::as_str)
        && answer.get("kind").and_then(Value::as_str) == Some("error")
    {
        return ConnectionError::Supervisor(message.to_owned());
    }
    ConnectionError::Supervisor(
        "its answer has an unexpected shape; are `warden` and the supervisor the same version? Restart the tray app or `warden daemon` after updating".to_owned(),
    )
}
