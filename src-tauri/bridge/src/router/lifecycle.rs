//! A server's life as the router sees it: restarts with the client's handshake replayed,
//! requests held while no server is ready, safe retries after a crash, and the circuit
//! breaker that turns a failing server into immediate, explained errors.

use std::collections::BTreeSet;
use std::hash::{DefaultHasher, Hasher};

use super::*;
use warden_wire::codes::Code;
use warden_wire::protocol::Era;

/// What the bridge's own requests were for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Own {
    /// Answer not needed (replayed `logging/setLevel`, `resources/subscribe`, `tasks/cancel`).
    Swallow,
    /// The replayed `initialize`: its answer makes the new server ready.
    Init,
    /// `tools/list` after a restart: a changed list is announced to the client.
    ToolsCheck,
    /// `tools/list` before judging a call of a tool not seen listed ([`super::learn`]).
    Learn,
    /// `server/discover` after the server refused the client's `initialize` ([`super::adapt`]).
    Discover,
}

impl Own {
    /// Whether its answer is read by the router (held whole, never streamed past it).
    pub(super) fn reads(self) -> bool {
        matches!(
            self,
            Own::Init | Own::ToolsCheck | Own::Learn | Own::Discover
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// A server runs and (if the client had initialized) knows the client: requests flow.
    Ready,
    /// A restarted server is being given the client's handshake; requests wait.
    Replaying { since: Instant },
    /// No server: one is being (re)started; requests wait up to `startup_timeout_ms`.
    Down,
    /// The breaker is open: requests fail at once until `until`, then one may try again.
    Open { until: Instant },
}

/// What the session should do after its server ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restart {
    /// Start the next server after this delay (exponential backoff).
    After(Duration),
    /// The breaker is open: start one when the router asks (`Out::StartServer`).
    OnRequest,
}

#[derive(Debug)]
struct Held {
    line: Bytes,
    id: Option<Id>,
}

#[derive(Debug)]
pub(super) struct Life {
    pub(super) phase: Phase,
    held: VecDeque<Held>,
    /// The client's `initialize` params once the server accepted them (replayed on restart).
    pub(super) init_params: Option<String>,
    /// Params of an `initialize` in flight, until it succeeds.
    pub(super) init_pending: Option<String>,
    pub(super) log_level: Option<String>,
    pub(super) subscriptions: BTreeSet<String>,
    /// Tools the server marks read-only or idempotent.
    pub(super) safe_tools: HashSet<String>,
    pub(super) tools_fingerprint: Option<u64>,
    pub(super) failures: u32,
    pub(super) trial: bool,
    /// Why the bridge itself ended the server, when it did.
    pub(super) kill_reason: Option<String>,
    pub(super) last_exit: Option<String>,
    pub(super) generation: u64,
    /// The client's era, once its first request said it (an `era` event names it).
    pub(super) client_era: Option<warden_wire::protocol::Era>,
    /// Whether the current server has written a message yet (it is past its cold start).
    pub(super) answered: bool,
    pub(super) last_installing: Option<Instant>,
    /// The current server process is the local ripgrep fallback.
    pub(super) serving_fallback: bool,
    /// Breaker-triggered fallback: serve locally until then, then try the server again.
    pub(super) fallback_until: Option<Instant>,
    /// The current process is being replaced on purpose (fallback on or off): its end is no
    /// failure, and the next one starts at once.
    pub(super) swap: bool,
    /// The bridge gave up on starting the server (see `start.rs`).
    pub(super) gave_up: Option<super::start::StartFailure>,
    /// The client's `initialize` was answered with the start failure.
    pub(super) init_refused: bool,
    /// A server process of this session has written a JSON message (it got going once).
    pub(super) spoke: bool,
    /// The first line the current server wrote to stdout that is not JSON.
    pub(super) first_noise: Option<String>,
}

impl Default for Life {
    fn default() -> Self {
        Life {
            phase: Phase::Ready,
            held: VecDeque::new(),
            init_params: None,
            init_pending: None,
            log_level: None,
            subscriptions: BTreeSet::new(),
            safe_tools: HashSet::new(),
            tools_fingerprint: None,
            failures: 0,
            trial: false,
            kill_reason: None,
            last_exit: None,
            generation: 0,
            client_era: None,
            answered: false,
            last_installing: None,
            serving_fallback: false,
            fallback_until: None,
            swap: false,
            gave_up: None,
            init_refused: false,
            spoke: false,
            first_noise: None,
        }
    }
}

impl Life {
    pub(super) fn ready(&self) -> bool {
        self.phase == Phase::Ready
    }

