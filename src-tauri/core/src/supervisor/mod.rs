//! The supervisor: a library service hosted by the tray app or, headless, by `warden daemon`.
//! It never relays MCP traffic; it watches.
//!
//! - Sessions: each bridge connects to the control socket, says hello and heartbeats every
//!   [`HEARTBEAT_MS`]; a session that misses three heartbeats is `unresponsive`, one whose
//!   pid is gone is reaped ([`State`] keeps them; [`Supervisor::tick`] judges them).
//! - Health and metrics per server ([`health`], [`metrics`]), from the events bridges stream.
//! - The event history ([`history`]), in memory and in `$WARDEN_STATE_DIR/history.jsonl`, so a
//!   restarted supervisor shows the last hours.
//! - Commands: restart (sent to the sessions, acknowledged), fallback and debug (written to
//!   config.toml with a format-preserving edit; running bridges pick it up, and the outcome
//!   says which did).
//! - Probes ([`probe`]), scheduled or asked for, and pre-warming of `npx`/`uvx` caches.
//! - The orphan sweeper ([`orphans`]).
//!
//! Everything is served through one typed API ([`api`]): [`Supervisor::handle`] and
//! [`Supervisor::subscribe`] in-process, the same enums on the socket ([`serve`], and
//! [`client`] for the command line).

pub mod api;
pub mod client;
pub mod config_edit;
pub mod health;
pub mod history;
mod ide;
pub mod metrics;
pub mod orphans;
pub mod probe;
mod serve;
pub mod settings;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::{broadcast, mpsc, oneshot};

use crate::control::{self, Action, HEARTBEAT_MS, Heartbeat, Hello, Message};
use crate::events::Event;
use api::{
    ApiError, ApiEvent, CommandOutcome, ErrorCode, Health, HistoryEntry, InflightStatus,
    KnownServer, Orphan, ProbeReport, Request, Response, ServerStatus, SessionAck, SessionState,
    SessionStatus, StatusReport, SupervisorInfo,
};
use history::History;
use metrics::Metrics;

/// A session that has not reported for this long has missed three heartbeats (plus a margin
/// for a late one).
pub const UNRESPONSIVE_AFTER: Duration = Duration::from_millis(3 * HEARTBEAT_MS + HEARTBEAT_MS / 4);
/// How often sessions are judged and health is recomputed.
pub const TICK: Duration = Duration::from_millis(250);

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// What to do with orphans found by the sweeper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OrphanPolicy {
    /// Do not sweep.
    Off,
    /// Report them (status, events, history); stop them only when asked.
    #[default]
    Report,
    /// Stop them as soon as they are found.
    Stop,
}

#[derive(Debug, Clone)]
pub struct Options {
    pub socket: PathBuf,
    /// config.toml that fallback and debug commands edit.
    pub config: Option<PathBuf>,
    /// The persisted history; `None` keeps it in memory only.
    pub history: Option<PathBuf>,
    /// How much of the persisted history is loaded at start.
    pub horizon: Duration,
    /// Probe every known server this often; `None`: only when asked.
    pub probe_interval: Option<Duration>,
    /// Probe once at start every known server run by `npx`/`uvx`-style commands.
    pub prewarm: bool,
    pub orphan_policy: OrphanPolicy,
    pub orphan_interval: Duration,
    /// How long a restart waits for each session's acknowledgement.
    pub ack_timeout: Duration,
    /// How long a fallback/debug command waits for sessions to pick up the edit.
    pub pickup_timeout: Duration,
    pub probe_timeout: Duration,
    /// The `warden` binary written into wrapped IDE config entries.
    pub warden_bin: Option<PathBuf>,
    /// Watch the IDE config files (new servers, reverts; auto-rewrite when switched on).
    pub watch_clients: bool,
    /// Where the auto-rewrite switch is kept across restarts (`on` or `off`).
    pub auto_rewrite_file: Option<PathBuf>,
}

