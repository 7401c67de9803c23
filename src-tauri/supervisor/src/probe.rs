//! Probes: start a server (no shell, its own process group, dies with us), `initialize`,
//! `tools/list` (every page), shut it down the MCP way (close stdin, 2 s, SIGTERM, 2 s,
//! SIGKILL), and report the cold-start time and the tools. The same probe pre-warms the
//! package caches of `npx`/`uvx`-style commands, so an IDE's first start is fast.

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
use warden_wire::protocol::{Frame, FrameReader};

/// Default bound for the handshake (covers a cold `npx` start on a fast network).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Bound for a pre-warm, which may download a package and its dependencies.
pub const PREWARM_TIMEOUT: Duration = Duration::from_secs(300);
const MAX_MESSAGE: usize = 64 << 20;
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
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "warden-probe", "version": env!("CARGO_PKG_VERSION")},
        }});
        let answer = exchange(&mut reader, &mut stdin, &init, 1, deadline, &child).await?;
        report.cold_start_ms = Some(elapsed_ms(start));
        let result = answer_result(&answer, "initialize")?;
        report.server_info = result.get("serverInfo").cloned();
        report.protocol_version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .map(str::to_owned);
        send(
            &mut stdin,
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await?;
        list_tools(
            &mut reader,
            &mut stdin,
            deadline,
            &child,
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
        let msg = err.get("message").and_then(Value::as_str).unwrap_or("");
        // A bridge in front of the server says why it could not start it (`spawn_failed`,
        // `data.code`): that is the cause, not the error answer itself.
        let code = err
            .pointer("/data/code")
            .and_then(Value::as_str)
            .and_then(|c| Code::ALL.iter().copied().find(|k| k.as_str() == c));
        return Err(match code {
            Some(code) => Failure(code, msg.to_owned()),
            None => invalid(format!("the server answered {what} with an error: {msg}")),
        });
    }
    answer
        .get("result")
        .ok_or_else(|| invalid(format!("the answer to {what} has no result")))
}

/// Every page of `tools/list` (up to [`MAX_PAGES`]): the tools' names, added to `names`
/// page by page.
async fn list_tools(
    reader: &mut FrameReader<tokio::process::ChildStdout>,
    stdin: &mut Option<tokio::process::ChildStdin>,
    deadline: tokio::time::Instant,
    child: &Server,
    names: &mut Vec<String>,
) -> Result<(), Failure> {
    let mut cursor: Option<Value> = None;
    for page in 0..MAX_PAGES {
        let id = 2 + page as u64;
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}});
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

/// Sends `msg` and reads until the answer with `id`. Server requests meanwhile (roots,
/// sampling) are refused; notifications and stray output are skipped.
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
    loop {
        let frame = match tokio::time::timeout_at(deadline, reader.next()).await {
            Err(_) => {
                return Err(Failure(
                    Code::SpawnStartupTimeout,
                    format!(
                        "no answer to {method} in time (the probe's limit); a cold npx/uvx start may need longer: raise it with --timeout-ms"
                    ),
                ));
            }
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
        if v.get("id").and_then(Value::as_u64) == Some(id) {
            return Ok(v);
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
                    "the server exited with status 1 before answering initialize".to_owned(),
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
}