    /// Forgets the held lines (their requests are answered by whoever calls this).
    pub(super) fn drop_held(&mut self) {
        self.held.clear();
    }

    /// No more starts: the server is down for good, for reason `f`; the held lines are
    /// forgotten (their requests are answered by the caller).
    pub(super) fn give_up(&mut self, f: super::start::StartFailure) {
        self.phase = Phase::Down;
        self.drop_held();
        self.gave_up = Some(f);
    }

    pub(super) fn last_exit_note(&self) -> String {
        match &self.last_exit {
            Some(exit) => format!("Last time, the server {exit}."),
            None => String::new(),
        }
    }
}

/// What package managers print while a server's cold start downloads it (npx, uvx, pip).
const INSTALL_CHATTER: &[&str] = &[
    "npm WARN",
    "npm notice",
    "npm http",
    "Need to install the following packages",
    "added ",
    "Collecting ",
    "Downloading ",
    "Installing collected packages",
    "Resolved ",
    "Prepared ",
    "Installed ",
    "Building wheel",
];

/// `name version` from `initialize` params' `clientInfo`.
fn client_info(params: &serde_json::value::RawValue) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(params.get()).ok()?;
    info_text(v.get("clientInfo")?)
}

/// The `_meta` key of a 2026-07-28 request that names its client.
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// `name version` from a 2026-07-28 request's `_meta` (which has no `initialize`): read only
/// when the params' text names the key, so other requests cost a search, not a parse.
fn meta_client_info(params: &serde_json::value::RawValue) -> Option<String> {
    if !params.get().contains(META_CLIENT_INFO) {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(params.get()).ok()?;
    info_text(v.get("_meta")?.get(META_CLIENT_INFO)?)
}

fn info_text(info: &serde_json::Value) -> Option<String> {
    let name = info.get("name")?.as_str()?;
    Some(match info.get("version").and_then(|v| v.as_str()) {
        Some(version) => format!("{name} {version}"),
        None => name.to_owned(),
    })
}

const SAFE_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
    "tasks/list",
    "server/discover",
];

impl Router {
    /// Which server process the router is talking to (1 for the first).
    pub fn generation(&self) -> u64 {
        self.life.generation
    }

    /// The client's era, once its first request said it.
    pub fn client_era(&self) -> Option<Era> {
        self.life.client_era
    }

    /// Whether the breaker is open.
    pub fn circuit_open(&self) -> bool {
        matches!(self.life.phase, Phase::Open { .. })
    }

    pub(super) fn retry_safe(&self, method: &str, tool: Option<&str>) -> bool {
        match (method, tool) {
            ("tools/call", Some(tool)) => {
                self.fallback_tool_is_safe(tool)
                    || self.life.safe_tools.contains(tool)
                    || self.limits.idempotent_tools.iter().any(|t| t == tool)
            }
            _ => SAFE_METHODS.contains(&method),
        }
    }

    /// Names the client's era in an `era` event, at its first request.
    fn note_client_era(&mut self, method: &str, peek: &Peek<'_>, out: &mut Vec<Out>) {
        if self.life.client_era.is_some() {
            return;
        }
        let params = peek.params.map(|p| p.get()).unwrap_or_default();
        let detail = if method == "initialize" {
            let v: Option<serde_json::Value> = serde_json::from_str(params).ok();
            let version = v
                .as_ref()
                .and_then(|v| v.get("protocolVersion")?.as_str().map(str::to_owned))
                .map(|v| warden_wire::text::line(&v.chars().take(40).collect::<String>()))
                .unwrap_or_else(|| "no version".to_owned());
            self.life.client_era = Some(Era::Legacy);
            format!("the client speaks the legacy handshake (initialize, {version})")
        } else if params.contains(warden_wire::protocol::META_PROTOCOL_VERSION) {
            self.life.client_era = Some(Era::Modern);
            "the client speaks 2026-07-28 (no initialize; _meta on each request)".to_owned()
        } else {
            return;
        };
        out.push(Out::Event(Event::new("era").detail(detail)));
    }

