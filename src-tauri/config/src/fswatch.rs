//! Watching files through their directories: notify feeds a tokio task. Both watchers build
//! on it: config.toml for running bridges ([`crate::ConfigWatch`]) and clients' config
//! files ([`warden_clients::ClientWatcher`]).
//!
//! Directories are watched, not files: editors and clients save by writing a new file and
//! renaming it over the old one, which a watch on the file itself would lose. A burst of
//! events (one save is often several) settles into one pass. [`Progress`] tells whoever waits
//! (tests, mostly) when the watch is armed and which changes have been processed.
//!
//! A watch that hits an inotify limit fails with a [`WatchError`] that names the sysctl to raise
//! (`fs.inotify.max_user_watches` or `fs.inotify.max_user_instances`) and how to raise it and keep
//! it raised.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use notify::event::{AccessKind, AccessMode, EventKind};
use notify::{RecursiveMode, Watcher};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// Why a watch could not be set up. When an inotify limit is hit, it says which one to raise
/// and how.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error(
        "cannot watch {}: the inotify watch limit is reached (fs.inotify.max_user_watches). Fix: raise it with `sudo sysctl fs.inotify.max_user_watches=524288`, and keep it with `echo fs.inotify.max_user_watches=524288 | sudo tee /etc/sysctl.d/90-inotify.conf`",
        path.display()
    )]
    Watches { path: PathBuf },
    #[error(
        "cannot watch {}: too many inotify instances (fs.inotify.max_user_instances). Fix: raise the limit with `sudo sysctl fs.inotify.max_user_instances=1024`, and keep it with `echo fs.inotify.max_user_instances=1024 | sudo tee /etc/sysctl.d/90-inotify.conf`",
        path.display()
    )]
    Instances { path: PathBuf },
    #[error("cannot watch {}: {source}", path.display())]
    Other {
        path: PathBuf,
        source: notify::Error,
    },
}

impl WatchError {
    fn new(path: &Path, source: notify::Error) -> WatchError {
        let path = path.to_owned();
        let os_error = match &source.kind {
            notify::ErrorKind::Io(e) => e.raw_os_error(),
            _ => None,
        };
        match (&source.kind, os_error) {
            (notify::ErrorKind::MaxFilesWatch, _) => WatchError::Watches { path },
            (_, Some(libc::ENOSPC)) => WatchError::Watches { path },
            (_, Some(libc::EMFILE)) => WatchError::Instances { path },
            _ => WatchError::Other { path, source },
        }
    }

    /// Whether an inotify limit was hit (as opposed to, say, a directory that went away).
    pub fn is_limit(&self) -> bool {
        !matches!(self, WatchError::Other { .. })
    }
}

/// Events waiting for the task that acts on them. A directory whose files change faster than
/// the task reads (a log written beside config.toml, a busy relay on the same thread) fills
/// it; what comes after is dropped and counted as a possible change, so memory stays bounded
/// and no edit is lost.
const QUEUE: usize = 1024;

/// Whether an event may be an edit. Opening or reading a file is not (notify reports opens on
/// Linux): counting them made each reload, this process's or another's, trigger the next one,
/// ten times a second for good. Closing a file after writing it ends a save.
fn is_change(kind: &EventKind) -> bool {
    !matches!(kind, EventKind::Access(a) if *a != AccessKind::Close(AccessMode::Write))
}

/// A new watch: the directories it watches, and the events they produce. `path` names what
/// is watched in error messages.
pub fn watcher(path: &Path) -> Result<(Dirs, Events), WatchError> {
    let (tx, rx) = mpsc::channel(QUEUE);
    let overflow = Arc::new(AtomicBool::new(false));
    let dropped = Arc::clone(&overflow);
    let watcher = notify::recommended_watcher(move |event| {
        if let Err(mpsc::error::TrySendError::Full(_)) = tx.try_send(event) {
            dropped.store(true, Ordering::Relaxed);
        }
    })
    .map_err(|e| WatchError::new(path, e))?;
    let (done, _) = watch::channel(Done::default());
    let events = Events {
        rx,
        overflow,
        pending: BTreeSet::new(),
        handed_out: false,
        done,
    };
    Ok((Dirs(watcher), events))
}

/// The directories a watch covers.
pub struct Dirs(notify::RecommendedWatcher);

impl Dirs {
    pub fn add(&mut self, dir: &Path) -> Result<(), WatchError> {
        self.0
            .watch(dir, RecursiveMode::NonRecursive)
            .map_err(|e| WatchError::new(dir, e))
    }
}

#[derive(Debug, Clone, Default)]
struct Done {
    ready: bool,
    passes: u64,
    /// The pass that last handled a change of each path.
    handled: BTreeMap<PathBuf, u64>,
}

/// The events of a watch, for the task that acts on them.
pub struct Events {
    rx: mpsc::Receiver<notify::Result<notify::Event>>,
    /// Events were dropped because the queue was full: any of them may have been a change.
    overflow: Arc<AtomicBool>,
    /// Relevant paths handed out since the last finished pass.
    pending: BTreeSet<PathBuf>,
    handed_out: bool,
    done: watch::Sender<Done>,
}

impl Events {
    pub fn progress(&self) -> Progress {
        Progress(self.done.subscribe())
    }

    /// The watch is armed (and whatever the owner does first is done).
    pub fn set_ready(&self) {
        self.done.send_modify(|d| d.ready = true);
    }

