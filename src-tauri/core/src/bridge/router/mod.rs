//! The relay's routing and timing state: which requests are waiting in each direction, their
//! idle and hard deadlines, and what the bridge must say itself when one fails.
//!
//! Pure logic, no I/O: the pumps feed it frames and time, it tells them what to write. That
//! keeps the rules testable without processes and keeps the lock it lives under short.

use std::collections::{HashMap, HashSet, VecDeque};

mod ask;
mod fallback;
mod learn;
mod lifecycle;
mod start;
mod tools;
mod watchdog;
pub use ask::{Answerer, AskView};
pub use lifecycle::Restart;
pub use tools::PinRecord;

use super::guard;
use std::fmt::Write as _;
use std::hash::Hash;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::json;

use crate::config::Limits;
use crate::events::Event;
use crate::protocol::{
    ErrorKind, Frame, HEAD_KEEP, Id, Kind, Peek, TAIL_KEEP, error_response, find_id_in_fragments,
    notification,
};

/// What the router asks the pumps to do.
// An `Event` is the large variant (a `spawn_failed` one carries several texts); they are
// moved a few times per message at most, so boxing each would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Out {
    Client(Bytes),
    Server(Bytes),
    Event(Event),
    /// A deadline may now be earlier than the watchdog's current sleep.
    WakeWatchdog,
    /// The server is stuck (its handshake or requests keep timing out): end it, and the
    /// session restarts it.
    KillServer,
    /// Start a server now (a half-open trial after the circuit breaker's cool-down).
    StartServer,
    /// The server could not be started (`spawn_failed`): the session ends once the client's
    /// `initialize` has its answer (`Router::initialize_refused`).
    GaveUp,
    /// Tool definitions to merge into the server's pin file.
    Pins(Box<PinRecord>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Normal,
    /// Bounded by `startup_timeout_ms` and never cancelled (the spec forbids it).
    Initialize,
    /// Blocks until a task ends: no idle clock, only the hard maximum.
    TaskResult,
}

#[derive(Debug)]
struct Pending {
    method: Box<str>,
    tool: Option<Box<str>>,
    token: Option<Id>,
    task_id: Option<Box<str>>,
    class: Class,
    started: Instant,
    last_activity: Instant,
    bytes_in: usize,
    progress: Option<Box<str>>,
    /// The request as sent, kept when it is safe to send again after a crash.
    retry_line: Option<Bytes>,
    attempts: u32,
    /// Set while the request waits for a (re)started server instead of being in flight.
    held_since: Option<Instant>,
}

/// A request waiting for the server, as heartbeats and status show it.
#[derive(Debug, Clone, PartialEq)]
pub struct InflightView {
    pub id: Id,
    pub method: String,
    pub tool: Option<String>,
    pub age: Duration,
    pub idle: Duration,
    pub progress: Option<String>,
}

/// Set of recently finished keys with bounded memory: the oldest are forgotten first.
#[derive(Debug)]
struct Recent<T> {
    set: HashSet<T>,
    order: VecDeque<T>,
    cap: usize,
}

impl<T: Clone + Eq + Hash> Recent<T> {
    fn new(cap: usize) -> Self {
        Recent {
            set: HashSet::new(),
            order: VecDeque::new(),
            cap,
        }
    }

    fn insert(&mut self, item: T) {
        if self.set.insert(item.clone()) {
            self.order.push_back(item);
            if self.order.len() > self.cap
                && let Some(old) = self.order.pop_front()
            {
                self.set.remove(&old);
            }
        }
    }

    fn contains(&self, item: &T) -> bool {
        self.set.contains(item)
    }
}

/// Counters of one session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub requests: u64,
    pub errors: u64,
    pub timeouts: u64,
    pub cancelled: u64,
    pub bytes_from_client: u64,
    pub bytes_from_server: u64,
    pub noise_lines: u64,
    pub restarts: u64,
    pub retries: u64,
}