impl Options {
    /// The defaults, with the paths of the environment (`WARDEN_SOCKET`, `WARDEN_CONFIG`,
    /// `WARDEN_STATE_DIR`).
    pub fn from_env() -> Options {
        Options {
            socket: control::socket::socket_path(),
            config: crate::config::default_path(),
            history: Some(history::default_path()),
            horizon: Duration::from_secs(6 * 3600),
            probe_interval: None,
            prewarm: false,
            orphan_policy: OrphanPolicy::Report,
            orphan_interval: Duration::from_secs(30),
            ack_timeout: Duration::from_secs(5),
            pickup_timeout: Duration::from_millis(2 * HEARTBEAT_MS + 1000),
            probe_timeout: probe::DEFAULT_TIMEOUT,
            warden_bin: None,
            watch_clients: false,
            auto_rewrite_file: Some(crate::paths::state_dir().join("auto-rewrite")),
        }
    }
}

/// The service. Cheap to share (`Arc`); every method is safe to call from any task.
pub struct Supervisor {
    opts: Options,
    state: Mutex<State>,
    events: broadcast::Sender<ApiEvent>,
    next_id: AtomicU64,
    next_conn: AtomicU64,
    started_ms: u64,
    watcher: Mutex<Option<crate::clients::ClientWatcher>>,
}

/// Lines to one bridge.
type Tx = mpsc::Sender<Vec<u8>>;
/// A session, its pid, and whether it picked up an edit (and what it said), if known yet.
type Verdict = (String, u32, Option<(bool, String)>);

struct Session {
    hello: Hello,
    /// The pid whose life is the session's: the socket peer's, else the hello's.
    live_pid: u32,
    heartbeat: Option<Heartbeat>,
    last_report: Instant,
    state: SessionState,
    /// Lines to the bridge; `None` while disconnected.
    tx: Option<Tx>,
    conn: u64,
    ended: bool,
    last_reload_ms: Option<u64>,
    last_reject: Option<(u64, String)>,
    /// The end of the server's stderr, as last reported.
    stderr_tail: String,
}

#[derive(Default)]
struct ServerState {
    metrics: Metrics,
    command: Option<Vec<String>>,
    health: Option<(Health, String)>,
    probe: Option<ProbeReport>,
}

struct State {
    sessions: BTreeMap<String, Session>,
    servers: BTreeMap<String, ServerState>,
    history: History,
    /// Commands sent to bridges and not yet acknowledged: id → (session, waiter).
    acks: HashMap<u64, (String, oneshot::Sender<(bool, String)>)>,
    orphans: Vec<Orphan>,
}