    /// Keeps what a restarted server must be told again.
    pub(super) fn remember_handshake(&mut self, method: &str, peek: &Peek<'_>, out: &mut Vec<Out>) {
        self.note_client_era(method, peek, out);
        let params = || peek.params.map(|p| p.get().to_owned());
        match method {
            "initialize" => {
                self.life.init_pending = params();
                self.client = peek.params.and_then(client_info);
            }
            "logging/setLevel" => self.life.log_level = params(),
            "resources/subscribe" | "resources/unsubscribe" => {
                let uri = peek
                    .params
                    .and_then(|p| serde_json::from_str::<serde_json::Value>(p.get()).ok())
                    .and_then(|v| v.get("uri").and_then(|u| u.as_str()).map(str::to_owned));
                if let Some(uri) = uri {
                    if method == "resources/subscribe" {
                        self.life.subscriptions.insert(uri);
                    } else {
                        self.life.subscriptions.remove(&uri);
                    }
                }
            }
            // A modern client names itself in each request's `_meta`: the first name seen is
            // the session's (shown as its `client`, as a legacy client's `initialize` is).
            _ if self.client.is_none() => self.client = peek.params.and_then(meta_client_info),
            _ => {}
        }
    }

    /// A client request got its answer from the server: the server works.
    pub(super) fn server_answered(&mut self, p: &Pending, peek: &Peek<'_>, out: &mut Vec<Out>) {
        self.server_works(out);
        if peek.has_error {
            return;
        }
        match &*p.method {
            "initialize" => self.life.init_params = self.life.init_pending.take(),
            "tools/list" => {
                if let Some(result) = peek.result {
                    self.life.tools_fingerprint = Some(self.learn_tools(result));
                }
            }
            _ => {}
        }
    }

    /// An answer came: the failures in a row are over (and a trial closes the breaker).
    pub(super) fn server_works(&mut self, out: &mut Vec<Out>) {
        if self.life.trial {
            out.push(Out::Event(
                Event::new("circuit").detail("closed: the trial request succeeded"),
            ));
        }
        self.life.failures = 0;
        self.life.trial = false;
    }

    /// Notes which tools may be retried; returns a fingerprint of the list.
    fn learn_tools(&mut self, result: &serde_json::value::RawValue) -> u64 {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(result.get()) else {
            return 0;
        };
        let tools = v
            .get("tools")
            .and_then(|t| t.as_array())
            .cloned()
            .unwrap_or_default();
        for tool in &tools {
            let hint = |k: &str| {
                tool.pointer(&format!("/annotations/{k}"))
                    .and_then(|h| h.as_bool())
                    .unwrap_or(false)
            };
            if let Some(name) = tool.get("name").and_then(|n| n.as_str()) {
                if hint("readOnlyHint") || hint("idempotentHint") {
                    self.life.safe_tools.insert(name.to_owned());
                } else {
                    self.life.safe_tools.remove(name);
                }
            }
        }
        let mut h = DefaultHasher::new();
        h.write(serde_json::Value::Array(tools).to_string().as_bytes());
        h.finish()
    }

    /// Package-manager output from a server that has not spoken yet: the cold start is
    /// downloading, not hung. Shown as `installing` events (at most one every 2 s).
    pub(super) fn note_installing(&mut self, now: Instant, chunk: &[u8], out: &mut Vec<Out>) {
        if self.life.answered
            || self
                .life
                .last_installing
                .is_some_and(|t| now.duration_since(t) < Duration::from_secs(2))
        {
            return;
        }
        let text = String::from_utf8_lossy(chunk);
        let Some(line) = text
            .lines()
            .find(|l| INSTALL_CHATTER.iter().any(|p| l.contains(p)))
        else {
            return;
        };
        self.life.last_installing = Some(now);
        let line: String = line.trim().chars().take(200).collect();
        out.push(Out::Event(Event::new("installing").detail(line)));
    }

