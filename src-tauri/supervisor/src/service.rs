//! The service itself: its options, the state every part shares (sessions, servers, the
//! history, pending acknowledgements, orphans), and the few primitives they all use.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{broadcast, mpsc, oneshot};

use super::api::{
    ApiError, ApiEvent, ErrorCode, Health, HistoryEntry, Orphan, ProbeReport, ServerStatus,
    SessionState,
};
use super::history::{self, History};
use super::import;
use super::metrics::Metrics;
use super::probe;
use warden_control::{self as control, HEARTBEAT_MS, Heartbeat, Hello};
use warden_wire::events::now_ms;

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
    /// The bridges' event logs: what they logged while no supervisor ran (within the
    /// horizon) is taken in at start; `None` takes nothing.
    pub logs: Option<PathBuf>,
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
    /// Where the auto-rewrite switch is kept across restarts (`off`, `ask`, `on`).
    pub auto_rewrite_file: Option<PathBuf>,
    /// Probe the IDE configs' stdio servers (at start, on change, failing ones again with
    /// backoff) unless the switch kept in this file says `off`; `None`: never.
    pub probe_ide: Option<PathBuf>,
}

impl Options {
    /// The defaults, with the paths of the environment (`WARDEN_SOCKET`, `WARDEN_CONFIG`,
    /// `WARDEN_STATE_DIR`).
    pub fn from_env() -> Options {
        Options {
            socket: control::socket::socket_path(),
            config: warden_config::default_path(),
            history: Some(history::default_path()),
            horizon: Duration::from_secs(6 * 3600),
            logs: Some(warden_config::paths::state_dir().join("logs")),
            probe_interval: None,
            prewarm: false,
            orphan_policy: OrphanPolicy::Report,
            orphan_interval: Duration::from_secs(30),
            ack_timeout: Duration::from_secs(5),
            pickup_timeout: Duration::from_millis(2 * HEARTBEAT_MS + 1000),
            probe_timeout: probe::DEFAULT_TIMEOUT,
            warden_bin: None,
            watch_clients: false,
            auto_rewrite_file: Some(warden_config::paths::state_dir().join("auto-rewrite")),
            probe_ide: None,
        }
    }
}

/// The service. Cheap to share (`Arc`); every method is safe to call from any task.
pub struct Supervisor {
    pub(super) opts: Options,
    state: Mutex<State>,
    /// Shared, not cloned, per subscriber; and a slot of the channel's ring is a pointer, not
    /// an event (the ring is allocated whole, 1024 slots, at start).
    events: broadcast::Sender<Arc<ApiEvent>>,
    /// Ids of commands sent to bridges.
    pub(super) next_id: AtomicU64,
    /// Ids of control connections.
    pub(super) next_conn: AtomicU64,
    pub(super) started_ms: u64,
    pub(super) watcher: Mutex<Option<warden_clients::ClientWatcher>>,
    /// The IDE probing switch (see [`Options::probe_ide`]).
    pub(super) probing: std::sync::atomic::AtomicBool,
    /// Signalled when an IDE config changed or the probing switch moved.
    pub(super) clients_changed: tokio::sync::Notify,
    /// Serves [`Request::App`](super::api::Request::App): set by the app's host.
    pub(super) app: std::sync::OnceLock<crate::api::app::AppHandler>,
}

/// Lines to one bridge.
pub(super) type Tx = mpsc::Sender<Vec<u8>>;

pub(super) struct Session {
    pub(super) hello: Hello,
    /// The pid whose life is the session's: the socket peer's, else the hello's.
    pub(super) live_pid: u32,
    /// The socket's peer: its pidfd, where the kernel gives one, tells its life exactly.
    pub(super) peer: warden_control::socket::Peer,
    pub(super) heartbeat: Option<Heartbeat>,
    pub(super) last_report: Instant,
    pub(super) state: SessionState,
    /// Lines to the bridge; `None` while disconnected.
    pub(super) tx: Option<Tx>,
    pub(super) conn: u64,
    pub(super) ended: bool,
    pub(super) last_reload_ms: Option<u64>,
    pub(super) last_reject: Option<(u64, String)>,
    /// The end of the server's stderr, as last reported.
    pub(super) stderr_tail: String,
}