impl Supervisor {
    /// A supervisor with its history loaded; nothing runs until [`Supervisor::run`] (or the
    /// host calls [`Supervisor::tick`] and serves a listener itself).
    pub fn new(opts: Options) -> std::io::Result<Arc<Supervisor>> {
        let since = now_ms().saturating_sub(opts.horizon.as_millis() as u64);
        let history = match &opts.history {
            Some(path) => History::open(path, since)?,
            None => History::in_memory(),
        };
        let mut servers: BTreeMap<String, ServerState> = BTreeMap::new();
        for entry in history.iter().filter(|e| !is_pseudo_server(&e.server)) {
            let s = servers.entry(entry.server.clone()).or_default();
            s.metrics.record(&entry.event);
            if let Some(c) = &entry.command {
                s.command = Some(c.clone());
            }
        }
        let (events, _) = broadcast::channel(1024);
        Ok(Arc::new(Supervisor {
            opts,
            state: Mutex::new(State {
                sessions: BTreeMap::new(),
                servers,
                history,
                acks: HashMap::new(),
                orphans: Vec::new(),
            }),
            events,
            next_id: AtomicU64::new(1),
            next_conn: AtomicU64::new(1),
            started_ms: now_ms(),
            watcher: Mutex::new(None),
        }))
    }

    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// The live event stream.
    pub fn subscribe(&self) -> broadcast::Receiver<ApiEvent> {
        self.events.subscribe()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn emit(&self, event: ApiEvent) {
        let _ = self.events.send(event);
    }

    /// Binds the socket and serves it, with the periodic work (session judging, probes,
    /// pre-warm, orphan sweeps), until `shutdown` completes; then removes the socket.
    pub async fn run(self: &Arc<Self>, shutdown: impl Future<Output = ()>) -> std::io::Result<()> {
        let listener = control::socket::bind(&self.opts.socket).await?;
        if self.opts.watch_clients {
            self.start_client_watch();
        }
        let tasks = [
            tokio::spawn(serve::serve(Arc::clone(self), listener)),
            tokio::spawn(Arc::clone(self).ticker()),
            tokio::spawn(Arc::clone(self).prober()),
            tokio::spawn(Arc::clone(self).sweeper()),
        ];
        shutdown.await;
        for t in &tasks {
            t.abort();
        }
        let _ = std::fs::remove_file(&self.opts.socket);
        if let Some(w) = self.watcher().take() {
            w.stop();
        }
        self.lock().history.close();
        Ok(())
    }

    fn watcher(&self) -> MutexGuard<'_, Option<crate::clients::ClientWatcher>> {
        self.watcher.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts the IDE config watcher; its reports become events and history.
    fn start_client_watch(self: &Arc<Self>) {
        let Some(warden) = self.opts.warden_bin.clone() else {
            tracing::warn!("not watching IDE configs: the path of the warden binary is unknown");
            return;
        };
        let env = match ide::env() {
            Ok(env) => env,
            Err(e) => {
                tracing::warn!("not watching IDE configs: {}", e.message);
                return;
            }
        };
        let mut opts = crate::clients::WatchOptions::new(warden);
        opts.auto_rewrite = self.saved_auto_rewrite();
        let me = Arc::downgrade(self);
        let started = crate::clients::ClientWatcher::start(env, opts, move |report| {
            if let Some(me) = me.upgrade() {
                me.on_client_report(report);
            }
        });
        match started {
            Ok(w) => *self.watcher() = Some(w),
            Err(e) => tracing::warn!("not watching IDE configs: {e}"),
        }
    }

    /// The auto-rewrite switch: the running watcher's, else the saved one.
    pub fn auto_rewrite(&self) -> bool {
        match self.watcher().as_ref() {
            Some(w) => w.auto_rewrite(),
            None => self.saved_auto_rewrite(),
        }
    }

    fn saved_auto_rewrite(&self) -> bool {
        self.opts
            .auto_rewrite_file
            .as_deref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .is_some_and(|s| s.trim() == "on")
    }

    fn on_client_report(&self, report: crate::clients::WatchReport) {
        let (event, line) = ide::watch_event(report);
        let ApiEvent::Client { client, change, .. } = &event else {
            return;
        };
        let kind = match change {
            api::ClientChangeKind::NewServers => "client_new_servers",
            api::ClientChangeKind::Wrapped => "client_wrapped",
            api::ClientChangeKind::Reverted => "client_reverted",
            api::ClientChangeKind::GaveUp => "client_gave_up",
            api::ClientChangeKind::Failed => "client_failed",
        };
        let entry = HistoryEntry {
            server: format!("client:{client}"),
            session: None,
            event: Event::new(kind).detail(line),
            command: None,
        };
        self.record(&mut self.lock(), entry);
        self.emit(event);
    }

    fn set_auto_rewrite(&self, on: bool) -> Result<bool, ApiError> {
        if let Some(path) = &self.opts.auto_rewrite_file {
            let write = path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(path, if on { "on\n" } else { "off\n" }));
            write.map_err(|e| {
                ApiError::new(
                    ErrorCode::Io,
                    format!("cannot save the switch to {}: {e}", path.display()),
                )
            })?;
        }
        match self.watcher().as_ref() {
            Some(w) => {
                w.set_auto_rewrite(on);
                Ok(on)
            }
            None => Err(ApiError::new(
                ErrorCode::Invalid,
                "the IDE config watcher is not running here (start the tray app, or `warden daemon --watch-clients`); the switch was saved for its next start",
            )),
        }
    }

