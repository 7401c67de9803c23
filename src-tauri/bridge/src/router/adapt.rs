//! The era adapter: a legacy client (one that begins with `initialize`) in front of a server
//! that speaks only 2026-07-28, which legacy clients cannot use on their own. It turns on when
//! the server refuses the client's `initialize` and then answers `server/discover`:
//! - the client's `initialize` is answered from the server's `server/discover` (its
//!   capabilities, `serverInfo` and instructions, under the version the client asked for), and
//!   its `notifications/initialized` goes no further;
//! - every request the bridge forwards gets `_meta` stamped: the chosen 2026-07-28 version, and
//!   the client's info and capabilities from its `initialize` (the one place the bridge
//!   rewrites a client's message beyond its id);
//! - `ping` and `logging/setLevel` are answered by the bridge (the level goes on in `_meta`);
//! - a server's `input_required` answer becomes requests to the client (`elicitation/create`,
//!   `sampling/createMessage`, `roots/list`, each only when the client declared it; else the
//!   call fails with `input_unavailable`); when all are answered the call is sent again under a
//!   new id with the answers and the server's `requestState`, and its final answer reaches the
//!   client under the client's own id.
//!
//! A restarted server gets no replayed handshake: there is none to replay.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::lifecycle::Own;
use super::*;
use warden_wire::protocol::with_id;

use warden_wire::protocol::{
    META_CLIENT_CAPABILITIES as META_CAPABILITIES, META_CLIENT_INFO as META_CLIENT,
    META_PROTOCOL_VERSION as META_VERSION, META_SERVER_INFO as META_SERVER,
    MODERN_VERSION as MODERN,
};

const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// The ids of the adapter's questions to the client and of its retries to the server.
const ASK_PREFIX: &str = "__warden/adapt/";
/// The requests whose answer may be `input_required`.
const ROUNDS: &[&str] = &["tools/call", "prompts/get", "resources/read"];

#[derive(Debug, Default)]
pub(super) struct Adapt {
    /// The server speaks only 2026-07-28, the client the legacy handshake.
    pub on: bool,
    /// The version stamped on each request.
    version: String,
    /// The client's `initialize` params.
    init: Option<Value>,
    /// The server's refusal of the client's `initialize`, kept while `server/discover` is
    /// tried (the client gets it when that fails too).
    refusal: Option<(Id, Bytes)>,
    tried: bool,
    log_level: Option<Value>,
    /// The stamped params of requests that may get `input_required`, by the client's id.
    originals: HashMap<Id, Value>,
    /// Rounds waiting for the client's answers, by the client's id.
    rounds: HashMap<Id, Round>,
    /// The questions sent to the client: the id it answers → (the call's id, the key).
    pub asking: HashMap<Id, (Id, String)>,
    /// The retries sent to the server: the id it answers → the client's id.
    retries: HashMap<Id, Id>,
}

#[derive(Debug)]
struct Round {
    state: Option<Value>,
    want: usize,
    got: Map<String, Value>,
}

/// Whether the client declared what input request `request` needs (for an elicitation, its
/// mode: `form` unless it says `url`; `elicitation: {}` declares form only).
fn client_can(caps: Option<&Value>, request: &Value) -> bool {
    let method = request
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let need = match method {
        "elicitation/create" => "elicitation",
        "sampling/createMessage" => "sampling",
        "roots/list" => "roots",
        _ => return false,
    };
    let Some(declared) = caps.and_then(|c| c.get(need)).filter(|v| !v.is_null()) else {
        return false;
    };
    if need != "elicitation" {
        return true;
    }
    match request.pointer("/params/mode").and_then(Value::as_str) {
        Some("url") => declared.get("url").is_some(),
        _ => declared
            .as_object()
            .is_none_or(|m| m.is_empty() || m.contains_key("form")),
    }
}

impl Router {
    /// Whether the adapter is on (a legacy client, a modern-only server).
    pub fn adapting(&self) -> bool {
        self.adapt.on
    }

