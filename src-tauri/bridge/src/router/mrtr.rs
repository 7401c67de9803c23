//! Asking a 2026-07-28 client about a `tools_ask` call, the way that revision asks (multi
//! round-trip requests): the call is answered at once with an `input_required` result that
//! holds one `elicitation/create` input request and a `requestState` the bridge signs
//! (HMAC-SHA256 over the server, the tool, the arguments, an expiry and a nonce, with a key that
//! lives only in this process). The client's retry, under a new JSON-RPC id, brings the answer
//! and the state back. A valid state opens its question once: yes runs the call, with Warden's
//! state and answer taken out (the server never sees them), anything else is `tool_declined`.
//! A forged state, one made for another call, a stale one and one used already are refused.
//! While the client asks its user, the question is in the approvals list, and the supervisor's
//! answer, when it comes first, is the one that counts.
//!
//! A server's own `input_required` answer to a call that was allowed this way has its
//! `requestState` wrapped in one of Warden's (signed the same way, single use): the client's
//! next round of that same call is not asked about again, and the server gets its own state
//! back, unchanged.

use std::collections::HashMap;

use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

use super::ask::Answerer;
use super::*;
use warden_wire::codes::Code;

/// Every `requestState` the bridge makes starts with this.
const STATE_PREFIX: &str = "warden-ask.1.";
/// The key of Warden's question among a result's `inputRequests` (and of its answer).
pub(super) const INPUT_KEY: &str = "warden_allow";
/// The most questions open at once in one session (a client that calls and calls would grow
/// the list, the heartbeats and the approvals list without end).
const MAX_OPEN: usize = 256;
/// The longest server `requestState` wrapped; a longer one reaches the client as it is (and
/// its next round is asked about again).
const MAX_INNER: usize = 64 << 10;
use warden_wire::protocol::{
    META_CLIENT_CAPABILITIES as META_CAPABILITIES, META_PROTOCOL_VERSION as META_VERSION,
};

/// A question asked through `input_required`, until the client comes back or it expires.
#[derive(Debug)]
pub(super) struct Question {
    pub approval: String,
    nonce: String,
    pub tool: String,
    /// The arguments as shown.
    pub args: String,
    /// The id of the call that was asked about (events name it).
    id: Id,
    pub started: Instant,
    pub deadline: Instant,
    /// The supervisor's answer, when it came before the client's.
    verdict: Option<(bool, bool)>,
}

impl Question {
    /// Still waiting for an answer (the supervisor's came, or not).
    pub fn waiting(&self) -> bool {
        self.verdict.is_none()
    }
}

/// A call allowed through a question: a server's `input_required` answer to it is wrapped.
#[derive(Debug)]
pub(super) struct Allowed {
    tool: String,
    args: String,
}

#[derive(Debug, Default)]
pub(super) struct Mrtr {
    key: Option<Vec<u8>>,
    pub open: Vec<Question>,
    /// Continuation nonces used, with their expiry (ms since the epoch).
    used: HashMap<String, u64>,
}

/// Why a `requestState` of Warden's did not open its call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    Forged,
    Stale,
    Used,
}

/// What a valid `requestState` of Warden's stands for.
#[derive(Debug)]
enum Opened {
    /// The answer to question `nonce`.
    Answer { nonce: String },
    /// The next round of an allowed call; the server's own state (absent: it sent none).
    Round { inner: Option<String> },
}

/// Milliseconds on a clock of this process that never goes back (a stepped wall clock could
/// otherwise bring a used state back to life). The states live only as long as the process.
fn now_ms() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let start = *START.get_or_init(std::time::Instant::now);
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Whether the request is a 2026-07-28 one from a client that can be asked in a form.
fn modern_elicits(params: &Value) -> bool {
    let Some(meta) = params.get("_meta") else {
        return false;
    };
    if !meta.get(META_VERSION).is_some_and(Value::is_string) {
        return false;
    }
    match meta.pointer(&format!(
        "/{}/elicitation",
        META_CAPABILITIES.replace('/', "~1")
    )) {
        Some(Value::Object(modes)) => modes.is_empty() || modes.contains_key("form"),
        _ => false,
    }
}

/// The arguments as signed: object keys sorted, so a client that writes them in another order
/// on the retry still matches.
fn canonical(args: Option<&Value>) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(map) => {
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.clone(), sorted(v)))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    args.map_or_else(|| "{}".to_owned(), |a| sorted(a).to_string())
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

