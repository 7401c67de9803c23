//! The commands: restart (sent to the sessions, each acknowledges), and the settings written
//! to config.toml with a format-preserving edit (fallback, debug, limits), whose outcome says
//! which running bridges picked the edit up.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::{broadcast, oneshot};

use super::api::{
    ApiError, ApiEvent, CommandOutcome, ErrorCode, HistoryEntry, LimitsReport, PolicyKind,
    SessionAck, ToolPolicy,
};
use super::service::{State, Supervisor, Tx, blocking};
use super::settings;
use warden_config::edit::{self, Edit};
use warden_control::{self as control, Action, Heartbeat, Message};
use warden_wire::events::{Event, now_ms};

/// A session, its pid, and whether it picked up an edit (and what it said), if known yet.
type Verdict = (String, u32, Option<(bool, String)>);

impl Supervisor {
    /// Approves tool definitions of `server` in its pin file (`warden tools approve`);
    /// running bridges follow the file and release what was held back.
    pub(super) fn approve_tools(
        &self,
        server: &str,
        tools: &[String],
    ) -> Result<CommandOutcome, ApiError> {
        let done = warden_config::pins::approve(server, tools)
            .map_err(|e| ApiError::new(ErrorCode::Invalid, e))?;
        let message = if done.is_empty() {
            format!("every tool of {server} is already approved")
        } else {
            format!(
                "approved {} of {server}; running sessions list the tools again",
                done.join(", ")
            )
        };
        Ok(CommandOutcome {
            ok: true,
            message,
            config: None,
            sessions: Vec::new(),
        })
    }

    /// The calls held for an answer in every live session, oldest first.
    pub(super) fn approvals(&self) -> Vec<super::api::PendingApproval> {
        let st = self.lock();
        let mut all: Vec<_> = st
            .sessions
            .values()
            .flat_map(|s| {
                let hb = s.heartbeat.as_ref();
                hb.into_iter()
                    .flat_map(|hb| &hb.approvals)
                    .map(|a| super::api::PendingApproval {
                        id: a.id.clone(),
                        server: s.hello.server.clone(),
                        session: s.hello.session.clone(),
                        tool: a.tool.clone(),
                        args: a.args.clone(),
                        age_ms: a.age_ms,
                        left_ms: a.left_ms,
                        client_asked: a.client_asked,
                    })
            })
            .collect();
        all.sort_by_key(|a| std::cmp::Reverse(a.age_ms));
        all
    }

    /// Sends the answer to held call `id` to the session holding it and waits for its
    /// acknowledgement.
    pub(super) async fn answer_approval(
        &self,
        id: &str,
        allow: bool,
        always: bool,
    ) -> Result<CommandOutcome, ApiError> {
        let (wait, tx, server) = {
            let mut st = self.lock();
            let target = st
                .sessions
                .values()
                .find(|s| {
                    s.heartbeat
                        .as_ref()
                        .is_some_and(|hb| hb.approvals.iter().any(|a| a.id == id))
                })
                .map(|s| {
                    (
                        s.hello.session.clone(),
                        s.hello.pid,
                        s.tx.clone(),
                        s.hello.server.clone(),
                    )
                });
            let Some((session, pid, tx, server)) = target else {
                return Err(ApiError::new(
                    ErrorCode::NotFound,
                    format!(
                        "no call waits for approval `{id}` (answered already, timed out, or a wrong id: `warden approvals` lists them)"
                    ),
                ));
            };
            let cmd = self.next_id.fetch_add(1, Ordering::Relaxed);
            let (ack_tx, answer) = oneshot::channel();
            st.acks.insert(cmd, (session.clone(), ack_tx));
            (
                Waiting {
                    session,
                    pid,
                    id: cmd,
                    answer,
                },
                tx,
                server,
            )
        };
        let line = Message::Command(control::Command {
            id: wait.id,
            action: Action::Answer {
                approval: id.to_owned(),
                allow,
                always,
            },
        })
        .to_line();
        let sent = match tx {
            Some(tx) => tx.send(line).await.is_ok(),
            None => false,
        };
        let (ok, message) = if sent {
            let deadline = tokio::time::Instant::now() + self.opts.ack_timeout;
            self.await_ack(wait.id, wait.answer, deadline).await
        } else {
            self.lock().acks.remove(&wait.id);
            (
                false,
                "not connected (the bridge is stopped or reconnecting)".to_owned(),
            )
        };
        if ok {
            // Gone from the list now, not with the session's next heartbeat.
            let mut st = self.lock();
            if let Some(hb) = st
                .sessions
                .get_mut(&wait.session)
                .and_then(|s| s.heartbeat.as_mut())
            {
                hb.approvals.retain(|a| a.id != id);
            }
        }
        let outcome = CommandOutcome {
            ok,
            message: format!("{server}: {message}"),
            config: None,
            sessions: vec![SessionAck {
                session: wait.session,
                pid: wait.pid,
                ok,
                message,
            }],
        };
        Ok(outcome)
    }