    /// Keeps the client's `initialize` params (what the adapter stamps and answers from).
    pub(super) fn adapt_note_initialize(&mut self, peek: &Peek<'_>) {
        if peek.method.as_deref() == Some("initialize") {
            self.adapt.init = peek.params.and_then(|p| serde_json::from_str(p.get()).ok());
        }
    }

    /// A server's answer to a client request, before it is relayed; `true`: the adapter took
    /// it (a refused `initialize` it tries `server/discover` for, an `input_required` round).
    pub(super) fn adapt_server_answer(
        &mut self,
        id: &Id,
        peek: &Peek<'_>,
        line: &Bytes,
        now: Instant,
        out: &mut Vec<Out>,
    ) -> bool {
        let Some(p) = self.c2s.get(id) else {
            return false;
        };
        if &*p.method == "initialize" && peek.has_error && !self.adapt.tried {
            self.adapt.tried = true;
            self.adapt.refusal = Some((id.clone(), line.clone()));
            let own = self.own_id(Own::Discover);
            let discover = json!({"jsonrpc": "2.0", "id": own.to_value(), "method": "server/discover",
                "params": {"_meta": {META_VERSION: MODERN, META_CAPABILITIES: {}, META_CLIENT: {"name": "warden-bridge", "version": env!("CARGO_PKG_VERSION")}}}});
            out.push(Out::Server(Bytes::from(discover.to_string())));
            return true;
        }
        if !self.adapt.on
            || peek.has_error
            || !ROUNDS.contains(&&*p.method)
            || !peek
                .result
                .is_some_and(|r| r.get().contains("input_required"))
        {
            return false;
        }
        let Some(result) = peek
            .result
            .and_then(|r| serde_json::from_str::<Value>(r.get()).ok())
            .filter(|r| r.get("resultType").and_then(Value::as_str) == Some("input_required"))
        else {
            return false;
        };
        self.input_required(id, result, now, out);
        true
    }

    /// The answer to the bridge's `server/discover`: the adapter turns on, or the client gets
    /// the server's refusal of its `initialize`.
    pub(super) fn discovered(&mut self, peek: &Peek<'_>, now: Instant, out: &mut Vec<Out>) {
        let Some((id, refusal)) = self.adapt.refusal.take() else {
            return;
        };
        let result: Option<Value> = (!peek.has_error)
            .then(|| peek.result.and_then(|r| serde_json::from_str(r.get()).ok()))
            .flatten();
        // Versions are dates (`2026-07-28`); anything else a server lists is not one.
        let is_version = |v: &&str| {
            v.len() == 10
                && v.bytes().enumerate().all(|(i, b)| {
                    if i == 4 || i == 7 {
                        b == b'-'
                    } else {
                        b.is_ascii_digit()
                    }
                })
        };
        let versions: Vec<&str> = result
            .as_ref()
            .and_then(|r| r.get("supportedVersions")?.as_array())
            .map(|v| {
                v.iter()
                    .filter_map(Value::as_str)
                    .filter(is_version)
                    .collect()
            })
            .unwrap_or_default();
        let Some(p) = self.c2s.remove(&id) else {
            return;
        };
        self.server_works(out);
        let (Some(result), Some(first)) = (result.as_ref(), versions.first()) else {
            out.push(Out::Event(self.finished(
                &id,
                &p,
                now,
                "error",
                Some(refusal.len()),
            )));
            out.push(Out::Client(refusal));
            return;
        };
        self.adapt.on = true;
        self.adapt.version = if versions.contains(&MODERN) {
            MODERN
        } else {
            first
        }
        .to_owned();
        self.life.init_pending = None;
        let init = self.adapt.init.as_ref();
        let asked = init
            .and_then(|i| i.get("protocolVersion"))
            .cloned()
            .unwrap_or_else(|| json!("2025-11-25"));
        let server_info = result
            .get("serverInfo")
            .or_else(|| result.pointer(&format!("/_meta/{}", META_SERVER.replace('/', "~1"))))
            .cloned()
            .unwrap_or_else(|| json!({"name": &*self.server, "version": "unknown"}));
        let mut answer = json!({
            "protocolVersion": asked,
            "capabilities": result.get("capabilities").cloned().unwrap_or_else(|| json!({})),
            "serverInfo": server_info,
        });
        if let Some(instructions) = result.get("instructions") {
            answer["instructions"] = instructions.clone();
        }
        let line = json!({"jsonrpc": "2.0", "id": id.to_value(), "result": answer}).to_string();
        out.push(Out::Event(self.finished(
            &id,
            &p,
            now,
            "ok",
            Some(line.len()),
        )));
        out.push(Out::Client(Bytes::from(line)));
        out.push(Out::Event(Event::new("era").detail(format!(
            "the server speaks only {} and refused the client's initialize: Warden adapts (answers initialize from server/discover, stamps _meta, answers ping, turns input_required into requests to the client)",
            self.adapt.version
        ))));
    }

