//! What the supervisor reports: `warden status` (servers with health and metrics, sessions)
//! and the event history.

use std::time::Instant;

use super::api::{
    ApiEvent, HistoryEntry, NetworkDenial, PinState, ServerStatus, SessionState, SessionStatus,
    StatusReport, SupervisorInfo, ToolStatus,
};
use super::service::{ServerState, State, Supervisor};
use super::sessions::{derive_health, session_status};
use warden_wire::events::now_ms;

impl Supervisor {
    /// `warden status`.
    pub fn status(&self) -> StatusReport {
        // Servers of config.toml are known even before any session.
        let configured = self
            .opts
            .config
            .as_deref()
            .and_then(|p| warden_config::Config::load(p).ok());
        let now = Instant::now();
        let now_ms = now_ms();
        let mut st = self.lock();
        for name in configured.iter().flat_map(|c| c.server_names()) {
            st.servers.entry(name.to_owned()).or_default();
        }
        let sessions: Vec<SessionStatus> = st
            .sessions
            .values()
            .map(|s| session_status(s, now))
            .collect();
        let servers = st
            .servers
            .iter()
            .map(|(name, server)| server_status(&st, name, server, &sessions, now_ms))
            .collect();
        StatusReport {
            servers,
            sessions,
            supervisor: SupervisorInfo {
                pid: std::process::id(),
                socket: self.opts.socket.clone(),
                config: self.opts.config.clone(),
                history: self.opts.history.clone(),
                started_ms: self.started_ms,
                history_events: st.history.len(),
            },
        }
    }

    /// Streams the row of each server that changed since it was last streamed: the window
    /// shows the supervisor's own figures, so the numbers on one row agree with each other.
    pub(super) fn stream_rows(&self, st: &mut State, now: Instant) {
        if !self.streaming() {
            return;
        }
        let sessions: Vec<SessionStatus> = st
            .sessions
            .values()
            .map(|s| session_status(s, now))
            .collect();
        let now_ms = now_ms();
        let names: Vec<String> = st.servers.keys().cloned().collect();
        for name in names {
            let row = server_status(st, &name, &st.servers[&name], &sessions, now_ms);
            let Some(server) = st.servers.get_mut(&name) else {
                continue;
            };
            if server.row.as_ref() != Some(&row) {
                server.row = Some(row.clone());
                self.emit(ApiEvent::Server {
                    server: Box::new(row),
                });
            }
        }
    }

    /// The last `limit` (default 1000) history entries, of one server and since a time if given.
    pub(super) fn history(
        &self,
        server: Option<&str>,
        since_ms: Option<u64>,
        limit: Option<usize>,
    ) -> Vec<HistoryEntry> {
        self.lock()
            .history
            .query(server, since_ms, limit.unwrap_or(1000))
    }
}

/// The row of server `name`: its health, metrics and live sessions.
fn server_status(
    st: &State,
    name: &str,
    server: &ServerState,
    sessions: &[SessionStatus],
    now_ms: u64,
) -> ServerStatus {
    let mine: Vec<&SessionStatus> = sessions.iter().filter(|s| s.server == name).collect();
    let (health, reason) = derive_health(st, name, now_ms);
    let m = &server.metrics;
    let [p50, p95, p99] = m.percentiles([50.0, 95.0, 99.0]);
    // Down by a failed probe (no session, and no later failed start): the probe's code.
    let probe_code = server
        .probe
        .as_ref()
        .filter(|p| !p.ok && mine.is_empty())
        .filter(|p| m.start_failure().is_none_or(|f| f.ts_ms < p.ts_ms))
        .and_then(|p| p.code.clone());
    ServerStatus {
        name: name.to_owned(),
        health,
        reason,
        sessions: mine.len(),
        unresponsive: mine
            .iter()
            .filter(|s| s.state != SessionState::Live)
            .count(),
        inflight: mine.iter().map(|s| s.inflight.len()).sum(),
        p50_ms: p50,
        p95_ms: p95,
        p99_ms: p99,
        requests: m.requests,
        errors: m.errors,
        timeouts: m.timeouts,
        retries: m.retries,
        restarts: m.restarts,
        bytes_in: m.bytes_in,
        bytes_out: m.bytes_out,
        last_error: m.last_error.as_ref().map(|(_, e)| e.clone()),
        code: probe_code.or_else(|| m.last_error_code.clone()),
        last_seen_ms: m.last_seen_ms,
        command: server.command.clone(),
        circuit_open: mine.iter().any(|s| s.circuit_open),
        fallback: mine.iter().any(|s| s.fallback),
        debug: mine.iter().any(|s| s.debug),
        sandbox: mine
            .iter()
            .map(|s| s.sandbox.clone())
            .find(|m| m != "off")
            .unwrap_or_else(warden_control::sandbox_off),
        last_probe: server.probe.clone(),
        tools: tools(name, m),
        latency: m.series(now_ms),
        network_denied: m
            .network_denied
            .iter()
            .map(|(ts_ms, host, port)| NetworkDenial {
                host: host.clone(),
                port: *port,
                ts_ms: *ts_ms,
            })
            .collect(),
    }
}