pub struct Router {
    server: Arc<str>,
    /// The server's command line, for start failures.
    command: Arc<str>,
    limits: Arc<Limits>,
    c2s: HashMap<Id, Pending>,
    /// What the watchdog sleeps until, as its last [`Router::tick`] said (`None`: until it is
    /// woken): a request whose deadlines all come later does not wake it.
    armed: Option<Instant>,
    /// Server→client requests outstanding; while any is, idle clocks are paused (a person may
    /// be answering an elicitation or a sampling request).
    s2c: HashMap<Id, Instant>,
    tokens: HashMap<Id, Id>,
    dead: Recent<Id>,
    dead_tokens: Recent<Id>,
    own_ids: HashMap<Id, lifecycle::Own>,
    next_own: u64,
    last_stderr: Option<Instant>,
    /// What `sandbox_denied` already reported (paths, `network`).
    sandbox_denied: std::collections::HashSet<String>,
    /// The destinations the sandbox's proxy refused in this session (`host:port`), as the
    /// session last told: a start that fails names them.
    net_refused: Vec<String>,
    life: lifecycle::Life,
    pins: tools::Pins,
    asks: ask::Asks,
    learn: learn::Learn,
    /// `name version` of the client, from its `initialize`.
    pub client: Option<String>,
    pub stats: Stats,
}

const RECENT: usize = 4096;
const NOISE_SHOWN: u64 = 20;

impl Router {
    pub fn new(server: &str, limits: Arc<Limits>) -> Router {
        Router {
            server: server.into(),
            command: "".into(),
            limits,
            c2s: HashMap::new(),
            armed: None,
            s2c: HashMap::new(),
            tokens: HashMap::new(),
            dead: Recent::new(RECENT),
            dead_tokens: Recent::new(RECENT),
            own_ids: HashMap::new(),
            next_own: 0,
            last_stderr: None,
            sandbox_denied: std::collections::HashSet::new(),
            net_refused: Vec::new(),
            life: lifecycle::Life::default(),
            pins: tools::Pins::default(),
            asks: ask::Asks::default(),
            learn: learn::Learn::default(),
            client: None,
            stats: Stats::default(),
        }
    }

    pub fn limits(&self) -> &Arc<Limits> {
        &self.limits
    }

    /// New limits apply to requests from now on and to the running clocks.
    pub fn set_limits(&mut self, limits: Arc<Limits>, now: Instant, out: &mut Vec<Out>) {
        if self.life.ready() && Router::tools_view_changed(&self.limits, &limits) {
            // The client lists the tools again and sees the new set.
            out.push(Out::Client(notification(
                "notifications/tools/list_changed",
                json!({}),
            )));
        }
        self.limits = limits;
        self.follow_force_fallback(now, out);
        out.push(Out::WakeWatchdog);
    }

    pub fn inflight(&self, now: Instant) -> Vec<InflightView> {
        let mut v: Vec<_> = self
            .c2s
            .iter()
            .map(|(id, p)| InflightView {
                id: id.clone(),
                method: p.method.to_string(),
                tool: p.tool.as_deref().map(str::to_owned),
                age: now.saturating_duration_since(p.started),
                idle: now.saturating_duration_since(self.activity(p)),
                progress: p.progress.as_deref().map(str::to_owned),
            })
            .chain(self.held_calls(now))
            .chain(self.learning_calls(now))
            .collect();
        v.sort_by_key(|view| std::cmp::Reverse(view.age));
        v
    }

    pub fn pending_requests(&self) -> usize {
        self.c2s.len()
    }

    // ---- client → server ------------------------------------------------------------------

    pub fn from_client(&mut self, frame: Frame, now: Instant, out: &mut Vec<Out>) {
        let line = match frame {
            Frame::Message(line) => line,
            Frame::Oversize { head, tail, len } => {
                return self.client_oversize(&head, &tail, len, out);
            }
            // The client pump does not stream.
            Frame::Begin(_) | Frame::Part { .. } => return,
        };
        self.stats.bytes_from_client += line.len() as u64;
        let peek = match Peek::parse(&line) {
            Ok(peek) => peek,
            Err(e) => {
                let msg = format!(
                    "Parse error: the client sent a line that is not valid JSON ({e}); Warden did not pass it to server `{}`.",
                    self.server
                );
                out.push(Out::Client(error_response(
                    None,
                    ErrorKind::ParseError,
                    &self.server,
                    &msg,
                    json!({"detail": e.to_string()}),
                )));
                out.push(Out::Event(
                    Event::new("parse_error")
                        .code(crate::codes::Code::ParseError)
                        .detail(e.to_string()),
                ));
                return;
            }
        };
        if peek.kind() == Kind::Response && self.elicit_answered(&peek, now, out) {
            return;
        }
        self.note_client_capabilities(&peek);
        if self.learn_first(&peek, &line, now, out) {
            return;
        }
        self.judged_client_line(&peek, line.clone(), now, out);
    }