    /// A client message while the adapter is on: the line to send on (stamped), or `None`
    /// when the bridge dealt with it.
    pub(super) fn adapt_client(
        &mut self,
        peek: &Peek<'_>,
        line: Bytes,
        out: &mut Vec<Out>,
    ) -> Option<Bytes> {
        let method = peek.method.as_deref()?;
        match (peek.kind(), method) {
            (Kind::Notification, "notifications/initialized") => None,
            (Kind::Request, "ping" | "logging/setLevel") => {
                if method == "logging/setLevel" {
                    self.adapt.log_level = peek
                        .params
                        .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
                        .and_then(|p| p.get("level").cloned());
                }
                let id = peek.id.as_ref()?;
                let answer = json!({"jsonrpc": "2.0", "id": id.to_value(), "result": {}});
                out.push(Out::Client(Bytes::from(answer.to_string())));
                None
            }
            (Kind::Request, _) => Some(self.stamp(peek, &line).unwrap_or(line)),
            (Kind::Notification, "notifications/cancelled") => {
                // A call the adapter sent again is known to the server by the retry's id.
                let Some(retry) = peek
                    .request_id
                    .as_ref()
                    .and_then(|call| self.adapt_server_id(call))
                else {
                    return Some(line);
                };
                let mut v: Value = serde_json::from_slice(&line).ok()?;
                if let Some(r) = v.pointer_mut("/params/requestId") {
                    *r = retry.to_value();
                }
                Some(Bytes::from(v.to_string()))
            }
            _ => Some(line),
        }
    }

    /// `line` with `_meta` stamped; `None` when it cannot be (params not an object: the line
    /// goes on as it is, and the server answers it).
    fn stamp(&mut self, peek: &Peek<'_>, line: &[u8]) -> Option<Bytes> {
        let method = peek.method.as_deref()?;
        let mut v: Value = serde_json::from_slice(line).ok()?;
        let params = v
            .as_object_mut()?
            .entry("params")
            .or_insert_with(|| json!({}));
        let meta = params
            .as_object_mut()?
            .entry("_meta")
            .or_insert_with(|| json!({}))
            .as_object_mut()?;
        let init = self.adapt.init.as_ref();
        meta.insert(META_VERSION.into(), json!(self.adapt.version));
        meta.insert(
            META_CAPABILITIES.into(),
            init.and_then(|i| i.get("capabilities"))
                .cloned()
                .unwrap_or_else(|| json!({})),
        );
        if let Some(info) = init.and_then(|i| i.get("clientInfo")) {
            meta.insert(META_CLIENT.into(), info.clone());
        }
        if let Some(level) = &self.adapt.log_level {
            meta.insert(META_LOG_LEVEL.into(), level.clone());
        }
        if ROUNDS.contains(&method)
            && let Some(id) = &peek.id
        {
            let c2s = &self.c2s;
            self.adapt.originals.retain(|id, _| c2s.contains_key(id));
            self.adapt.originals.insert(id.clone(), params.clone());
        }
        Some(Bytes::from(v.to_string()))
    }

