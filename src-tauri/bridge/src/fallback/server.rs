//! `warden rg-server`: the search tools as a stdio MCP server. Tool calls run concurrently (a
//! slow search never holds up `ping`); `notifications/cancelled` stops the search and its answer;
//! stdin EOF ends the server at once, stopping whatever still runs.
//!
//! Both protocol eras, chosen per request as a dual-era server does: `initialize` (and any
//! request without a `_meta` protocol version) is legacy and answered byte for byte as before;
//! `server/discover` and a request whose `params._meta` names 2026-07-28 are modern (no state,
//! no `initialize` needed): their results carry `resultType: "complete"` and the server's info in
//! `_meta`, `tools/list` also `ttlMs`/`cacheScope`; a `_meta` naming another version gets -32022.

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};

use super::{Engine, EngineChoice, Search, tools_json};
use warden_wire::protocol::{
    Frame, FrameReader, META_PROTOCOL_VERSION, META_SERVER_INFO, MODERN_VERSION,
    UNSUPPORTED_PROTOCOL_VERSION, find_id_in_fragments,
};

/// `serverInfo.name` in the `initialize` result.
pub const SERVER_NAME: &str = "warden-rg";
const PROTOCOL_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";
/// `ttlMs` of a modern `tools/list`: 0, immediately stale. The list never changes in one
/// process, but the bridge may swap this server for the real one (with other tools) at any
/// time, and a client must not keep the fallback's list past that.
const TOOLS_TTL_MS: u64 = 0;
/// Requests are small; a line over this is answered with an error and skipped.
const MAX_REQUEST_BYTES: usize = 16 << 20;

/// What `warden rg-server` runs with.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Directories searches may touch; none means the current directory.
    pub roots: Vec<PathBuf>,
    /// Which engine searches.
    pub engine: EngineChoice,
    /// Cap on the output text of one result.
    pub max_output_bytes: usize,
}

/// Runs the server on this process's stdin and stdout until stdin closes. Returns the exit
/// code: 0 at EOF, 1 if stdin or stdout failed, 2 if the options are unusable (the reason is
/// printed on stderr).
pub fn rg_server_main(options: ServerOptions) -> u8 {
    let search = Engine::select(options.engine)
        .and_then(|engine| Search::new(&options.roots, engine, options.max_output_bytes));
    let search = match search {
        Ok(search) => search,
        Err(e) => {
            eprintln!("warden rg-server: {e}");
            return 2;
        }
    };
    match search.engine() {
        Engine::Rg(rg) => tracing::info!("searching with {}", rg.display()),
        Engine::Builtin if options.engine == EngineChoice::Auto => {
            tracing::warn!("no rg found on PATH (or WARDEN_RG); searching with the built-in engine")
        }
        Engine::Builtin => {}
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("warden rg-server: cannot start the async runtime: {e}");
            return 1;
        }
    };
    let result = runtime.block_on(serve(
        Arc::new(search),
        tokio::io::stdin(),
        tokio::io::stdout(),
    ));
    // A built-in search blocked in a read must not hold the exit.
    runtime.shutdown_background();
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("warden rg-server: {e}");
            1
        }
    }
}

/// How long calls still running when stdin closes may take to answer.
const FINISH_AT_EOF: std::time::Duration = std::time::Duration::from_secs(10);