    /// A client line past the tool policy: refused, held for an answer, or on its way.
    fn judged_client_line(
        &mut self,
        peek: &Peek<'_>,
        line: Bytes,
        now: Instant,
        out: &mut Vec<Out>,
    ) {
        if self.refused_call(peek, out) || self.ask_call(peek, &line, now, out) {
            return;
        }
        self.client_line(peek, line, now, out);
    }

    /// A client line the policy lets through, now or once it was allowed.
    fn client_line(&mut self, peek: &Peek<'_>, line: Bytes, now: Instant, out: &mut Vec<Out>) {
        let line = self.clamp(peek, &line, out).unwrap_or(line);
        if peek.kind() == Kind::Request {
            self.maybe_leave_fallback(now, out);
        }
        if !self.life.ready() {
            return self.client_while_not_ready(peek, line, now, out);
        }
        match peek.kind() {
            Kind::Request => {
                if !self.client_request(peek, &line, now, out) {
                    return;
                }
            }
            Kind::Notification if peek.method.as_deref() == Some("notifications/cancelled") => {
                self.client_cancelled(peek, now, out);
            }
            Kind::Response => {
                if let Some(id) = &peek.id {
                    self.s2c_done(id, now);
                }
            }
            Kind::Notification | Kind::Other => {}
        }
        out.push(Out::Server(line));
    }

    /// The client cancelled a request: it is forgotten (its late response and progress are
    /// dropped). Whether the notification itself is forwarded is the caller's choice.
    fn client_cancelled(&mut self, peek: &Peek<'_>, now: Instant, out: &mut Vec<Out>) {
        let Some(id) = &peek.request_id else { return };
        if let Some(p) = self.c2s.remove(id) {
            self.stats.cancelled += 1;
            self.bury(id.clone(), p.token.clone());
            out.push(Out::Event(self.finished(id, &p, now, "cancelled", None)));
        }
    }

    /// Tracks a request; `false` when the bridge answered it itself (circuit open).
    fn client_request(
        &mut self,
        peek: &Peek<'_>,
        line: &Bytes,
        now: Instant,
        out: &mut Vec<Out>,
    ) -> bool {
        let Some(id) = peek.id.clone() else {
            return true;
        };
        let method = peek.method.as_deref().unwrap_or_default();
        self.remember_handshake(method, peek);
        let tool = if method == "tools/call" {
            peek.name.as_deref()
        } else {
            None
        };
        let retry_line = self.retry_safe(method, tool).then(|| line.clone());
        let class = match method {
            "initialize" => Class::Initialize,
            "tasks/result" => Class::TaskResult,
            _ => Class::Normal,
        };
        let pending = Pending {
            method: method.into(),
            tool: if method == "tools/call" {
                peek.name.as_deref().map(Into::into)
            } else {
                None
            },
            token: peek.progress_token.clone(),
            task_id: peek.task_id.as_deref().map(Into::into),
            class,
            started: now,
            last_activity: now,
            bytes_in: line.len(),
            progress: None,
            retry_line,
            attempts: 0,
            held_since: None,
        };
        self.stats.requests += 1;
        if let Some(token) = &pending.token {
            self.tokens.insert(token.clone(), id.clone());
        }
        // Its first deadline (`tick`'s): the watchdog is woken only when that comes before the
        // one it sleeps until, so a steady stream of requests does not wake it each time.
        let first = match class {
            Class::Initialize => self.limits.startup_timeout,
            _ => self.limits.idle_timeout.min(self.limits.max_timeout),
        };
        if self.armed.is_none_or(|at| now + first < at) {
            out.push(Out::WakeWatchdog);
        }
        self.c2s.insert(id, pending);
        true
    }