    /// A server's `input_required` answer to call `id`: its input requests go to the client
    /// (or the call fails when the client cannot answer them).
    fn input_required(&mut self, id: &Id, result: Value, now: Instant, out: &mut Vec<Out>) {
        let requests = result
            .get("inputRequests")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let caps = self.adapt.init.as_ref().and_then(|i| i.get("capabilities"));
        // Named only when known: a server's own text does not reach the client under Warden's name.
        let missing: Vec<&str> = requests
            .values()
            .filter(|r| !client_can(caps, r))
            .map(|r| {
                r.get("method")
                    .and_then(Value::as_str)
                    .filter(|m| {
                        ["elicitation/create", "sampling/createMessage", "roots/list"].contains(m)
                    })
                    .unwrap_or("an input request of an unknown kind")
            })
            .collect();
        let c2s = &self.c2s;
        self.adapt.rounds.retain(|call, _| c2s.contains_key(call));
        self.adapt
            .asking
            .retain(|_, (call, _)| c2s.contains_key(call));
        if self.adapt.asking.len() + requests.len() > super::ids::MAX_SERVER_REQUESTS {
            let msg = format!(
                "Server `{}` asked for {} inputs to answer one call, more than Warden passes to the client at once ({}). The call was not completed.",
                self.server,
                requests.len(),
                super::ids::MAX_SERVER_REQUESTS
            );
            return self.fail_round(id, &msg, json!({"inputs": requests.len()}), now, out);
        }
        if !missing.is_empty() || !self.adapt.originals.contains_key(id) {
            let msg = format!(
                "Server `{}` needs input before it can answer ({}), and this client did not declare what that takes, so Warden could not ask it. The server speaks only 2026-07-28; use a client that supports {}.",
                self.server,
                missing.join(", "),
                missing.join(", ")
            );
            return self.fail_round(id, &msg, json!({"needs": missing}), now, out);
        }
        let round = Round {
            state: result.get("requestState").cloned(),
            want: requests.len(),
            got: Map::new(),
        };
        self.adapt.rounds.insert(id.clone(), round);
        if let Some(p) = self.c2s.get_mut(id) {
            p.last_activity = now;
        }
        for (key, request) in requests {
            let ask = Id::Str(format!("{ASK_PREFIX}{}", super::ids::unguessable()).into());
            let mut line = json!({"jsonrpc": "2.0", "id": ask.to_value(), "method": request.get("method").cloned().unwrap_or(Value::Null)});
            if let Some(params) = request.get("params") {
                line["params"] = params.clone();
            }
            out.push(Out::Client(Bytes::from(line.to_string())));
            self.adapt.asking.insert(ask, (id.clone(), key));
        }
        self.retry_when_answered(id, now, out);
    }

    /// The client's answer to one of the adapter's questions; `true`: it was one.
    pub(super) fn adapt_answered(
        &mut self,
        peek: &Peek<'_>,
        now: Instant,
        out: &mut Vec<Out>,
    ) -> bool {
        let Some((call, key)) = peek.id.as_ref().and_then(|id| self.adapt.asking.remove(id)) else {
            return peek
                .id
                .as_ref()
                .is_some_and(|id| matches!(id, Id::Str(s) if s.starts_with(ASK_PREFIX)));
        };
        if !self.adapt.rounds.contains_key(&call) {
            return true; // the call is over (timed out, cancelled)
        }
        if peek.has_error {
            self.adapt.rounds.remove(&call);
            self.adapt.asking.retain(|_, (c, _)| *c != call);
            let msg = format!(
                "Server `{}` needed input before it could answer, and the client could not give it (its answer to the question was an error). The call was not completed.",
                self.server
            );
            self.fail_round(&call, &msg, json!({}), now, out);
            return true;
        }
        let result: Value = peek
            .result
            .and_then(|r| serde_json::from_str(r.get()).ok())
            .unwrap_or_else(|| json!({}));
        if let Some(round) = self.adapt.rounds.get_mut(&call) {
            round.got.insert(key, result);
        }
        if let Some(p) = self.c2s.get_mut(&call) {
            p.last_activity = now;
        }
        self.retry_when_answered(&call, now, out);
        true
    }

