//! A client that calls a tool before it ever listed the tools (many do, from a cached list)
//! would have the call judged without the tool's definition: the spec's defaults make it a
//! destructive, open-world write, so `@destructive` in `tools_ask` would ask about a read-only
//! tool, and `@readonly` in `tools_allow` would deny it. When the policy reads annotations,
//! the server is ready, and no listing has been seen in this session, the bridge lists the
//! tools itself first (its own `tools/list`, every page) and then judges the call, which
//! waits meanwhile. One such listing per session: a tool the server does not list stays
//! unknown. No answer within [`LEARN_WAIT`] judges the waiting calls as before, by the
//! defaults.

use serde_json::Value;

use super::lifecycle::Own;
use super::*;

/// How long calls wait for the bridge's own listing.
pub(super) const LEARN_WAIT: Duration = Duration::from_secs(5);

#[derive(Debug)]
struct Waiting {
    id: Id,
    line: Bytes,
    tool: String,
    since: Instant,
}

#[derive(Debug, Default)]
pub(super) struct Learn {
    /// Calls waiting for the listing, in the order they came.
    waiting: Vec<Waiting>,
    /// When the waiting calls are judged whatever came; `Some` while a listing runs.
    deadline: Option<Instant>,
    /// A complete listing was seen in this session (the client's or ours), or ours gave up.
    pub(super) done: bool,
}

impl Router {
    /// A `tools/call` of a tool whose definition is not known waits for the bridge's own
    /// listing (started here); a cancellation of such a call ends it. `true`: the line is
    /// dealt with.
    pub(super) fn learn_first(
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
            let before = self.learn.waiting.len();
            self.learn.waiting.retain(|w| &w.id != rid);
            return self.learn.waiting.len() != before;
        }
        let (Some("tools/call"), Some(tool), Some(id)) = (
            peek.method.as_deref(),
            peek.name.as_deref(),
            peek.id.as_ref(),
        ) else {
            return false;
        };
        let reads_annotations = self.limits.tools_allow.has_selectors()
            || self.limits.tools_ask.has_selectors()
            || self.limits.tools_deny.has_selectors();
        if self.learn.done
            || !reads_annotations
            || !self.life.ready()
            || self.life.init_params.is_none()
            || self.life.serving_fallback
            || !self.tool_defs(tool).is_empty()
        {
            return false;
        }
        self.learn.waiting.push(Waiting {
            id: id.clone(),
            line: line.clone(),
            tool: tool.to_owned(),
            since: now,
        });
        if self.learn.deadline.is_none() {
            self.learn.deadline = Some(now + LEARN_WAIT);
            self.learn_page(None, out);
            out.push(Out::WakeWatchdog);
        }
        true
    }

    /// The calls waiting for the listing, as in-flight requests (status shows them).
    pub(super) fn learning_calls(&self, now: Instant) -> impl Iterator<Item = InflightView> + '_ {
        self.learn.waiting.iter().map(move |w| InflightView {
            id: w.id.clone(),
            method: "tools/call".to_owned(),
            tool: Some(w.tool.clone()),
            age: now.saturating_duration_since(w.since),
            idle: now.saturating_duration_since(w.since),
            progress: Some(
                "waiting for the server's tool list (its definition decides the policy)".to_owned(),
            ),
        })
    }

    fn learn_page(&mut self, cursor: Option<Value>, out: &mut Vec<Out>) {
        let id = self.own_id(Own::Learn);
        let mut msg = json!({"jsonrpc": "2.0", "id": id.to_value(), "method": "tools/list"});
        if let Some(cursor) = cursor {
            msg["params"] = json!({ "cursor": cursor });
        }
        out.push(Out::Server(Bytes::from(msg.to_string())));
    }

    /// A page of the bridge's own listing: the definitions are known (and pinned, as a
    /// client's listing is); the next page is asked for, or the waiting calls are judged.
    pub(super) fn learned(&mut self, peek: &Peek<'_>, now: Instant, out: &mut Vec<Out>) {
        if self.learn.deadline.is_none() {
            return; // gave up waiting already
        }
        let result: Option<Value> = peek.result.and_then(|r| serde_json::from_str(r.get()).ok());
        let tools = result
            .as_ref()
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array);
        let next = result
            .as_ref()
            .and_then(|r| r.get("nextCursor"))
            .filter(|c| !c.is_null())
            .cloned();
        if let Some(tools) = tools {
            if self.limits.pin_tools != warden_config::PinMode::Off
                && !self.pins.broken
                && !self.life.serving_fallback
            {
                self.check_pins(tools, next.is_none(), out);
            }
            for t in tools {
                if let Some((name, def)) = warden_config::pins::definition(t) {
                    self.pins.listed.insert(name.to_owned(), def);
                }
            }
        }
        match next {
            Some(cursor) if tools.is_some() && !peek.has_error => {
                self.learn_page(Some(cursor), out)
            }
            _ => self.release_learning(now, out),
        }
    }

    /// Judges the calls that waited for the listing, in the order they came.
    fn release_learning(&mut self, now: Instant, out: &mut Vec<Out>) {
        self.learn.done = true;
        self.learn.deadline = None;
        for w in std::mem::take(&mut self.learn.waiting) {
            if let Ok(peek) = Peek::parse(&w.line) {
                self.judged_client_line(&peek, w.line.clone(), now, out);
            }
        }
    }

    /// Gives up on a listing past its deadline; returns the next time this has something to do.
    pub(super) fn learn_tick(&mut self, now: Instant, out: &mut Vec<Out>) -> Option<Instant> {
        let deadline = self.learn.deadline?;
        if now < deadline {
            return Some(deadline);
        }
        self.release_learning(now, out);
        None
    }
}