#[derive(Default)]
pub(super) struct ServerState {
    pub(super) metrics: Metrics,
    pub(super) command: Option<Vec<String>>,
    pub(super) health: Option<(Health, String)>,
    pub(super) probe: Option<ProbeReport>,
    /// The row last streamed as [`ApiEvent::Server`].
    pub(super) row: Option<ServerStatus>,
}

pub(super) struct State {
    pub(super) sessions: BTreeMap<String, Session>,
    pub(super) servers: BTreeMap<String, ServerState>,
    pub(super) history: History,
    /// Commands sent to bridges and not yet acknowledged: id → (session, waiter).
    pub(super) acks: HashMap<u64, (String, oneshot::Sender<(bool, String)>)>,
    pub(super) orphans: Vec<Orphan>,
}

impl ServerState {
    /// Takes an entry of its history into account: metrics, and the command of a hello.
    fn take(&mut self, entry: &HistoryEntry) {
        self.metrics.record(&entry.event);
        if let Some(c) = &entry.command {
            self.command = Some(c.clone());
        }
    }
}

impl Supervisor {
    /// A supervisor with its history loaded and the events the bridges logged meanwhile
    /// taken in; nothing runs until [`Supervisor::run`] (or the host calls
    /// [`Supervisor::tick`] and serves a listener itself).
    pub fn new(opts: Options) -> std::io::Result<Arc<Supervisor>> {
        let since = now_ms().saturating_sub(opts.horizon.as_millis() as u64);
        let history = match &opts.history {
            Some(path) => History::open(path, since)?,
            None => History::in_memory(),
        };
        let mut servers: BTreeMap<String, ServerState> = BTreeMap::new();
        for entry in history.iter().filter(|e| !is_pseudo_server(&e.server)) {
            servers.entry(entry.server.clone()).or_default().take(entry);
        }
        let missed = opts.logs.as_deref().map(|dir| {
            let bounds = import::Bounds {
                since_ms: since,
                max_lines: import::MAX_LINES,
                max_bytes: import::MAX_BYTES,
            };
            import::missed(dir, &history, bounds).entries
        });
        let (events, _) = broadcast::channel(1024);
        let probing = opts
            .probe_ide
            .as_deref()
            .is_some_and(super::switches::probe_ide);
        let sup = Arc::new(Supervisor {
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
            probing: std::sync::atomic::AtomicBool::new(probing),
            clients_changed: tokio::sync::Notify::new(),
            watcher: Mutex::new(None),
            app: std::sync::OnceLock::new(),
        });
        {
            let mut st = sup.lock();
            for entry in missed.into_iter().flatten() {
                sup.record(&mut st, entry);
            }
        }
        Ok(sup)
    }

    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// The live event stream.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<ApiEvent>> {
        self.events.subscribe()
    }

    /// Has `handler` answer the desktop app's requests ([`Request::App`](super::api::Request::App));
    /// the first one set stays.
    pub fn serve_app(&self, handler: crate::api::app::AppHandler) {
        let _ = self.app.set(handler);
    }

    /// Sends the desktop app's `event` to every subscriber.
    pub fn publish_app(&self, event: crate::api::app::AppEvent) {
        let _ = self.events.send(Arc::new(ApiEvent::App { event }));
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether anyone listens to the event stream (what only it needs can be skipped).
    pub(super) fn streaming(&self) -> bool {
        self.events.receiver_count() > 0
    }

    pub(super) fn emit(&self, event: ApiEvent) {
        let _ = self.events.send(Arc::new(event));
    }

    /// Adds to the history and metrics, and streams it.
    pub(super) fn record(&self, st: &mut State, entry: HistoryEntry) {
        if !is_pseudo_server(&entry.server) {
            st.servers
                .entry(entry.server.clone())
                .or_default()
                .take(&entry);
        }
        st.history.push(entry.clone());
        self.emit(ApiEvent::Event { entry });
    }
}

/// History entries that are not about one server: orphans whose server is unknown, and the
/// IDE config watcher's (`client:<id>`). They are kept and streamed but make no server row.
fn is_pseudo_server(name: &str) -> bool {
    name.starts_with('(') || name.starts_with("client:")
}

/// Runs file work off the async threads.
pub(super) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Err(ApiError::new(
            ErrorCode::Io,
            format!("the request failed: {e}"),
        ))
    })
}
