//! Calls of `tools_ask` tools: held by the bridge, never sent to the server until allowed, and
//! asked about through the client (`elicitation/create`, when it declared the capability) and
//! through the supervisor (`warden approvals`, the window), when one is connected. The first
//! answer wins and the other ask is withdrawn; no answer within `ask_timeout_ms`, or no one to
//! ask, fails the call with `tool_not_approved`, a no with `tool_declined`. While a call waits,
//! a client that gave a progress token gets `notifications/progress` every few seconds.

use serde_json::Value;

use super::*;
use warden_config::policy::Policy;
use warden_wire::codes::Code;

/// The ids of our `elicitation/create` requests start with this, then 128 random bits (a space
/// of their own: the server's requests reach the client renamed into another, [`super::ids`]).
const ELICIT_PREFIX: &str = "__warden/ask/";
/// How often a waiting call's client hears progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);
/// The longest argument value shown in a question.
const ARG_CHARS: usize = 200;
/// The longest arguments text shown in a question.
const ARGS_CHARS: usize = 1000;

/// Who answered a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answerer {
    Client,
    Supervisor,
}

impl Answerer {
    pub fn as_str(self) -> &'static str {
        match self {
            Answerer::Client => "client",
            Answerer::Supervisor => "supervisor",
        }
    }
}

/// A call waiting for an answer.
#[derive(Debug)]
struct Held {
    /// The id users answer with (`warden approvals allow ID`).
    approval: String,
    id: Id,
    line: Bytes,
    tool: String,
    /// The arguments as shown (redacted, long values cut).
    args: String,
    token: Option<Id>,
    started: Instant,
    deadline: Instant,
    next_progress: Instant,
    progress_sent: u64,
    /// The `elicitation/create` sent to the client for it.
    elicit: Option<Id>,
}

/// A call waiting for an answer, as heartbeats and `warden approvals` show it.
#[derive(Debug, Clone, PartialEq)]
pub struct AskView {
    pub approval: String,
    pub tool: String,
    pub args: String,
    pub age: Duration,
    pub left: Duration,
    pub client_asked: bool,
}

#[derive(Debug, Default)]
pub(super) struct Asks {
    held: Vec<Held>,
    /// The client declared `elicitation` at `initialize`.
    client_elicits: bool,
    /// A supervisor is connected (it and its `warden approvals` can answer).
    supervised: bool,
    next: u64,
}

/// The arguments of a call as a question shows them: secrets redacted, long values cut.
pub(super) fn shown_args(params: Option<&Value>) -> String {
    let mut args = params
        .and_then(|p| p.get("arguments"))
        .cloned()
        .unwrap_or(Value::Object(Default::default()));
    warden_wire::redact::redact(&mut args);
    cut_values(&mut args);
    let text = args.to_string();
    cut(&text, ARGS_CHARS)
}

fn cut_values(v: &mut Value) {
    match v {
        Value::String(s) if s.chars().count() > ARG_CHARS => *s = cut(s, ARG_CHARS),
        Value::Array(items) => items.iter_mut().for_each(cut_values),
        Value::Object(map) => map.values_mut().for_each(cut_values),
        _ => {}
    }
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push_str("… [cut]");
    out
}

impl Router {
    /// Whether a supervisor is connected to answer questions.
    pub fn set_supervised(&mut self, on: bool) {
        self.asks.supervised = on;
    }

    /// The calls waiting for an answer now.
    pub fn asking(&self, now: Instant) -> Vec<AskView> {
        self.asks
            .held
            .iter()
            .map(|h| AskView {
                approval: h.approval.clone(),
                tool: h.tool.clone(),
                args: h.args.clone(),
                age: now.saturating_duration_since(h.started),
                left: h.deadline.saturating_duration_since(now),
                client_asked: h.elicit.is_some(),
            })
            .chain(
                self.mrtr
                    .open
                    .iter()
                    .filter(|q| q.waiting())
                    .map(|q| AskView {
                        approval: q.approval.clone(),
                        tool: q.tool.clone(),
                        args: q.args.clone(),
                        age: now.saturating_duration_since(q.started),
                        left: q.deadline.saturating_duration_since(now),
                        client_asked: true,
                    }),
            )
            .collect()
    }

