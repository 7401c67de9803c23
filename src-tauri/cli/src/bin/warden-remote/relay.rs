//! The relay: stdin lines to POSTs, answers to stdout lines. Each request is sent on a thread of
//! its own (at most [`PARALLEL`] at once), so a long call does not hold up the others, as it
//! would not with a local server; notifications and the client's answers never wait for a
//! slot. stdout is written a whole message at a time. What the relay holds of the server's
//! answers at once is bounded ([`BUDGET`]), as is each line it reads. The first message finds
//! out the transport; over HTTP+SSE each POST is answered at once and the answers come on the
//! one GET stream, so messages are POSTed in the client's order, from the reading thread.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use ureq::http::{HeaderName, HeaderValue};
use warden_wire::codes::Code;
use warden_wire::protocol::META_PROTOCOL_VERSION;

use crate::auth;
use crate::legacy;
use crate::net;
use crate::sse;

/// Requests in flight to the server at once; the next waits for one to end.
const PARALLEL: usize = 64;
/// Bound on connecting; an answer itself may take as long as the bridge's timeouts allow.
const CONNECT: Duration = Duration::from_secs(15);
/// Bound on each of the sign-in's own exchanges (metadata, registration, tokens).
const AUTH_EXCHANGE: Duration = Duration::from_secs(30);
/// The largest message read (as the bridge's default `max_message_bytes`).
const MAX_MESSAGE: usize = 256 << 20;
/// What all the answers being read may hold at once; past it a request fails rather than
/// grow the relay's memory without end.
const BUDGET: u64 = 512 << 20;
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

/// Bytes of the server's answers held now, by all threads.
static HELD: AtomicU64 = AtomicU64::new(0);

/// A thread's share of [`HELD`], given back when dropped.
#[derive(Default)]
struct Held(u64);

impl Held {
    fn reserve(&mut self, n: usize) -> bool {
        let n = n as u64;
        if HELD.fetch_add(n, Ordering::SeqCst) + n > BUDGET {
            HELD.fetch_sub(n, Ordering::SeqCst);
            return false;
        }
        self.0 += n;
        true
    }

    fn release(&mut self) {
        HELD.fetch_sub(std::mem::take(&mut self.0), Ordering::SeqCst);
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.release();
    }
}

/// What the relay reads of a message from the server.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<serde::de::IgnoredAny>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
}

/// Which transport the server speaks, decided by the first message that the server answers.
#[derive(Clone)]
enum Transport {
    /// Not known yet: the next message finds out.
    Unknown,
    /// A message is finding out; the others wait for it.
    Probing,
    Streamable,
    /// The deprecated HTTP+SSE (2024-11-05): every message is POSTed to this endpoint, and the
    /// answers come on the GET stream.
    Sse(ureq::http::Uri),
}

/// What a probe that found no HTTP+SSE stream has to say.
enum NoSse {
    /// The server has none (an HTTP error, no event stream, no `endpoint` first).
    Absent,
    /// It has one, and Warden refused it (its endpoint is on another origin), or signing in
    /// to it failed: the client is told why.
    Refused(Code, String),
}

pub(crate) struct Relay {
    server: String,
    site: auth::Site,
    /// The URL as messages show it: no query (it may hold a key).
    shown: String,
    agent: ureq::Agent,
    /// For the sign-in's own requests: each bounded as a whole, so a slow authorization server
    /// cannot hold the sign-in (and its lock) for ever.
    auth_agent: ureq::Agent,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// A 2025-11-25 server's session, from its answer to `initialize`.
    session: Mutex<Option<HeaderValue>>,
    /// The protocol version that `initialize` agreed on.
    version: Mutex<Option<HeaderValue>>,
    /// The session's GET stream is being read.
    listening: AtomicBool,
    /// The sign-in's tokens (from the keychain, or a sign-in), unless `--header` gives an
    /// `Authorization` of its own.
    signin: Mutex<Option<auth::Tokens>>,
    /// `--header Authorization=…` was given: Warden does not sign in.
    own_authorization: bool,
    out: Mutex<std::io::Stdout>,
    transport: Mutex<Transport>,
    decided: Condvar,
    /// HTTP+SSE: the ids (as JSON text) of the requests sent and not answered yet on the stream.
    pending: Mutex<HashSet<String>>,
    /// Why the server's HTTP+SSE stream was refused, for the errors that follow.
    sse_refused: Mutex<Option<String>>,
}