impl Mrtr {
    fn mac(&mut self, fields: &[&str]) -> Hmac<Sha256> {
        let key = self.key.get_or_insert_with(|| {
            format!("{}{}", super::ids::unguessable(), super::ids::unguessable()).into_bytes()
        });
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes any key");
        // A JSON array: no field can run into the next.
        mac.update(Value::from(fields.to_vec()).to_string().as_bytes());
        mac
    }

    /// A signed state: `warden-ask.1.KIND.EXPIRY.NONCE.INNER.MAC` (INNER hex, `-` for none).
    fn sign(
        &mut self,
        call: [&str; 3],
        kind: &str,
        expiry: u64,
        nonce: &str,
        inner: &str,
    ) -> String {
        let expiry = expiry.to_string();
        let [server, tool, args] = call;
        let mac = self.mac(&[
            "warden-ask.1",
            kind,
            server,
            tool,
            args,
            &expiry,
            nonce,
            inner,
        ]);
        let mac = hex(&mac.finalize().into_bytes());
        format!("{STATE_PREFIX}{kind}.{expiry}.{nonce}.{inner}.{mac}")
    }

    /// Checks a state of Warden's against the call it came back with.
    fn open(&mut self, state: &str, call: [&str; 3], now: u64) -> Result<Opened, Refusal> {
        let rest = state.strip_prefix(STATE_PREFIX).ok_or(Refusal::Forged)?;
        let parts: Vec<&str> = rest.split('.').collect();
        let [kind, expiry, nonce, inner, mac] = parts[..] else {
            return Err(Refusal::Forged);
        };
        let [server, tool, args] = call;
        let given = unhex(mac).ok_or(Refusal::Forged)?;
        self.mac(&[
            "warden-ask.1",
            kind,
            server,
            tool,
            args,
            expiry,
            nonce,
            inner,
        ])
        .verify_slice(&given)
        .map_err(|_| Refusal::Forged)?;
        let expiry: u64 = expiry.parse().map_err(|_| Refusal::Forged)?;
        if expiry <= now {
            return Err(Refusal::Stale);
        }
        match kind {
            "q" => Ok(Opened::Answer {
                nonce: nonce.to_owned(),
            }),
            "c" => {
                self.used.retain(|_, until| *until > now);
                if self.used.insert(nonce.to_owned(), expiry).is_some() {
                    return Err(Refusal::Used);
                }
                let inner = match inner {
                    "-" => None,
                    hexed => Some(
                        String::from_utf8(unhex(hexed).ok_or(Refusal::Forged)?)
                            .map_err(|_| Refusal::Forged)?,
                    ),
                };
                Ok(Opened::Round { inner })
            }
            _ => Err(Refusal::Forged),
        }
    }
}

/// Whether the client's answer in `inputResponses` is yes.
fn client_allows(params: &Value) -> bool {
    let Some(answer) = params.pointer(&format!("/inputResponses/{INPUT_KEY}")) else {
        return false;
    };
    answer.get("action").and_then(Value::as_str) == Some("accept")
        && answer.pointer("/content/allow").and_then(Value::as_bool) == Some(true)
}

impl Router {
    fn ask_timeout_ms(&self) -> u64 {
        u64::try_from(self.limits.ask_timeout.as_millis()).unwrap_or(u64::MAX)
    }