    /// A new approval id (`warden approvals allow ID`).
    pub(super) fn next_approval(&mut self) -> String {
        self.asks.next += 1;
        format!(
            "{:x}{:04x}",
            warden_wire::events::now_ms() % 0x10_0000,
            (u64::from(std::process::id()) * 31 + self.asks.next) % 0x1_0000
        )
    }

    /// The question about a call of `tool` with `args` (as shown): its text and the form's
    /// schema (a required boolean `allow`).
    pub(super) fn question(&self, tool: &str, args: &str) -> (String, Value) {
        let message = format!(
            "Server `{}` wants to run its tool `{tool}` with {args}. Allow it?",
            self.server
        );
        let schema = json!({
            "type": "object",
            "properties": {"allow": {
                "type": "boolean",
                "title": "Allow",
                "description": format!("Run `{tool}` of `{}` now", self.server),
            }},
            "required": ["allow"],
        });
        (message, schema)
    }

    pub(super) fn declined_message(&self, tool: &str, by: Answerer) -> String {
        format!(
            "Tool `{tool}` of server `{}` was not run: the {} answered no when Warden asked (tools_ask). The call was not sent to the server.",
            self.server,
            match by {
                Answerer::Client => "user",
                Answerer::Supervisor => "supervisor (warden approvals deny, or the window)",
            }
        )
    }

