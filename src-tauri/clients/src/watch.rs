//! Watching clients' config files, and wrapping servers that appear (auto-rewrite).
//!
//! A [`ClientWatcher`] is a tokio task on [`warden_config::fswatch`] (like the config.toml watch): a
//! watch on the directories of every possible config file, a settle delay to coalesce bursts,
//! and a periodic rescan for files and directories created later. Each pass (reading files,
//! wrapping) runs on a blocking thread.
//!
//! On a change it compares the file's entries with the last ones it saw:
//! - a stdio server that is new: reported, and with auto-rewrite on (the default is off) it
//!   awaits the user's approval; wrapped at once only when the user chose "wrap without
//!   asking" (never one the user chose to keep unwrapped);
//! - a server that was wrapped and is now unwrapped, and not by `warden clients unwrap`:
//!   the client reverted it. It is wrapped again, but after `revert_limit` reverts within
//!   `revert_window` the file is left alone and reported (no fight loop).
//!
//! Its own writes are recognised by their bytes and not processed again.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use warden_config::fswatch::{self, Dirs, Events, Progress};

use super::detect::{ClientEnv, ConfigFile, candidates, detect};
use super::doc::EntryRef;
use super::edit;
use super::ledger::Ledger;
use super::model::{ClientError, ClientId, EntryState};
use super::notices::Notice;
use super::ops::wrap_file;

#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Wrap new stdio servers automatically. Off by default.
    pub auto_rewrite: bool,
    /// With auto-rewrite on: wrap new servers without asking first. Off by default.
    pub without_asking: bool,
    /// The `warden` binary written into entries.
    pub warden: PathBuf,
    /// Quiet time after the last event before files are read.
    pub settle: Duration,
    /// Reverts within `revert_window` after which a file is left alone.
    pub revert_limit: usize,
    pub revert_window: Duration,
    /// How often to look for config files and directories created since.
    pub rescan_every: Duration,
}

impl WatchOptions {
    pub fn new(warden: PathBuf) -> WatchOptions {
        WatchOptions {
            auto_rewrite: false,
            without_asking: false,
            warden,
            settle: Duration::from_millis(150),
            revert_limit: 3,
            revert_window: Duration::from_secs(600),
            rescan_every: Duration::from_secs(30),
        }
    }
}

/// What the watcher saw or did.
#[derive(Debug, Clone)]
pub enum WatchReport {
    /// New stdio servers that run unwrapped (auto-rewrite is off or asks first, or the file
    /// is left alone).
    NewServers {
        file: ConfigFile,
        servers: Vec<EntryRef>,
        /// Auto-rewrite is on and asks first: they await the user's approval.
        awaiting: bool,
    },
    /// Servers were wrapped; `notices` say what the client needs now (restart, approval...).
    Wrapped {
        file: ConfigFile,
        servers: Vec<EntryRef>,
        backup: Option<String>,
        notices: Vec<Notice>,
    },
    /// The client put back the original command of servers Warden had wrapped.
    Reverted {
        file: ConfigFile,
        servers: Vec<EntryRef>,
        /// Reverts of this file within the window, this one included.
        count: usize,
    },
    /// The client keeps reverting: Warden leaves this file alone until `resume`.
    GaveUp {
        file: ConfigFile,
        servers: Vec<EntryRef>,
        reverts: usize,
        message: String,
    },
    /// A file could not be read, parsed or written.
    Failed { file: ConfigFile, error: String },
}

/// The watcher; stops when dropped.
pub struct ClientWatcher {
    auto: Arc<AtomicBool>,
    without_asking: Arc<AtomicBool>,
    given_up: Arc<Mutex<BTreeSet<PathBuf>>>,
    state: Arc<Mutex<Loop>>,
    task: tokio::task::JoinHandle<()>,
    progress: Progress,
}