/// Serves MCP over newline-delimited JSON-RPC on `input`/`output` until `input` ends (`Ok`) or
/// either side fails. At the end of `input`, calls still running get up to 10 s to answer;
/// then (or when the output fails) they are stopped.
pub async fn serve<R, W>(search: Arc<Search>, input: R, output: W) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel();
    let mut writer = tokio::spawn(write_lines(output, rx));
    let mut session = Session {
        search,
        tx,
        calls: JoinSet::new(),
        running: HashMap::new(),
    };
    let mut reader = FrameReader::new(input, MAX_REQUEST_BYTES);
    let mut writer_result = None;
    let result = loop {
        tokio::select! {
            frame = reader.next() => match frame {
                Ok(Some(Frame::Message(line))) => session.handle(&line),
                Ok(Some(Frame::Oversize { head, tail, len })) => {
                    let id = find_id_in_fragments(&head, &tail).map(|id| id.to_value());
                    let message = format!("request of {len} bytes is over the limit of {MAX_REQUEST_BYTES}");
                    session.send(error_line(id.unwrap_or(Value::Null), -32600, &message));
                }
                // Streaming is not turned on for this reader.
                Ok(Some(Frame::Begin(_) | Frame::Part { .. })) => {}
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            },
            Some(done) = session.calls.join_next_with_id() => {
                if let Ok((task, ())) = done {
                    session.running.retain(|_, handle| handle.id() != task);
                }
            }
            written = &mut writer => {
                let written = written.unwrap_or_else(|e| Err(io::Error::other(e)));
                writer_result = Some(Ok(()));
                break written;
            }
        }
    };
    if result.is_ok() && writer_result.is_none() {
        // Stdin closed: answer the calls still running (as mcp-ripgrep does), for a while.
        let _ = tokio::time::timeout(FINISH_AT_EOF, async {
            while session.calls.join_next().await.is_some() {}
        })
        .await;
    }
    session.calls.abort_all();
    while session.calls.join_next().await.is_some() {}
    drop(session);
    let written = match writer_result {
        Some(done) => done,
        None => writer.await.unwrap_or_else(|e| Err(io::Error::other(e))),
    };
    result.and(written)
}

struct Session {
    search: Arc<Search>,
    tx: mpsc::UnboundedSender<String>,
    calls: JoinSet<()>,
    /// Calls in flight by the JSON text of their id.
    running: HashMap<String, AbortHandle>,
}

impl Session {
    fn send(&self, line: String) {
        // Fails only once the writer is gone, and then the loop ends.
        let _ = self.tx.send(line);
    }

    fn handle(&mut self, line: &[u8]) {
        let message: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => {
                return self.send(error_line(
                    Value::Null,
                    -32700,
                    &format!("Parse error: {e}"),
                ));
            }
        };
        let Value::Object(message) = message else {
            let text = "Invalid request: expected one JSON-RPC object (batches are not supported)";
            return self.send(error_line(Value::Null, -32600, text));
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let id = message.get("id").filter(|id| !id.is_null()).cloned();
        match (message.get("method").and_then(Value::as_str), id) {
            (Some(method), Some(id)) => self.request(method, id, params),
            (Some("notifications/cancelled"), None) => {
                let key = params.get("requestId").map(Value::to_string);
                if let Some(call) = key.and_then(|key| self.running.remove(&key)) {
                    call.abort();
                }
            }
            // Other notifications, and responses (this server sends no requests).
            _ => {}
        }
    }

