//! Probes: start a server (no shell, its own process group, dies with us), find its protocol
//! era, list its tools (every page), shut it down the MCP way (close stdin, 2 s, SIGTERM, 2 s,
//! SIGKILL), and report the cold-start time, the era and the tools. The same probe pre-warms
//! the package caches of `npx`/`uvx`-style commands, so an IDE's first start is fast.
//!
//! The era, as MCP's stdio rule for a dual-era client says: `server/discover` first (with the
//! 2026-07-28 `_meta`); a modern answer (a result whose `supportedVersions` has 2026-07-28)
//! makes the probe modern, and `tools/list` carries the same `_meta`. Any other answer, or none
//! within [`DISCOVER_WAIT`], falls back to `initialize` on the same process, as a legacy client
//! would. The wait is short but never counts against a slow first start (a package runner may
//! still be downloading, so the server has not read anything yet): `initialize` goes out
//! *behind* the still pending `server/discover`, which stays answerable until the probe's own
//! timeout, so a modern server that starts late still answers `server/discover` first and is
//! seen as modern. Only a server that ignores `server/discover` silently (some older SDKs drop
//! an unknown method) pays the wait, in its `cold_start_ms`.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::api::ProbeReport;
use warden_bridge::child::{GRACE, Server};
use warden_wire::codes::Code;
use warden_wire::events::now_ms;
use warden_wire::protocol::{
    Era, ErrorKind, Frame, FrameReader, LEGACY_VERSION, META_CLIENT_CAPABILITIES, META_CLIENT_INFO,
    META_PROTOCOL_VERSION, META_SERVER_INFO, MODERN_VERSION, UNSUPPORTED_PROTOCOL_VERSION,
};

/// Default bound for the handshake (covers a cold `npx` start on a fast network).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Bound for a pre-warm, which may download a package and its dependencies.
pub const PREWARM_TIMEOUT: Duration = Duration::from_secs(300);
/// How long the probe waits for an answer to `server/discover` before it sends `initialize`
/// too (the module's header says why this never cuts a slow first start short).
pub const DISCOVER_WAIT: Duration = Duration::from_secs(3);
const MAX_MESSAGE: usize = 64 << 20;
/// The ids of the probe's requests (none is 0, which careless servers take for no id);
/// `tools/list` pages count up from [`FIRST_PAGE_ID`].
const DISCOVER_ID: u64 = 1;
const INITIALIZE_ID: u64 = 2;
const FIRST_PAGE_ID: u64 = 3;
const STDERR_TAIL: usize = 4096;
const MAX_PAGES: usize = 100;

/// Whether `command` fetches a package before it runs (so probing it once warms a cache).
pub fn is_package_runner(command: &[String]) -> bool {
    warden_config::network::runner_preset(command).is_some()
}

/// Probes `command`, with `env` added to Warden's environment, in `cwd` (else Warden's own
/// working directory). Never fails: what went wrong is in the report.
pub async fn probe(
    server: Option<String>,
    command: &[String],
    env: &[(String, String)],
    cwd: Option<&Path>,
    timeout: Duration,
) -> ProbeReport {
    probe_with(server, command, env, cwd, timeout, DISCOVER_WAIT).await
}