    /// A client message while no server is ready: answer pings, hold the rest (bounded by
    /// `startup_timeout_ms`), or fail at once while the breaker is open.
    pub(super) fn client_while_not_ready(
        &mut self,
        peek: &Peek<'_>,
        line: Bytes,
        now: Instant,
        out: &mut Vec<Out>,
    ) {
        let kind = peek.kind();
        if self.gave_up() {
            if kind == Kind::Request {
                self.refuse(peek.id.as_ref(), peek.method.as_deref().unwrap_or(""), out);
            }
            return;
        }
        if let Phase::Open { until } = self.life.phase {
            if kind != Kind::Request {
                return;
            }
            if now < until {
                let retry_after = until - now;
                let msg = format!(
                    "Circuit open: server `{}` failed {} times in a row ({}), so Warden is not sending it requests for now. Try again in {}; Warden will then start it again. To stop this, fix the server or raise circuit_failures in config.toml.",
                    self.server,
                    self.life.failures,
                    self.life.last_exit.as_deref().unwrap_or("no detail"),
                    secs(retry_after)
                );
                let data = json!({"retry_after_ms": retry_after.as_millis() as u64, "failures": self.life.failures});
                out.push(Out::Client(error_response(
                    peek.id.as_ref(),
                    ErrorKind::CircuitOpen,
                    &self.server,
                    &msg,
                    data,
                )));
                return;
            }
            self.life.phase = Phase::Down;
            self.life.trial = true;
            out.push(Out::Event(
                Event::new("circuit").detail("half_open: one trial request may start the server"),
            ));
            out.push(Out::StartServer);
        }
        match kind {
            Kind::Request if peek.method.as_deref() == Some("ping") => {
                if let Some(id) = &peek.id {
                    let pong = json!({"jsonrpc": "2.0", "id": id.to_value(), "result": {}});
                    out.push(Out::Client(Bytes::from(pong.to_string())));
                }
            }
            Kind::Request => {
                if self.client_request(peek, &line, now, out) {
                    if let Some(p) = peek.id.as_ref().and_then(|id| self.c2s.get_mut(id)) {
                        p.held_since = Some(now);
                    }
                    self.life.held.push_back(Held {
                        line,
                        id: peek.id.clone(),
                    });
                }
            }
            // Not held: the request is still held here (flush_held now skips it) or went to a
            // server that is gone.
            Kind::Notification if peek.method.as_deref() == Some("notifications/cancelled") => {
                self.client_cancelled(peek, now, out);
            }
            // Answers to server requests: the server that asked is gone.
            Kind::Response => {}
            Kind::Notification | Kind::Other => self.life.held.push_back(Held { line, id: None }),
        }
    }

    /// A line that was queued for a server that is gone now, and never written to it.
    /// Requests among them are dropped: `server_gone` already settled every request routed to
    /// that server (failed it, or queued a copy to re-send), so re-routing this one too would
    /// send it twice and answer the client twice. Notifications go to the current server, or
    /// wait for it.
    pub fn undelivered(&mut self, line: Bytes, _now: Instant, out: &mut Vec<Out>) {
        let Ok(peek) = Peek::parse(&line) else { return };
        match peek.kind() {
            Kind::Request | Kind::Response => return,
            Kind::Notification | Kind::Other => {}
        }
        if self.life.ready() {
            out.push(Out::Server(line));
        } else {
            self.life.held.push_back(Held { line, id: None });
        }
    }

    fn flush_held(&mut self, now: Instant, out: &mut Vec<Out>) {
        while let Some(held) = self.life.held.pop_front() {
            if let Some(id) = &held.id {
                let Some(p) = self.c2s.get_mut(id) else {
                    continue;
                }; // timed out or cancelled meanwhile
                p.held_since = None;
                p.last_activity = now;
            }
            out.push(Out::Server(held.line));
        }
    }