    /// Forgets the `always` answers of `server` (one tool's, or all) in its pin file; running
    /// bridges follow the file and ask again.
    pub(super) fn forget_approvals(
        &self,
        server: &str,
        tool: Option<&str>,
    ) -> Result<CommandOutcome, ApiError> {
        let forgotten = warden_config::pins::forget_always(server, tool)
            .map_err(|e| ApiError::new(ErrorCode::Invalid, e))?;
        let message = if forgotten.is_empty() {
            format!("no tool of `{server}` was allowed for good")
        } else {
            format!(
                "forgot the always-allow of {} of `{server}`: calls of it are asked about again",
                forgotten.join(", ")
            )
        };
        Ok(CommandOutcome {
            ok: true,
            message,
            config: None,
            sessions: Vec::new(),
        })
    }

    /// Asks every session of `server` to restart it and waits for their acknowledgements.
    pub(super) async fn restart(&self, server: &str) -> CommandOutcome {
        let waits = self.expect_acks(server);
        if waits.is_empty() {
            return CommandOutcome {
                ok: false,
                message: format!(
                    "no live session of `{server}`: nothing to restart (its bridge starts the server when the IDE starts it)"
                ),
                config: None,
                sessions: Vec::new(),
            };
        }
        let mut sent = Vec::new();
        for (wait, tx) in waits {
            let line = Message::Command(control::Command {
                id: wait.id,
                action: Action::Restart {
                    server: server.to_owned(),
                },
            })
            .to_line();
            let ok = match tx {
                Some(tx) => tx.send(line).await.is_ok(),
                None => false,
            };
            if !ok {
                self.lock().acks.remove(&wait.id);
            }
            sent.push((wait, ok));
        }
        let mut acks = Vec::new();
        let deadline = tokio::time::Instant::now() + self.opts.ack_timeout;
        for (wait, was_sent) in sent {
            let (ok, message) = if was_sent {
                self.await_ack(wait.id, wait.answer, deadline).await
            } else {
                (
                    false,
                    "not connected (the bridge is stopped or reconnecting)".to_owned(),
                )
            };
            acks.push(SessionAck {
                session: wait.session,
                pid: wait.pid,
                ok,
                message,
            });
        }
        let done = acks.iter().filter(|a| a.ok).count();
        let outcome = CommandOutcome {
            ok: done == acks.len(),
            message: format!(
                "restart of `{server}`: acknowledged by {done} of {} sessions",
                acks.len()
            ),
            config: None,
            sessions: acks,
        };
        self.note_command(server, &outcome);
        outcome
    }

    /// Registers a command id and an acknowledgement waiter for every session of `server`.
    fn expect_acks(&self, server: &str) -> Vec<(Waiting, Option<Tx>)> {
        let mut st = self.lock();
        let targets: Vec<(String, u32, Option<Tx>)> = st
            .sessions
            .values()
            .filter(|s| s.hello.server == server)
            .map(|s| (s.hello.session.clone(), s.hello.pid, s.tx.clone()))
            .collect();
        let mut waits = Vec::new();
        for (session, pid, tx) in targets {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let (ack_tx, answer) = oneshot::channel();
            st.acks.insert(id, (session.clone(), ack_tx));
            let wait = Waiting {
                session,
                pid,
                id,
                answer,
            };
            waits.push((wait, tx));
        }
        waits
    }

    /// The answer to command `id`, or why there is none by `deadline`.
    async fn await_ack(
        &self,
        id: u64,
        rx: oneshot::Receiver<(bool, String)>,
        deadline: tokio::time::Instant,
    ) -> (bool, String) {
        match tokio::time::timeout_at(deadline, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => (false, "the session closed before answering".to_owned()),
            Err(_) => {
                self.lock().acks.remove(&id);
                (
                    false,
                    format!(
                        "no acknowledgement within {} s (is the bridge stuck?)",
                        self.opts.ack_timeout.as_secs()
                    ),
                )
            }
        }
    }

    fn note_command(&self, server: &str, outcome: &CommandOutcome) {
        let mut st = self.lock();
        let entry = HistoryEntry {
            server: server.to_owned(),
            session: None,
            event: Event {
                outcome: Some(if outcome.ok { "ok" } else { "error" }.into()),
                ..Event::new("command").detail(outcome.message.clone())
            },
            command: None,
        };
        self.record(&mut st, entry);
    }