    /// The `clamp` guardrail: a `tools/call` with arguments over their caps goes through
    /// with the caps instead.
    fn clamp(&self, peek: &Peek<'_>, line: &[u8], out: &mut Vec<Out>) -> Option<Bytes> {
        if peek.method.as_deref() != Some("tools/call") {
            return None;
        }
        let tool = peek.name.as_deref()?;
        let (clamped, notes) = guard::clamp(line, self.limits.clamp.get(tool)?)?;
        let event = Event {
            method: Some("tools/call".into()),
            tool: Some(tool.to_owned()),
            id: peek.id.as_ref().map(Id::to_value),
            ..Event::new("clamped")
        };
        out.push(Out::Event(event.detail(notes.join("; "))));
        Some(clamped)
    }

    fn client_oversize(&mut self, head: &[u8], tail: &[u8], len: u64, out: &mut Vec<Out>) {
        self.stats.bytes_from_client += len;
        let id = find_id_in_fragments(head, tail);
        let limit = self.limits.max_message_bytes;
        out.push(Out::Event(
            Event::new("oversize")
                .code(crate::codes::Code::RequestTooLarge)
                .detail(format!(
                    "client message of {len} bytes dropped (limit {limit})"
                )),
        ));
        if let Some(id) = id {
            let msg = format!(
                "Request too large: the message was {} (max_message_bytes is {}), so Warden did not send it to server `{}`. Send less data in one request, or raise max_message_bytes in config.toml.",
                human_bytes(len),
                human_bytes(limit as u64),
                self.server
            );
            out.push(Out::Client(error_response(
                Some(&id),
                ErrorKind::RequestTooLarge,
                &self.server,
                &msg,
                json!({"bytes": len, "limit": limit}),
            )));
        }
    }

    // ---- server → client ------------------------------------------------------------------

    pub fn from_server(&mut self, frame: Frame, now: Instant, out: &mut Vec<Out>) {
        let line = match frame {
            Frame::Message(line) => line,
            Frame::Oversize { head, tail, len } => {
                self.stats.bytes_from_server += len;
                return self.server_unusable(&head, &tail, len, None, now, out);
            }
            // The pump relays streamed parts itself, then calls `streamed`.
            Frame::Begin(_) | Frame::Part { .. } => return,
        };
        self.stats.bytes_from_server += line.len() as u64;
        let peek = match Peek::parse(&line) {
            Ok(peek) => {
                self.life.answered = true;
                self.life.spoke = true;
                peek
            }
            Err(e) => {
                let head = &line[..line.len().min(HEAD_KEEP)];
                let tail = &line[line.len().saturating_sub(TAIL_KEEP)..];
                return self.server_unusable(head, tail, line.len() as u64, Some(e), now, out);
            }
        };
        let mut replacement = None;
        match peek.kind() {
            Kind::Response => {
                if let Some(id) = &peek.id {
                    if let Some(own) = self.own_ids.remove(id) {
                        return self.own_response(own, &peek, now, out);
                    }
                    if let Some(p) = self.c2s.remove(id) {
                        if let Some(token) = &p.token {
                            self.tokens.remove(token);
                        }
                        self.server_answered(&p, &peek, out);
                        replacement = self
                            .soft_cap(&p, id, &line, out)
                            .or_else(|| self.tools_page(&p, &line, out));
                        let outcome = if peek.has_error { "error" } else { "ok" };
                        if peek.has_error {
                            self.stats.errors += 1;
                        }
                        out.push(Out::Event(self.finished(
                            id,
                            &p,
                            now,
                            outcome,
                            Some(line.len()),
                        )));
                    } else if self.dead.contains(id) {
                        return; // the bridge already answered it (timeout) or the client cancelled it
                    }
                }
            }
            Kind::Request => {
                if let Some(id) = &peek.id {
                    self.s2c.insert(id.clone(), now);
                }
            }
            Kind::Notification => match peek.method.as_deref() {
                Some("notifications/progress") => {
                    if let Some(token) = &peek.progress_token {
                        if let Some(p) = self.tokens.get(token).and_then(|id| self.c2s.get_mut(id))
                        {
                            p.last_activity = now;
                            if let Some(m) = &peek.message {
                                p.progress = Some(m.as_ref().into());
                            }
                        } else if self.dead_tokens.contains(token) {
                            return; // late progress of a request that is over
                        }
                    }
                }
                Some("notifications/cancelled") => {
                    if let Some(id) = &peek.request_id {
                        self.s2c_done(id, now);
                    }
                }
                _ => {}
            },
            Kind::Other => {}
        }
        out.push(Out::Client(replacement.unwrap_or(line)));
    }