    /// Waits for a change of a path `relevant` accepts (or a watch error or a full queue,
    /// which may have lost one), then until `settle` passes without another. `None` once the
    /// watch ended.
    /// Cancel-safe: what was received stays pending for the next pass.
    pub async fn settled(
        &mut self,
        settle: Duration,
        relevant: impl Fn(&Path) -> bool,
    ) -> Option<()> {
        loop {
            let event = self.rx.recv().await?;
            if self.take(event, &relevant) {
                break;
            }
        }
        self.handed_out = true;
        let mut quiet_at = Instant::now() + settle;
        while let Ok(Some(event)) = tokio::time::timeout_at(quiet_at, self.rx.recv()).await {
            if self.take(event, &relevant) {
                quiet_at = Instant::now() + settle;
            }
        }
        Some(())
    }

    fn take(
        &mut self,
        event: notify::Result<notify::Event>,
        relevant: &impl Fn(&Path) -> bool,
    ) -> bool {
        let Ok(event) = event else {
            return true;
        };
        // Whatever was dropped came before this event: take it as a change.
        if self.overflow.swap(false, Ordering::Relaxed) {
            return true;
        }
        if !is_change(&event.kind) {
            return false;
        }
        let paths: Vec<PathBuf> = event.paths.into_iter().filter(|p| relevant(p)).collect();
        let hit = !paths.is_empty();
        self.pending.extend(paths);
        hit
    }

    /// The changes handed out by [`Events::settled`] have been processed.
    pub fn pass_done(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        let handed_out = std::mem::replace(&mut self.handed_out, false);
        if !handed_out && pending.is_empty() {
            return;
        }
        self.done.send_modify(|d| {
            d.passes += 1;
            let pass = d.passes;
            d.handled.extend(pending.into_iter().map(|p| (p, pass)));
        });
    }
}

/// How far a watch has got, for whoever must wait for it. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Progress(watch::Receiver<Done>);

impl Progress {
    /// Resolves once the watch is armed; `None` if it ended first.
    pub async fn ready(&mut self) -> Option<()> {
        self.0.wait_for(|d| d.ready).await.ok().map(|_| ())
    }

    /// The passes finished so far: read it before making a change, for
    /// [`Progress::processed`].
    pub fn passes(&self) -> u64 {
        self.0.borrow().passes
    }

    /// Resolves once more than `seen` passes handled changes (read `seen` with
    /// [`Progress::passes`] before the work that might miss one); `None` if the watch ended.
    pub async fn pass_after(&mut self, seen: u64) -> Option<()> {
        self.0.wait_for(|d| d.passes > seen).await.ok().map(|_| ())
    }

    /// Resolves once a pass after `since` processed a change of `path`; `None` if the watch
    /// ended first. A pass processes every change received before it, so a change made
    /// earlier to another watched file has been processed too.
    pub async fn processed(&mut self, path: &Path, since: u64) -> Option<()> {
        self.0
            .wait_for(|d| d.handled.get(path).is_some_and(|&pass| pass > since))
            .await
            .ok()
            .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn inotify_limits_say_which_sysctl_to_raise() {
        let dir = Path::new("/home/u/.cursor");
        let watches = WatchError::new(dir, notify::Error::new(notify::ErrorKind::MaxFilesWatch));
        let instances = WatchError::new(
            dir,
            notify::Error::io(std::io::Error::from_raw_os_error(libc::EMFILE)),
        );
        let gone = WatchError::new(dir, notify::Error::path_not_found());
        assert!(watches.is_limit() && instances.is_limit() && !gone.is_limit());
        let text = watches.to_string();
        assert!(
            text.contains("/home/u/.cursor")
                && text.contains("sudo sysctl fs.inotify.max_user_watches="),
            "{text}"
        );
        let text = instances.to_string();
        assert!(
            text.contains("sudo sysctl fs.inotify.max_user_instances="),
            "{text}"
        );
    }

    #[tokio::test]
    async fn progress_says_ready_and_which_changes_were_processed() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let (mut dirs, mut events) = watcher(dir.path()).unwrap();
        dirs.add(dir.path()).unwrap();
        let mut progress = events.progress();
        events.set_ready();
        progress.ready().await.unwrap();
        let since = progress.passes();
        std::fs::write(dir.path().join("ignored"), "x").unwrap();
        std::fs::write(&a, "x").unwrap();
        let is_a = |p: &Path| p == a;
        events
            .settled(Duration::from_millis(50), is_a)
            .await
            .unwrap();
        assert_eq!(progress.passes(), since, "not processed before pass_done");
        events.pass_done();
        progress.processed(&a, since).await.unwrap();
        assert_eq!(progress.passes(), since + 1);
        std::fs::write(&b, "x").unwrap();
        let is_b = |p: &Path| p == b;
        events
            .settled(Duration::from_millis(50), is_b)
            .await
            .unwrap();
        events.pass_done();
        progress.processed(&b, since + 1).await.unwrap();
        drop(events);
        assert!(progress.processed(&a, since + 1).await.is_none(), "ended");
    }

    /// A storm of changes to files nobody watches for, faster than the task reads: the queue
    /// stays at its bound, and the events it had to drop count as a possible change (one of
    /// them may have been an edit), so the next wait ends instead of missing it.
    #[tokio::test]
    async fn a_storm_fills_the_queue_to_its_bound_and_counts_as_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let (mut dirs, mut events) = watcher(dir.path()).unwrap();
        dirs.add(dir.path()).unwrap();
        let mut n = 0;
        while !events.overflow.load(Ordering::Relaxed) {
            std::fs::write(dir.path().join(format!("noise-{}", n % 64)), "x").unwrap();
            n += 1;
            assert!(n < 1_000_000, "the queue never filled");
        }
        assert_eq!(events.rx.len(), QUEUE);
        let nothing_relevant = |_: &Path| false;
        let waited = tokio::time::timeout(
            Duration::from_secs(10),
            events.settled(Duration::from_millis(10), nothing_relevant),
        )
        .await;
        assert_eq!(waited, Ok(Some(())));
    }
}