    /// Sends call `id` again, with the answers and the server's state, once all are in.
    fn retry_when_answered(&mut self, id: &Id, now: Instant, out: &mut Vec<Out>) {
        if self
            .adapt
            .rounds
            .get(id)
            .is_none_or(|r| r.got.len() < r.want)
        {
            return;
        }
        let Some(round) = self.adapt.rounds.remove(id) else {
            return;
        };
        if !self.life.ready() {
            let msg = format!(
                "Server `{}` restarted while the client answered its question, and the new process has not seen the call. Call it again.",
                self.server
            );
            return self.fail_round(id, &msg, json!({}), now, out);
        }
        let (Some(mut params), Some(p)) = (self.adapt.originals.get(id).cloned(), self.c2s.get(id))
        else {
            return;
        };
        let method = p.method.to_string();
        if let Some(map) = params.as_object_mut() {
            if round.want > 0 {
                map.insert("inputResponses".into(), Value::Object(round.got));
            }
            match round.state {
                Some(state) => map.insert("requestState".into(), state),
                None => map.remove("requestState"),
            };
        }
        let retry = Id::Str(format!("{ASK_PREFIX}r/{}", super::ids::unguessable()).into());
        let line =
            json!({"jsonrpc": "2.0", "id": retry.to_value(), "method": method, "params": params});
        self.adapt.retries.insert(retry, id.clone());
        self.gate.hold(HOLD_FOR_ADAPT, true);
        out.push(Out::Server(Bytes::from(line.to_string())));
    }

    /// The id under which the server knows call `call` now: the adapter's retry carrying it.
    pub(super) fn adapt_server_id(&self, call: &Id) -> Option<Id> {
        self.adapt
            .retries
            .iter()
            .find(|(_, c)| *c == call)
            .map(|(retry, _)| retry.clone())
    }

    /// Call `call` is over (answered, failed, timed out, cancelled): the adapter forgets it.
    pub(super) fn adapt_forget(&mut self, call: &Id) {
        if !self.adapt.on {
            return;
        }
        self.adapt.originals.remove(call);
        self.adapt.rounds.remove(call);
        self.adapt.asking.retain(|_, (c, _)| c != call);
        self.adapt.retries.retain(|_, c| c != call);
        self.gate
            .hold(HOLD_FOR_ADAPT, !self.adapt.retries.is_empty());
    }

    /// The server is gone: its rounds are over (the calls are failed or sent again by the
    /// caller), and the client's open questions are withdrawn.
    pub(super) fn adapt_server_gone(&mut self, out: &mut Vec<Out>) {
        for ask in std::mem::take(&mut self.adapt.asking).into_keys() {
            out.push(Out::Client(notification(
                "notifications/cancelled",
                json!({"requestId": ask.to_value(), "reason": "the server that asked is gone"}),
            )));
        }
        self.adapt.rounds.clear();
        self.adapt.retries.clear();
        self.gate.hold(HOLD_FOR_ADAPT, false);
    }

    /// The server's answer to one of the adapter's retries, under the client's id.
    pub(super) fn adapt_retry_answer(&mut self, line: &[u8]) -> Option<Bytes> {
        if self.adapt.retries.is_empty() {
            return None;
        }
        let id = Peek::parse(line).ok()?.id?;
        let call = self.adapt.retries.remove(&id)?;
        self.gate
            .hold(HOLD_FOR_ADAPT, !self.adapt.retries.is_empty());
        with_id(line, &call)
    }

    fn fail_round(&mut self, id: &Id, msg: &str, data: Value, now: Instant, out: &mut Vec<Out>) {
        self.adapt_forget(id);
        let Some(p) = self.c2s.remove(id) else {
            return;
        };
        self.stats.errors += 1;
        out.push(Out::Client(error_response(
            Some(id),
            ErrorKind::InputUnavailable,
            &self.server,
            msg,
            data,
        )));
        out.push(Out::Event(
            self.finished(id, &p, now, "error", None)
                .code(warden_wire::codes::Code::InputUnavailable)
                .detail(msg),
        ));
    }
}
