//! The supervisor's own checks, recorded in the history: probes (asked for, scheduled, or
//! pre-warming a package cache) and orphan sweeps.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use super::api::{ApiError, ApiEvent, ErrorCode, HistoryEntry, Orphan, ProbeReport, StopResult};
use super::known::unknown_command_message;
use super::service::Supervisor;
use super::{orphans, probe};
use warden_wire::events::Event;

impl Supervisor {
    /// `Probe`: the command given, else the known command of `server`.
    pub(super) async fn probe(
        &self,
        probe: crate::api::op::Probe,
    ) -> Result<ProbeReport, ApiError> {
        let crate::api::op::Probe {
            server,
            command,
            timeout_ms,
            env,
            cwd,
        } = probe;
        if let Some(dir) = cwd.as_deref().filter(|d| !d.is_absolute() || !d.is_dir()) {
            return Err(ApiError::new(
                ErrorCode::Invalid,
                format!(
                    "{} is not an absolute path of a folder, so the probe has nowhere to run. Fix: give the folder the server runs in",
                    dir.display()
                ),
            ));
        }
        let command = match (command, &server) {
            (Some(c), _) if !c.is_empty() => c,
            (_, Some(name)) => self
                .command_of(name)
                .ok_or_else(|| ApiError::new(ErrorCode::NotFound, unknown_command_message(name)))?,
            _ => {
                return Err(ApiError::new(
                    ErrorCode::Invalid,
                    "give a server name or a command to probe: `warden probe --server NAME` or `warden probe -- COMMAND [ARG]...`",
                ));
            }
        };
        let timeout = timeout_ms.map_or(self.opts.probe_timeout, Duration::from_millis);
        let env: Vec<(String, String)> = env.into_iter().collect();
        Ok(self
            .run_probe(server, command, &env, cwd.as_deref(), timeout)
            .await)
    }

    pub(super) async fn run_probe(
        &self,
        server: Option<String>,
        command: Vec<String>,
        env: &[(String, String)],
        cwd: Option<&Path>,
        timeout: Duration,
    ) -> ProbeReport {
        let report = probe::probe(server, &command, env, cwd, timeout).await;
        self.note_probe(&report);
        report
    }

    /// A probe's report in the server's row, the history and the event stream.
    pub(super) fn note_probe(&self, report: &ProbeReport) {
        if let Some(name) = &report.server {
            let mut st = self.lock();
            let detail = match (&report.error, report.tools) {
                (Some(e), _) => e.clone(),
                (None, tools) => format!(
                    "{} tools, cold start {} ms",
                    tools.unwrap_or(0),
                    report.cold_start_ms.unwrap_or(0)
                ),
            };
            let entry = HistoryEntry {
                server: name.clone(),
                session: None,
                event: Event {
                    outcome: Some(if report.ok { "ok" } else { "error" }.into()),
                    duration_ms: report.cold_start_ms,
                    ..Event::new("probe").detail(detail)
                },
                command: Some(report.command.clone()),
            };
            let s = st.servers.entry(name.clone()).or_default();
            s.probe = Some(report.clone());
            s.command
                .get_or_insert_with(|| entry.command.clone().unwrap_or_default());
            self.record(&mut st, entry);
        }
        self.emit(ApiEvent::Probe {
            report: report.clone(),
        });
    }

    fn orphan_knowledge(&self) -> orphans::Known {
        let st = self.lock();
        let mut sessions: HashMap<String, String> = st
            .history
            .iter()
            .filter_map(|e| e.session.clone().map(|s| (s, e.server.clone())))
            .collect();
        sessions.extend(
            st.sessions
                .values()
                .map(|s| (s.hello.session.clone(), s.hello.server.clone())),
        );
        orphans::Known {
            sessions,
            commands: st
                .servers
                .iter()
                .filter_map(|(n, s)| s.command.clone().map(|c| (n.clone(), c)))
                .collect(),
        }
    }

    pub(super) async fn find_orphans(&self) -> Vec<Orphan> {
        let known = self.orphan_knowledge();
        let found = tokio::task::spawn_blocking(move || orphans::scan(&known))
            .await
            .unwrap_or_default();
        let mut st = self.lock();
        let new: Vec<Orphan> = found
            .iter()
            .filter(|o| !st.orphans.iter().any(|p| p.pid == o.pid))
            .cloned()
            .collect();
        st.orphans = found.clone();
        for o in &new {
            let entry = HistoryEntry {
                server: o.server.clone().unwrap_or_else(|| "(unknown)".to_owned()),
                session: o.session.clone(),
                event: Event::new("orphan").detail(format!(
                    "pid {} ({}): {}",
                    o.pid,
                    o.command.join(" "),
                    o.reason
                )),
                command: None,
            };
            self.record(&mut st, entry);
        }
        drop(st);
        if !new.is_empty() {
            self.emit(ApiEvent::Orphans {
                orphans: found.clone(),
            });
        }
        found
    }

    pub(super) async fn stop_orphans(&self, pids: &[u32]) -> Vec<StopResult> {
        let known = self.orphan_knowledge();
        let results = orphans::stop(pids, &known).await;
        let mut st = self.lock();
        for r in &results {
            let server = st
                .orphans
                .iter()
                .find(|o| o.pid == r.pid)
                .and_then(|o| o.server.clone())
                .unwrap_or_else(|| "(unknown)".to_owned());
            let entry = HistoryEntry {
                server,
                session: None,
                event: Event {
                    outcome: Some(if r.ok { "ok" } else { "error" }.into()),
                    ..Event::new("orphan_stopped").detail(format!("pid {}: {}", r.pid, r.message))
                },
                command: None,
            };
            self.record(&mut st, entry);
        }
        st.orphans
            .retain(|o| !results.iter().any(|r| r.ok && r.pid == o.pid));
        results
    }
}