    /// Asks a 2026-07-28 client about a held-back call with an `input_required` result;
    /// `false`: the request is not one of a 2026-07-28 client that can be asked in a form.
    pub(super) fn ask_modern(
        &mut self,
        id: &Id,
        tool: &str,
        params: &Value,
        supervised: bool,
        now: Instant,
        out: &mut Vec<Out>,
    ) -> bool {
        if !modern_elicits(params) {
            return false;
        }
        if self.mrtr.open.len() >= MAX_OPEN {
            let msg = format!(
                "Tool `{tool}` of server `{}` was not run: {MAX_OPEN} questions of Warden's already wait for an answer in this session, and it asks no more until those are answered or expire (ask_timeout_ms). The call was not sent to the server.",
                self.server
            );
            out.push(Out::Client(error_response(
                Some(id),
                ErrorKind::ToolNotApproved,
                &self.server,
                &msg,
                json!({"tool": tool, "open_questions": MAX_OPEN}),
            )));
            return true;
        }
        let args = params.get("arguments");
        let canon = canonical(args);
        let nonce = super::ids::unguessable();
        let expiry = now_ms().saturating_add(self.ask_timeout_ms());
        let server = self.server.clone();
        let state = self
            .mrtr
            .sign([&server, tool, &canon], "q", expiry, &nonce, "-");
        let shown = super::ask::shown_args(Some(params));
        let (message, schema) = self.question(tool, &shown);
        let result = json!({
            "resultType": "input_required",
            "inputRequests": {INPUT_KEY: {
                "method": "elicitation/create",
                "params": {"mode": "form", "message": message, "requestedSchema": schema},
            }},
            "requestState": state,
        });
        let answer = json!({"jsonrpc": "2.0", "id": id.to_value(), "result": result});
        out.push(Out::Client(Bytes::from(answer.to_string())));
        let question = Question {
            approval: self.next_approval(),
            nonce,
            tool: tool.to_owned(),
            args: shown,
            id: id.clone(),
            started: now,
            deadline: now + self.limits.ask_timeout,
            verdict: None,
        };
        let who = if supervised {
            "the client (input_required) and the supervisor"
        } else {
            "the client (input_required)"
        };
        out.push(Out::Event(
            self.question_event("approval_asked", &question, None)
                .detail(format!("asked {who} (approval {})", question.approval)),
        ));
        self.mrtr.open.push(question);
        out.push(Out::WakeWatchdog);
        true
    }

    /// A `tools/call` that carries a `requestState` of Warden's: the client's answer to a
    /// question, or the next round of an allowed call. `true`: the line is dealt with.
    pub(super) fn mrtr_retry(&mut self, peek: &Peek<'_>, now: Instant, out: &mut Vec<Out>) -> bool {
        let (Some("tools/call"), Some(tool), Some(id), Some(raw)) = (
            peek.method.as_deref(),
            peek.name.as_deref(),
            peek.id.as_ref(),
            peek.params,
        ) else {
            return false;
        };
        if !raw.get().contains(STATE_PREFIX) {
            return false;
        }
        let Ok(mut params) = serde_json::from_str::<Value>(raw.get()) else {
            return false;
        };
        let Some(state) = params
            .get("requestState")
            .and_then(Value::as_str)
            .filter(|s| s.starts_with(STATE_PREFIX))
            .map(str::to_owned)
        else {
            return false;
        };
        let canon = canonical(params.get("arguments"));
        let server = self.server.clone();
        let opened = self.mrtr.open(&state, [&server, tool, &canon], now_ms());
        let allowed = Allowed {
            tool: tool.to_owned(),
            args: canon,
        };
        let client_yes = client_allows(&params);
        let Some(map) = params.as_object_mut() else {
            return false;
        };
        match opened {
            Err(why) => self.refuse_state(id, tool, why, out),
            Ok(Opened::Round { inner }) => {
                match inner {
                    Some(inner) => map.insert("requestState".into(), Value::String(inner)),
                    None => map.remove("requestState"),
                };
                self.run_allowed(id, params, allowed, now, out);
            }
            Ok(Opened::Answer { nonce }) => {
                let Some(at) = self.mrtr.open.iter().position(|q| q.nonce == nonce) else {
                    self.refuse_state(id, tool, Refusal::Used, out);
                    return true;
                };
                let q = self.mrtr.open.remove(at);
                let (allow, by) = match q.verdict {
                    Some((allow, _)) => (allow, Answerer::Supervisor),
                    None => (client_yes, Answerer::Client),
                };
                if by == Answerer::Client {
                    let kind = if allow {
                        "approval_given"
                    } else {
                        "approval_declined"
                    };
                    let mut event = self.question_event(kind, &q, Some(by));
                    if !allow {
                        event = event.code(Code::ToolDeclined);
                    }
                    out.push(Out::Event(event));
                }
                if !allow {
                    let msg = self.declined_message(tool, by);
                    out.push(Out::Client(error_response(
                        Some(id),
                        ErrorKind::ToolDeclined,
                        &self.server,
                        &msg,
                        json!({"tool": tool, "approval": q.approval}),
                    )));
                    return true;
                }
                map.remove("requestState");
                map.remove("inputResponses");
                self.run_allowed(id, params, allowed, now, out);
            }
        }
        true
    }