    /// The limits of `server` in config.toml, with where each value comes from.
    pub(super) async fn limits(&self, server: String) -> Result<LimitsReport, ApiError> {
        let path = self.opts.config.clone();
        let seen: Vec<String> = self
            .lock()
            .servers
            .get(&server)
            .map(|s| s.metrics.tools.keys().cloned().collect())
            .unwrap_or_default();
        blocking(move || Ok(settings::limits_and_tools(path.as_deref(), &server, &seen))).await
    }

    /// `SetLimit`: checks the key and value, then edits like `set_key` (with `add` or
    /// `remove`, the list config.toml holds at the time of the edit).
    pub(super) async fn set_limit(
        self: &Arc<Self>,
        server: &str,
        key: &str,
        value: Option<serde_json::Value>,
        add: Vec<String>,
        remove: Vec<String>,
    ) -> Result<CommandOutcome, ApiError> {
        let Some(def) = warden_config::KEYS.iter().find(|k| k.name == key) else {
            return Err(ApiError::new(
                ErrorCode::Invalid,
                format!("`{key}` is not a config key (see docs/config.md)"),
            ));
        };
        let invalid = |problem: String| {
            ApiError::new(
                ErrorCode::Invalid,
                format!("`{key}`: {problem}. Fix: {}", def.fix),
            )
        };
        let change = match value {
            _ if !add.is_empty() || !remove.is_empty() => {
                if value.is_some() {
                    return Err(invalid(
                        "give a value, or items to add or remove, not both".into(),
                    ));
                }
                Change::List { add, remove }
            }
            None => Change::Remove,
            Some(v) => Change::Set(settings::to_toml(&v).map_err(invalid)?),
        };
        self.set_key(server, def.name, change).await
    }

    /// `SetToolPolicy`: `tool` moved to `policy` by its own entries, every list in one write
    /// (`flows::policy`).
    pub(super) async fn set_tool_policy(
        self: &Arc<Self>,
        server: &str,
        tool: &str,
        policy: PolicyKind,
    ) -> Result<CommandOutcome, ApiError> {
        let report = self.limits(server.to_owned()).await?;
        let Some(t) = report.tools.into_iter().find(|t| t.tool == tool) else {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!(
                    "`{server}` has no tool named {tool:?} that Warden knows of. Fix: check the name with `warden tools list {server}`, or let a client list its tools first"
                ),
            ));
        };
        self.set_key(
            server,
            "tools policy",
            Change::Tool {
                tool: t,
                to: policy,
            },
        )
        .await
    }

    /// Writes `[servers.<server>] <key> = <value>` (removes the key for `None`) and waits
    /// for the sessions to pick it up.
    pub(super) async fn set_key(
        self: &Arc<Self>,
        server: &str,
        key: &'static str,
        change: Change,
    ) -> Result<CommandOutcome, ApiError> {
        let Some(path) = self.opts.config.clone() else {
            return Err(ApiError::new(
                ErrorCode::Config,
                "no config file is known: set WARDEN_CONFIG (or use the default location) and start the supervisor again",
            ));
        };
        let events = self.subscribe();
        let edited_ms = now_ms();
        let shown = change.shown();
        let on = match &change {
            Change::Set(v) => v.as_bool(),
            _ => None,
        };
        let edit = {
            let path = path.clone();
            let server = server.to_owned();
            tokio::task::spawn_blocking(move || match change {
                Change::Set(v) => edit::set_server_key(&path, &server, key, v),
                Change::Remove => edit::remove_server_key(&path, &server, key),
                Change::List { add, remove } => {
                    edit::edit_server_list(&path, &server, key, &add, &remove)
                }
                Change::Tool { tool, to } => edit::edit_server_lists(&path, &server, |list| {
                    Ok(super::flows::policy::edits(&tool, to, list))
                }),
            })
            .await
            .map_err(|e| ApiError::new(ErrorCode::Io, e.to_string()))?
            .map_err(|e| ApiError::new(ErrorCode::Config, e.to_string()))?
        };
        if edit == Edit::Changed {
            self.emit(ApiEvent::ConfigChanged {
                server: server.to_owned(),
            });
        }
        let pickup = Pickup {
            server,
            key,
            shown,
            on,
            edit,
            edited_ms,
        };
        let verdicts = self.await_pickup(&pickup, events).await;
        let outcome = pickup.outcome(path, verdicts, self.opts.pickup_timeout);
        self.note_command(server, &outcome);
        Ok(outcome)
    }

    /// Waits until every session of the server has a verdict on the edit, or the pickup
    /// timeout; `events` is rechecked on every event (a reload or a refusal is one).
    async fn await_pickup(
        &self,
        pickup: &Pickup<'_>,
        mut events: broadcast::Receiver<Arc<ApiEvent>>,
    ) -> Vec<Verdict> {
        let deadline = tokio::time::Instant::now() + self.opts.pickup_timeout;
        loop {
            let verdicts = pickup.judge(&self.lock());
            if verdicts.iter().all(|(_, _, d)| d.is_some())
                || tokio::time::Instant::now() >= deadline
            {
                return verdicts;
            }
            match tokio::time::timeout_at(deadline, events.recv()).await {
                Err(_) => {}
                Ok(Err(broadcast::error::RecvError::Closed)) => return pickup.judge(&self.lock()),
                Ok(_) => continue,
            }
        }
    }
}