impl ClientWatcher {
    /// Starts watching the files `env` describes, as a task on the current tokio runtime (so
    /// it must be called inside one); `report` is called on a blocking thread. Takes the first
    /// snapshot of the files before it returns: what changes after is seen (the watcher is
    /// ready, see [`ClientWatcher::progress`]).
    pub fn start(
        env: ClientEnv,
        opts: WatchOptions,
        report: impl FnMut(WatchReport) + Send + 'static,
    ) -> Result<ClientWatcher, ClientError> {
        let (dirs, events) = fswatch::watcher(&env.home)?;
        let auto = Arc::new(AtomicBool::new(opts.auto_rewrite));
        let without_asking = Arc::new(AtomicBool::new(opts.without_asking));
        let given_up = Arc::new(Mutex::new(BTreeSet::new()));
        let (settle, rescan_every) = (opts.settle, opts.rescan_every);
        let mut state = Loop {
            env,
            opts,
            dirs,
            watched: BTreeSet::new(),
            interest: Interest::default(),
            files: BTreeMap::new(),
            auto: auto.clone(),
            without_asking: without_asking.clone(),
            given_up: given_up.clone(),
            report: Box::new(report),
            stopped: false,
            limit_warned: false,
        };
        state.rescan(false);
        let interest = state.interest.clone();
        let state = Arc::new(Mutex::new(state));
        events.set_ready();
        let progress = events.progress();
        let task = tokio::spawn(run(state.clone(), events, interest, settle, rescan_every));
        Ok(ClientWatcher {
            auto,
            without_asking,
            given_up,
            state,
            task,
            progress,
        })
    }

    /// How far the watcher has got: ready, and which changes it processed.
    pub fn progress(&self) -> Progress {
        self.progress.clone()
    }

    /// The one switch: wrap new servers automatically, or only report them.
    pub fn set_auto_rewrite(&self, on: bool) {
        self.auto.store(on, Ordering::SeqCst);
    }

    pub fn auto_rewrite(&self) -> bool {
        self.auto.load(Ordering::SeqCst)
    }

    /// With auto-rewrite on: wrap new servers at once instead of waiting for approval.
    pub fn set_without_asking(&self, on: bool) {
        self.without_asking.store(on, Ordering::SeqCst);
    }

    pub fn without_asking(&self) -> bool {
        self.without_asking.load(Ordering::SeqCst)
    }