    async fn ticker(self: Arc<Self>) {
        let mut every = tokio::time::interval(TICK);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            self.tick(Instant::now());
        }
    }

    async fn prober(self: Arc<Self>) {
        if self.opts.prewarm {
            for (name, command) in self.known_commands() {
                if probe::is_package_runner(&command) {
                    tracing::info!("pre-warming {name}: {}", command.join(" "));
                    self.run_probe(Some(name), command, probe::PREWARM_TIMEOUT)
                        .await;
                }
            }
        }
        let Some(every) = self.opts.probe_interval else {
            return;
        };
        let mut timer = tokio::time::interval(every);
        timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        timer.tick().await;
        loop {
            timer.tick().await;
            for (name, command) in self.known_commands() {
                self.run_probe(Some(name), command, self.opts.probe_timeout)
                    .await;
            }
        }
    }

    async fn sweeper(self: Arc<Self>) {
        if self.opts.orphan_policy == OrphanPolicy::Off {
            return;
        }
        let mut timer = tokio::time::interval(self.opts.orphan_interval);
        timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            timer.tick().await;
            let found = self.find_orphans().await;
            if self.opts.orphan_policy == OrphanPolicy::Stop && !found.is_empty() {
                let pids: Vec<u32> = found.iter().map(|o| o.pid).collect();
                self.stop_orphans(&pids).await;
            }
        }
    }

    // ----- bridges -------------------------------------------------------------------

    fn new_conn(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    /// A bridge said hello on connection `conn`; `tx` carries lines to it.
    fn on_hello(&self, conn: u64, hello: Hello, peer_pid: Option<u32>, tx: Tx) {
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
            live_pid: peer_pid.unwrap_or(hello.pid),
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

    fn on_heartbeat(&self, session: &str, hb: Heartbeat) {
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

    fn on_event(&self, session: &str, event: Event) {
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

    fn on_ack(&self, id: u64, ok: bool, message: String) {
        if let Some((_, tx)) = self.lock().acks.remove(&id) {
            let _ = tx.send((ok, message));
        }
    }

    /// The connection of a bridge closed.
    fn on_close(&self, conn: u64, session: &str) {
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

    /// Adds to the history and metrics, and streams it.
    fn record(&self, st: &mut State, entry: HistoryEntry) {
        if !is_pseudo_server(&entry.server) {
            st.servers
                .entry(entry.server.clone())
                .or_default()
                .metrics
                .record(&entry.event);
        }
        st.history.push(entry.clone());
        self.emit(ApiEvent::Event { entry });
    }

    /// Judges sessions (unresponsive, reaped) and recomputes health. Called every [`TICK`]
    /// by [`Supervisor::run`]; a host that serves the socket itself calls it.
    pub fn tick(&self, now: Instant) {
        let mut st = self.lock();
        let mut gone = Vec::new();
        let mut stuck = Vec::new();
        for (id, s) in &mut st.sessions {
            if !orphans::alive(s.live_pid) {
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
                self.close(&mut st, &s, "session_reaped", reason);
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
            self.record(&mut st, entry);
            self.emit(ApiEvent::SessionUpdated { session: status });
        }
        let now_ms = now_ms();
        let names: Vec<String> = st.servers.keys().cloned().collect();
        for name in names {
            let (health, reason) = derive_health(&st, &name, now_ms);
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

    // ----- the API -------------------------------------------------------------------

    /// Serves one request of the typed API.
    pub async fn handle(self: &Arc<Self>, request: Request) -> Response {
        match request {
            Request::Status => Response::Status(self.status()),
            Request::History {
                server,
                since_ms,
                limit,
            } => Response::History {
                entries: self.lock().history.query(
                    server.as_deref(),
                    since_ms,
                    limit.unwrap_or(1000),
                ),
            },
            Request::Restart { server } => Response::Command(self.restart(&server).await),
            Request::Fallback { server, on } => {
                match self
                    .set_key(&server, "force_fallback", Some(on.into()))
                    .await
                {
                    Ok(o) => Response::Command(o),
                    Err(e) => Response::Error(e),
                }
            }
            Request::Debug { server, on } => {
                match self.set_key(&server, "debug", Some(on.into())).await {
                    Ok(o) => Response::Command(o),
                    Err(e) => Response::Error(e),
                }
            }
            Request::Probe {
                server,
                command,
                timeout_ms,
            } => {
                let command = match (command, &server) {
                    (Some(c), _) if !c.is_empty() => c,
                    (_, Some(name)) => match self.command_of(name) {
                        Some(c) => c,
                        None => {
                            return Response::Error(ApiError::new(
                                ErrorCode::NotFound,
                                unknown_command_message(name),
                            ));
                        }
                    },
                    _ => {
                        return Response::Error(ApiError::new(
                            ErrorCode::Invalid,
                            "give a server name or a command to probe: `warden probe --server NAME` or `warden probe -- COMMAND [ARG]...`",
                        ));
                    }
                };
                let timeout = timeout_ms.map_or(self.opts.probe_timeout, Duration::from_millis);
                Response::Probe(self.run_probe(server, command, timeout).await)
            }
            Request::Orphans => Response::Orphans {
                orphans: self.find_orphans().await,
            },
            Request::StopOrphans { pids } => Response::Stopped {
                stopped: self.stop_orphans(&pids).await,
            },
            Request::KnownServers => Response::KnownServers {
                servers: self.known_servers(),
            },
            Request::Subscribe => Response::Subscribed,
            Request::Limits { server } => {
                let path = self.opts.config.clone();
                blocking(move || Response::Limits(settings::limits(path.as_deref(), &server))).await
            }
            Request::SetLimit { server, key, value } => {
                match self.set_limit(&server, &key, value).await {
                    Ok(o) => Response::Command(o),
                    Err(e) => Response::Error(e),
                }
            }
            Request::Clients => {
                let sup = Arc::clone(self);
                blocking(move || match ide::env() {
                    Ok(env) => Response::Clients(ide::report(
                        &env,
                        sup.watcher().as_ref(),
                        sup.opts.warden_bin.as_deref(),
                    )),
                    Err(e) => Response::Error(e),
                })
                .await
            }
            Request::ClientEdit {
                wrap,
                file,
                server,
                dry_run,
            } => {
                let warden = self.opts.warden_bin.clone();
                blocking(move || {
                    match ide::env().and_then(|env| {
                        ide::edit(&env, warden.as_deref(), wrap, file, server, dry_run)
                    }) {
                        Ok(changes) => Response::ClientEdit { changes },
                        Err(e) => Response::Error(e),
                    }
                })
                .await
            }
            Request::Backups => {
                blocking(|| match ide::env().and_then(|env| ide::backups(&env)) {
                    Ok(backups) => Response::Backups { backups },
                    Err(e) => Response::Error(e),
                })
                .await
            }
            Request::Restore { id, dry_run } => {
                blocking(move || {
                    match ide::env().and_then(|env| ide::restore(&env, &id, dry_run)) {
                        Ok(r) => Response::Restore(r),
                        Err(e) => Response::Error(e),
                    }
                })
                .await
            }
            Request::AutoRewrite { on } => match self.set_auto_rewrite(on) {
                Ok(on) => Response::AutoRewrite { on },
                Err(e) => Response::Error(e),
            },
        }
    }

    /// `SetLimit`: checks the key and value, then edits like `set_flag`.
    async fn set_limit(
        self: &Arc<Self>,
        server: &str,
        key: &str,
        value: Option<serde_json::Value>,
    ) -> Result<CommandOutcome, ApiError> {
        let Some(def) = crate::config::KEYS.iter().find(|k| k.name == key) else {
            return Err(ApiError::new(
                ErrorCode::Invalid,
                format!("`{key}` is not a config key (see docs/config.md)"),
            ));
        };
        let value = match value {
            None => None,
            Some(v) => Some(settings::to_toml(&v).map_err(|problem| {
                ApiError::new(
                    ErrorCode::Invalid,
                    format!("`{key}`: {problem}. Fix: {}", def.fix),
                )
            })?),
        };
        self.set_key(server, def.name, value).await
    }

    /// `warden status`.
    pub fn status(&self) -> StatusReport {
        // Servers of config.toml are known even before any session.
        let configured = self
            .opts
            .config
            .as_deref()
            .and_then(|p| crate::config::Config::load(p).ok());
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
            .map(|(name, server)| {
                let mine: Vec<&SessionStatus> =
                    sessions.iter().filter(|s| &s.server == name).collect();
                let (health, reason) = derive_health(&st, name, now_ms);
                let m = &server.metrics;
                let [p50, p95, p99] = m.percentiles([50.0, 95.0, 99.0]);
                ServerStatus {
                    name: name.clone(),
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
                    last_seen_ms: m.last_seen_ms,
                    command: server.command.clone(),
                    circuit_open: mine.iter().any(|s| s.circuit_open),
                    fallback: mine.iter().any(|s| s.fallback),
                    debug: mine.iter().any(|s| s.debug),
                    last_probe: server.probe.clone(),
                }
            })
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

    async fn restart(self: &Arc<Self>, server: &str) -> CommandOutcome {
        let mut waits = Vec::new();
        {
            let mut st = self.lock();
            let targets: Vec<(String, u32, Option<Tx>)> = st
                .sessions
                .values()
                .filter(|s| s.hello.server == server)
                .map(|s| (s.hello.session.clone(), s.hello.pid, s.tx.clone()))
                .collect();
            for (session, pid, tx) in targets {
                let id = self.next_id.fetch_add(1, Ordering::Relaxed);
                let (ack_tx, ack_rx) = oneshot::channel();
                st.acks.insert(id, (session.clone(), ack_tx));
                waits.push((session, pid, id, tx, ack_rx));
            }
        }
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
        for (session, pid, id, tx, rx) in waits {
            let line = Message::Command(control::Command {
                id,
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
                self.lock().acks.remove(&id);
            }
            sent.push((session, pid, id, ok, rx));
        }
        let mut acks = Vec::new();
        let deadline = tokio::time::Instant::now() + self.opts.ack_timeout;
        for (session, pid, id, was_sent, rx) in sent {
            let (ok, message) = if !was_sent {
                (
                    false,
                    "not connected (the bridge is stopped or reconnecting)".to_owned(),
                )
            } else {
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
            };
            acks.push(SessionAck {
                session,
                pid,
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

    /// Writes `[servers.<server>] <key> = <value>` (removes the key for `None`) and waits
    /// for the sessions to pick it up.
    async fn set_key(
        self: &Arc<Self>,
        server: &str,
        key: &'static str,
        value: Option<toml_edit::Value>,
    ) -> Result<CommandOutcome, ApiError> {
        let Some(path) = self.opts.config.clone() else {
            return Err(ApiError::new(
                ErrorCode::Config,
                "no config file is known: set WARDEN_CONFIG (or use the default location) and start the supervisor again",
            ));
        };
        let mut events = self.subscribe();
        let edited_ms = now_ms();
        let shown = value.as_ref().map_or_else(
            || "(default)".to_owned(),
            |v| v.to_string().trim().to_owned(),
        );
        let on = value.as_ref().and_then(toml_edit::Value::as_bool);
        let edit = {
            let path = path.clone();
            let server = server.to_owned();
            tokio::task::spawn_blocking(move || match value {
                Some(v) => config_edit::set_server_key(&path, &server, key, v),
                None => config_edit::remove_server_key(&path, &server, key),
            })
            .await
            .map_err(|e| ApiError::new(ErrorCode::Io, e.to_string()))?
            .map_err(|e| ApiError::new(ErrorCode::Config, e.to_string()))?
        };
        if edit == config_edit::Edit::Changed {
            self.emit(ApiEvent::ConfigChanged {
                server: server.to_owned(),
            });
        }
        // Whether a session's heartbeat shows the value already (for the two flags it reports).
        let running_with = |hb: &Heartbeat| match (key, on) {
            ("debug", Some(on)) => hb.debug == on,
            ("force_fallback", Some(on)) => hb.fallback == on,
            _ => true,
        };
        // Which sessions picked it up: a reload after the edit, or the flag already set.
        let judge = |st: &State| -> Vec<Verdict> {
            st.sessions
                .values()
                .filter(|s| s.hello.server == server)
                .map(|s| {
                    let done = if let Some((t, why)) =
                        s.last_reject.as_ref().filter(|(t, _)| *t >= edited_ms)
                    {
                        let _ = t;
                        Some((false, format!("refused the edited file: {why}")))
                    } else if s.last_reload_ms.is_some_and(|t| t >= edited_ms) {
                        Some((true, "reloaded config.toml".to_owned()))
                    } else if edit == config_edit::Edit::Unchanged
                        && s.heartbeat.as_ref().is_some_and(running_with)
                    {
                        Some((true, format!("already running with {key} = {shown}")))
                    } else {
                        None
                    };
                    (s.hello.session.clone(), s.hello.pid, done)
                })
                .collect()
        };
        let deadline = tokio::time::Instant::now() + self.opts.pickup_timeout;
        let verdicts = loop {
            let verdicts = judge(&self.lock());
            if verdicts.iter().all(|(_, _, d)| d.is_some())
                || tokio::time::Instant::now() >= deadline
            {
                break verdicts;
            }
            match tokio::time::timeout_at(deadline, events.recv()).await {
                Err(_) => {}
                Ok(Err(broadcast::error::RecvError::Closed)) => break judge(&self.lock()),
                Ok(_) => continue,
            }
        };
        let sessions: Vec<SessionAck> = verdicts
            .into_iter()
            .map(|(session, pid, done)| {
                let (ok, message) = done.unwrap_or_else(|| {
                    (
                        false,
                        format!(
                            "did not reload within {:.0} s (does it read another config file, or is it stuck?)",
                            self.opts.pickup_timeout.as_secs_f64()
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
        let written = match edit {
            config_edit::Edit::Changed => "written to",
            config_edit::Edit::Unchanged => "already in",
        };
        let who = if sessions.is_empty() {
            format!("no live session of `{server}` (bridges started later read it)")
        } else {
            format!("picked up by {picked} of {} sessions", sessions.len())
        };
        let outcome = CommandOutcome {
            ok: picked == sessions.len(),
            message: format!(
                "{key} = {shown} {written} {} [servers.{server}]; {who}",
                path.display()
            ),
            config: Some(path),
            sessions,
        };
        self.note_command(server, &outcome);
        Ok(outcome)
    }

    /// Servers with a known command: live sessions first, then the history, then the stdio
    /// servers of the detected IDE configs.
    fn known_commands(&self) -> Vec<(String, Vec<String>)> {
        let mut known: Vec<(String, Vec<String>)> = self
            .lock()
            .servers
            .iter()
            .filter_map(|(n, s)| s.command.clone().map(|c| (n.clone(), c)))
            .collect();
        for (name, command) in ide_commands() {
            if !known.iter().any(|(n, _)| *n == name) {
                known.push((name, command));
            }
        }
        known
    }

    fn command_of(&self, server: &str) -> Option<Vec<String>> {
        let st = self.lock();
        st.sessions
            .values()
            .find(|s| s.hello.server == server)
            .map(|s| s.hello.command.clone())
            .or_else(|| st.servers.get(server).and_then(|s| s.command.clone()))
            .or_else(|| {
                ide_commands()
                    .into_iter()
                    .find(|(n, _)| n == server)
                    .map(|(_, c)| c)
            })
    }

    fn known_servers(&self) -> Vec<KnownServer> {
        let st = self.lock();
        let live: BTreeSet<&str> = st
            .sessions
            .values()
            .map(|s| s.hello.server.as_str())
            .collect();
        let mut servers: Vec<KnownServer> = st
            .servers
            .iter()
            .map(|(name, s)| KnownServer {
                name: name.clone(),
                command: s.command.clone(),
                source: if live.contains(name.as_str()) {
                    "session"
                } else if s.command.is_some() {
                    "history"
                } else {
                    "config"
                }
                .to_owned(),
            })
            .collect();
        drop(st);
        for (name, command) in ide_commands() {
            if !servers.iter().any(|s| s.name == name) {
                servers.push(KnownServer {
                    name,
                    command: Some(command),
                    source: "ide".to_owned(),
                });
            }
        }
        servers
    }

    async fn run_probe(
        self: &Arc<Self>,
        server: Option<String>,
        command: Vec<String>,
        timeout: Duration,
    ) -> ProbeReport {
        let report = probe::probe(server.clone(), &command, timeout).await;
        if let Some(name) = &server {
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
                command: Some(command),
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
        report
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

    async fn find_orphans(self: &Arc<Self>) -> Vec<Orphan> {
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

    async fn stop_orphans(self: &Arc<Self>, pids: &[u32]) -> Vec<api::StopResult> {
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

/// History entries that are not about one server: orphans whose server is unknown, and the
/// IDE config watcher's (`client:<id>`). They are kept and streamed but make no server row.
fn is_pseudo_server(name: &str) -> bool {
    name.starts_with('(') || name.starts_with("client:")
}

/// Runs file work off the async threads.
async fn blocking(work: impl FnOnce() -> Response + Send + 'static) -> Response {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Response::Error(ApiError::new(
            ErrorCode::Io,
            format!("the request failed: {e}"),
        ))
    })
}

/// Why `warden probe --server NAME` cannot go on, and what to do.
/// The stdio servers of the detected IDE and agent configs, with their original commands
/// (behind `warden bridge` for wrapped ones), named as the bridge would name them.
fn ide_commands() -> Vec<(String, Vec<String>)> {
    use crate::clients::EntryState;
    let Ok(env) = crate::clients::ClientEnv::from_process() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for listing in crate::clients::list(&env) {
        for entry in listing.servers {
            let (name, command, args) = match entry.state {
                EntryState::Unwrapped { command, args } => (entry.name, command, args),
                EntryState::Wrapped {
                    server,
                    command,
                    args,
                    ..
                } => (server.unwrap_or(entry.name), command, args),
                EntryState::Skipped { .. } => continue,
            };
            if !out.iter().any(|(n, _): &(String, Vec<String>)| *n == name) {
                out.push((name, std::iter::once(command).chain(args).collect()));
            }
        }
    }
    out
}

pub fn unknown_command_message(name: &str) -> String {
    format!(
        "the command of server `{name}` is not known: Warden learns it from a detected IDE config, or when a bridge of `{name}` connects to a supervisor. Start it once through `warden bridge --server {name} -- COMMAND` while `warden daemon` or the tray app runs, or probe the command itself: `warden probe -- COMMAND [ARG]...`"
    )
}

fn derive_health(st: &State, name: &str, now_ms: u64) -> (Health, String) {
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

fn session_status(s: &Session, now: Instant) -> SessionStatus {
    let since = now.saturating_duration_since(s.last_report).as_millis() as u64;
    // While a session is stopped its requests keep ageing: count the silence in.
    let hb = s.heartbeat.as_ref();
    SessionStatus {
        id: s.hello.session.clone(),
        server: s.hello.server.clone(),
        pid: s.hello.pid,
        client: hb.and_then(|h| h.client.clone()),
        last_heartbeat_ms: since,
        state: s.state,
        server_pid: hb.and_then(|h| h.server_pid),
        generation: hb.map_or(0, |h| h.generation),
        circuit_open: hb.is_some_and(|h| h.circuit_open),
        fallback: hb.is_some_and(|h| h.fallback),
        debug: hb.is_some_and(|h| h.debug),
        config_hash: s.hello.config_hash.clone(),
        started_ms: s.hello.started_ms,
        command: s.hello.command.clone(),
        stderr_tail: s.stderr_tail.clone(),
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