/// A command sent to one session, waiting for its acknowledgement.
struct Waiting {
    session: String,
    pid: u32,
    id: u64,
    answer: oneshot::Receiver<(bool, String)>,
}

/// An edit of config.toml the sessions of `server` are to pick up.
struct Pickup<'a> {
    server: &'a str,
    key: &'static str,
    /// The value as written, or `(default)` when the key was removed.
    shown: String,
    /// The value, when it is a flag.
    on: Option<bool>,
    edit: Edit,
    edited_ms: u64,
}

impl Pickup<'_> {
    /// Whether a session's heartbeat shows the value already (for the two flags it reports).
    fn running_with(&self, hb: &Heartbeat) -> bool {
        match (self.key, self.on) {
            ("debug", Some(on)) => hb.debug == on,
            ("force_fallback", Some(on)) => hb.fallback == on,
            _ => true,
        }
    }

    /// Which sessions picked it up: a reload after the edit, or the flag already set.
    fn judge(&self, st: &State) -> Vec<Verdict> {
        st.sessions
            .values()
            .filter(|s| s.hello.server == self.server)
            .map(|s| {
                let done = if let Some((_, why)) =
                    s.last_reject.as_ref().filter(|(t, _)| *t >= self.edited_ms)
                {
                    Some((false, format!("refused the edited file: {why}")))
                } else if s.last_reload_ms.is_some_and(|t| t >= self.edited_ms) {
                    Some((true, "reloaded config.toml".to_owned()))
                } else if self.edit == Edit::Unchanged
                    && s.heartbeat.as_ref().is_some_and(|hb| self.running_with(hb))
                {
                    Some((
                        true,
                        format!("already running with {} = {}", self.key, self.shown),
                    ))
                } else {
                    None
                };
                (s.hello.session.clone(), s.hello.pid, done)
            })
            .collect()
    }

    /// The outcome of the command, once the verdicts are in (`None`: not picked up in time).
    fn outcome(&self, path: PathBuf, verdicts: Vec<Verdict>, timeout: Duration) -> CommandOutcome {
        let (server, key, shown) = (self.server, self.key, &self.shown);
        let sessions: Vec<SessionAck> = verdicts
            .into_iter()
            .map(|(session, pid, done)| {
                let (ok, message) = done.unwrap_or_else(|| {
                    (
                        false,
                        format!(
                            "did not reload within {:.0} s (does it read another config file, or is it stuck?)",
                            timeout.as_secs_f64()
                        ),
                    )
                });
                SessionAck {
                    session,
                    pid,
                    ok,
                    message,
                }
            })
            .collect();
        let picked = sessions.iter().filter(|s| s.ok).count();
        let written = match self.edit {
            Edit::Changed => "written to",
            Edit::Unchanged => "already in",
        };
        let who = if sessions.is_empty() {
            format!("no live session of `{server}` (bridges started later read it)")
        } else {
            format!("picked up by {picked} of {} sessions", sessions.len())
        };
        CommandOutcome {
            ok: picked == sessions.len(),
            message: format!(
                "{key} = {shown} {written} {} [servers.{server}]; {who}",
                path.display()
            ),
            config: Some(path),
            sessions,
        }
    }
}

/// What a `SetLimit` does to its key.
pub(super) enum Change {
    Set(toml_edit::Value),
    /// The key is taken out (the server gets `[defaults]`'s or the built-in default).
    Remove,
    /// Items added to and taken out of the list the file holds when it is edited.
    List {
        add: Vec<String>,
        remove: Vec<String>,
    },
    /// A tool moved to a policy by its own entries in the three lists, at once.
    Tool {
        tool: ToolPolicy,
        to: PolicyKind,
    },
}

impl Change {
    /// The change as the outcome's message shows it.
    fn shown(&self) -> String {
        match self {
            Change::Set(v) => v.to_string().trim().to_owned(),
            Change::Remove => "(default)".to_owned(),
            Change::List { add, remove } => add
                .iter()
                .map(|a| format!("+{a:?}"))
                .chain(remove.iter().map(|r| format!("-{r:?}")))
                .collect::<Vec<_>>()
                .join(" "),
            Change::Tool { tool, to } => {
                let to = match to {
                    PolicyKind::Allow => "allow",
                    PolicyKind::Ask => "ask",
                    PolicyKind::Deny => "deny",
                };
                format!("{:?} to {to}", tool.tool)
            }
        }
    }
}
