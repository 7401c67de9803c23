//! What the client may see of the server's tools: `tools_allow` / `tools_deny` hide tools, and
//! `pin_tools` checks each listed tool against its pin ([`warden_config::pins`]) and, with `"block"`,
//! holds back the ones that changed or are new until they are approved.
//!
//! Both act on `tools/list` answers (each page of a paginated list on its own) and on
//! `tools/call` requests, which the router answers itself for a hidden or held-back tool.

use serde_json::Value;

use super::*;
use warden_config::PinMode;
use warden_config::pins::{PinFile, PinState};
use warden_config::policy::Policy;
use warden_wire::codes::Code;

/// The pins as one session knows them.
#[derive(Debug, Default)]
pub(super) struct Pins {
    /// `None`: nothing is pinned yet, so the first listing is pinned as it is.
    file: Option<PinFile>,
    /// The pin file cannot be read: nothing is checked until it can.
    pub(super) broken: bool,
    /// A first listing is under way (its later pages are pinned too).
    trusting: bool,
    /// Tools reported in this session (each once).
    reported: HashSet<String>,
    /// The definitions the server listed in this session, by name (for the tool policy).
    pub(super) listed: HashMap<String, Value>,
    /// Tools allowed for good in this session, until the pin file says otherwise.
    always: HashMap<String, String>,
}

/// Pins to merge into the server's pin file (which other bridges may share), off the relay.
#[derive(Debug)]
pub struct PinRecord {
    pub server: String,
    pub tools: Vec<Value>,
    pub trust: bool,
    /// Tools allowed for good, with the hash of their definitions ([`warden_config::pins::definitions_hash`]).
    pub always: Vec<(String, String)>,
}

impl PinRecord {
    /// Reads the pin file again, records the tools into it and saves it. A file that cannot be
    /// read is left alone.
    pub fn save(&self) -> Result<(), String> {
        let path = warden_config::pins::path(&self.server);
        let mut file = PinFile::load(&path)?.unwrap_or_default();
        let now = warden_wire::events::now_ms();
        let mut changed = false;
        for tool in &self.tools {
            changed |= file.record(tool, self.trust, now).is_some_and(|(_, c)| c);
        }
        for (tool, hash) in &self.always {
            changed |= file.always.insert(tool.clone(), hash.clone()).as_ref() != Some(hash);
        }
        if changed { file.save(&path) } else { Ok(()) }
    }
}

impl Router {
    /// The server's pin file was read (at start, or after it changed on disk: an approval).
    /// Tools approved since are released: the client is told to list again.
    pub fn set_pins(&mut self, file: Result<Option<PinFile>, String>, out: &mut Vec<Out>) {
        let held_before = self.held_back();
        match file {
            Ok(file) => {
                self.pins.broken = false;
                // The file is the truth now (`warden approvals forget` empties it).
                self.pins.always.clear();
                if let Some(f) = &file {
                    self.pins
                        .reported
                        .retain(|t| f.state(t) != PinState::Approved);
                }
                self.pins.file = file;
            }
            Err(e) => {
                if !self.pins.broken {
                    out.push(Out::Event(
                        Event::new("pins_invalid").code(Code::PinsInvalid).detail(e),
                    ));
                }
                self.pins.broken = true;
            }
        }
        if self.life.ready() && self.held_back() != held_before {
            out.push(Out::Client(notification(
                "notifications/tools/list_changed",
                json!({}),
            )));
        }
    }

    /// The tools held back from the client now (`pin_tools = "block"`).
    fn held_back(&self) -> Vec<String> {
        match &self.pins.file {
            Some(f) if self.limits.pin_tools == PinMode::Block && !self.pins.broken => {
                f.pending.keys().cloned().collect()
            }
            _ => Vec::new(),
        }
    }

    fn is_held_back(&self, tool: &str) -> bool {
        self.limits.pin_tools == PinMode::Block
            && !self.pins.broken
            && !self.life.serving_fallback
            && self
                .pins
                .file
                .as_ref()
                .is_some_and(|f| f.pending.contains_key(tool))
    }

