//! The relay: stdin lines to POSTs, answers to stdout lines. Each message is sent on a thread
//! of its own (at most [`PARALLEL`] at once), so a long call does not hold up the others, as
//! it would not with a local server; stdout is written a whole message at a time.

use std::io::{BufRead, BufReader, Write};
use std::process::ExitCode;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};
use ureq::http::{HeaderName, HeaderValue, Uri};
use warden_wire::codes::Code;
use warden_wire::protocol::META_PROTOCOL_VERSION;

use crate::net;
use crate::sse;

/// Messages in flight to the server at once; the next waits for one to end.
const PARALLEL: usize = 64;
/// Bound on connecting; an answer itself may take as long as the bridge's timeouts allow.
const CONNECT: Duration = Duration::from_secs(15);
/// The largest JSON answer read whole.
const MAX_BODY: u64 = 64 << 20;
/// Headers the relay sets itself, which `--header` may not replace.
const OWN_HEADERS: &[&str] = &[
    "content-type",
    "accept",
    "content-length",
    "host",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "transfer-encoding",
    "connection",
];

pub(crate) struct Relay {
    server: String,
    url: Uri,
    agent: ureq::Agent,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// A 2025-11-25 server's session, from its answer to `initialize`.
    session: Mutex<Option<HeaderValue>>,
    /// The protocol version that `initialize` agreed on.
    version: Mutex<Option<HeaderValue>>,
    out: Mutex<std::io::Stdout>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Relay {
    /// Checks the URL (https, or http to this machine) and reads each `--header NAME=ENVVAR`.
    pub(crate) fn new(server: &str, url: &str, headers: &[String]) -> Result<Relay, String> {
        let url = net::check_url(url).map_err(|why| {
            format!(
                "{why} [{}]. Fix: use the server's https URL",
                Code::AuthInsecure.as_str()
            )
        })?;
        let mut pairs = Vec::new();
        for h in headers {
            let (name, var) = h.split_once('=').ok_or_else(|| {
                format!("--header {h}: expected NAME=ENVVAR (the header's value is read from the environment variable ENVVAR)")
            })?;
            let name = HeaderName::try_from(name)
                .map_err(|_| format!("--header {name}=…: `{name}` is not a header name"))?;
            if OWN_HEADERS.contains(&name.as_str()) {
                return Err(format!(
                    "--header {name}=…: Warden sets `{name}` itself; it cannot be given"
                ));
            }
            let value = std::env::var(var).map_err(|_| {
                format!("--header {name}={var}: the environment variable {var} is not set (or not UTF-8). Fix: set it in the client's entry (env) or the environment that starts the client")
            })?;
            let value = HeaderValue::try_from(value).map_err(|_| {
                format!("--header {name}={var}: the value of {var} is not a valid header value (a line break or a control character)")
            })?;
            pairs.push((name, value));
        }
        let agent = net::agent(
            &url,
            None,
            Some(CONNECT),
            "application/json, text/event-stream",
        );
        Ok(Relay {
            server: server.to_owned(),
            url,
            agent,
            headers: pairs,
            session: Mutex::new(None),
            version: Mutex::new(None),
            out: Mutex::new(std::io::stdout()),
        })
    }

    /// One message from the client to the server, and what the server answers to it.
    fn send(self: &Arc<Self>, line: &[u8]) {
        let Ok(msg) = serde_json::from_slice::<Value>(line) else {
            return; // the bridge sends only valid JSON
        };
        let id = msg.get("id").filter(|id| !id.is_null()).cloned();
        let method = msg.get("method").and_then(Value::as_str);
        let request = id.is_some() && method.is_some();
        let mut post = self
            .agent
            .post(&self.url)
            .header("content-type", "application/json");
        let modern = msg
            .pointer(&format!(
                "/params/_meta/{}",
                META_PROTOCOL_VERSION.replace('/', "~1")
            ))
            .and_then(Value::as_str)
            .and_then(|v| HeaderValue::try_from(v).ok());
        if let Some(version) = modern.or_else(|| lock(&self.version).clone()) {
            post = post.header("mcp-protocol-version", version);
        }
        if let Some(session) = lock(&self.session).clone() {
            post = post.header("mcp-session-id", session);
        }
        if let Some(method) = method.and_then(|m| HeaderValue::try_from(m).ok()) {
            post = post.header("mcp-method", method);
        }
        let name = msg
            .pointer("/params/name")
            .or_else(|| msg.pointer("/params/uri"))
            .and_then(Value::as_str)
            .filter(|n| n.bytes().all(|b| (0x20..0x7f).contains(&b)))
            .and_then(|n| HeaderValue::try_from(n).ok());
        if let Some(name) = name {
            post = post.header("mcp-name", name);
        }
        for (name, value) in &self.headers {
            post = post.header(name, value);
        }
        let fail = |code: Code, why: String| {
            if let (true, Some(id)) = (request, &id) {
                self.error(id, code, &why);
            }
        };
        let mut response = match post.send(line) {
            Ok(r) => r,
            Err(e) => {
                let code = if net::is_tls(&e) {
                    Code::RemoteTls
                } else {
                    Code::RemoteUnreachable
                };
                return fail(
                    code,
                    format!(
                        "Remote server `{}` at {} could not be reached: {}.",
                        self.server,
                        self.url,
                        net::describe(&e, CONNECT)
                    ),
                );
            }
        };
        let status = response.status().as_u16();
        let initialize = method == Some("initialize");
        if initialize
            && (200..300).contains(&status)
            && let Some(session) = response.headers().get("mcp-session-id")
        {
            *lock(&self.session) = Some(session.clone());
        }
        match status {
            200..=299 => {}
            401 | 403 => {
                return fail(
                    Code::AuthRequired,
                    format!(
                        "Remote server `{}` at {} answered HTTP {status}: it needs a sign-in. Pass its token with `--header Authorization=ENVVAR`.",
                        self.server, self.url
                    ),
                );
            }
            404 if lock(&self.session).take().is_some() => {
                return fail(
                    Code::RemoteUnreachable,
                    format!(
                        "Remote server `{}` at {} ended the session (HTTP 404); the next request starts a new one only after a new initialize, so the client should reconnect.",
                        self.server, self.url
                    ),
                );
            }
            _ => {
                let body = response
                    .body_mut()
                    .with_config()
                    .limit(64 << 10)
                    .read_to_vec()
                    .unwrap_or_default();
                let detail = net::snippet(&body);
                return fail(
                    Code::RemoteUnreachable,
                    format!(
                        "Remote server `{}` at {} answered HTTP {status}{}.",
                        self.server,
                        self.url,
                        if detail.is_empty() {
                            String::new()
                        } else {
                            format!(": {detail}")
                        }
                    ),
                );
            }
        }
        let stream = response
            .headers()
            .get("content-type")
            .and_then(|c| c.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        let mut answered = false;
        let mut each = |data: &str| {
            answered |= self.write(data, initialize, id.as_ref());
            true
        };
        if stream {
            let reader = BufReader::new(response.into_body().into_reader());
            if let Err(e) = sse::events(reader, &mut each) {
                eprintln!("warden-remote: the server's event stream broke off: {e}");
            }
        } else if status != 202 && status != 204 {
            match response
                .body_mut()
                .with_config()
                .limit(MAX_BODY)
                .read_to_vec()
            {
                Ok(body) if !body.is_empty() => {
                    each(&String::from_utf8_lossy(&body));
                }
                Ok(_) => {}
                Err(e) => {
                    return fail(
                        Code::RemoteUnreachable,
                        format!(
                            "Remote server `{}` at {}: its answer could not be read to its end: {}.",
                            self.server,
                            self.url,
                            net::describe(&e, CONNECT)
                        ),
                    );
                }
            }
        }
        if initialize && answered && lock(&self.session).is_some() {
            self.listen();
        }
        if request && !answered {
            fail(
                Code::RemoteUnreachable,
                format!(
                    "Remote server `{}` at {} ended its answer (HTTP {status}) without answering the request.",
                    self.server, self.url
                ),
            );
        }
    }

    /// Writes one message (or each of a batch) to stdout on its own line; `true` when one of
    /// them answers `id`. An `initialize` answer's version goes on later requests.
    fn write(&self, data: &str, initialize: bool, id: Option<&Value>) -> bool {
        let Ok(value) = serde_json::from_str::<Value>(data) else {
            eprintln!(
                "warden-remote: the server sent a message that is not JSON ({} bytes); dropped",
                data.len()
            );
            return false;
        };
        let messages = match value {
            Value::Array(items) => items,
            one => vec![one],
        };
        let mut answers = false;
        for m in messages {
            let answer = id.is_some() && m.get("id") == id && m.get("method").is_none();
            if answer && initialize {
                let version = m
                    .pointer("/result/protocolVersion")
                    .and_then(Value::as_str)
                    .and_then(|v| HeaderValue::try_from(v).ok());
                if version.is_some() {
                    *lock(&self.version) = version;
                }
            }
            answers |= answer;
            let mut text = m.to_string();
            text.push('\n');
            let mut out = lock(&self.out);
            if out
                .write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .is_err()
            {
                std::process::exit(0); // the bridge is gone
            }
        }
        answers
    }

    /// A 2025-11-25 session's stream of server-to-client messages (GET), when the server
    /// offers one, read on a thread of its own until it ends.
    fn listen(self: &Arc<Self>) {
        let mut get = self
            .agent
            .get(&self.url)
            .header("accept", "text/event-stream");
        if let Some(session) = lock(&self.session).clone() {
            get = get.header("mcp-session-id", session);
        }
        if let Some(version) = lock(&self.version).clone() {
            get = get.header("mcp-protocol-version", version);
        }
        for (name, value) in &self.headers {
            get = get.header(name, value);
        }
        let this = self.clone();
        std::thread::spawn(move || {
            let Ok(response) = get.call() else { return };
            if response.status().as_u16() != 200 {
                return; // 405: the server offers no such stream
            }
            let reader = BufReader::new(response.into_body().into_reader());
            let _ = sse::events(reader, |data| {
                this.write(data, false, None);
                true
            });
        });
    }

    fn error(&self, id: &Value, code: Code, message: &str) {
        let kind = match code {
            Code::AuthRequired => "auth_required",
            Code::RemoteTls => "remote_tls",
            _ => "remote_unreachable",
        };
        let error = json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32000,
            "message": message,
            "data": {"kind": kind, "server": self.server, "code": code.as_str()},
        }});
        self.write(&error.to_string(), false, None);
    }

    /// Ends a 2025-11-25 session (DELETE), as the spec asks of a client that is done.
    fn close(&self) {
        if let Some(session) = lock(&self.session).take() {
            let _ = self
                .agent
                .delete(&self.url)
                .header("mcp-session-id", session)
                .call();
        }
    }
}

/// Relays until stdin ends, then lets the messages in flight finish and ends the session.
pub(crate) fn run(relay: Arc<Relay>) -> ExitCode {
    let slots = Arc::new((Mutex::new(0usize), Condvar::new()));
    let mut threads = Vec::new();
    let mut input = BufReader::new(std::io::stdin().lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                eprintln!("warden-remote: reading stdin failed: {e}");
                break;
            }
        }
        while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            line.pop();
        }
        if line.is_empty() {
            continue;
        }
        {
            let (count, freed) = &*slots;
            let mut n = lock(count);
            while *n >= PARALLEL {
                n = freed.wait(n).unwrap_or_else(PoisonError::into_inner);
            }
            *n += 1;
        }
        let (relay, slots, message) = (relay.clone(), slots.clone(), line.clone());
        threads.retain(|t: &std::thread::JoinHandle<()>| !t.is_finished());
        threads.push(std::thread::spawn(move || {
            relay.send(&message);
            let (count, freed) = &*slots;
            *lock(count) -= 1;
            freed.notify_one();
        }));
    }
    for t in threads {
        let _ = t.join();
    }
    relay.close();
    let _ = std::io::stdout().flush();
    ExitCode::SUCCESS
}