    /// A line that was too large to hold whole has been relayed to the client as it arrived
    /// (cut-through); `head` and `tail` are its first and last bytes. Only its id is known:
    /// the request it answers is done.
    pub fn streamed(
        &mut self,
        head: &[u8],
        tail: &[u8],
        len: u64,
        now: Instant,
        out: &mut Vec<Out>,
    ) {
        self.stats.bytes_from_server += len;
        self.life.answered = true;
        self.life.spoke = true;
        let Some(id) = find_id_in_fragments(head, tail) else {
            return;
        };
        let Some(p) = self.c2s.remove(&id) else {
            return;
        };
        if let Some(token) = &p.token {
            self.tokens.remove(token);
        }
        self.server_works(out);
        let bytes = usize::try_from(len).unwrap_or(usize::MAX);
        out.push(Out::Event(self.finished(&id, &p, now, "ok", Some(bytes))));
    }

    /// The `result_soft_cap_bytes` guardrail: an oversized tool result is cut, with a note.
    fn soft_cap(&self, p: &Pending, id: &Id, line: &[u8], out: &mut Vec<Out>) -> Option<Bytes> {
        let cap = usize::try_from(self.limits.result_soft_cap_bytes).unwrap_or(usize::MAX);
        if cap == 0 || line.len() <= cap || &*p.method != "tools/call" {
            return None;
        }
        let (cut, before) = guard::soft_cap(line, cap)?;
        let event = Event {
            method: Some("tools/call".into()),
            tool: p.tool.as_deref().map(str::to_owned),
            id: Some(id.to_value()),
            ..Event::new("truncated")
        };
        out.push(Out::Event(
            event.detail(format!("result text cut from {before} to {cap} bytes")),
        ));
        Some(cut)
    }

    /// A server line that cannot be relayed: too large, or not JSON. If it answers a waiting
    /// request, that request fails now instead of timing out later.
    fn server_unusable(
        &mut self,
        head: &[u8],
        tail: &[u8],
        len: u64,
        parse: Option<serde_json::Error>,
        now: Instant,
        out: &mut Vec<Out>,
    ) {
        let waiting = find_id_in_fragments(head, tail).filter(|id| self.c2s.contains_key(id));
        if let Some(id) = waiting {
            let Some(p) = self.c2s.remove(&id) else {
                return;
            };
            self.bury(id.clone(), p.token.clone());
            self.stats.errors += 1;
            let (kind, msg, data) = match &parse {
                None => {
                    let limit = self.limits.max_message_bytes;
                    (
                        ErrorKind::ResponseTooLarge,
                        format!(
                            "Response too large: server `{}` answered {} with {}, over max_message_bytes ({}). Warden dropped it so the session can go on. Narrow the request (fewer results, a smaller path), or raise max_message_bytes in config.toml.",
                            self.server,
                            describe(&p),
                            human_bytes(len),
                            human_bytes(limit as u64)
                        ),
                        json!({"bytes": len, "limit": limit}),
                    )
                }
                Some(e) => (
                    ErrorKind::InvalidResponse,
                    format!(
                        "Invalid response: server `{}` answered {} with a line that is not valid JSON ({e}). Warden dropped it. This is a bug in the server; its debug log may show more.",
                        self.server,
                        describe(&p)
                    ),
                    json!({"bytes": len, "detail": e.to_string()}),
                ),
            };
            self.fail(&id, &p, kind, &msg, data, now, out);
            return;
        }
        match parse {
            None => out.push(Out::Event(
                Event::new("oversize")
                    .code(crate::codes::Code::ResponseTooLarge)
                    .detail(format!(
                        "server message of {len} bytes dropped (limit {})",
                        self.limits.max_message_bytes
                    )),
            )),
            Some(e) => {
                self.stats.noise_lines += 1;
                self.note_noise(&String::from_utf8_lossy(head));
                if self.stats.noise_lines <= NOISE_SHOWN {
                    let shown = String::from_utf8_lossy(&head[..head.len().min(200)]).into_owned();
                    out.push(Out::Event(
                        Event::new("stdout_noise").detail(format!("{e}: {shown}")),
                    ));
                }
            }
        }
    }