/// [`probe`] with the wait for `server/discover` given (the tests shorten it).
async fn probe_with(
    server: Option<String>,
    command: &[String],
    env: &[(String, String)],
    cwd: Option<&Path>,
    timeout: Duration,
    discover_wait: Duration,
) -> ProbeReport {
    let start = Instant::now();
    let mut report = ProbeReport {
        server,
        command: command.to_vec(),
        ts_ms: now_ms(),
        ..ProbeReport::default()
    };
    let argv: Vec<OsString> = command.iter().map(OsString::from).collect();
    // Marked like a bridge's server, with our pid: the orphan sweeper leaves it alone while
    // we live, and it dies with us anyway.
    let marker = format!("{}-{}", std::process::id(), report.ts_ms);
    let (mut child, pipes) = match Server::spawn(&argv, env, cwd, &marker) {
        Ok(s) => s,
        Err(e) => {
            report.code = Some(
                match e.source.kind() {
                    std::io::ErrorKind::NotFound => Code::SpawnNotFound,
                    std::io::ErrorKind::PermissionDenied => Code::SpawnPermissionDenied,
                    _ => Code::SpawnError,
                }
                .as_str()
                .to_owned(),
            );
            report.error = Some(e.to_string());
            report.shutdown = "not started".to_owned();
            report.total_ms = elapsed_ms(start);
            return report;
        }
    };
    let tail = Arc::new(Mutex::new(Vec::<u8>::new()));
    let stderr_task = tokio::spawn(read_tail(pipes.stderr, Arc::clone(&tail)));
    let mut stdin = Some(pipes.stdin);
    let mut reader = FrameReader::new(pipes.stdout, MAX_MESSAGE);
    let deadline = tokio::time::Instant::now() + timeout;

    let outcome = async {
        let mut first_answer = None;
        let hello = handshake(
            &mut reader,
            &mut stdin,
            deadline,
            discover_wait,
            &child,
            &mut first_answer,
        )
        .await;
        if let Some(at) = first_answer {
            report.cold_start_ms = Some(at.duration_since(start).as_millis() as u64);
        }
        let hello = match hello {
            Ok(hello) => hello,
            Err((era, failure)) => {
                report.era = era;
                return Err(failure);
            }
        };
        report.era = Some(hello.era);
        report.server_info = hello
            .result
            .get("serverInfo")
            .or_else(|| hello.result.get("_meta")?.get(META_SERVER_INFO))
            .cloned();
        report.protocol_version = match hello.era {
            Era::Modern => Some(MODERN_VERSION.to_owned()),
            Era::Legacy => hello
                .result
                .get("protocolVersion")
                .and_then(Value::as_str)
                .map(str::to_owned),
        };
        if hello.era == Era::Legacy {
            send(
                &mut stdin,
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            )
            .await?;
        }
        list_tools(
            &mut reader,
            &mut stdin,
            deadline,
            &child,
            hello.era,
            &mut report.tool_names,
        )
        .await?;
        report.tools = Some(report.tool_names.len());
        Ok::<(), Failure>(())
    }
    .await;
    if let Err(Failure(code, e)) = outcome {
        report.code = Some(code.as_str().to_owned());
        report.error = Some(e);
    }
    report.ok = report.error.is_none();
    // Close stdin and let the server go, then TERM and KILL its group if it does not.
    drop(stdin.take());
    drop(reader);
    report.shutdown = child.shut_down(GRACE).await;
    let _ = tokio::time::timeout(GRACE, stderr_task).await;
    let tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
    // Secrets out: the values the probe put into the environment, and what looks like one.
    let mut text = String::from_utf8_lossy(&tail).into_owned();
    warden_wire::redact::hide_env_values(&mut text, env);
    report.stderr_tail = warden_wire::redact::redact_text(&text);
    // What the server said last is most often the reason ("API_KEY is not set").
    if let (Some(e), Some(line)) = (
        &mut report.error,
        report.stderr_tail.trim().lines().last().map(str::trim),
    ) {
        let _ = write!(e, "; its last stderr line: {line}");
    }
    report.total_ms = elapsed_ms(start);
    report
}

fn elapsed_ms(start: Instant) -> u64 {
    start.elapsed().as_millis() as u64
}

/// What went wrong, with its stable code.
struct Failure(Code, String);

/// The server ended (`how`) before answering `method`.
fn ended(how: &str, method: &str) -> Failure {
    let code = if how.contains("killed by signal") {
        Code::SpawnSignal
    } else {
        Code::SpawnExited
    };
    Failure(code, format!("the server {how} before answering {method}"))
}

