//! The relay's routing and timing state: which requests are waiting in each direction, their
//! idle and hard deadlines, and what the bridge must say itself when one fails.
//!
//! Pure logic, no I/O: the pumps feed it frames and time, it tells them what to write. That
//! keeps the rules testable without processes and keeps the lock it lives under short.
//!
//! What it must read is never relayed past it: while an answer it checks (`tools/list` and the
//! like, [`reads_answer`]) is awaited, its [`StreamGate`] tells the server's reader to hold
//! lines whole (up to `max_list_bytes`) instead of streaming them. Whose id is whose is in
//! [`ids`]; a client's batch is refused whole ([`Router::from_client`]).

use std::collections::{HashMap, HashSet, VecDeque};

mod adapt;
mod ask;
mod fallback;
mod ids;
mod learn;
mod lifecycle;
mod mrtr;
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

use warden_config::Limits;
use warden_wire::events::Event;
use warden_wire::protocol::{
    ErrorKind, Frame, HEAD_KEEP, Id, Kind, Peek, StreamGate, TAIL_KEEP, blank_carriage_returns,
    error_response, find_id_in_fragments, notification,
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
    /// Its answer is one the router must read ([`reads_answer`]): held whole, never streamed.
    reads: bool,
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
    /// A `tools_ask` call a 2026-07-28 client was asked about and allowed ([`mrtr`]).
    allowed: Option<Box<mrtr::Allowed>>,
}

/// Whether the answer to a request of `method` is one the router (or the client's view of the
/// tools) depends on, so it must be read whole before the client sees it.
pub(crate) fn reads_answer(method: &str) -> bool {
    matches!(
        method,
        "initialize" | "server/discover" | "tools/list" | "prompts/list" | "resources/list"
    )
}

/// The gate's reason bits ([`StreamGate::hold`]).
const HOLD_FOR_CLIENT: u8 = 0;
const HOLD_FOR_OWN: u8 = 1;
const HOLD_FOR_ADAPT: u8 = 2;

/// The client's requests in flight, counting those whose answer must be read: while any is,
/// the gate holds the server's lines whole. Reads go through `Deref`; every change goes
/// through the methods here, which keep the count.
#[derive(Debug)]
struct Inflight {
    map: HashMap<Id, Pending>,
    reads: usize,
    gate: Arc<StreamGate>,
}

impl Inflight {
    fn new(gate: Arc<StreamGate>) -> Self {
        Inflight {
            map: HashMap::new(),
            reads: 0,
            gate,
        }
    }

    fn count(&mut self, added: bool, removed: bool) {
        if added == removed {
            return;
        }
        let before = self.reads;
        if added {
            self.reads += 1;
        } else {
            self.reads = self.reads.saturating_sub(1);
        }
        if (before == 0) != (self.reads == 0) {
            self.gate.hold(HOLD_FOR_CLIENT, self.reads > 0);
        }
    }

    fn insert(&mut self, id: Id, p: Pending) -> Option<Pending> {
        let added = p.reads;
        let old = self.map.insert(id, p);
        self.count(added, old.as_ref().is_some_and(|o| o.reads));
        old
    }

    fn remove(&mut self, id: &Id) -> Option<Pending> {
        let p = self.map.remove(id);
        self.count(false, p.as_ref().is_some_and(|p| p.reads));
        p
    }

    fn drain(&mut self) -> std::collections::hash_map::Drain<'_, Id, Pending> {
        if self.reads > 0 {
            self.reads = 0;
            self.gate.hold(HOLD_FOR_CLIENT, false);
        }
        self.map.drain()
    }

    fn get_mut(&mut self, id: &Id) -> Option<&mut Pending> {
        self.map.get_mut(id)
    }

    fn values_mut(&mut self) -> std::collections::hash_map::ValuesMut<'_, Id, Pending> {
        self.map.values_mut()
    }
}

impl std::ops::Deref for Inflight {
    type Target = HashMap<Id, Pending>;
    fn deref(&self) -> &Self::Target {
        &self.map
    }
}