    /// Server stderr output: activity for the idle clocks when so configured.
    pub fn on_stderr(&mut self, now: Instant, chunk: &[u8], out: &mut Vec<Out>) {
        self.last_stderr = Some(now);
        self.note_installing(now, chunk, out);
        if self.limits.sandbox {
            self.note_sandbox_denied(chunk, out);
        }
    }

    /// A sandboxed server's stderr says it was refused a path or the network: `sandbox_denied`
    /// (the path, or `network`), once per session each, so the window can offer to allow it.
    fn note_sandbox_denied(&mut self, chunk: &[u8], out: &mut Vec<Out>) {
        for line in String::from_utf8_lossy(chunk).lines() {
            let Some(d) = crate::bridge::sandbox::denied(line, &self.limits) else {
                continue;
            };
            let detail = d.detail();
            if self.sandbox_denied.insert(detail.clone()) {
                out.push(Out::Event(Event::new("sandbox_denied").detail(detail)));
            }
        }
    }

    fn s2c_done(&mut self, id: &Id, now: Instant) {
        if self.s2c.remove(id).is_some() && self.s2c.is_empty() {
            // The pause is over: idle clocks restart from now.
            for p in self.c2s.values_mut() {
                p.last_activity = now;
            }
        }
    }

    // ---- helpers ------------------------------------------------------------------------

    fn bury(&mut self, id: Id, token: Option<Id>) {
        if let Some(token) = token {
            self.tokens.remove(&token);
            self.dead_tokens.insert(token);
        }
        self.dead.insert(id);
    }

    /// A request id of the bridge's own, in a space no client uses.
    fn own_id(&mut self, purpose: lifecycle::Own) -> Id {
        self.next_own += 1;
        let id = Id::Str(format!("__warden/{}", self.next_own).into());
        self.own_ids.insert(id.clone(), purpose);
        id
    }

    /// Answers a request with the bridge's own error and logs how it ended.
    #[allow(clippy::too_many_arguments)] // each is one part of the answer; a struct would only rename them
    fn fail(
        &self,
        id: &Id,
        p: &Pending,
        kind: ErrorKind,
        msg: &str,
        data: serde_json::Value,
        now: Instant,
        out: &mut Vec<Out>,
    ) {
        out.push(Out::Client(error_response(
            Some(id),
            kind,
            &self.server,
            msg,
            data,
        )));
        out.push(Out::Event(
            self.finished(id, p, now, kind.as_str(), None)
                .code(kind.stable_code()),
        ));
    }

    fn finished(
        &self,
        id: &Id,
        p: &Pending,
        now: Instant,
        outcome: &'static str,
        bytes_out: Option<usize>,
    ) -> Event {
        Event {
            method: Some(p.method.to_string()),
            id: Some(id.to_value()),
            tool: p.tool.as_deref().map(str::to_owned),
            duration_ms: Some(now.saturating_duration_since(p.started).as_millis() as u64),
            outcome: Some(outcome.into()),
            bytes_in: Some(p.bytes_in as u64),
            bytes_out: bytes_out.map(|b| b as u64),
            ..Event::new("request")
        }
    }
}

fn describe(p: &Pending) -> String {
    match &p.tool {
        Some(tool) => format!("`{}` (tool `{tool}`)", p.method),
        None => format!("`{}`", p.method),
    }
}

fn secs(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

pub(crate) fn human_bytes(n: u64) -> String {
    const MIB: u64 = 1 << 20;
    if n >= MIB {
        format!("{:.1} MiB", n as f64 / MIB as f64)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests;