/// Each called tool's figures, and its state against the server's pin file (read here, so an
/// approval shows at once); tools waiting for approval are listed even before any call.
fn tools(server: &str, m: &super::metrics::Metrics) -> Vec<ToolStatus> {
    use warden_config::pins::{PinFile, PinState as Pin};
    let file = PinFile::load(&warden_config::pins::path(server))
        .ok()
        .flatten();
    let pin = |tool: &str| match file.as_ref().map(|f| f.state(tool)) {
        None => PinState::Off,
        Some(Pin::Approved) => PinState::Approved,
        Some(Pin::Changed) => PinState::Changed,
        Some(Pin::New) => PinState::New,
    };
    let mut rows: Vec<ToolStatus> = m
        .tools
        .iter()
        .map(|(name, t)| {
            let [p50_ms, p95_ms] = t.p50_p95();
            ToolStatus {
                name: name.clone(),
                calls: t.calls,
                errors: t.errors,
                timeouts: t.timeouts,
                p50_ms,
                p95_ms,
                bytes_out: t.bytes_out,
                pin: pin(name),
                diff: file.as_ref().and_then(|f| f.diff(name)),
            }
        })
        .collect();
    let waiting = file.iter().flat_map(|f| f.pending.keys());
    for name in waiting {
        if !m.tools.contains_key(name) {
            rows.push(ToolStatus {
                name: name.clone(),
                calls: 0,
                errors: 0,
                timeouts: 0,
                p50_ms: 0,
                p95_ms: 0,
                bytes_out: 0,
                pin: pin(name),
                diff: file.as_ref().and_then(|f| f.diff(name)),
            });
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::super::service::Options;
    use super::*;
    use crate::api::Health;
    use warden_wire::events::Event;

    /// A bridge that could not start its server while no supervisor ran: the next one lists
    /// the server down, from the bridge's log, with the command, the cause and the code.
    #[test]
    fn a_start_failure_logged_meanwhile_is_down_until_a_start() {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("logs");
        let failed = Event {
            code: Some("W-SPAWN-NOT-FOUND".into()),
            command: Some("nosuch-server --stdio".into()),
            cause: Some("not found on PATH (/usr/bin:/bin)".into()),
            stderr_tail: Some(String::new()),
            fix: Some("install it, or give its absolute path".into()),
            ..Event::new("spawn_failed")
        };
        let mut line = serde_json::to_value(&failed).unwrap();
        line["server"] = "gh".into();
        line["session"] = 4242.into();
        std::fs::create_dir_all(&logs).unwrap();
        std::fs::write(logs.join("gh.jsonl"), format!("{line}\n")).unwrap();
        let opts = Options {
            socket: dir.path().join("control.sock"),
            config: None,
            history: Some(dir.path().join("history.jsonl")),
            logs: Some(logs),
            auto_rewrite_file: None,
            ..Options::from_env()
        };

        let sup = Supervisor::new(opts.clone()).unwrap();
        sup.tick(Instant::now());
        let gh = sup.status().servers.into_iter().find(|s| s.name == "gh");
        let gh = gh.expect("listed without ever having a session");
        assert_eq!(gh.health, Health::Down);
        let summary = "nosuch-server --stdio: not found on PATH (/usr/bin:/bin)";
        assert_eq!(gh.last_error.as_deref(), Some(summary));
        assert_eq!(gh.code.as_deref(), Some("W-SPAWN-NOT-FOUND"));
        assert!(gh.reason.contains(summary), "{}", gh.reason);
        assert!(gh.reason.contains("install it"), "{}", gh.reason);
        let health = sup.history(Some("gh"), None, None);
        assert_eq!(
            health.iter().map(|e| &*e.event.kind).collect::<Vec<_>>(),
            ["spawn_failed", "health"],
            "taken in through the history, and judged"
        );
        sup.lock().history.close();
        drop(sup);

        // The next start has it in its history and does not take it in twice; a server
        // that started since is no longer down.
        let sup = Supervisor::new(opts).unwrap();
        assert_eq!(sup.history(Some("gh"), None, None).len(), 2);
        sup.tick(Instant::now());
        assert_eq!(sup.status().servers[0].health, Health::Down);
        {
            let mut st = sup.lock();
            let entry = HistoryEntry {
                server: "gh".into(),
                session: Some("5-6".into()),
                event: Event::new("session_start"),
                command: None,
            };
            sup.record(&mut st, entry);
        }
        let gh = &sup.status().servers[0];
        assert_eq!(gh.health, Health::Idle, "{}", gh.reason);
        assert_eq!(
            gh.code.as_deref(),
            Some("W-SPAWN-NOT-FOUND"),
            "still the last error"
        );
    }
}