impl<'a> IntoIterator for &'a Inflight {
    type Item = (&'a Id, &'a Pending);
    type IntoIter = std::collections::hash_map::Iter<'a, Id, Pending>;
    fn into_iter(self) -> Self::IntoIter {
        self.map.iter()
    }
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
    c2s: Inflight,
    /// Tells the server's reader when to hold lines whole (shared with it).
    gate: Arc<StreamGate>,
    /// What the watchdog sleeps until, as its last [`Router::tick`] said (`None`: until it is
    /// woken): a request whose deadlines all come later does not wake it.
    armed: Option<Instant>,
    /// Server→client requests outstanding, by the id the client saw ([`ids`]); while any is,
    /// idle clocks are paused (a person may be answering an elicitation or a sampling request).
    s2c: HashMap<Id, ids::Relayed>,
    /// The same requests by the server's id (its cancellations name them so): to the id the
    /// client saw.
    s2c_theirs: HashMap<Id, Id>,
    next_s2c: u64,
    tokens: HashMap<Id, Id>,
    dead: Recent<Id>,
    dead_tokens: Recent<Id>,
    own_ids: HashMap<Id, lifecycle::Own>,
    last_stderr: Option<Instant>,
    /// What `sandbox_denied` already reported (paths, `network`).
    sandbox_denied: std::collections::HashSet<String>,
    /// Since when the relay waits for a sign-in in the browser (until the server's next
    /// message): idle and start-up clocks stand still meanwhile, as a person is at work.
    signing_in: Option<Instant>,
    /// The server is Warden's remote relay: only its stderr may say that a sign-in waits (any
    /// other server could print the same words to hold its calls or raise notifications).
    pub remote: bool,
    /// The destinations the sandbox's proxy refused in this session (`host:port`), as the
    /// session last told: a start that fails names them.
    net_refused: Vec<String>,
    life: lifecycle::Life,
    pins: tools::Pins,
    asks: ask::Asks,
    mrtr: mrtr::Mrtr,
    adapt: adapt::Adapt,
    learn: learn::Learn,
    /// `name version` of the client, from its `initialize`.
    pub client: Option<String>,
    pub stats: Stats,
}

const RECENT: usize = 4096;
const NOISE_SHOWN: u64 = 20;

impl Router {
    pub fn new(server: &str, limits: Arc<Limits>) -> Router {
        let gate = Arc::new(StreamGate::default());
        gate.set_max_held(limits.max_list_bytes);
        Router {
            server: server.into(),
            command: "".into(),
            limits,
            c2s: Inflight::new(gate.clone()),
            gate,
            armed: None,
            s2c: HashMap::new(),
            s2c_theirs: HashMap::new(),
            next_s2c: 0,
            tokens: HashMap::new(),
            dead: Recent::new(RECENT),
            dead_tokens: Recent::new(RECENT),
            own_ids: HashMap::new(),
            last_stderr: None,
            sandbox_denied: std::collections::HashSet::new(),
            signing_in: None,
            remote: false,
            net_refused: Vec::new(),
            life: lifecycle::Life::default(),
            pins: tools::Pins::default(),
            asks: ask::Asks::default(),
            mrtr: mrtr::Mrtr::default(),
            adapt: adapt::Adapt::default(),
            learn: learn::Learn::default(),
            client: None,
            stats: Stats::default(),
        }
    }

    pub fn limits(&self) -> &Arc<Limits> {
        &self.limits
    }