    /// The policy of tool `name`: the strictest over its pinned definition (where pinning is
    /// on) and the one the server listed in this session; the spec's defaults when neither
    /// is known.
    pub(super) fn tool_policy(&self, name: &str) -> Policy {
        warden_config::policy::policy_of_all(name, &self.tool_defs(name), &self.limits)
    }

    /// The definitions of tool `name` the policy reads: its pin (where pinning is on) and
    /// what the server listed in this session, once when they are equal.
    pub(super) fn tool_defs(&self, name: &str) -> Vec<&Value> {
        let pinned = (self.limits.pin_tools != PinMode::Off && !self.pins.broken)
            .then(|| self.pins.file.as_ref()?.pinned.get(name))
            .flatten();
        let mut defs: Vec<&Value> = pinned.into_iter().collect();
        if let Some(listed) = self.pins.listed.get(name)
            && defs.first() != Some(&listed)
        {
            defs.push(listed);
        }
        defs
    }

    /// Whether calls of `tool` are allowed for good (`--always`) with the definitions it has
    /// now.
    pub(super) fn always_allowed(&self, tool: &str) -> bool {
        let defs = self.tool_defs(tool);
        if defs.is_empty() {
            return false;
        }
        let hash = warden_config::pins::definitions_hash(&defs);
        let saved = self.pins.file.as_ref().and_then(|f| f.always.get(tool));
        [saved, self.pins.always.get(tool)]
            .into_iter()
            .flatten()
            .any(|h| *h == hash)
    }

    /// Allows `tool` for good with the definitions it has now: remembered at once, and the
    /// record to save in the pin file. `None` when its definition is not known.
    pub(super) fn always_record(&mut self, tool: &str) -> Option<PinRecord> {
        let defs = self.tool_defs(tool);
        if defs.is_empty() {
            return None;
        }
        let hash = warden_config::pins::definitions_hash(&defs);
        self.pins.always.insert(tool.to_owned(), hash.clone());
        Some(PinRecord {
            server: self.server.to_string(),
            tools: Vec::new(),
            trust: false,
            always: vec![(tool.to_owned(), hash)],
        })
    }

    /// Whether a change of limits changes what the client may see of the tools.
    pub(super) fn tools_view_changed(old: &Limits, new: &Limits) -> bool {
        old.tools_allow != new.tools_allow
            || old.tools_ask != new.tools_ask
            || old.tools_deny != new.tools_deny
            || (old.pin_tools == PinMode::Block) != (new.pin_tools == PinMode::Block)
    }

    /// A `tools/call` of a hidden or held-back tool is answered here, never sent.
    pub(super) fn refused_call(&self, peek: &Peek<'_>, out: &mut Vec<Out>) -> bool {
        let tool = match (peek.method.as_deref(), peek.name.as_deref()) {
            (Some("tools/call"), Some(tool)) => tool,
            _ => return false,
        };
        let policy = self.tool_policy(tool);
        let (kind, code, msg) = if let Policy::Deny(why) = &policy {
            (
                ErrorKind::ToolDenied,
                Code::ToolDenied,
                format!(
                    "Tool `{tool}` of server `{}` is denied by Warden ({why}), so it was not called. If the client should use it, change tools_allow / tools_ask / tools_deny for this server in Warden's server page or config.toml.",
                    self.server
                ),
            )
        } else if self.is_held_back(tool) {
            (
                ErrorKind::ToolQuarantined,
                Code::ToolQuarantined,
                format!(
                    "Tool `{tool}` of server `{}` is held back by Warden: its definition changed (or it is new) since it was pinned, and pin_tools is \"block\". See what changed with `warden tools diff {}` and approve it with `warden tools approve {} {tool}` (or in Warden's window).",
                    self.server, self.server, self.server
                ),
            )
        } else {
            return false;
        };
        out.push(Out::Client(error_response(
            peek.id.as_ref(),
            kind,
            &self.server,
            &msg,
            json!({"tool": tool}),
        )));
        let event = Event {
            method: Some("tools/call".into()),
            tool: Some(tool.to_owned()),
            id: peek.id.as_ref().map(Id::to_value),
            ..Event::new(kind.as_str())
        };
        out.push(Out::Event(event.code(code)));
        true
    }