fn answer_result<'a>(answer: &'a Value, what: &str) -> Result<&'a Value, Failure> {
    let invalid = |m: String| Failure(Code::InvalidResponse, m);
    if let Some(err) = answer.get("error") {
        let mut msg = err
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        // A modern-only server names the versions it speaks (-32022, `data.supported`).
        if let Some(versions) = err.pointer("/data/supported").and_then(Value::as_array) {
            let versions: Vec<&str> = versions.iter().filter_map(Value::as_str).collect();
            let _ = write!(msg, " (it speaks {})", versions.join(", "));
        }
        // A bridge in front of the server says why it could not start it (`spawn_failed`,
        // `data.code`): that is the cause, not the error answer itself.
        let code = err
            .pointer("/data/code")
            .and_then(Value::as_str)
            .and_then(|c| Code::ALL.iter().copied().find(|k| k.as_str() == c));
        return Err(match code {
            Some(code) => Failure(code, msg),
            None => invalid(format!("the server answered {what} with an error: {msg}")),
        });
    }
    answer
        .get("result")
        .ok_or_else(|| invalid(format!("the answer to {what} has no result")))
}

/// The server's answer that settled its era: to `server/discover` (modern) or to
/// `initialize` (legacy).
struct Hello {
    era: Era,
    result: Value,
}

/// What a failed handshake knew of the era (modern when a modern-only server refused
/// `initialize` with versions Warden does not speak), and the failure.
type HandshakeFailure = (Option<Era>, Failure);

/// `server/discover`, then `initialize` when its answer is not modern or does not come within
/// `wait` (the module's header says why). `first_answer` is when the server first answered.
async fn handshake(
    reader: &mut FrameReader<tokio::process::ChildStdout>,
    stdin: &mut Option<tokio::process::ChildStdin>,
    deadline: tokio::time::Instant,
    wait: Duration,
    child: &Server,
    first_answer: &mut Option<Instant>,
) -> Result<Hello, HandshakeFailure> {
    let discover = request(Era::Modern, DISCOVER_ID, "server/discover", json!({}));
    if let Err(e) = send(stdin, &discover).await {
        // Most often the server exited already: say how, not only that the pipe broke.
        let f = match gone(child).await {
            Some(how) => ended(&how, "server/discover"),
            None => e,
        };
        return Err((None, f));
    }
    let fall_back_at = tokio::time::Instant::now() + wait;
    let mut discover_pending = true;
    let mut init_sent = false;
    // `initialize` refused while `server/discover` is still unanswered: a server that answers
    // out of order may yet answer it.
    let mut init_refused: Option<HandshakeFailure> = None;
    loop {
        let pending = match (discover_pending, init_sent) {
            (true, false) => "server/discover",
            (true, true) => "server/discover or initialize",
            (false, _) => "initialize",
        };
        let until = if init_sent {
            deadline
        } else {
            fall_back_at.min(deadline)
        };
        let answer = read_answer(
            reader,
            stdin,
            until,
            child,
            pending,
            &[DISCOVER_ID, INITIALIZE_ID],
        )
        .await
        .map_err(|f| (None, f))?;
        let Some(answer) = answer else {
            if !init_sent && until < deadline {
                send_initialize(stdin, child).await.map_err(|f| (None, f))?;
                init_sent = true;
                continue;
            }
            return Err(init_refused.unwrap_or((None, timed_out(pending))));
        };
        first_answer.get_or_insert_with(Instant::now);
        if answer.get("id").and_then(Value::as_u64) == Some(DISCOVER_ID) {
            discover_pending = false;
            match discovered(&answer) {
                Discovered::Modern => {
                    let result = answer.get("result").cloned().unwrap_or_default();
                    return Ok(Hello {
                        era: Era::Modern,
                        result,
                    });
                }
                Discovered::NotStarted => {
                    let f = answer_result(&answer, "server/discover").err();
                    let f = f.unwrap_or_else(|| timed_out("server/discover"));
                    return Err((None, f));
                }
                Discovered::Legacy => {}
            }
            if let Some(refused) = init_refused.take() {
                return Err(refused);
            }
            if !init_sent {
                send_initialize(stdin, child).await.map_err(|f| (None, f))?;
                init_sent = true;
            }
            continue;
        }
        match answer_result(&answer, "initialize") {
            Ok(result) => {
                return Ok(Hello {
                    era: Era::Legacy,
                    result: result.clone(),
                });
            }
            Err(f) => {
                let era = (answer.pointer("/error/code").and_then(Value::as_i64)
                    == Some(UNSUPPORTED_PROTOCOL_VERSION))
                .then_some(Era::Modern);
                if !discover_pending {
                    return Err((era, f));
                }
                init_refused = Some((era, f));
            }
        }
    }
}