    /// A server process started (the first, or a restart).
    /// A server process started (the first, or a restart); `fallback` when it is the local
    /// ripgrep server standing in for the real one.
    pub fn server_started(&mut self, fallback: bool, now: Instant, out: &mut Vec<Out>) {
        self.signing_in = None;
        self.life.generation += 1;
        self.life.kill_reason = None;
        self.life.answered = false;
        self.life.first_noise = None;
        self.life.serving_fallback = fallback;
        if self.life.generation > 1 {
            self.stats.restarts += 1;
            out.push(Out::Event(Event::new("restart").detail(format!(
                "server process #{} started",
                self.life.generation
            ))));
        }
        match self.life.init_params.clone() {
            Some(params) => {
                let id = self.own_id(Own::Init);
                let msg = format!(
                    r#"{{"jsonrpc":"2.0","id":{},"method":"initialize","params":{params}}}"#,
                    id.to_json()
                );
                out.push(Out::Server(Bytes::from(msg)));
                self.life.phase = Phase::Replaying { since: now };
            }
            None => {
                self.life.phase = Phase::Ready;
                self.flush_held(now, out);
            }
        }
        out.push(Out::WakeWatchdog);
    }

    pub(super) fn own_response(
        &mut self,
        own: Own,
        peek: &Peek<'_>,
        now: Instant,
        out: &mut Vec<Out>,
    ) {
        match own {
            Own::Swallow => {}
            Own::Init if peek.has_error => {
                self.life.kill_reason = Some("refused the replayed `initialize`".to_owned());
                self.life.phase = Phase::Down;
                out.push(Out::KillServer);
            }
            Own::Init => {
                out.push(Out::Server(notification(
                    "notifications/initialized",
                    json!({}),
                )));
                if let Some(params) = self.life.log_level.clone() {
                    let id = self.own_id(Own::Swallow);
                    let msg = format!(
                        r#"{{"jsonrpc":"2.0","id":{},"method":"logging/setLevel","params":{params}}}"#,
                        id.to_json()
                    );
                    out.push(Out::Server(Bytes::from(msg)));
                }
                for uri in self.life.subscriptions.clone() {
                    let id = self.own_id(Own::Swallow);
                    let msg = json!({"jsonrpc": "2.0", "id": id.to_value(), "method": "resources/subscribe", "params": {"uri": uri}});
                    out.push(Out::Server(Bytes::from(msg.to_string())));
                }
                if self.life.tools_fingerprint.is_some() {
                    let id = self.own_id(Own::ToolsCheck);
                    let msg =
                        json!({"jsonrpc": "2.0", "id": id.to_value(), "method": "tools/list"});
                    out.push(Out::Server(Bytes::from(msg.to_string())));
                }
                self.life.phase = Phase::Ready;
                out.push(Out::Event(
                    Event::new("replayed")
                        .detail("the client's handshake was replayed to the new server"),
                ));
                self.flush_held(now, out);
            }
            Own::Learn => self.learned(peek, now, out),
            Own::Discover => self.discovered(peek, now, out),
            Own::ToolsCheck => {
                let Some(result) = peek.result else { return };
                let before = self.life.tools_fingerprint;
                let after = self.learn_tools(result);
                self.life.tools_fingerprint = Some(after);
                if before != Some(after) {
                    out.push(Out::Client(notification(
                        "notifications/tools/list_changed",
                        json!({}),
                    )));
                    out.push(Out::Event(
                        Event::new("tools_changed").detail("the restarted server has other tools"),
                    ));
                }
            }
        }
    }

    /// Deadlines of the life cycle itself: a replayed handshake that takes too long.
    pub(super) fn life_tick(&mut self, now: Instant, out: &mut Vec<Out>) -> Option<Instant> {
        let Phase::Replaying { since } = self.life.phase else {
            return None;
        };
        let deadline = since + self.limits.startup_timeout;
        if now < deadline {
            return Some(deadline);
        }
        self.life.kill_reason = Some(format!(
            "did not answer the replayed `initialize` within {} (startup_timeout_ms)",
            secs(self.limits.startup_timeout)
        ));
        self.life.phase = Phase::Down;
        out.push(Out::KillServer);
        None
    }