    /// A `tools/list` answer: each tool checked against its pin, then hidden and held-back
    /// tools left out. `None` when the line goes out as it came.
    pub(super) fn tools_page(
        &mut self,
        p: &Pending,
        line: &[u8],
        out: &mut Vec<Out>,
    ) -> Option<Bytes> {
        let pinning = self.limits.pin_tools != PinMode::Off
            && !self.pins.broken
            && !self.life.serving_fallback;
        let filtering = self.limits.has_tool_policy();
        if &*p.method != "tools/list" || !(pinning || filtering) {
            return None;
        }
        let mut msg: Value = serde_json::from_slice(line).ok()?;
        let last_page = msg.pointer("/result/nextCursor").is_none_or(Value::is_null);
        // A complete listing: a tool it did not name stays unknown (no listing of our own).
        self.learn.done |= last_page;
        let tools = msg.pointer_mut("/result/tools")?.as_array_mut()?;
        if pinning {
            self.check_pins(tools, last_page, out);
        }
        for t in tools.iter() {
            if let Some((name, def)) = warden_config::pins::definition(t) {
                self.pins.listed.insert(name.to_owned(), def);
            }
        }
        let before = tools.len();
        tools.retain(|t| {
            t.get("name").and_then(Value::as_str).is_none_or(|n| {
                !matches!(self.tool_policy(n), Policy::Deny(_)) && !self.is_held_back(n)
            })
        });
        (tools.len() != before).then(|| Bytes::from(msg.to_string()))
    }

    pub(super) fn check_pins(&mut self, tools: &[Value], last_page: bool, out: &mut Vec<Out>) {
        let trust = self.pins.file.is_none() || self.pins.trusting;
        self.pins.trusting = trust && !last_page;
        let block = self.limits.pin_tools == PinMode::Block;
        let file = self.pins.file.get_or_insert_with(PinFile::default);
        let now = warden_wire::events::now_ms();
        let mut dirty = false;
        let mut names = HashSet::new();
        for tool in tools {
            let Some((name, _)) = warden_config::pins::definition(tool) else {
                continue;
            };
            // A name listed twice: the first one is pinned and checked, the list goes on as
            // it came.
            if !names.insert(name) {
                if self.pins.reported.insert(format!("\0duplicate {name}")) {
                    let event = Event {
                        tool: Some(name.to_owned()),
                        ..Event::new("tool_duplicate")
                    };
                    out.push(Out::Event(event.code(Code::ToolDuplicate).detail(
                        "listed twice in one tools/list answer; Warden checked the first",
                    )));
                }
                continue;
            }
            let Some((state, changed)) = file.record(tool, trust, now) else {
                continue;
            };
            dirty |= changed;
            if state == PinState::Approved || !self.pins.reported.insert(name.to_owned()) {
                continue;
            }
            let action = if block {
                "held back from the client until approved (pin_tools = \"block\")"
            } else {
                "passed on (pin_tools = \"warn\")"
            };
            let (kind, code, what) = if state == PinState::Changed {
                let fields = file.changed_fields(name).join(", ");
                (
                    "tool_changed",
                    Code::ToolChanged,
                    format!("{fields} changed since it was pinned"),
                )
            } else {
                (
                    "tool_new",
                    Code::ToolNew,
                    "not there when the tools were pinned".to_owned(),
                )
            };
            let event = Event {
                tool: Some(name.to_owned()),
                ..Event::new(kind)
            };
            out.push(Out::Event(event.code(code).detail(format!(
                "{what}; {action}. See `warden tools diff {}`",
                self.server
            ))));
        }
        if dirty {
            out.push(Out::Pins(Box::new(PinRecord {
                server: self.server.to_string(),
                tools: tools.to_vec(),
                trust,
                always: Vec::new(),
            })));
        }
    }
}
