//! Watching config.toml so running bridges pick up edits without a restart (on
//! [`crate::fswatch`], like the clients' watcher).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::fswatch::{self, Dirs, Events, Progress, WatchError};

/// Events closer together than this are one change.
const SETTLE: Duration = Duration::from_millis(100);

pub struct ConfigWatch {
    _dirs: Dirs,
    events: Events,
    targets: Vec<PathBuf>,
}

impl ConfigWatch {
    /// Watches `files` through their directories (created if missing, so a file written later
    /// is seen).
    pub fn new(files: &[PathBuf]) -> Result<ConfigWatch, WatchError> {
        let targets: Vec<PathBuf> = files
            .iter()
            .map(|f| match f.parent().filter(|d| !d.as_os_str().is_empty()) {
                Some(_) => f.clone(),
                None => Path::new(".").join(f),
            })
            .collect();
        let first = targets.first().map_or(Path::new("."), PathBuf::as_path);
        let (mut dirs, events) = fswatch::watcher(first)?;
        let mut parents: Vec<&Path> = targets.iter().filter_map(|t| t.parent()).collect();
        parents.dedup();
        for dir in parents {
            let _ = std::fs::create_dir_all(dir);
            dirs.add(dir)?;
        }
        events.set_ready();
        Ok(ConfigWatch {
            _dirs: dirs,
            events,
            targets,
        })
    }

    /// Resolves after a file changed and the burst of events settled; `None` if the watch
    /// ended. Calling it again marks the previous change as processed.
    pub async fn changed(&mut self) -> Option<()> {
        self.events.pass_done();
        let targets = &self.targets;
        self.events
            .settled(SETTLE, |p| targets.iter().any(|t| t == p))
            .await
    }

    /// How far the watch has got.
    pub fn progress(&self) -> Progress {
        self.events.progress()
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
        let mut progress = watch.progress();
        progress.ready().await.unwrap();
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