    /// The held calls as in-flight requests (status shows them waiting).
    pub(super) fn held_calls(&self, now: Instant) -> impl Iterator<Item = InflightView> + '_ {
        self.asks.held.iter().map(move |h| InflightView {
            id: h.id.clone(),
            method: "tools/call".to_owned(),
            tool: Some(h.tool.clone()),
            age: now.saturating_duration_since(h.started),
            idle: now.saturating_duration_since(h.started),
            progress: Some(format!("waiting for approval {}", h.approval)),
        })
    }

    /// The client's `initialize`: whether it can be asked.
    pub(super) fn note_client_capabilities(&mut self, peek: &Peek<'_>) {
        if peek.method.as_deref() != Some("initialize") {
            return;
        }
        let params: Option<Value> = peek.params.and_then(|p| serde_json::from_str(p.get()).ok());
        self.asks.client_elicits = params
            .as_ref()
            .and_then(|p| p.pointer("/capabilities/elicitation"))
            .is_some_and(|e| !e.is_null());
    }

    /// A `tools/call` of a `tools_ask` tool is held and asked about (or refused at once when
    /// no one can be asked); a cancellation of a held call ends it. `true`: the line is
    /// dealt with.
    pub(super) fn ask_call(
        &mut self,
        peek: &Peek<'_>,
        line: &Bytes,
        now: Instant,
        out: &mut Vec<Out>,
    ) -> bool {
        if peek.method.as_deref() == Some("notifications/cancelled") {
            let Some(rid) = &peek.request_id else {
                return false;
            };
            let Some(at) = self.asks.held.iter().position(|h| &h.id == rid) else {
                return false;
            };
            let h = self.asks.held.remove(at);
            self.withdraw(&h, out);
            out.push(Out::Event(
                self.ask_event("approval_declined", &h, None)
                    .detail("the client cancelled the call while it waited for an answer"),
            ));
            return true;
        }
        let (Some("tools/call"), Some(tool)) = (peek.method.as_deref(), peek.name.as_deref())
        else {
            return false;
        };
        if !matches!(self.tool_policy(tool), Policy::Ask(_))
            || self.life.serving_fallback
            || self.always_allowed(tool)
        {
            return false;
        }
        let Some(id) = peek.id.as_ref() else {
            // No id, no answer to wait for: a `tools/call` sent as a notification is not a
            // call MCP knows, and a server that ran it anyway would run it unasked.
            out.push(Out::Event(
                Event {
                    method: Some("tools/call".into()),
                    tool: Some(tool.to_owned()),
                    ..Event::new("approval_declined")
                }
                .code(Code::ToolNotApproved)
                .detail("a tools/call without an id (nothing to answer) was dropped"),
            ));
            return true;
        };
        let params: Option<Value> = peek.params.and_then(|p| serde_json::from_str(p.get()).ok());
        if let Some(p) = &params
            && self.ask_modern(id, tool, p, self.asks.supervised, now, out)
        {
            return true;
        }
        let mut held = Held {
            approval: self.next_approval(),
            id: id.clone(),
            line: line.clone(),
            tool: tool.to_owned(),
            args: shown_args(params.as_ref()),
            token: peek.progress_token.clone(),
            started: now,
            deadline: now + self.limits.ask_timeout,
            next_progress: now + PROGRESS_EVERY,
            progress_sent: 0,
            elicit: None,
        };
        if !self.asks.client_elicits && !self.asks.supervised {
            let msg = format!(
                "Tool `{tool}` of server `{}` needs a yes before it runs (tools_ask), and there is no one to ask: this client does not support elicitation and no Warden supervisor (the app or `warden daemon`) runs. The call was not sent to the server.",
                self.server
            );
            self.refuse_held(&held, ErrorKind::ToolNotApproved, &msg, out);
            out.push(Out::Event(
                self.ask_event("approval_timeout", &held, None)
                    .code(Code::ToolNotApproved)
                    .detail("no one to ask"),
            ));
            return true;
        }
        if self.asks.client_elicits {
            let eid = Id::Str(format!("{ELICIT_PREFIX}{}", super::ids::unguessable()).into());
            let (message, schema) = self.question(tool, &held.args);
            let request = json!({
                "jsonrpc": "2.0",
                "id": eid.to_value(),
                "method": "elicitation/create",
                "params": {"message": message, "requestedSchema": schema},
            });
            out.push(Out::Client(Bytes::from(request.to_string())));
            held.elicit = Some(eid);
        }
        let who = match (held.elicit.is_some(), self.asks.supervised) {
            (true, true) => "the client and the supervisor",
            (true, false) => "the client",
            _ => "the supervisor",
        };
        out.push(Out::Event(
            self.ask_event("approval_asked", &held, None)
                .detail(format!("asked {who} (approval {})", held.approval)),
        ));
        self.asks.held.push(held);
        out.push(Out::WakeWatchdog);
        true
    }

    /// A response of the client to one of our `elicitation/create` requests. `true`: it was.
    pub(super) fn elicit_answered(
        &mut self,
        peek: &Peek<'_>,
        now: Instant,
        out: &mut Vec<Out>,
    ) -> bool {
        let Some(id) = &peek.id else { return false };
        let Some(at) = self
            .asks
            .held
            .iter()
            .position(|h| h.elicit.as_ref() == Some(id))
        else {
            // A late answer to a question withdrawn since is ours too (dropped quietly): no
            // server's request reaches the client with such an id.
            return matches!(id, Id::Str(s) if s.starts_with(ELICIT_PREFIX));
        };
        let result: Option<Value> = peek.result.and_then(|r| serde_json::from_str(r.get()).ok());
        let allow = result.as_ref().is_some_and(|r| {
            r.get("action").and_then(Value::as_str) == Some("accept")
                && r.pointer("/content/allow").and_then(Value::as_bool) == Some(true)
        });
        if peek.has_error {
            // The client could not ask: the supervisor may still answer, else the call waits
            // for nothing.
            self.asks.held[at].elicit = None;
            if !self.asks.supervised {
                let h = self.asks.held.remove(at);
                self.not_approved(h, "the client could not ask (its elicitation failed)", out);
            }
            return true;
        }
        let h = self.asks.held.remove(at);
        self.answered(h, allow, false, Answerer::Client, now, out);
        true
    }

    /// An answer from the supervisor to approval `approval`; `false` when no call waits for it.
    pub fn answer_approval(
        &mut self,
        approval: &str,
        allow: bool,
        always: bool,
        now: Instant,
        out: &mut Vec<Out>,
    ) -> bool {
        if self.answer_question(approval, allow, always, out) {
            return true;
        }
        let Some(at) = self.asks.held.iter().position(|h| h.approval == approval) else {
            return false;
        };
        let h = self.asks.held.remove(at);
        self.withdraw(&h, out);
        self.answered(h, allow, always, Answerer::Supervisor, now, out);
        true
    }

    fn answered(
        &mut self,
        h: Held,
        allow: bool,
        always: bool,
        by: Answerer,
        now: Instant,
        out: &mut Vec<Out>,
    ) {
        if !allow {
            let msg = self.declined_message(&h.tool, by);
            self.refuse_held(&h, ErrorKind::ToolDeclined, &msg, out);
            out.push(Out::Event(
                self.ask_event("approval_declined", &h, Some(by))
                    .code(Code::ToolDeclined),
            ));
            return;
        }
        let mut given = self.ask_event("approval_given", &h, Some(by));
        given.always = Some(always);
        out.push(Out::Event(given));
        if always && let Some(record) = self.always_record(&h.tool) {
            out.push(Out::Pins(Box::new(record)));
        }
        // It goes on as if it had just come from the client.
        let line = h.line;
        if let Ok(peek) = Peek::parse(&line) {
            self.client_line(&peek, line.clone(), now, out);
        }
    }

    fn not_approved(&mut self, h: Held, why: &str, out: &mut Vec<Out>) {
        self.withdraw(&h, out);
        let msg = format!(
            "Tool `{}` of server `{}` was not run: it needs a yes before it runs (tools_ask), and {why}. The call was not sent to the server. Answer with `warden approvals allow ID` or in the client's prompt, or raise ask_timeout_ms.",
            h.tool, self.server
        );
        self.refuse_held(&h, ErrorKind::ToolNotApproved, &msg, out);
        out.push(Out::Event(
            self.ask_event("approval_timeout", &h, None)
                .code(Code::ToolNotApproved)
                .detail(why),
        ));
    }

    /// Fails waiting calls past `ask_timeout_ms` and sends progress to those that asked for
    /// it; returns the next time this has something to do.
    pub(super) fn ask_tick(&mut self, now: Instant, out: &mut Vec<Out>) -> Option<Instant> {
        let (expired, waiting): (Vec<Held>, Vec<Held>) = std::mem::take(&mut self.asks.held)
            .into_iter()
            .partition(|h| h.deadline <= now);
        self.asks.held = waiting;
        for h in expired {
            let why = format!(
                "no answer came within ask_timeout_ms ({} ms)",
                self.limits.ask_timeout.as_millis()
            );
            self.not_approved(h, &why, out);
        }
        let mut next: Option<Instant> = self.mrtr_tick(now, out);
        for h in &mut self.asks.held {
            if let Some(token) = &h.token {
                if h.next_progress <= now {
                    h.progress_sent += 1;
                    h.next_progress = now + PROGRESS_EVERY;
                    let left = h.deadline.saturating_duration_since(now).as_secs();
                    out.push(Out::Client(notification(
                        "notifications/progress",
                        json!({
                            "progressToken": token.to_value(),
                            "progress": h.progress_sent,
                            "message": format!("Waiting for approval {} of tool `{}` ({left} s left)", h.approval, h.tool),
                        }),
                    )));
                }
                next = Some(next.map_or(h.next_progress, |n| n.min(h.next_progress)));
            }
            next = Some(next.map_or(h.deadline, |n| n.min(h.deadline)));
        }
        next
    }

    /// The question sent to the client for `h` is no longer asked.
    fn withdraw(&self, h: &Held, out: &mut Vec<Out>) {
        if let Some(eid) = &h.elicit {
            out.push(Out::Client(notification(
                "notifications/cancelled",
                json!({"requestId": eid.to_value(), "reason": "answered elsewhere, or no longer waiting"}),
            )));
        }
    }

    fn refuse_held(&self, h: &Held, kind: ErrorKind, msg: &str, out: &mut Vec<Out>) {
        out.push(Out::Client(error_response(
            Some(&h.id),
            kind,
            &self.server,
            msg,
            json!({"tool": h.tool, "approval": h.approval}),
        )));
    }

    fn ask_event(&self, kind: &'static str, h: &Held, by: Option<Answerer>) -> Event {
        Event {
            method: Some("tools/call".into()),
            tool: Some(h.tool.clone()),
            id: Some(h.id.to_value()),
            by: by.map(|b| b.as_str().to_owned()),
            ..Event::new(kind)
        }
    }
}