    /// Files left alone because their client kept reverting.
    pub fn given_up(&self) -> Vec<PathBuf> {
        self.given_up
            .lock()
            .map(|g| g.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Handles a file left alone again (after the user dealt with the client).
    pub fn resume(&self, path: &Path) {
        if let Ok(mut g) = self.given_up.lock() {
            g.remove(path);
        }
    }

    /// Warden wrote `text` to `path` outside the watcher (a wrap or unwrap asked for through
    /// the supervisor): it becomes the file's last seen state, and the file is looked at again
    /// at once. So a client that writes its own version back before the next pass is seen
    /// to revert, instead of the two writes merging into one unchanged-looking pass.
    pub fn wrote(&self, path: &Path, text: &str) {
        let mut s = lock(&self.state);
        if s.stopped {
            return;
        }
        s.wrote(path, text);
        s.process(path, true);
    }

    /// Stops watching; returns once a pass in progress is done.
    pub fn stop(self) {}
}

impl Drop for ClientWatcher {
    fn drop(&mut self) {
        self.task.abort();
        lock(&self.state).stopped = true;
    }
}

fn lock(state: &Mutex<Loop>) -> MutexGuard<'_, Loop> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The watcher's task: a pass after each settled burst of changes and every `rescan_every`.
async fn run(
    state: Arc<Mutex<Loop>>,
    mut events: Events,
    mut interest: Interest,
    settle: Duration,
    rescan_every: Duration,
) {
    loop {
        tokio::select! {
            got = events.settled(settle, |p| interest.covers(p)) => {
                if got.is_none() {
                    return;
                }
            }
            () = tokio::time::sleep(rescan_every) => {}
        }
        let Some(now) = pass(&state).await else {
            return;
        };
        interest = now;
        events.pass_done();
    }
}

/// One rescan on a blocking thread (it reads, and may write after waiting for a client's
/// lock); `None` once stopped.
async fn pass(state: &Arc<Mutex<Loop>>) -> Option<Interest> {
    let state = Arc::clone(state);
    tokio::task::spawn_blocking(move || {
        let mut s = lock(&state);
        if s.stopped {
            return None;
        }
        s.rescan(true);
        Some(s.interest.clone())
    })
    .await
    .ok()
    .flatten()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Unwrapped,
    Wrapped,
    Other,
}

struct FileState {
    file: ConfigFile,
    real: PathBuf,
    last_seen: Option<Vec<u8>>,
    own_write: Option<Vec<u8>>,
    entries: BTreeMap<EntryRef, Kind>,
    reverts: VecDeque<Instant>,
    failed_on: Option<Vec<u8>>,
}

struct Loop {
    env: ClientEnv,
    opts: WatchOptions,
    dirs: Dirs,
    watched: BTreeSet<PathBuf>,
    interest: Interest,
    files: BTreeMap<PathBuf, FileState>,
    auto: Arc<AtomicBool>,
    without_asking: Arc<AtomicBool>,
    given_up: Arc<Mutex<BTreeSet<PathBuf>>>,
    report: Box<dyn FnMut(WatchReport) + Send>,
    /// Set by the handle when it stops: no pass runs after.
    stopped: bool,
    /// Whether an inotify limit was already reported.
    limit_warned: bool,
}

/// The paths whose changes matter: config files, and directories of drop-in files.
#[derive(Debug, Clone, Default)]
struct Interest {
    files: BTreeSet<PathBuf>,
    dirs: BTreeSet<PathBuf>,
}

impl Interest {
    fn covers(&self, p: &Path) -> bool {
        self.files.contains(p) || p.parent().is_some_and(|d| self.dirs.contains(d))
    }
}

fn kinds(file: &ConfigFile, text: &str) -> Result<BTreeMap<EntryRef, Kind>, String> {
    let entries = edit::entries(file.client, file.dialect, text).map_err(|e| {
        format!(
            "{}:{}:{}: {} (left untouched)",
            file.path.display(),
            e.line,
            e.col,
            e.message
        )
    })?;
    Ok(entries
        .into_iter()
        .map(|e| {
            let kind = match e.state {
                EntryState::Unwrapped { .. } => Kind::Unwrapped,
                EntryState::Wrapped { .. } => Kind::Wrapped,
                EntryState::Skipped { .. } => Kind::Other,
            };
            (
                EntryRef {
                    scope: e.scope,
                    name: e.name,
                },
                kind,
            )
        })
        .collect())
}

impl Loop {
    /// Refreshes watches and the file list, then processes every file (cheap when nothing
    /// changed: one read and a comparison). `act`: false for the first snapshot.
    fn rescan(&mut self, act: bool) {
        let cands = candidates(&self.env);
        for c in &cands {
            self.interest.files.insert(c.path.clone());
            if let Ok(real) = std::fs::canonicalize(&c.path) {
                self.interest.files.insert(real);
            }
            if c.client == ClientId::Continue
                && let Some(d) = c.path.parent()
            {
                self.interest.dirs.insert(d.to_owned());
            }
        }
        for p in [".continue/mcpServers"] {
            self.interest.dirs.insert(self.env.home.join(p));
            for proj in &self.env.projects {
                self.interest.dirs.insert(proj.join(p));
            }
        }
        let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
        for p in self.interest.files.iter().chain(&self.interest.dirs) {
            if let Some(d) = p.parent() {
                dirs.insert(d.to_owned());
            }
        }
        dirs.extend(self.interest.dirs.iter().cloned());
        for d in dirs {
            if self.watched.contains(&d) || !d.is_dir() {
                continue;
            }
            match self.dirs.add(&d) {
                Ok(()) => {
                    self.watched.insert(d);
                }
                // Retried at the next rescan; said once, with what to raise.
                Err(e) if e.is_limit() && !self.limit_warned => {
                    self.limit_warned = true;
                    tracing::warn!("{e}");
                }
                Err(_) => {}
            }
        }
        let detected = detect(&self.env);
        let present: BTreeSet<PathBuf> = detected.iter().map(|f| f.path.clone()).collect();
        self.files.retain(|p, _| present.contains(p));
        for file in detected {
            if !self.files.contains_key(&file.path) {
                let real = super::ops::real_path(&file.path);
                self.files.insert(
                    file.path.clone(),
                    FileState {
                        file: file.clone(),
                        real,
                        last_seen: None,
                        own_write: None,
                        entries: BTreeMap::new(),
                        reverts: VecDeque::new(),
                        failed_on: None,
                    },
                );
            }
            self.process(&file.path, act);
        }
    }

    /// Records Warden's own write of `text` to `path`.
    fn wrote(&mut self, path: &Path, text: &str) {
        let Some(st) = self.files.get_mut(path) else {
            return;
        };
        if let Ok(k) = kinds(&st.file, text) {
            st.entries = k;
        }
        let bytes = text.as_bytes().to_vec();
        st.own_write = Some(bytes.clone());
        st.last_seen = Some(bytes);
    }

    fn process(&mut self, path: &Path, act: bool) {
        let auto = self.auto.load(Ordering::SeqCst);
        let without_asking = self.without_asking.load(Ordering::SeqCst);
        let Some(st) = self.files.get_mut(path) else {
            return;
        };
        let Ok(bytes) = std::fs::read(path) else {
            return;
        };
        if st.last_seen.as_ref() == Some(&bytes) {
            return;
        }
        if st.own_write.as_ref() == Some(&bytes) {
            st.last_seen = Some(bytes);
            return;
        }
        let file = st.file.clone();
        let parsed = String::from_utf8(bytes.clone())
            .map_err(|_| format!("{}: not UTF-8 text (left untouched)", path.display()))
            .and_then(|text| kinds(&file, &text));
        let current = match parsed {
            Ok(c) => c,
            Err(error) => {
                if act && st.failed_on.as_ref() != Some(&bytes) {
                    (self.report)(WatchReport::Failed {
                        file: file.clone(),
                        error,
                    });
                }
                st.failed_on = Some(bytes.clone());
                st.last_seen = Some(bytes);
                return;
            }
        };
        st.last_seen = Some(bytes);
        let previous = std::mem::replace(&mut st.entries, current.clone());
        if !act || !file.active {
            return;
        }
        let ledger = Ledger::view(&self.env.state_dir);
        // Servers the user chose to keep unwrapped are neither wrapped nor asked about again.
        let (new_wrap, new_servers): (Vec<EntryRef>, Vec<EntryRef>) = current
            .iter()
            .filter(|(id, k)| **k == Kind::Unwrapped && !previous.contains_key(*id))
            .map(|(id, _)| id.clone())
            .filter(|id| !ledger.user_unwrapped(&st.real, id))
            .partition(|_| auto && without_asking);
        let reverted: Vec<EntryRef> = current
            .iter()
            .filter(|(id, k)| {
                **k == Kind::Unwrapped
                    && previous.get(*id) == Some(&Kind::Wrapped)
                    && !ledger.user_unwrapped(&st.real, id)
            })
            .map(|(id, _)| id.clone())
            .collect();
        let left_alone =
            |g: &Arc<Mutex<BTreeSet<PathBuf>>>| g.lock().map(|g| g.contains(path)).unwrap_or(false);
        let mut alone = left_alone(&self.given_up);
        let mut to_wrap: Vec<EntryRef> = Vec::new();
        if !reverted.is_empty() && !alone {
            let now = Instant::now();
            st.reverts.push_back(now);
            while st
                .reverts
                .front()
                .is_some_and(|t| now.duration_since(*t) > self.opts.revert_window)
            {
                st.reverts.pop_front();
            }
            let count = st.reverts.len();
            if count >= self.opts.revert_limit {
                if let Ok(mut g) = self.given_up.lock() {
                    g.insert(path.to_owned());
                }
                alone = true;
                let message = format!(
                    "{} put the original command back {count} times within {} minutes; Warden leaves {} alone now. Fix: quit {} and run `warden clients wrap --file {}`, or keep these servers unwrapped",
                    file.client.display_name(),
                    self.opts.revert_window.as_secs() / 60,
                    path.display(),
                    file.client.display_name(),
                    path.display(),
                );
                (self.report)(WatchReport::GaveUp {
                    file: file.clone(),
                    servers: reverted.clone(),
                    reverts: count,
                    message,
                });
            } else {
                (self.report)(WatchReport::Reverted {
                    file: file.clone(),
                    servers: reverted.clone(),
                    count,
                });
                if auto {
                    to_wrap.extend(reverted.iter().cloned());
                }
            }
        }
        let (new_wrap, new_servers) = if alone {
            (Vec::new(), [new_wrap, new_servers].concat())
        } else {
            (new_wrap, new_servers)
        };
        to_wrap.extend(new_wrap);
        if !new_servers.is_empty() {
            (self.report)(WatchReport::NewServers {
                file: file.clone(),
                servers: new_servers,
                awaiting: auto && !without_asking && !alone,
            });
        }
        if to_wrap.is_empty() {
            return;
        }
        let change = wrap_file(
            &self.env,
            &file,
            &self.opts.warden,
            &|e| to_wrap.contains(e),
            false,
        );
        if let Some(err) = change.error {
            (self.report)(WatchReport::Failed {
                file,
                error: err.to_string(),
            });
            return;
        }
        if let Some(text) = &change.new_text {
            self.wrote(path, text);
        }
        if !change.changed.is_empty() {
            (self.report)(WatchReport::Wrapped {
                file,
                servers: change.changed,
                backup: change.backup,
                notices: change.notices,
            });
        }
    }
}