/// What an answer to `server/discover` says of the server's era.
#[derive(Debug, PartialEq)]
enum Discovered {
    /// A result whose `supportedVersions` has the version Warden speaks.
    Modern,
    /// A bridge in front of the server says it could not start it (`data.kind` and a Warden
    /// `data.code`): `initialize` would fare no better.
    NotStarted,
    /// Anything else (an error such as -32601, a result of another shape): `initialize` next.
    Legacy,
}

fn discovered(answer: &Value) -> Discovered {
    if let Some(err) = answer.get("error") {
        let kind = err.pointer("/data/kind").and_then(Value::as_str);
        let ours = err
            .pointer("/data/code")
            .and_then(Value::as_str)
            .is_some_and(|c| Code::ALL.iter().any(|k| k.as_str() == c));
        let start = [
            ErrorKind::SpawnFailed,
            ErrorKind::StartupTimeout,
            ErrorKind::CircuitOpen,
            ErrorKind::ServerExited,
        ];
        return if ours && start.iter().any(|k| Some(k.as_str()) == kind) {
            Discovered::NotStarted
        } else {
            Discovered::Legacy
        };
    }
    let speaks_ours = answer
        .pointer("/result/supportedVersions")
        .and_then(Value::as_array)
        .is_some_and(|v| v.iter().any(|v| v.as_str() == Some(MODERN_VERSION)));
    if speaks_ours {
        Discovered::Modern
    } else {
        Discovered::Legacy
    }
}