    /// Sends an allowed call on as if it had just come from the client.
    fn run_allowed(
        &mut self,
        id: &Id,
        params: Value,
        allowed: Allowed,
        now: Instant,
        out: &mut Vec<Out>,
    ) {
        let line = json!({"jsonrpc": "2.0", "id": id.to_value(), "method": "tools/call", "params": params});
        let line = Bytes::from(line.to_string());
        let Ok(peek) = Peek::parse(&line) else { return };
        let before = self.c2s.contains_key(id);
        self.client_line(&peek, line.clone(), now, out);
        if !before && let Some(p) = self.c2s.get_mut(id) {
            p.allowed = Some(Box::new(allowed));
        }
    }

    fn refuse_state(&self, id: &Id, tool: &str, why: Refusal, out: &mut Vec<Out>) {
        let reason = match why {
            Refusal::Forged => "its requestState is not one Warden made for this call (a changed tool or arguments, or a forged state)".to_owned(),
            Refusal::Stale => format!(
                "Warden's question about it expired (ask_timeout_ms, {} ms)",
                self.ask_timeout_ms()
            ),
            Refusal::Used => "Warden's question about it is no longer open (it was answered already, and a requestState opens its call once, or it expired)".to_owned(),
        };
        let msg = format!(
            "Tool `{tool}` of server `{}` was not run: {reason}. The call was not sent to the server. Call the tool again to be asked again.",
            self.server
        );
        out.push(Out::Client(error_response(
            Some(id),
            ErrorKind::ToolNotApproved,
            &self.server,
            &msg,
            json!({"tool": tool, "request_state": match why {
                Refusal::Forged => "forged",
                Refusal::Stale => "stale",
                Refusal::Used => "used",
            }}),
        )));
        let event = Event {
            method: Some("tools/call".into()),
            tool: Some(tool.to_owned()),
            id: Some(id.to_value()),
            ..Event::new("approval_declined")
        };
        out.push(Out::Event(event.code(Code::ToolNotApproved).detail(reason)));
    }