/// Held while a message finds out the transport: if it ends without deciding (the server could
/// not be reached), the next message tries again.
struct Probing<'a>(&'a Relay);

impl Drop for Probing<'_> {
    fn drop(&mut self) {
        let mut transport = lock(&self.0.transport);
        if matches!(*transport, Transport::Probing) {
            *transport = Transport::Unknown;
        }
        self.0.decided.notify_all();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn is_env_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl Relay {
    /// Checks the URL (https, or http to this machine) and reads each `--header NAME=ENVVAR`.
    pub(crate) fn new(server: &str, given: &str, headers: &[String]) -> Result<Relay, String> {
        let url = net::check_url(given).map_err(|why| {
            format!(
                "{why} [{}]. Fix: use the server's https URL",
                Code::AuthInsecure.as_str()
            )
        })?;
        let mut pairs = Vec::new();
        for h in headers {
            let (name, var) = h.split_once('=').unwrap_or((h, ""));
            if !is_env_name(var) {
                return Err(format!(
                    "--header {name}=…: expected NAME=ENVVAR, where ENVVAR names an environment variable holding the value (the value itself never goes on the command line)"
                ));
            }
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
            let mut value = HeaderValue::try_from(value).map_err(|_| {
                format!("--header {name}={var}: the value of {var} is not a valid header value (a line break or a control character)")
            })?;
            value.set_sensitive(true);
            pairs.push((name, value));
        }
        // No redirects: Streamable HTTP has none, and a followed one would take the headers
        // (keys included) wherever it points.
        let own_authorization = pairs.iter().any(|(n, _)| n == "authorization");
        let agent = net::agent(
            &url,
            None,
            Some(CONNECT),
            0,
            "application/json, text/event-stream",
        );
        let auth_agent = net::agent(
            &url,
            Some(AUTH_EXCHANGE),
            Some(CONNECT),
            0,
            "application/json",
        );
        Ok(Relay {
            auth_agent,
            server: server.to_owned(),
            shown: net::shown(&url),
            site: auth::Site::new(server, url, given),
            agent,
            headers: pairs,
            session: Mutex::new(None),
            version: Mutex::new(None),
            listening: AtomicBool::new(false),
            signin: Mutex::new(None),
            own_authorization,
            out: Mutex::new(std::io::stdout()),
            transport: Mutex::new(Transport::Unknown),
            decided: Condvar::new(),
            pending: Mutex::new(HashSet::new()),
            sse_refused: Mutex::new(None),
        })
    }

    /// Why a request reached no answer, with its code.
    fn unreached(&self, e: &ureq::Error) -> (Code, String) {
        let code = if net::is_tls(e) {
            Code::RemoteTls
        } else {
            Code::RemoteUnreachable
        };
        let why = format!(
            "Remote server `{}` at {} could not be reached: {}.",
            self.server,
            self.shown,
            net::describe(e, CONNECT)
        );
        (code, why)
    }

    /// `--sign-in`: asks the server with no token whether it wants one, then signs in with the
    /// browser (whatever was kept before) and keeps the tokens for every client.
    pub(crate) fn sign_in(&self) -> ExitCode {
        let ping = br#"{"jsonrpc":"2.0","id":"warden-sign-in","method":"ping"}"#;
        let mut post = self
            .agent
            .post(&self.site.url)
            .header("content-type", "application/json")
            .header("mcp-method", "ping");
        for (name, value) in &self.headers {
            post = post.header(name, value);
        }
        let answer = match post.send(&ping[..]) {
            Ok(r) => r,
            Err(e) => {
                let (code, why) = self.unreached(&e);
                eprintln!("warden-remote: {why} [{}]", code.as_str());
                return ExitCode::FAILURE;
            }
        };
        if answer.status() != 401 {
            println!(
                "`{}` at {} answered without asking for a sign-in (HTTP {}): there is nothing to sign in to.",
                self.server,
                self.shown,
                answer.status().as_u16()
            );
            return ExitCode::SUCCESS;
        }
        let challenge = answer
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok());
        match auth::sign_in_now(&self.auth_agent, &self.site, challenge) {
            Ok(tokens) => {
                println!(
                    "Signed in to `{}` at {} through {}{}; every client's bridge uses this sign-in.",
                    self.server,
                    self.shown,
                    warden_wire::text::line(&tokens.issuer),
                    tokens
                        .expires_at
                        .map(|at| format!(
                            " (it expires in {} min and is renewed before then)",
                            at.saturating_sub(auth::now()).div_ceil(60)
                        ))
                        .unwrap_or_default()
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!(
                    "warden-remote: signing in to `{}` at {} failed: {} [{}]",
                    self.server,
                    self.shown,
                    e.message,
                    e.code.as_str()
                );
                ExitCode::FAILURE
            }
        }
    }

    /// `--sign-out`: revokes the kept sign-in where the server offers it, and forgets it.
    pub(crate) fn sign_out(&self) -> ExitCode {
        match auth::sign_out(&self.auth_agent, &self.site) {
            Ok((false, _)) => {
                println!(
                    "`{}` at {}: no sign-in is kept; nothing to sign out of.",
                    self.server, self.shown
                );
                ExitCode::SUCCESS
            }
            Ok((true, unrevoked)) => {
                match unrevoked {
                    None => println!(
                        "Signed out of `{}` at {}: the server revoked the tokens, and the keychain forgot them.",
                        self.server, self.shown
                    ),
                    Some(why) => println!(
                        "Signed out of `{}` at {}: the keychain forgot the tokens, but {why}; they stay good at the server until they expire.",
                        self.server, self.shown
                    ),
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!(
                    "warden-remote: signing out of `{}` at {} failed: {} [{}]",
                    self.server,
                    self.shown,
                    e.message,
                    e.code.as_str()
                );
                ExitCode::FAILURE
            }
        }
    }

    /// One message from the client to the server, and what the server answers to it. The first
    /// finds out the transport (Streamable HTTP, else HTTP+SSE) while the others wait.
    fn send(self: &Arc<Self>, line: &[u8]) {
        let probing = {
            let mut transport = lock(&self.transport);
            loop {
                match &*transport {
                    Transport::Probing => {
                        transport = self
                            .decided
                            .wait(transport)
                            .unwrap_or_else(PoisonError::into_inner);
                    }
                    Transport::Unknown => {
                        *transport = Transport::Probing;
                        break true;
                    }
                    Transport::Streamable => break false,
                    Transport::Sse(endpoint) => {
                        let endpoint = endpoint.clone();
                        drop(transport);
                        return self.send_sse(line, &endpoint, false);
                    }
                }
            }
        };
        if !probing {
            return self.send_once(line, false, false);
        }
        let _probing = Probing(self);
        if legacy::sse_first(&self.site.url)
            && let Ok(endpoint) = self.open_sse(false)
        {
            self.decide(Transport::Sse(endpoint.clone()));
            return self.send_sse(line, &endpoint, false);
        }
        self.send_once(line, false, true)
    }

    fn decide(&self, transport: Transport) {
        *lock(&self.transport) = transport;
        self.decided.notify_all();
    }

    /// The bearer token as a header value, unless there is none to send.
    fn bearer_header(token: Option<&str>) -> Option<HeaderValue> {
        let mut value = HeaderValue::try_from(format!("Bearer {}", token?)).ok()?;
        value.set_sensitive(true);
        Some(value)
    }

    /// Opens the HTTP+SSE stream (GET to the URL): its first event must be `endpoint`, on the
    /// server's origin. A reader thread then relays each `message` event until the stream ends,
    /// which means the server went away.
    fn open_sse(self: &Arc<Self>, signed_in_now: bool) -> Result<ureq::http::Uri, NoSse> {
        // Bounded until the stream's headers: the other messages wait for this one.
        let mut get = self
            .agent
            .get(&self.site.url)
            .config()
            .timeout_recv_response(Some(CONNECT))
            .build()
            .header("accept", "text/event-stream");
        for (name, value) in &self.headers {
            get = get.header(name, value);
        }
        let sent_token = self.bearer();
        if let Some(value) = Self::bearer_header(sent_token.as_deref()) {
            get = get.header("authorization", value);
        }
        let response = get.call().map_err(|_| NoSse::Absent)?;
        let status = response.status().as_u16();
        if status == 401 && !self.own_authorization && !signed_in_now {
            let challenge = response
                .headers()
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            drop(response);
            return match auth::sign_in_once(
                &self.auth_agent,
                &self.site,
                challenge.as_deref(),
                sent_token.as_deref(),
            ) {
                Ok(tokens) => {
                    *lock(&self.signin) = Some(tokens);
                    self.open_sse(true)
                }
                Err(e) => Err(NoSse::Refused(
                    e.code,
                    format!("it needs a sign-in, and it did not happen: {}", e.message),
                )),
            };
        }
        let stream = response
            .headers()
            .get("content-type")
            .and_then(|c| c.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        if status != 200 || !stream {
            return Err(NoSse::Absent);
        }
        let (found, endpoint) = std::sync::mpsc::sync_channel(1);
        let this = self.clone();
        std::thread::spawn(move || {
            let reader = BufReader::new(response.into_body().into_reader());
            let mut held = Held::default();
            let mut first = Some(found);
            let mut taken = false;
            let mut room = |n: usize| held.reserve(n);
            let ended = sse::named_events(reader, MAX_MESSAGE, &mut room, &mut |name, data| {
                if let Some(found) = first.take() {
                    let endpoint = if name == "endpoint" {
                        std::str::from_utf8(data)
                            .map_err(|_| "its `endpoint` event is not UTF-8".to_owned())
                            .and_then(|given| legacy::endpoint(&this.site.url, given))
                            .map_err(Some)
                    } else {
                        Err(None)
                    };
                    let ok = endpoint.is_ok();
                    // The prober gave up waiting: this stream is no one's.
                    taken = found.send(endpoint).is_ok() && ok;
                    return taken;
                }
                if name == "message" {
                    this.emit(data, false, None);
                }
                true
            });
            if taken {
                this.sse_gone(ended.err());
            }
        });
        match endpoint.recv_timeout(CONNECT) {
            Ok(Ok(endpoint)) => Ok(endpoint),
            Ok(Err(Some(why))) => Err(NoSse::Refused(Code::RemoteUnreachable, why)),
            _ => Err(NoSse::Absent),
        }
    }

    /// The HTTP+SSE stream ended: the server went away. The requests it did not answer fail,
    /// and the relay exits, so that the bridge starts it again (a new stream, a new session) as
    /// it restarts any server that exits.
    fn sse_gone(&self, why: Option<std::io::Error>) {
        let pending: Vec<String> = lock(&self.pending).drain().collect();
        let message = format!(
            "Remote server `{}` at {} closed its event stream (HTTP+SSE){}: the server went away.",
            self.server,
            self.shown,
            why.map(|e| format!(" ({e})")).unwrap_or_default()
        );
        for id in pending {
            if let Ok(id) = serde_json::from_str::<Value>(&id) {
                self.error(&id, Code::RemoteUnreachable, &message);
            }
        }
        eprintln!("warden-remote: {message}");
        let _ = lock(&self.out).flush();
        std::process::exit(1);
    }

    /// One message over HTTP+SSE: a POST to the endpoint (answered 202); its answer comes on the
    /// stream.
    fn send_sse(self: &Arc<Self>, line: &[u8], endpoint: &ureq::http::Uri, signed_in_now: bool) {
        let Ok(msg) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let id = msg.get("id").filter(|id| !id.is_null()).cloned();
        let request = id.is_some() && msg.get("method").is_some();
        let key = id.as_ref().map(Value::to_string);
        if let (true, Some(key)) = (request, &key) {
            lock(&self.pending).insert(key.clone());
        }
        let fail = |code: Code, why: String| {
            if let (true, Some(id), Some(key)) = (request, &id, &key)
                && lock(&self.pending).remove(key)
            {
                self.error(id, code, &why);
            }
        };
        // The server answers on the stream; the POST itself is answered at once (202).
        let mut post = self
            .agent
            .post(endpoint)
            .config()
            .timeout_global(Some(AUTH_EXCHANGE))
            .build()
            .header("content-type", "application/json");
        for (name, value) in &self.headers {
            post = post.header(name, value);
        }
        let sent_token = self.bearer();
        if let Some(value) = Self::bearer_header(sent_token.as_deref()) {
            post = post.header("authorization", value);
        }
        let mut response = match post.send(line) {
            Ok(r) => r,
            Err(e) => {
                let (code, why) = self.unreached(&e);
                return fail(code, why);
            }
        };
        let status = response.status().as_u16();
        let challenge = response
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        match status {
            200..=299 => {}
            401 | 403
                if !self.own_authorization
                    && !signed_in_now
                    && (status == 401
                        || challenge.as_deref().is_some_and(|h| {
                            auth::challenge_param(h, "error").as_deref()
                                == Some("insufficient_scope")
                        })) =>
            {
                drop(response);
                match auth::sign_in_once(
                    &self.auth_agent,
                    &self.site,
                    challenge.as_deref(),
                    sent_token.as_deref(),
                ) {
                    Ok(tokens) => {
                        *lock(&self.signin) = Some(tokens);
                        self.send_sse(line, endpoint, true);
                    }
                    Err(e) => fail(
                        e.code,
                        format!(
                            "Remote server `{}` at {} needs a sign-in, and it did not happen: {}.",
                            self.server, self.shown, e.message
                        ),
                    ),
                }
            }
            _ => {
                let body = response
                    .body_mut()
                    .with_config()
                    .limit(64 << 10)
                    .read_to_vec()
                    .unwrap_or_default();
                let detail = net::snippet(&body);
                let code = match status {
                    401 => Code::AuthRequired,
                    403 => Code::AuthDenied,
                    _ => Code::RemoteUnreachable,
                };
                fail(
                    code,
                    format!(
                        "Remote server `{}` at {} answered HTTP {status} to a message on its HTTP+SSE session{}{}.",
                        self.server,
                        self.shown,
                        if (300..400).contains(&status) {
                            " (a redirect, which Warden does not follow)"
                        } else {
                            ""
                        },
                        if detail.is_empty() {
                            String::new()
                        } else {
                            format!(": {detail}")
                        }
                    ),
                );
            }
        }
    }

    /// The bearer token to send: the sign-in's, refreshed first when it is about to expire
    /// (without holding up other messages meanwhile).
    fn bearer(&self) -> Option<String> {
        if self.own_authorization {
            return None;
        }
        let known = lock(&self.signin).clone();
        let current = match known {
            Some(t) => t,
            None => {
                let stored = auth::stored(&self.site.account)?;
                *lock(&self.signin) = Some(stored.clone());
                stored
            }
        };
        if current.fresh() {
            return Some(current.access);
        }
        match auth::refreshed(&self.auth_agent, &self.site, &current) {
            Ok(fresh) => {
                let access = fresh.access.clone();
                *lock(&self.signin) = Some(fresh);
                Some(access)
            }
            Err(e) => {
                eprintln!("warden-remote: {} [{}]", e.message, e.code.as_str());
                *lock(&self.signin) = None;
                None
            }
        }
    }

    /// One message over Streamable HTTP. `probe`: this is the first message, whose answer
    /// decides the transport; a 400, 404 or 405 tries the HTTP+SSE stream first (the spec's
    /// backwards-compatibility rule for clients).
    fn send_once(self: &Arc<Self>, line: &[u8], signed_in_now: bool, probe: bool) {
        let Ok(msg) = serde_json::from_slice::<Value>(line) else {
            return; // the bridge sends only valid JSON
        };
        let id = msg.get("id").filter(|id| !id.is_null()).cloned();
        let method = msg.get("method").and_then(Value::as_str);
        let request = id.is_some() && method.is_some();
        let mut post = self
            .agent
            .post(&self.site.url)
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
        let sent_token = self.bearer();
        if let Some(token) = &sent_token
            && let Ok(mut value) = HeaderValue::try_from(format!("Bearer {token}"))
        {
            value.set_sensitive(true);
            post = post.header("authorization", value);
        }
        let fail = |code: Code, why: String| {
            if let (true, Some(id)) = (request, &id) {
                self.error(id, code, &why);
            }
        };
        let mut response = match post.send(line) {
            Ok(r) => r,
            Err(e) => {
                let (code, why) = self.unreached(&e);
                return fail(code, why);
            }
        };
        let status = response.status().as_u16();
        let mut refused_sse = lock(&self.sse_refused).clone();
        let awaiting_sign_in = matches!(status, 401 | 403) && !signed_in_now;
        if probe && legacy::means_no_streamable_http(status) {
            match self.open_sse(false) {
                Ok(endpoint) => {
                    self.decide(Transport::Sse(endpoint.clone()));
                    drop(response);
                    return self.send_sse(line, &endpoint, false);
                }
                Err(NoSse::Refused(code, why)) => {
                    *lock(&self.sse_refused) = Some(why.clone());
                    self.decide(Transport::Streamable);
                    return fail(
                        code,
                        format!(
                            "Remote server `{}` at {} answered HTTP {status} (no Streamable HTTP), and its HTTP+SSE stream was refused: {why}.",
                            self.server, self.shown
                        ),
                    );
                }
                Err(NoSse::Absent) => refused_sse = None,
            }
            self.decide(Transport::Streamable);
        } else if probe && !awaiting_sign_in {
            self.decide(Transport::Streamable);
        }
        let initialize = method == Some("initialize");
        if initialize
            && (200..300).contains(&status)
            && let Some(session) = response.headers().get("mcp-session-id")
        {
            *lock(&self.session) = Some(session.clone());
        }
        let challenge = response
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        match status {
            200..=299 => {}
            300..=399 => {
                // Streamable HTTP has no redirects; following one would send the headers
                // (keys included) wherever it points.
                return fail(
                    Code::RemoteUnreachable,
                    format!(
                        "Remote server `{}` at {} answered HTTP {status} (a redirect), which Warden does not follow. Fix: use the URL it points to in the entry, if you trust it.",
                        self.server, self.shown
                    ),
                );
            }
            // 401: no token, or one the server no longer takes; 403 `insufficient_scope`: a
            // call needs more than the sign-in granted (step-up), named in the challenge.
            401 | 403
                if !self.own_authorization
                    && !signed_in_now
                    && (status == 401
                        || challenge.as_deref().is_some_and(|h| {
                            auth::challenge_param(h, "error").as_deref()
                                == Some("insufficient_scope")
                        })) =>
            {
                return match auth::sign_in_once(
                    &self.auth_agent,
                    &self.site,
                    challenge.as_deref(),
                    sent_token.as_deref(),
                ) {
                    Ok(tokens) => {
                        *lock(&self.signin) = Some(tokens);
                        self.send_once(line, true, probe);
                    }
                    Err(e) => fail(
                        e.code,
                        format!(
                            "Remote server `{}` at {} needs a sign-in, and it did not happen: {}.",
                            self.server, self.shown, e.message
                        ),
                    ),
                };
            }
            401 => {
                return fail(
                    Code::AuthRequired,
                    format!(
                        "Remote server `{}` at {} answered HTTP 401: it needs a sign-in{}.",
                        self.server,
                        self.shown,
                        if self.own_authorization {
                            ", and did not take the `Authorization` header given"
                        } else {
                            " again right after one"
                        }
                    ),
                );
            }
            403 => {
                return fail(
                    Code::AuthDenied,
                    format!(
                        "Remote server `{}` at {} answered HTTP 403: the sign-in may not do this.",
                        self.server, self.shown
                    ),
                );
            }
            404 if lock(&self.session).take().is_some() => {
                return fail(
                    Code::RemoteUnreachable,
                    format!(
                        "Remote server `{}` at {} ended the session (HTTP 404); the client has to connect again.",
                        self.server, self.shown
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
                        "Remote server `{}` at {} answered HTTP {status}{}{}.",
                        self.server,
                        self.shown,
                        if detail.is_empty() {
                            String::new()
                        } else {
                            format!(": {detail}")
                        },
                        refused_sse
                            .map(|why| format!(" (its HTTP+SSE stream was refused: {why})"))
                            .unwrap_or_default()
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
        let mut held = Held::default();
        let broke = if stream {
            let reader = BufReader::new(response.into_body().into_reader());
            let mut room = |n: usize| held.reserve(n);
            let result = sse::events(reader, MAX_MESSAGE, &mut room, &mut |data| {
                answered |= self.emit(data, initialize, id.as_ref());
                true
            });
            result.err().map(|e| e.to_string())
        } else if status == 202 || status == 204 {
            None
        } else {
            let reader = response
                .into_body()
                .into_with_config()
                .limit(MAX_MESSAGE as u64)
                .reader();
            match read_all(reader, &mut held) {
                Ok(mut body) if !body.is_empty() => {
                    answered |= self.emit(&mut body, initialize, id.as_ref());
                    None
                }
                Ok(_) => None,
                Err(e) => Some(e),
            }
        };
        held.release();
        if let Some(why) = &broke {
            eprintln!("warden-remote: the server's answer broke off: {why}");
        }
        if initialize && answered && lock(&self.session).is_some() {
            self.listen();
        }
        if request && !answered {
            fail(
                Code::RemoteUnreachable,
                format!(
                    "Remote server `{}` at {} ended its answer (HTTP {status}) without answering the request{}.",
                    self.server,
                    self.shown,
                    broke.map(|b| format!(": {b}")).unwrap_or_default()
                ),
            );
        }
    }

    /// Writes one message (or each of a batch) to stdout on its own line; `true` when one of
    /// them answers `id`. An `initialize` answer's version goes on later requests.
    fn emit(&self, data: &mut [u8], initialize: bool, id: Option<&Value>) -> bool {
        // Line breaks between JSON tokens are only whitespace (a string cannot hold a raw
        // one), so the message becomes one line without being parsed whole.
        for b in data.iter_mut() {
            if *b == b'\n' || *b == b'\r' {
                *b = b' ';
            }
        }
        let Ok(text) = std::str::from_utf8(data) else {
            eprintln!("warden-remote: the server sent a message that is not UTF-8; dropped");
            return false;
        };
        let text = text.trim();
        if text.starts_with('[') {
            let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(text) else {
                eprintln!("warden-remote: the server sent a batch that is not JSON; dropped");
                return false;
            };
            let mut answers = false;
            for item in items {
                answers |= self.emit_one(item.get(), initialize, id);
            }
            return answers;
        }
        self.emit_one(text, initialize, id)
    }

    fn emit_one(&self, text: &str, initialize: bool, id: Option<&Value>) -> bool {
        let Ok(head) = serde_json::from_str::<Head<'_>>(text) else {
            eprintln!(
                "warden-remote: the server sent a message that is not a JSON-RPC object ({} bytes); dropped",
                text.len()
            );
            return false;
        };
        if head.method.is_none()
            && let Some(got) = head.id
            && let Ok(got) = serde_json::from_str::<Value>(got.get())
        {
            let mut pending = lock(&self.pending);
            if !pending.is_empty() {
                pending.remove(&got.to_string());
            }
        }
        let answer = head.method.is_none()
            && match (head.id, id) {
                (Some(got), Some(want)) => {
                    serde_json::from_str::<Value>(got.get()).is_ok_and(|got| &got == want)
                }
                _ => false,
            };
        if answer && initialize {
            let version = head
                .result
                .and_then(|r| serde_json::from_str::<Value>(r.get()).ok())
                .and_then(|r| {
                    r.get("protocolVersion")
                        .and_then(Value::as_str)
                        .and_then(|v| HeaderValue::try_from(v).ok())
                });
            if version.is_some() {
                *lock(&self.version) = version;
            }
        }
        let mut out = lock(&self.out);
        let written = out
            .write_all(text.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush());
        if written.is_err() {
            std::process::exit(0); // the bridge is gone
        }
        answer
    }

    /// A 2025-11-25 session's stream of server-to-client messages (GET), when the server
    /// offers one: one reader per session, on a thread of its own until the stream ends.
    fn listen(self: &Arc<Self>) {
        if self.listening.swap(true, Ordering::SeqCst) {
            return;
        }
        let mut get = self
            .agent
            .get(&self.site.url)
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
            if let Ok(response) = get.call()
                && response.status().as_u16() == 200
            {
                let reader = BufReader::new(response.into_body().into_reader());
                let mut held = Held::default();
                let mut room = |n: usize| held.reserve(n);
                let _ = sse::events(reader, MAX_MESSAGE, &mut room, &mut |data| {
                    this.emit(data, false, None);
                    true
                });
            }
            this.listening.store(false, Ordering::SeqCst);
        });
    }

    fn error(&self, id: &Value, code: Code, message: &str) {
        let kind = match code {
            Code::AuthRequired => "auth_required",
            Code::AuthDenied => "auth_denied",
            Code::AuthInsecure => "auth_insecure",
            Code::RemoteTls => "remote_tls",
            _ => "remote_unreachable",
        };
        let error = json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32000,
            "message": message,
            "data": {"kind": kind, "server": self.server, "code": code.as_str()},
        }});
        self.emit(&mut error.to_string().into_bytes(), false, None);
    }

    /// Ends a 2025-11-25 session (DELETE), as the spec asks of a client that is done, within
    /// a short bound.
    fn close(&self) {
        if let Some(session) = lock(&self.session).take() {
            let mut delete = self
                .agent
                .delete(&self.site.url)
                .header("mcp-session-id", session)
                .config()
                .timeout_global(Some(Duration::from_secs(2)))
                .build();
            for (name, value) in &self.headers {
                delete = delete.header(name, value);
            }
            let _ = delete.call();
        }
    }
}

/// A body, read in pieces against the shared budget.
fn read_all(mut reader: impl Read, held: &mut Held) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let n = reader.read(&mut chunk).map_err(|e| e.to_string())?;
        if n == 0 {
            return Ok(body);
        }
        if !held.reserve(n) {
            return Err(format!(
                "the answers being read hold {} MiB already",
                BUDGET >> 20
            ));
        }
        body.extend_from_slice(&chunk[..n]);
    }
}

/// Relays until stdin ends, then gives the messages in flight a moment, ends the session and
/// exits (a server that keeps a stream open does not keep the relay alive).
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
        // HTTP+SSE: each POST is answered at once and the server reads its session's messages
        // in the order they came, so they are sent one after the other, in the client's order
        // (`notifications/initialized` before the request that follows it).
        if matches!(*lock(&relay.transport), Transport::Sse(_)) {
            relay.send(&line);
            continue;
        }
        // Only requests wait for a slot: a cancellation or an answer to the server's question
        // must get through while requests hang.
        let request = serde_json::from_slice::<Head<'_>>(&line)
            .is_ok_and(|h| h.method.is_some() && h.id.is_some_and(|id| id.get() != "null"));
        if request {
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
            if request {
                let (count, freed) = &*slots;
                *lock(count) -= 1;
                freed.notify_one();
            }
        }));
    }
    let until = Instant::now() + Duration::from_secs(1);
    while (threads.iter().any(|t| !t.is_finished()) || !lock(&relay.pending).is_empty())
        && Instant::now() < until
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    relay.close();
    let _ = std::io::stdout().flush();
    std::process::exit(0)
}