/// A request of the probe's: a modern one carries the 2026-07-28 `_meta` in its params.
fn request(era: Era, id: u64, method: &str, mut params: Value) -> Value {
    if era == Era::Modern {
        params["_meta"] = json!({
            META_PROTOCOL_VERSION: MODERN_VERSION,
            META_CLIENT_INFO: client_info(),
            META_CLIENT_CAPABILITIES: {},
        });
    }
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn client_info() -> Value {
    json!({"name": "warden-probe", "version": env!("CARGO_PKG_VERSION")})
}

async fn send_initialize(
    stdin: &mut Option<tokio::process::ChildStdin>,
    child: &Server,
) -> Result<(), Failure> {
    let params = json!({
        "protocolVersion": LEGACY_VERSION,
        "capabilities": {},
        "clientInfo": client_info(),
    });
    let init = request(Era::Legacy, INITIALIZE_ID, "initialize", params);
    if let Err(e) = send(stdin, &init).await {
        return Err(match gone(child).await {
            Some(how) => ended(&how, "initialize"),
            None => e,
        });
    }
    Ok(())
}

/// Every page of `tools/list` (up to [`MAX_PAGES`]): the tools' names, added to `names`
/// page by page.
async fn list_tools(
    reader: &mut FrameReader<tokio::process::ChildStdout>,
    stdin: &mut Option<tokio::process::ChildStdin>,
    deadline: tokio::time::Instant,
    child: &Server,
    era: Era,
    names: &mut Vec<String>,
) -> Result<(), Failure> {
    let mut cursor: Option<Value> = None;
    for page in 0..MAX_PAGES {
        let id = FIRST_PAGE_ID + page as u64;
        let mut msg = request(era, id, "tools/list", json!({}));
        if let Some(c) = &cursor {
            msg["params"]["cursor"] = c.clone();
        }
        let answer = exchange(reader, stdin, &msg, id, deadline, child).await?;
        let result = answer_result(&answer, "tools/list")?;
        if let Some(tools) = result.get("tools").and_then(Value::as_array) {
            names.extend(
                tools
                    .iter()
                    .filter_map(|t| t.get("name").and_then(Value::as_str))
                    .map(str::to_owned),
            );
        }
        cursor = result.get("nextCursor").filter(|c| !c.is_null()).cloned();
        if cursor.is_none() {
            break;
        }
    }
    Ok(())
}

async fn send(stdin: &mut Option<tokio::process::ChildStdin>, msg: &Value) -> Result<(), Failure> {
    let broken = |e: std::io::Error| {
        Failure(
            Code::SpawnExited,
            format!("cannot write to the server: {e}"),
        )
    };
    let Some(pipe) = stdin.as_mut() else {
        return Err(Failure(
            Code::SpawnExited,
            "the server's stdin is closed".to_owned(),
        ));
    };
    let mut line = msg.to_string().into_bytes();
    line.push(b'\n');
    pipe.write_all(&line).await.map_err(broken)?;
    pipe.flush().await.map_err(broken)
}

/// Sends `msg` and reads until the answer with `id`.
async fn exchange(
    reader: &mut FrameReader<tokio::process::ChildStdout>,
    stdin: &mut Option<tokio::process::ChildStdin>,
    msg: &Value,
    id: u64,
    deadline: tokio::time::Instant,
    child: &Server,
) -> Result<Value, Failure> {
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    if let Err(e) = send(stdin, msg).await {
        // Most often the server exited already: say how, not only that the pipe broke.
        return Err(match gone(child).await {
            Some(how) => ended(&how, method),
            None => e,
        });
    }
    read_answer(reader, stdin, deadline, child, method, &[id])
        .await?
        .ok_or_else(|| timed_out(method))
}

fn timed_out(method: &str) -> Failure {
    Failure(
        Code::SpawnStartupTimeout,
        format!(
            "no answer to {method} in time (the probe's limit); a cold npx/uvx start may need longer: raise it with --timeout-ms"
        ),
    )
}

/// Reads until an answer with one of `ids`, or `None` at `until`. Server requests meanwhile
/// (roots, sampling) are refused; notifications, other answers and stray output are skipped.
/// `method` names what is awaited, for the error when the server ends.
async fn read_answer(
    reader: &mut FrameReader<tokio::process::ChildStdout>,
    stdin: &mut Option<tokio::process::ChildStdin>,
    until: tokio::time::Instant,
    child: &Server,
    method: &str,
    ids: &[u64],
) -> Result<Option<Value>, Failure> {
    loop {
        let frame = match tokio::time::timeout_at(until, reader.next()).await {
            Err(_) => return Ok(None),
            Ok(Err(e)) => {
                return Err(Failure(
                    Code::SpawnError,
                    format!("cannot read the server's stdout: {e}"),
                ));
            }
            Ok(Ok(None)) => {
                let how = gone(child)
                    .await
                    .unwrap_or_else(|| "closed its stdout".to_owned());
                return Err(ended(&how, method));
            }
            Ok(Ok(Some(frame))) => frame,
        };
        let Frame::Message(line) = frame else {
            continue;
        };
        let Ok(v) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        if v.get("method").is_some() {
            if let Some(rid) = v.get("id") {
                let refuse = json!({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "a probe does not answer requests"}});
                send(stdin, &refuse).await?;
            }
            continue;
        }
        if v.get("id")
            .and_then(Value::as_u64)
            .is_some_and(|id| ids.contains(&id))
        {
            return Ok(Some(v));
        }
    }
}

/// How the server exited, if it did (the status arrives a moment after its pipes close).
async fn gone(child: &Server) -> Option<String> {
    let mut exit = child.exit.clone();
    let _ = tokio::time::timeout(Duration::from_millis(500), exit.wait_for(Option::is_some)).await;
    child.exited()
}