    /// A failure that is not the server's exit (a timeout): may open the breaker.
    pub(super) fn count_failure(&mut self, now: Instant, why: &str, out: &mut Vec<Out>) {
        self.life.failures += 1;
        if self.life.failures >= self.limits.circuit_failures && self.life.ready() {
            self.life.kill_reason = Some(format!(
                "was stuck ({} failures in a row, the last: {why})",
                self.life.failures
            ));
            self.life.last_exit = self.life.kill_reason.clone();
            self.open_circuit(now, out);
            out.push(Out::KillServer);
        }
    }

    fn open_circuit(&mut self, now: Instant, out: &mut Vec<Out>) {
        let until = now + self.limits.circuit_cooldown;
        self.life.phase = Phase::Open { until };
        self.life.trial = false;
        out.push(Out::Event(
            Event::new("circuit")
                .code(Code::CircuitOpen)
                .detail(format!(
                    "open: {} failures in a row; requests fail at once for {}",
                    self.life.failures,
                    secs(self.limits.circuit_cooldown)
                )),
        ));
        // Requests waiting for a server will not get one soon: answer them now.
        let held: Vec<Held> = self.life.held.drain(..).collect();
        for held in held {
            let Some(id) = held.id else { continue };
            let Some(p) = self.c2s.remove(&id) else {
                continue;
            };
            self.bury(id.clone(), p.token.clone());
            let msg = format!(
                "Circuit open: server `{}` failed {} times in a row ({}). Warden did not send {}; try again in {}.",
                self.server,
                self.life.failures,
                self.life.last_exit.as_deref().unwrap_or("no detail"),
                describe(&p),
                secs(self.limits.circuit_cooldown)
            );
            let data = json!({"retry_after_ms": self.limits.circuit_cooldown.as_millis() as u64, "failures": self.life.failures});
            self.fail(&id, &p, ErrorKind::CircuitOpen, &msg, data, now, out);
        }
    }

    /// The server could not be started at all.
    pub fn start_failed(&mut self, why: &str, now: Instant, out: &mut Vec<Out>) -> Restart {
        self.life.last_exit = Some(why.to_owned());
        out.push(Out::Event(Event::new("start_failed").detail(why)));
        self.after_failure(now, out)
    }

    fn after_failure(&mut self, now: Instant, out: &mut Vec<Out>) -> Restart {
        self.life.failures += 1;
        // A failed half-open trial reopens at once.
        if self.life.trial || self.life.failures >= self.limits.circuit_failures {
            if let Some(restart) = self.fallback_on_failure(now, out) {
                return restart;
            }
            self.open_circuit(now, out);
            return Restart::OnRequest;
        }
        self.life.phase = Phase::Down;
        let doublings = self.life.failures.saturating_sub(1).min(20);
        Restart::After(
            self.limits
                .backoff
                .saturating_mul(1 << doublings)
                .min(self.limits.max_backoff),
        )
    }