    fn request(&mut self, method: &str, id: Value, params: Value) {
        let asked = params
            .get("_meta")
            .and_then(|m| m.get(META_PROTOCOL_VERSION))
            .and_then(Value::as_str);
        match asked {
            _ if method == "initialize" => {}
            // A legacy version in `_meta` (no dual-era client sends one, but it names its era).
            Some(v) if PROTOCOL_VERSIONS.contains(&v) => {}
            Some(MODERN_VERSION) => return self.modern_request(method, id, params),
            Some(other) => return self.send(unsupported_version(id, other)),
            None if method == "server/discover" => return self.modern_request(method, id, params),
            None => {}
        }
        match method {
            "initialize" => {
                let asked = params.get("protocolVersion").and_then(Value::as_str);
                let version = asked
                    .filter(|v| PROTOCOL_VERSIONS.contains(v))
                    .unwrap_or(LATEST_PROTOCOL_VERSION);
                let result = json!({
                    "protocolVersion": version,
                    "capabilities": { "tools": {} },
                    "serverInfo": { "name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION") },
                });
                self.send(result_line(&id, &result.to_string()));
            }
            "ping" => self.send(result_line(&id, "{}")),
            "tools/list" => self.send(result_line(&id, &format!("{{\"tools\":{}}}", tools_json()))),
            "tools/call" => self.call(id, params, false),
            _ => self.send(error_line(
                id,
                -32601,
                &format!("Method not found: {method}"),
            )),
        }
    }

    /// A 2026-07-28 request: stateless, each result marked complete (MCP 2026-07-28 has no
    /// `ping`).
    fn modern_request(&mut self, method: &str, id: Value, params: Value) {
        match method {
            "server/discover" => {
                let result = json!({
                    "supportedVersions": [MODERN_VERSION],
                    "capabilities": { "tools": {} },
                    "serverInfo": server_info(),
                });
                self.send(result_line(&id, &modern_result(&result.to_string())));
            }
            "tools/list" => {
                let result = format!(
                    "{{\"tools\":{},\"ttlMs\":{TOOLS_TTL_MS},\"cacheScope\":\"private\"}}",
                    tools_json()
                );
                self.send(result_line(&id, &modern_result(&result)));
            }
            "tools/call" => self.call(id, params, true),
            _ => self.send(error_line(
                id,
                -32601,
                &format!("Method not found: {method}"),
            )),
        }
    }

    fn call(&mut self, id: Value, params: Value, modern: bool) {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return self.send(error_line(
                id,
                -32602,
                "Invalid params: tools/call needs a tool name",
            ));
        };
        if !Search::has_tool(name) {
            return self.send(error_line(id, -32602, &format!("Unknown tool: {name}")));
        }
        let name = name.to_owned();
        let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
        let (search, tx, key) = (Arc::clone(&self.search), self.tx.clone(), id.to_string());
        let call = self.calls.spawn(async move {
            if let Some(result) = search.call(&name, &arguments).await {
                let result = result.to_json_string();
                let result = if modern {
                    modern_result(&result)
                } else {
                    result
                };
                let _ = tx.send(result_line(&id, &result));
            }
        });
        self.running.insert(key, call);
    }
}

fn server_info() -> Value {
    json!({ "name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION") })
}

/// A result object's JSON text as a modern result: `resultType` and `_meta` (the server's
/// info) first, then its own members.
fn modern_result(result_json: &str) -> String {
    let members = result_json.trim().strip_prefix('{').unwrap_or("}");
    let head = json!({ "resultType": "complete", "_meta": { META_SERVER_INFO: server_info() } })
        .to_string();
    let head = head.strip_suffix('}').unwrap_or(&head);
    if members.trim_start().starts_with('}') {
        format!("{head}}}")
    } else {
        format!("{head},{members}")
    }
}

/// -32022: the request's `_meta` names a version this server does not speak.
fn unsupported_version(id: Value, asked: &str) -> String {
    let line = json!({ "jsonrpc": "2.0", "id": id, "error": {
        "code": UNSUPPORTED_PROTOCOL_VERSION,
        "message": format!("Unsupported protocol version: this server speaks {MODERN_VERSION} (and the initialize handshake)"),
        "data": { "supported": [MODERN_VERSION], "requested": asked },
    }});
    format!("{line}\n")
}

fn result_line(id: &Value, result_json: &str) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{result_json}}}\n")
}

fn error_line(id: Value, code: i64, message: &str) -> String {
    let line = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } });
    format!("{line}\n")
}

/// Writes what is queued, one flush per batch.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut out: W,
    mut rx: mpsc::UnboundedReceiver<String>,
) -> io::Result<()> {
    while let Some(line) = rx.recv().await {
        out.write_all(line.as_bytes()).await?;
        while let Ok(more) = rx.try_recv() {
            out.write_all(more.as_bytes()).await?;
        }
        out.flush().await?;
    }
    Ok(())
}