async fn read_tail(mut stderr: tokio::process::ChildStderr, tail: Arc<Mutex<Vec<u8>>>) {
    let mut buf = vec![0u8; 4096];
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            return;
        }
        let mut t = tail.lock().unwrap_or_else(PoisonError::into_inner);
        t.extend_from_slice(&buf[..n]);
        if t.len() > STDERR_TAIL {
            let cut = t.len() - STDERR_TAIL;
            t.drain(..cut);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_runners() {
        let c = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert!(is_package_runner(&c("npx -y mcp-ripgrep")));
        assert!(is_package_runner(&c("/usr/local/bin/uvx mcp-server-git")));
        assert!(is_package_runner(&c("pnpm dlx x")));
        assert!(is_package_runner(&c("npx.cmd -y x")));
        assert!(!is_package_runner(&c("node server.js")));
        assert!(!is_package_runner(&[]));
    }

    #[tokio::test]
    #[cfg_attr(windows, ignore = "runs `false`, a Unix program")]
    async fn a_server_that_exits_at_once_is_reported_with_its_exit() {
        for _ in 0..5 {
            let r = probe(None, &["false".to_owned()], &[], None, DEFAULT_TIMEOUT).await;
            assert!(!r.ok);
            assert_eq!(
                (r.error.unwrap_or_default(), r.code.unwrap_or_default()),
                (
                    "the server exited with status 1 before answering server/discover".to_owned(),
                    "W-SPAWN-EXITED".to_owned()
                )
            );
        }
    }

    #[tokio::test]
    async fn a_missing_program_is_reported_not_raised() {
        let r = probe(
            None,
            &["/nonexistent/warden-probe-test".to_owned()],
            &[],
            None,
            DEFAULT_TIMEOUT,
        )
        .await;
        assert_eq!(r.code.as_deref(), Some("W-SPAWN-NOT-FOUND"));
        assert!(
            r.error
                .unwrap_or_default()
                .contains("cannot start server command")
        );
    }

    /// The probe of a `sh` script server: it reads each request line by line and prints
    /// the canned answers (the probe's ids are fixed: discover 1, initialize 2, pages 3…).
    async fn probe_sh(script: &str, wait: Duration) -> ProbeReport {
        let argv = ["sh".to_owned(), "-c".to_owned(), script.to_owned()];
        probe_with(None, &argv, &[], None, DEFAULT_TIMEOUT, wait).await
    }

    const INIT_ANSWER: &str = r#"{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"sh","version":"1"}}}"#;
    const DISCOVER_ANSWER: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"sh-modern","version":"2"}}}"#;

    fn tools_answer(id: u64) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"t"}}]}}}}"#)
    }

    fn outcome(r: &ProbeReport) -> (bool, Option<Era>, Vec<String>) {
        (r.ok, r.era, r.tool_names.clone())
    }

    #[test]
    fn a_result_naming_2026_07_28_is_modern_and_anything_else_legacy() {
        let cases = [
            (
                json!({"id": 1, "result": {"supportedVersions": ["2026-07-28"]}}),
                Discovered::Modern,
            ),
            (
                json!({"id": 1, "result": {"supportedVersions": ["2027-01-01"]}}),
                Discovered::Legacy,
            ),
            (json!({"id": 1, "result": {}}), Discovered::Legacy),
            (
                json!({"id": 1, "error": {"code": -32601, "message": "Method not found"}}),
                Discovered::Legacy,
            ),
            (
                json!({"id": 1, "error": {"code": -32602, "message": "Invalid request parameters"}}),
                Discovered::Legacy,
            ),
            // A bridge in front says the server did not start: no `initialize` after it.
            (
                json!({"id": 1, "error": {"code": -32000, "message": "cannot start", "data": {"kind": "spawn_failed", "code": "W-SPAWN-NOT-FOUND"}}}),
                Discovered::NotStarted,
            ),
            // A server's own error that looks like one is not the bridge's.
            (
                json!({"id": 1, "error": {"code": -32000, "message": "x", "data": {"kind": "spawn_failed", "code": "E42"}}}),
                Discovered::Legacy,
            ),
        ];
        let got: Vec<Discovered> = cases.iter().map(|(a, _)| discovered(a)).collect();
        let want: Vec<Discovered> = cases.into_iter().map(|(_, d)| d).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn modern_requests_carry_the_2026_07_28_meta_and_legacy_ones_none() {
        let modern = request(Era::Modern, 3, "tools/list", json!({}));
        let legacy = request(Era::Legacy, 3, "tools/list", json!({}));
        assert_eq!(
            (
                &modern["params"]["_meta"][META_PROTOCOL_VERSION],
                &modern["params"]["_meta"][META_CLIENT_INFO]["name"],
                &modern["params"]["_meta"][META_CLIENT_CAPABILITIES],
                &legacy["params"],
            ),
            (
                &json!("2026-07-28"),
                &json!("warden-probe"),
                &json!({}),
                &json!({})
            )
        );
    }

    #[tokio::test]
    #[cfg_attr(windows, ignore = "runs `sh`")]
    async fn a_server_that_answers_discover_is_modern_and_gets_no_initialize() {
        // The server fails the probe if it reads anything but `tools/list` after discover.
        let script = format!(
            r#"read d; echo '{DISCOVER_ANSWER}'; read l; case "$l" in *'"tools/list"'*'"io.modelcontextprotocol/protocolVersion":"2026-07-28"'*) echo '{}';; *) exit 3;; esac; read l"#,
            tools_answer(3)
        );
        let r = probe_sh(&script, DISCOVER_WAIT).await;
        assert_eq!(
            outcome(&r),
            (true, Some(Era::Modern), vec!["t".to_owned()]),
            "{r:?}"
        );
    }

    #[tokio::test]
    #[cfg_attr(windows, ignore = "runs `sh`")]
    async fn a_server_that_refuses_discover_is_probed_with_initialize_as_legacy() {
        let script = format!(
            r#"read d; echo '{{"jsonrpc":"2.0","id":1,"error":{{"code":-32601,"message":"Method not found"}}}}'; read i; echo '{INIT_ANSWER}'; read n; read l; echo '{}'; read l"#,
            tools_answer(3)
        );
        let r = probe_sh(&script, DISCOVER_WAIT).await;
        assert_eq!(
            outcome(&r),
            (true, Some(Era::Legacy), vec!["t".to_owned()]),
            "{r:?}"
        );
    }

    #[tokio::test]
    #[cfg_attr(windows, ignore = "runs `sh`")]
    async fn a_server_silent_to_discover_gets_initialize_after_the_wait() {
        // It drops `server/discover` (as some older SDKs do with an unknown method).
        let script = format!(
            r#"read d; read i; echo '{INIT_ANSWER}'; read n; read l; echo '{}'; read l"#,
            tools_answer(3)
        );
        let r = probe_sh(&script, Duration::from_millis(100)).await;
        assert_eq!(
            outcome(&r),
            (true, Some(Era::Legacy), vec!["t".to_owned()]),
            "{r:?}"
        );
    }

    #[tokio::test]
    #[cfg_attr(windows, ignore = "runs `sh`")]
    async fn a_modern_server_that_starts_after_the_wait_still_answers_discover_first() {
        // As a server behind a downloading package runner: it reads nothing until the wait is
        // over and `initialize` is queued behind `server/discover`, then answers both in order.
        let script = format!(
            r#"read d; read i; echo '{DISCOVER_ANSWER}'; echo '{{"jsonrpc":"2.0","id":2,"error":{{"code":-32022,"message":"Unsupported protocol version","data":{{"supported":["2026-07-28"]}}}}}}'; read l; echo '{}'; read l"#,
            tools_answer(3)
        );
        let r = probe_sh(&script, Duration::from_millis(100)).await;
        assert_eq!(
            outcome(&r),
            (true, Some(Era::Modern), vec!["t".to_owned()]),
            "{r:?}"
        );
    }

    #[tokio::test]
    #[cfg_attr(windows, ignore = "runs `sh`")]
    async fn a_modern_server_of_other_versions_fails_naming_them() {
        let refuse = |id: u64| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32022,"message":"Unsupported protocol version","data":{{"supported":["2027-01-01"]}}}}}}"#
            )
        };
        let script = format!(
            "read d; echo '{}'; read i; echo '{}'; read l",
            refuse(1),
            refuse(2)
        );
        let r = probe_sh(&script, DISCOVER_WAIT).await;
        assert_eq!(
            (r.ok, r.era, r.error.unwrap_or_default()),
            (
                false,
                Some(Era::Modern),
                "the server answered initialize with an error: Unsupported protocol version (it speaks 2027-01-01)".to_owned()
            )
        );
    }
}
