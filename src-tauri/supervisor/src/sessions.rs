//! The session registry: bridges say hello on the control socket, heartbeat every
//! [`HEARTBEAT_MS`](warden_control::HEARTBEAT_MS), stream events and end; [`Supervisor::tick`]
//! marks the silent ones unresponsive, reaps those whose pid is gone, and recomputes health.
//!
//! [`Supervisor::run`] ticks every [`TICK`](super::TICK) (250 ms). A live session silent for longer
//! than [`UNRESPONSIVE_AFTER`] (three heartbeats and a quarter: 6.5 s) is `unresponsive` until it
//! heartbeats again. A session whose bridge is gone is reaped, and a zombie counts as gone: by the
//! peer's pidfd where there is one, else by its pid (on Linux, its `/proc` state). A bridge that
//! closes its control connection without ending its session leaves it `disconnected`, kept until
//! its pid is gone. Each tick also streams, while anyone subscribes, the row of each server that
//! changed since it was last streamed, as `ApiEvent::Server`.

use std::sync::atomic::Ordering;
use std::time::Instant;

use super::api::{ApiEvent, Health, HistoryEntry, InflightStatus, SessionState, SessionStatus};
use super::health::{self, UNRESPONSIVE_AFTER};
use super::orphans;
use super::service::{ServerState, Session, State, Supervisor, Tx};
use warden_control::socket::Peer;
use warden_control::{Heartbeat, Hello};
use warden_wire::events::{Event, now_ms};

impl Session {
    /// Whether the session's bridge still runs: by the socket peer's pidfd where there is
    /// one, else by its pid (which may be another process's by now).
    fn alive(&self) -> bool {
        self.peer
            .alive()
            .unwrap_or_else(|| orphans::alive(self.live_pid))
    }
}