    /// The gate the server's reader consults before it streams a line.
    pub fn stream_gate(&self) -> Arc<StreamGate> {
        self.gate.clone()
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
        self.gate.set_max_held(limits.max_list_bytes);
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
                        .code(warden_wire::codes::Code::ParseError)
                        .detail(e.to_string()),
                ));
                return;
            }
        };
        if peek.is_batch() {
            return self.client_batch(&line, out);
        }
        if peek.kind() == Kind::Response {
            return self.client_answer(&peek, &line, now, out);
        }
        self.note_client_capabilities(&peek);
        self.adapt_note_initialize(&peek);
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
        if self.refused_call(peek, out)
            || self.mrtr_retry(peek, now, out)
            || self.ask_call(peek, &line, now, out)
        {
            return;
        }
        self.client_line(peek, line, now, out);
    }

    /// A client line the policy lets through, now or once it was allowed.
    fn client_line(&mut self, peek: &Peek<'_>, line: Bytes, now: Instant, out: &mut Vec<Out>) {
        let line = self.clamp(peek, &line, out).unwrap_or(line);
        let line = match self.adapt.on {
            true => match self.adapt_client(peek, line, out) {
                Some(line) => line,
                None => return,
            },
            false => line,
        };
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
            // Answers to the server's requests are mapped back in `client_answer`.
            Kind::Response => return,
            Kind::Notification | Kind::Other => {}
        }
        out.push(Out::Server(line));
    }

    /// The client cancelled a request: it is forgotten (its late response and progress are
    /// dropped). Whether the notification itself is forwarded is the caller's choice.
    fn client_cancelled(&mut self, peek: &Peek<'_>, now: Instant, out: &mut Vec<Out>) {
        let Some(id) = &peek.request_id else { return };
        if let Some(p) = self.c2s.remove(id) {
            self.adapt_forget(id);
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
        self.remember_handshake(method, peek, out);
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
            reads: reads_answer(method),
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
            allowed: None,
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
                .code(warden_wire::codes::Code::RequestTooLarge)
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
            // Before anything reads it: the client sees what the router judged, whole, even
            // if it also ends lines at a lone `\r`.
            Frame::Message(line) => {
                self.signing_in = None;
                let line = blank_carriage_returns(line);
                self.adapt_retry_answer(&line).unwrap_or(line)
            }
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
        if line.len()
            > self
                .limits
                .max_message_bytes
                .min(self.limits.max_list_bytes)
            && self.held_too_large(&peek, line.len(), now, out)
        {
            return;
        }
        let mut replacement = None;
        match peek.kind() {
            Kind::Response => {
                if let Some(id) = &peek.id {
                    if let Some(own) = self.take_own(id) {
                        return self.own_response(own, &peek, now, out);
                    }
                    // Only a refused request (an `initialize`?) or an adapted session's answer
                    // can be the adapter's: the common answer costs no lookup.
                    if (peek.has_error || self.adapt.on)
                        && self.adapt_server_answer(id, &peek, &line, now, out)
                    {
                        return;
                    }
                    if let Some(p) = self.c2s.remove(id) {
                        if let Some(token) = &p.token {
                            self.tokens.remove(token);
                        }
                        self.adapt_forget(id);
                        self.server_answered(&p, &peek, out);
                        replacement = self
                            .wrap_round(&p, &peek, &line)
                            .or_else(|| self.soft_cap(&p, id, &line, out))
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
                    } else {
                        // No request waits for it: it can only be a guess at an id the client
                        // is about to use, whose answer the router would not have checked.
                        return self.dropped(
                            &format!(
                                "the server answered id {}, which no request waits for",
                                ids::shown(id)
                            ),
                            out,
                        );
                    }
                }
            }
            Kind::Request => match self.rename_server_request(&peek, &line, out) {
                Some(renamed) => replacement = Some(renamed),
                None => return,
            },
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
                Some("notifications/cancelled") => match self.server_cancelled(&peek, now) {
                    Some(mapped) => replacement = Some(mapped),
                    None => return,
                },
                _ => {}
            },
            // A batch could carry an answer past the checks, or a request past the renaming.
            Kind::Other if peek.is_batch() => {
                return self.dropped("the server sent a JSON-RPC batch (not part of MCP)", out);
            }
            Kind::Other => {}
        }
        out.push(Out::Client(replacement.unwrap_or(line)));
    }

    /// A line that was too large to hold whole has been relayed to the client as it arrived
    /// (cut-through); `head` and `tail` are its first and last bytes. Only its id is known:
    /// the request it answers is done. `false`: the client's copy must not end as a valid
    /// message (the pump spoils its end), because it answers no request the router waits for
    /// (a server's request, which must have its id renamed, or a guess at an id), or because
    /// an answer the router must read became awaited while it streamed (the line's id, read
    /// from fragments, cannot prove which request the client will match it to).
    pub fn streamed(
        &mut self,
        head: &[u8],
        tail: &[u8],
        len: u64,
        now: Instant,
        out: &mut Vec<Out>,
    ) -> bool {
        self.stats.bytes_from_server += len;
        self.life.answered = true;
        self.life.spoke = true;
        let id = find_id_in_fragments(head, tail).filter(|id| self.c2s.contains_key(id));
        let Some(id) = id else {
            self.dropped(
                &format!("a streamed server line of {len} bytes answers no request waiting"),
                out,
            );
            return false;
        };
        if self.gate.holds() {
            return self.streamed_while_reading(&id, len, now, out);
        }
        let Some(p) = self.c2s.remove(&id) else {
            return false;
        };
        if let Some(token) = &p.token {
            self.tokens.remove(token);
        }
        self.server_works(out);
        let bytes = usize::try_from(len).unwrap_or(usize::MAX);
        out.push(Out::Event(self.finished(&id, &p, now, "ok", Some(bytes))));
        true
    }

    /// A streamed line ended while an answer the router must read is awaited: it is spoilt,
    /// and the request it names fails instead of waiting for an answer that will not come.
    fn streamed_while_reading(
        &mut self,
        id: &Id,
        len: u64,
        now: Instant,
        out: &mut Vec<Out>,
    ) -> bool {
        let Some(p) = self.c2s.remove(id) else {
            return false;
        };
        self.bury(id.clone(), p.token.clone());
        self.stats.errors += 1;
        let msg = format!(
            "Invalid response: server `{}` answered {} with {} that Warden relayed in parts, and meanwhile the client asked for an answer Warden must check before the client sees it (such as tools/list). Warden cannot tell which request that line answers, so it cut it off. Send the request again.",
            self.server,
            describe(&p),
            human_bytes(len)
        );
        let data = json!({"bytes": len});
        self.fail(id, &p, ErrorKind::InvalidResponse, &msg, data, now, out);
        false
    }

    /// A line held whole (the gate raised the limit) over the limit that applies to it:
    /// `max_list_bytes` for an answer the router must read, `max_message_bytes` for anything
    /// else. `true`: it was dealt with.
    fn held_too_large(
        &mut self,
        peek: &Peek<'_>,
        len: usize,
        now: Instant,
        out: &mut Vec<Out>,
    ) -> bool {
        let answers = peek.id.as_ref().filter(|_| peek.kind() == Kind::Response);
        let pending = answers.and_then(|id| self.c2s.get(id).map(|p| (id.clone(), p.reads)));
        let own_reads = answers
            .and_then(|id| self.own_ids.get(id))
            .is_some_and(|o| o.reads());
        let over = match &pending {
            Some((_, true)) => len > self.limits.max_list_bytes,
            None if own_reads => len > self.limits.max_list_bytes,
            _ => len > self.limits.max_message_bytes,
        };
        if !over {
            return false;
        }
        if own_reads && let Some(id) = answers {
            // No answer will come for it: the gate holds no longer for it.
            self.take_own(id);
        }
        self.too_large(pending.map(|(id, _)| id), len as u64, now, out);
        true
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
        let found = find_id_in_fragments(head, tail);
        if let Some(id) = &found
            && self.own_ids.contains_key(id)
        {
            // One of the bridge's own requests: its answer is lost (what waited for it, a
            // listing, gives up at its own deadline).
            self.take_own(id);
        }
        let waiting = found.filter(|id| self.c2s.contains_key(id));
        let Some(e) = parse else {
            return self.too_large(waiting, len, now, out);
        };
        if let Some(id) = waiting {
            let Some(p) = self.c2s.remove(&id) else {
                return;
            };
            self.bury(id.clone(), p.token.clone());
            self.stats.errors += 1;
            let msg = format!(
                "Invalid response: server `{}` answered {} with a line that is not valid JSON ({e}). Warden dropped it. This is a bug in the server; its debug log may show more.",
                self.server,
                describe(&p)
            );
            let data = json!({"bytes": len, "detail": e.to_string()});
            self.fail(&id, &p, ErrorKind::InvalidResponse, &msg, data, now, out);
            return;
        }
        self.stats.noise_lines += 1;
        self.note_noise(&String::from_utf8_lossy(head));
        if self.stats.noise_lines <= NOISE_SHOWN {
            let shown = String::from_utf8_lossy(&head[..head.len().min(200)]).into_owned();
            out.push(Out::Event(
                Event::new("stdout_noise").detail(format!("{e}: {shown}")),
            ));
        }
    }

    /// A server line over its limit: the request it answers (`waiting`) fails now, with
    /// `list_too_large` when it is an answer the router must read, else `message_too_large`;
    /// a line that answers nothing is logged.
    fn too_large(&mut self, waiting: Option<Id>, len: u64, now: Instant, out: &mut Vec<Out>) {
        let Some((id, p)) = waiting.and_then(|id| self.c2s.remove(&id).map(|p| (id, p))) else {
            out.push(Out::Event(
                Event::new("oversize")
                    .code(warden_wire::codes::Code::ResponseTooLarge)
                    .detail(format!(
                        "server message of {len} bytes dropped (limit {})",
                        self.limits.max_message_bytes
                    )),
            ));
            return;
        };
        self.bury(id.clone(), p.token.clone());
        self.stats.errors += 1;
        if p.reads {
            let limit = self.limits.max_list_bytes;
            let msg = format!(
                "List too large: server `{}` answered {} with {}, over max_list_bytes ({}). Warden checks this answer before the client sees it (tools_deny, tools_ask, pinning), so it did not pass it on; the session goes on. Raise max_list_bytes for this server in config.toml (or --set max_list_bytes={}), or ask the server's authors to page the list.",
                self.server,
                describe(&p),
                human_bytes(len),
                human_bytes(limit as u64),
                len.next_power_of_two().max(limit as u64)
            );
            let data = json!({"bytes": len, "limit": limit, "method": &*p.method});
            return self.fail(&id, &p, ErrorKind::ListTooLarge, &msg, data, now, out);
        }
        let limit = self.limits.max_message_bytes;
        let msg = format!(
            "Response too large: server `{}` answered {} with {}, over max_message_bytes ({}). Warden dropped it so the session can go on. Narrow the request (fewer results, a smaller path), or raise max_message_bytes in config.toml.",
            self.server,
            describe(&p),
            human_bytes(len),
            human_bytes(limit as u64)
        );
        let data = json!({"bytes": len, "limit": limit});
        self.fail(&id, &p, ErrorKind::ResponseTooLarge, &msg, data, now, out);
    }

    /// Server stderr output: activity for the idle clocks when so configured.
    pub fn on_stderr(&mut self, now: Instant, chunk: &[u8], out: &mut Vec<Out>) {
        self.last_stderr = Some(now);
        self.note_installing(now, chunk, out);
        if self.limits.sandbox {
            self.note_sandbox_denied(chunk, out);
        }
        self.note_signin(now, chunk, out);
    }

    /// A remote server's relay (`warden-remote`) opened the browser for a sign-in: a
    /// `signin_waiting` event, which the app shows as a notification, once per wait. Its detail
    /// is Warden's own words, never the line's (which holds the sign-in's link).
    fn note_signin(&mut self, now: Instant, chunk: &[u8], out: &mut Vec<Out>) {
        const OPENED: &[u8] = b"warden-remote: signing in to ";
        let opened = chunk
            .split(|&b| b == b'\n')
            .any(|line| line.starts_with(OPENED));
        if !self.remote || !opened || self.signing_in.is_some() {
            return;
        }
        self.signing_in = Some(now);
        out.push(Out::Event(Event::new("signin_waiting").detail(
            "a browser window opened for the sign-in; calls wait until it is done",
        )));
    }

    /// A sandboxed server's stderr says it was refused a path or the network: `sandbox_denied`
    /// (the path, or `network`), once per session each, so the window can offer to allow it.
    fn note_sandbox_denied(&mut self, chunk: &[u8], out: &mut Vec<Out>) {
        for line in String::from_utf8_lossy(chunk).lines() {
            let Some(d) = crate::sandbox::denied(line, &self.limits) else {
                continue;
            };
            let detail = d.detail();
            if self.sandbox_denied.insert(detail.clone()) {
                out.push(Out::Event(Event::new("sandbox_denied").detail(detail)));
            }
        }
    }

    /// The server's request the client knows as `id` is over; `None` when none is.
    fn s2c_done(&mut self, id: &Id, now: Instant) -> Option<ids::Relayed> {
        let relayed = self.s2c.remove(id)?;
        if self.s2c_theirs.get(&relayed.id) == Some(id) {
            self.s2c_theirs.remove(&relayed.id);
        }
        if self.s2c.is_empty() {
            // The pause is over: idle clocks restart from now.
            for p in self.c2s.values_mut() {
                p.last_activity = now;
            }
        }
        Some(relayed)
    }

    // ---- helpers ------------------------------------------------------------------------

    fn bury(&mut self, id: Id, token: Option<Id>) {
        if let Some(token) = token {
            self.tokens.remove(&token);
            self.dead_tokens.insert(token);
        }
        self.dead.insert(id);
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