    /// The server process is gone. Requests in flight are re-sent to the next server when
    /// that is safe, and fail now with `server_exited` (exit status, stderr tail) when not;
    /// the client is told that the server's own requests will not be answered.
    pub fn server_gone(
        &mut self,
        exit: &str,
        stderr_tail: &str,
        now: Instant,
        out: &mut Vec<Out>,
    ) -> Restart {
        let exit = match self.life.kill_reason.take() {
            Some(reason) => format!("{reason}, so Warden stopped it"),
            None => exit.to_owned(),
        };
        let last_line = stderr_tail.trim().lines().last().map(str::to_owned);
        self.life.last_exit = Some(match &last_line {
            Some(line) => format!("{exit}; its last stderr line: {line}"),
            None => exit.clone(),
        });
        if self.starting()
            && !self.life.swap
            && let Some(failure) = self.start_failure_on_exit(&exit, stderr_tail)
        {
            self.life.failures += 1;
            out.push(Out::Event(
                Event::new("server_exit").detail(self.life.last_exit.clone().unwrap_or_default()),
            ));
            self.give_up(failure, out);
            return Restart::OnRequest;
        }
        let was_open = matches!(self.life.phase, Phase::Open { .. });
        let restart = if std::mem::take(&mut self.life.swap) {
            self.life.phase = Phase::Down;
            Restart::After(Duration::ZERO)
        } else if was_open {
            Restart::OnRequest
        } else {
            self.after_failure(now, out)
        };
        let can_retry = !self.circuit_open();
        self.adapt_server_gone(out);

        let mut in_flight: Vec<(Id, Instant)> = self
            .c2s
            .iter()
            .filter(|(_, p)| p.held_since.is_none())
            .map(|(id, p)| (id.clone(), p.started))
            .collect();
        in_flight.sort_by_key(|(_, started)| *started);
        let mut retried = VecDeque::new();
        for (id, _) in in_flight {
            if let Some(held) = self.retry(&id, can_retry, now, out) {
                retried.push_back(held);
                continue;
            }
            let Some(p) = self.c2s.remove(&id) else {
                continue;
            };
            self.bury(id.clone(), p.token.clone());
            self.stats.errors += 1;
            let msg = self.exited_message(&p, &exit, can_retry, last_line.as_deref());
            let data = json!({"exit": exit, "stderr_tail": stderr_tail, "method": &*p.method});
            self.fail(&id, &p, ErrorKind::ServerExited, &msg, data, now, out);
        }
        retried.extend(self.life.held.drain(..));
        self.life.held = retried;
        // No answer to the bridge's own requests will come from the next server.
        self.forget_own();
        self.s2c_theirs.clear();
        for (id, _) in self.s2c.drain() {
            let reason = format!("server `{}` exited", self.server);
            out.push(Out::Client(notification(
                "notifications/cancelled",
                json!({"requestId": id.to_value(), "reason": reason}),
            )));
        }
        out.push(Out::Event(
            Event::new("server_exit").detail(self.life.last_exit.clone().unwrap_or_default()),
        ));
        restart
    }

    /// Queues a copy of request `id` for the next server, when it is safe to re-send and
    /// retries are left.
    fn retry(
        &mut self,
        id: &Id,
        can_retry: bool,
        now: Instant,
        out: &mut Vec<Out>,
    ) -> Option<Held> {
        let p = self.c2s.get_mut(id)?;
        let line = p
            .retry_line
            .clone()
            .filter(|_| can_retry && p.attempts < self.limits.retries)?;
        p.attempts += 1;
        p.held_since = Some(now);
        self.stats.retries += 1;
        let detail = format!(
            "{} will be re-sent to the restarted server (attempt {})",
            describe(p),
            p.attempts + 1
        );
        out.push(Out::Event(Event {
            id: Some(id.to_value()),
            ..Event::new("retry").detail(detail)
        }));
        Some(Held {
            line,
            id: Some(id.clone()),
        })
    }

    /// The error text of request `p`, which was in flight when its server ended: what ended,
    /// why the request was not re-sent, and the server's last stderr line.
    fn exited_message(
        &self,
        p: &Pending,
        exit: &str,
        can_retry: bool,
        last_line: Option<&str>,
    ) -> String {
        let mut msg = format!(
            "Server exited: `{}` {exit} while {} was in flight.",
            self.server,
            describe(p)
        );
        if p.retry_line.is_some() && !can_retry {
            let _ = write!(
                msg,
                " Warden did not re-send it: the circuit breaker opened after {} failures in a row.",
                self.life.failures
            );
        } else if p.retry_line.is_some() {
            let _ = write!(
                msg,
                " It was already re-sent {} time(s) (retries = {}).",
                p.attempts, self.limits.retries
            );
        } else if let Some(tool) = &p.tool {
            let _ = write!(
                msg,
                " Warden did not re-send it: tool `{tool}` is not marked read-only or idempotent, so it may already have taken effect (list it in idempotent_tools if it is safe to repeat)."
            );
        }
        if let Some(line) = last_line {
            let _ = write!(msg, " Its last stderr line: {line}");
        }
        msg
    }

    /// The client left: requests it was still waiting for are logged as abandoned.
    pub fn client_gone(&mut self, now: Instant, out: &mut Vec<Out>) {
        let pending: Vec<(Id, Pending)> = self.c2s.drain().collect();
        for (id, p) in pending {
            out.push(Out::Event(self.finished(
                &id,
                &p,
                now,
                "client_closed",
                None,
            )));
        }
    }
}