impl Supervisor {
    pub(super) fn new_conn(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    /// A bridge said hello on connection `conn`; `tx` carries lines to it.
    pub(super) fn on_hello(&self, conn: u64, hello: Hello, peer: &Peer, tx: Tx) {
        let mut st = self.lock();
        let back = st
            .sessions
            .get(&hello.session)
            .is_some_and(|s| s.state != SessionState::Live || s.conn != conn);
        let server = hello.server.clone();
        let detail = format!(
            "bridge pid {}{}: {}",
            hello.pid,
            if back { " (reconnected)" } else { "" },
            hello.command.join(" ")
        );
        let before = st.sessions.remove(&hello.session);
        let session = Session {
            stderr_tail: before
                .as_ref()
                .map(|s| s.stderr_tail.clone())
                .unwrap_or_default(),
            heartbeat: before.and_then(|s| s.heartbeat),
            live_pid: peer.pid().unwrap_or(hello.pid),
            peer: peer.clone(),
            hello,
            last_report: Instant::now(),
            state: SessionState::Live,
            tx: Some(tx),
            conn,
            ended: false,
            last_reload_ms: None,
            last_reject: None,
        };
        let id = session.hello.session.clone();
        let command = session.hello.command.clone();
        let status = session_status(&session, Instant::now());
        st.sessions.insert(id.clone(), session);
        st.servers.entry(server.clone()).or_default().command = Some(command.clone());
        let entry = HistoryEntry {
            server,
            session: Some(id),
            event: Event::new("session_open").detail(detail),
            command: Some(command),
        };
        self.record(&mut st, entry);
        drop(st);
        self.emit(ApiEvent::SessionOpened { session: status });
    }

    pub(super) fn on_heartbeat(&self, session: &str, hb: Heartbeat) {
        let mut st = self.lock();
        let Some(s) = st.sessions.get_mut(session) else {
            return;
        };
        s.last_report = Instant::now();
        let mut hb = hb;
        if let Some(tail) = hb.stderr_tail.take() {
            s.stderr_tail = tail;
        }
        s.heartbeat = Some(hb);
        let back = s.state == SessionState::Unresponsive;
        s.state = SessionState::Live;
        let status = session_status(s, Instant::now());
        if back {
            let entry = HistoryEntry {
                server: status.server.clone(),
                session: Some(status.id.clone()),
                event: Event::new("session_responsive").detail("heartbeats again"),
                command: None,
            };
            self.record(&mut st, entry);
        }
        drop(st);
        self.emit(ApiEvent::SessionUpdated { session: status });
    }

    pub(super) fn on_event(&self, session: &str, event: Event) {
        let mut st = self.lock();
        let Some(s) = st.sessions.get_mut(session) else {
            return;
        };
        match &*event.kind {
            "session_end" => s.ended = true,
            "config_reloaded" => s.last_reload_ms = Some(event.ts_ms),
            "config_rejected" => {
                s.last_reject = Some((event.ts_ms, event.detail.clone().unwrap_or_default()))
            }
            _ => {}
        }
        let entry = HistoryEntry {
            server: s.hello.server.clone(),
            session: Some(session.to_owned()),
            event,
            command: None,
        };
        self.record(&mut st, entry);
    }

    pub(super) fn on_ack(&self, id: u64, ok: bool, message: String) {
        if let Some((_, tx)) = self.lock().acks.remove(&id) {
            let _ = tx.send((ok, message));
        }
    }

    /// The connection of a bridge closed.
    pub(super) fn on_close(&self, conn: u64, session: &str) {
        let mut st = self.lock();
        let Some(s) = st.sessions.get_mut(session) else {
            return;
        };
        if s.conn != conn {
            return;
        }
        if s.ended {
            let s = st.sessions.remove(session);
            if let Some(s) = s {
                let reason = "the session ended (its client closed)".to_owned();
                self.close(&mut st, &s, "session_closed", reason);
            }
        } else {
            s.tx = None;
            s.state = SessionState::Disconnected;
            let entry = HistoryEntry {
                server: s.hello.server.clone(),
                session: Some(session.to_owned()),
                event: Event::new("session_disconnected").detail(format!(
                    "bridge pid {} closed the control connection without ending its session",
                    s.hello.pid
                )),
                command: None,
            };
            let status = session_status(s, Instant::now());
            self.record(&mut st, entry);
            drop(st);
            self.emit(ApiEvent::SessionUpdated { session: status });
        }
    }

    fn close(&self, st: &mut State, s: &Session, kind: &'static str, reason: String) {
        let pending: Vec<u64> = st
            .acks
            .iter()
            .filter(|(_, (session, _))| *session == s.hello.session)
            .map(|(id, _)| *id)
            .collect();
        for id in pending {
            if let Some((_, tx)) = st.acks.remove(&id) {
                let _ = tx.send((false, reason.clone()));
            }
        }
        let entry = HistoryEntry {
            server: s.hello.server.clone(),
            session: Some(s.hello.session.clone()),
            event: Event::new(kind).detail(reason.clone()),
            command: None,
        };
        self.record(st, entry);
        self.emit(ApiEvent::SessionClosed {
            session: s.hello.session.clone(),
            server: s.hello.server.clone(),
            reason,
        });
    }

    /// Judges sessions (unresponsive, reaped) and recomputes health. Called every
    /// [`TICK`](super::TICK) by [`Supervisor::run`]; a host that serves the socket itself
    /// calls it.
    pub fn tick(&self, now: Instant) {
        let mut st = self.lock();
        self.judge_sessions(&mut st, now);
        self.judge_health(&mut st);
        self.stream_rows(&mut st, now);
    }

    /// Reaps the sessions whose pid is gone and marks the silent ones unresponsive.
    fn judge_sessions(&self, st: &mut State, now: Instant) {
        let mut gone = Vec::new();
        let mut stuck = Vec::new();
        for (id, s) in &mut st.sessions {
            if !s.alive() {
                gone.push(id.clone());
            } else if s.state == SessionState::Live
                && now.saturating_duration_since(s.last_report) > UNRESPONSIVE_AFTER
            {
                s.state = SessionState::Unresponsive;
                stuck.push((
                    s.hello.server.clone(),
                    id.clone(),
                    now.saturating_duration_since(s.last_report),
                    session_status(s, now),
                ));
            }
        }
        for id in gone {
            if let Some(s) = st.sessions.remove(&id) {
                let reason = format!("bridge pid {} is gone", s.live_pid);
                self.close(st, &s, "session_reaped", reason);
            }
        }
        for (server, id, silent, status) in stuck {
            let entry = HistoryEntry {
                server,
                session: Some(id),
                event: Event::new("session_unresponsive").detail(format!(
                    "no heartbeat for {:.1} s (three missed): the bridge is stopped or stuck",
                    silent.as_secs_f64()
                )),
                command: None,
            };
            self.record(st, entry);
            self.emit(ApiEvent::SessionUpdated { session: status });
        }
    }

    /// Recomputes every server's health; a change is recorded and streamed.
    fn judge_health(&self, st: &mut State) {
        let now_ms = now_ms();
        let names: Vec<String> = st.servers.keys().cloned().collect();
        for name in names {
            let (health, reason) = derive_health(st, &name, now_ms);
            let Some(server) = st.servers.get_mut(&name) else {
                continue;
            };
            let changed = server.health.as_ref().is_none_or(|(h, _)| *h != health);
            server.health = Some((health, reason.clone()));
            if changed {
                let entry = HistoryEntry {
                    server: name.clone(),
                    session: None,
                    event: Event {
                        outcome: Some(health.as_str().into()),
                        ..Event::new("health").detail(reason.clone())
                    },
                    command: None,
                };
                st.history.push(entry.clone());
                self.emit(ApiEvent::Event { entry });
                self.emit(ApiEvent::Health {
                    server: name,
                    health,
                    reason,
                });
            }
        }
    }
}

pub(super) fn derive_health(st: &State, name: &str, now_ms: u64) -> (Health, String) {
    let empty = ServerState::default();
    let server = st.servers.get(name).unwrap_or(&empty);
    let mine: Vec<&Session> = st
        .sessions
        .values()
        .filter(|s| s.hello.server == name)
        .collect();
    health::derive(&health::Inputs {
        now_ms,
        sessions: mine.len(),
        unresponsive: mine
            .iter()
            .filter(|s| s.state != SessionState::Live)
            .count(),
        oldest_session_ms: mine.iter().map(|s| s.hello.started_ms).min(),
        circuit_open: mine
            .iter()
            .any(|s| s.heartbeat.as_ref().is_some_and(|h| h.circuit_open)),
        fallback: mine
            .iter()
            .any(|s| s.heartbeat.as_ref().is_some_and(|h| h.fallback)),
        metrics: &server.metrics,
        probe: server.probe.as_ref(),
    })
}

pub(super) fn session_status(s: &Session, now: Instant) -> SessionStatus {
    let since = now.saturating_duration_since(s.last_report).as_millis() as u64;
    // While a session is stopped its requests keep ageing: count the silence in.
    let hb = s.heartbeat.as_ref();
    SessionStatus {
        id: s.hello.session.clone(),
        server: s.hello.server.clone(),
        pid: s.hello.pid,
        client: hb.and_then(|h| h.client.clone()),
        era: hb.and_then(|h| h.era),
        adapted: hb.is_some_and(|h| h.adapted),
        last_heartbeat_ms: since,
        state: s.state,
        server_pid: hb.and_then(|h| h.server_pid),
        generation: hb.map_or(0, |h| h.generation),
        circuit_open: hb.is_some_and(|h| h.circuit_open),
        fallback: hb.is_some_and(|h| h.fallback),
        debug: hb.is_some_and(|h| h.debug),
        sandbox: hb.map_or_else(warden_control::sandbox_off, |h| h.sandbox.clone()),
        config_hash: s.hello.config_hash.clone(),
        started_ms: s.hello.started_ms,
        command: s.hello.command.clone(),
        stderr_tail: s.stderr_tail.clone(),
        approvals: hb
            .map(|h| h.approvals.iter().map(|a| a.id.clone()).collect())
            .unwrap_or_default(),
        inflight: hb
            .map(|h| {
                h.inflight
                    .iter()
                    .map(|r| InflightStatus {
                        id: r.id.clone(),
                        method: r.method.clone(),
                        tool: r.tool.clone(),
                        age_ms: r.age_ms + since,
                        idle_ms: r.idle_ms + since,
                        progress: r.progress.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}