    /// A server's `input_required` answer to an allowed call, with its `requestState` wrapped
    /// in Warden's; `None`: the answer goes on as it is.
    pub(super) fn wrap_round(
        &mut self,
        p: &Pending,
        peek: &Peek<'_>,
        line: &[u8],
    ) -> Option<Bytes> {
        let allowed = p.allowed.as_ref()?;
        if peek.has_error || !peek.result?.get().contains("input_required") {
            return None;
        }
        let mut answer: Value = serde_json::from_slice(line).ok()?;
        let result = answer.get_mut("result")?.as_object_mut()?;
        if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
            return None;
        }
        let inner = match result.get("requestState") {
            None => "-".to_owned(),
            Some(Value::String(s)) if s.len() <= MAX_INNER => hex(s.as_bytes()),
            Some(_) => return None,
        };
        let expiry = now_ms().saturating_add(self.ask_timeout_ms());
        let nonce = super::ids::unguessable();
        let server = self.server.clone();
        let state = self.mrtr.sign(
            [&server, &allowed.tool, &allowed.args],
            "c",
            expiry,
            &nonce,
            &inner,
        );
        result.insert("requestState".into(), Value::String(state));
        Some(Bytes::from(answer.to_string()))
    }

    /// The supervisor's answer to a question asked through `input_required`: it counts when
    /// the client comes back. `false`: no such question is open.
    pub(super) fn answer_question(
        &mut self,
        approval: &str,
        allow: bool,
        always: bool,
        out: &mut Vec<Out>,
    ) -> bool {
        let Some(at) = self
            .mrtr
            .open
            .iter()
            .position(|q| q.approval == approval && q.verdict.is_none())
        else {
            return false;
        };
        self.mrtr.open[at].verdict = Some((allow, always));
        let q = &self.mrtr.open[at];
        let tool = q.tool.clone();
        let event = if allow {
            let mut e = self.question_event("approval_given", q, Some(Answerer::Supervisor));
            e.always = Some(always);
            e
        } else {
            self.question_event("approval_declined", q, Some(Answerer::Supervisor))
                .code(Code::ToolDeclined)
        };
        out.push(Out::Event(event));
        if allow
            && always
            && let Some(record) = self.always_record(&tool)
        {
            out.push(Out::Pins(Box::new(record)));
        }
        true
    }

    /// Forgets questions past their deadline; returns the next deadline.
    pub(super) fn mrtr_tick(&mut self, now: Instant, out: &mut Vec<Out>) -> Option<Instant> {
        let (expired, open): (Vec<Question>, Vec<Question>) = std::mem::take(&mut self.mrtr.open)
            .into_iter()
            .partition(|q| q.deadline <= now);
        self.mrtr.open = open;
        for q in expired.iter().filter(|q| q.verdict.is_none()) {
            out.push(Out::Event(
                self.question_event("approval_timeout", q, None)
                    .code(Code::ToolNotApproved)
                    .detail("the client did not come back with an answer within ask_timeout_ms"),
            ));
        }
        self.mrtr.open.iter().map(|q| q.deadline).min()
    }

    fn question_event(&self, kind: &'static str, q: &Question, by: Option<Answerer>) -> Event {
        Event {
            method: Some("tools/call".into()),
            tool: Some(q.tool.clone()),
            id: Some(q.id.to_value()),
            by: by.map(|b| b.as_str().to_owned()),
            ..Event::new(kind)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn call() -> [&'static str; 3] {
        ["srv", "wipe", r#"{"path":"/x"}"#]
    }

    #[test]
    fn a_state_opens_the_call_it_was_made_for() {
        let mut m = Mrtr::default();
        let state = m.sign(call(), "q", 2_000, "n1", "-");
        assert!(matches!(
            m.open(&state, call(), 1_000),
            Ok(Opened::Answer { .. })
        ));
    }

    #[test]
    fn a_state_does_not_open_another_call() {
        let mut m = Mrtr::default();
        let state = m.sign(call(), "q", 2_000, "n1", "-");
        let other = ["srv", "wipe", r#"{"path":"/y"}"#];
        assert_eq!(m.open(&state, other, 1_000).err(), Some(Refusal::Forged));
    }

    #[test]
    fn a_state_signed_with_another_key_is_forged() {
        let mut a = Mrtr::default();
        let mut b = Mrtr::default();
        let state = a.sign(call(), "q", 2_000, "n1", "-");
        assert_eq!(b.open(&state, call(), 1_000).err(), Some(Refusal::Forged));
    }

    #[test]
    fn a_state_past_its_expiry_is_stale() {
        let mut m = Mrtr::default();
        let state = m.sign(call(), "q", 2_000, "n1", "-");
        assert_eq!(m.open(&state, call(), 2_000).err(), Some(Refusal::Stale));
    }

    #[test]
    fn a_changed_expiry_breaks_the_signature() {
        let mut m = Mrtr::default();
        let state = m.sign(call(), "q", 2_000, "n1", "-");
        let moved = state.replacen(".2000.", ".9000.", 1);
        assert_eq!(m.open(&moved, call(), 1_000).err(), Some(Refusal::Forged));
    }

    #[test]
    fn a_rounds_state_gives_the_servers_state_back() {
        let mut m = Mrtr::default();
        let state = m.sign(call(), "c", 2_000, "n2", &hex(b"server.state"));
        let inner = match m.open(&state, call(), 1_000) {
            Ok(Opened::Round { inner }) => inner,
            other => panic!("{other:?}"),
        };
        assert_eq!(inner.as_deref(), Some("server.state"));
    }

    #[test]
    fn a_rounds_state_opens_once() {
        let mut m = Mrtr::default();
        let state = m.sign(call(), "c", 2_000, "n2", "-");
        let _ = m.open(&state, call(), 1_000);
        assert_eq!(m.open(&state, call(), 1_000).err(), Some(Refusal::Used));
    }

    #[test]
    fn arguments_match_in_any_key_order() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"d":2,"c":3}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":{"c":3,"d":2},"b":1}"#).unwrap();
        assert_eq!(canonical(Some(&a)), canonical(Some(&b)));
    }

    #[test]
    fn only_a_modern_request_that_declares_form_elicitation_is_asked_this_way() {
        let modern =
            |caps: Value| json!({"_meta": {META_VERSION: "2026-07-28", META_CAPABILITIES: caps}});
        assert!(modern_elicits(&modern(json!({"elicitation": {}}))));
        assert!(modern_elicits(&modern(
            json!({"elicitation": {"form": {}}})
        )));
        assert!(!modern_elicits(&modern(
            json!({"elicitation": {"url": {}}})
        )));
        assert!(!modern_elicits(&modern(json!({}))));
        let legacy = json!({"_meta": {META_CAPABILITIES: {"elicitation": {}}}});
        assert!(!modern_elicits(&legacy));
    }
}
