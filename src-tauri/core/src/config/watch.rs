//! Watching config.toml so running bridges pick up edits without a restart.
//!
//! The directory is watched, not the file: editors save by writing a new file and renaming it
//! over the old one, which a watch on the file itself would lose. Bursts of events (one save is
//! often several) are coalesced into one reload.

use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::event::{AccessKind, AccessMode, EventKind};
use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;

/// Events closer together than this are one change.
const SETTLE: Duration = Duration::from_millis(100);

/// Whether an event may be an edit. Opening or reading the file is not (notify reports opens
/// on Linux): counting them made each reload, this bridge's or another's, trigger the next
/// one, ten times a second for good. Closing the file after writing it ends a save.
pub(crate) fn is_change(kind: &EventKind) -> bool {
    !matches!(kind, EventKind::Access(a) if *a != AccessKind::Close(AccessMode::Write))
}

pub struct ConfigWatch {
    _watcher: notify::RecommendedWatcher,
    rx: mpsc::UnboundedReceiver<()>,
}

impl ConfigWatch {
    /// Watches `files` through their directories (created if missing, so a file written later
    /// is seen).
    pub fn new(files: &[PathBuf]) -> notify::Result<ConfigWatch> {
        let targets: Vec<PathBuf> = files
            .iter()
            .map(|f| match f.parent().filter(|d| !d.as_os_str().is_empty()) {
                Some(_) => f.clone(),
                None => Path::new(".").join(f),
            })
            .collect();
        let watched = targets.clone();
        let (tx, rx) = mpsc::unbounded_channel();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                let relevant = match &event {
                    Ok(e) => is_change(&e.kind) && e.paths.iter().any(|p| watched.contains(p)),
                    Err(_) => true, // a watch error may have lost an event: reload to be sure
                };
                if relevant {
                    let _ = tx.send(());
                }
            })?;
        let mut dirs: Vec<&Path> = targets.iter().filter_map(|t| t.parent()).collect();
        dirs.dedup();
        for dir in dirs {
            let _ = std::fs::create_dir_all(dir);
            watcher.watch(dir, RecursiveMode::NonRecursive)?;
        }
        Ok(ConfigWatch {
            _watcher: watcher,
            rx,
        })
    }

    /// Resolves after the file changed and the burst of events settled; `None` if the watch
    /// ended.
    pub async fn changed(&mut self) -> Option<()> {
        self.rx.recv().await?;
        while let Ok(Some(())) = tokio::time::timeout(SETTLE, self.rx.recv()).await {}
        Some(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn sees_writes_and_rename_saves_but_not_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let mut watch = ConfigWatch::new(std::slice::from_ref(&path)).unwrap();
        std::fs::write(dir.path().join("other.txt"), "x").unwrap();
        std::fs::write(&path, "[defaults]\n").unwrap();
        tokio::time::timeout(Duration::from_secs(5), watch.changed())
            .await
            .unwrap()
            .unwrap();
        let tmp = dir.path().join(".config.toml.swp");
        std::fs::write(&tmp, "[defaults]\nretries = 1\n").unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        tokio::time::timeout(Duration::from_secs(5), watch.changed())
            .await
            .unwrap()
            .unwrap();
    }
}
