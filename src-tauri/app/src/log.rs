//! The app's log: stderr for both roles, and for the host also a file a user can attach to
//! a bug report (`warden_config::paths::app_log`), capped in size: past [`CAP`] it becomes
//! `<file>.1` (the one before is dropped) and a new file starts. The window's process logs
//! only to its stderr, which the host reads and logs, so the file has both.
//! `$WARDEN_LOG` filters both (`warn` by default), so the file holds what stderr holds:
//! warnings and errors, never a request's or a server's data.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

/// The file's size at which it is rolled over.
pub const CAP: u64 = 1 << 20;

/// Starts logging; `to_file`: the host's file too.
pub fn init(to_file: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("WARDEN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let file = to_file
        .then(|| Capped::open(warden_config::paths::app_log()))
        .flatten()
        .map(Mutex::new);
    let file: &'static Option<Mutex<Capped>> = Box::leak(Box::new(file));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(move || Sink(file.as_ref()))
        .init();
}

/// Where each line goes: stderr, and the file when there is one.
struct Sink(Option<&'static Mutex<Capped>>);

impl Write for Sink {
    /// Stderr may be gone (the window's is a pipe to the host that started it, and a host
    /// the window starts again after that one died inherits it): a line that cannot be
    /// written is dropped, as is one the file cannot take. tracing's own writer would report
    /// it with `eprintln!`, which panics then, and took down the task that was about to
    /// start the host again.
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = std::io::stderr().write_all(buf);
        if let Some(file) = self.0 {
            file.lock().unwrap_or_else(|e| e.into_inner()).write(buf);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A log file rolled over at [`CAP`].
pub struct Capped {
    path: PathBuf,
    file: Option<File>,
    len: u64,
}

impl Capped {
    /// Opens `path` to append (private to the user), with a line saying this host started;
    /// `None` when it cannot be opened (then the log is stderr's only).
    pub fn open(path: PathBuf) -> Option<Capped> {
        let mut capped = Capped {
            file: None,
            len: 0,
            path,
        };
        capped.reopen(false).ok()?;
        let started = format!(
            "warden-app {} started (pid {}), logging {} and up\n",
            env!("CARGO_PKG_VERSION"),
            std::process::id(),
            std::env::var("WARDEN_LOG").unwrap_or_else(|_| "warn".into())
        );
        capped.write(started.as_bytes());
        Some(capped)
    }

    fn reopen(&mut self, truncate: bool) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.create(true);
        if truncate {
            options.write(true).truncate(true);
        } else {
            options.append(true);
        }
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&self.path)?;
        self.len = file.metadata()?.len();
        self.file = Some(file);
        Ok(())
    }

    /// Appends `buf`, first rolling the file over if it would pass [`CAP`]. Failures drop
    /// the line (and, past a failed roll-over, the file).
    pub fn write(&mut self, buf: &[u8]) {
        if self.len + buf.len() as u64 > CAP && self.len > 0 {
            let mut old = self.path.clone().into_os_string();
            old.push(".1");
            self.file = None;
            let _ = std::fs::rename(&self.path, &old);
            if self.reopen(true).is_err() {
                return;
            }
        }
        if let Some(file) = self.file.as_mut()
            && file.write_all(buf).is_ok()
        {
            self.len += buf.len() as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Past the cap the file rolls over once into `.1`: both hold whole lines, the newest
    /// last, and together they never pass twice the cap.
    #[test]
    fn the_file_rolls_over_at_its_cap_and_keeps_one_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state").join("warden-app.log");
        let mut log = Capped::open(path.clone()).unwrap();
        let line = format!("{}\n", "x".repeat(999));
        let lines = (3 * CAP / 1000) as usize;
        for i in 0..lines {
            log.write(format!("{i:08} {line}").as_bytes());
        }
        let now = std::fs::read_to_string(&path).unwrap();
        let before = std::fs::read_to_string(dir.path().join("state/warden-app.log.1")).unwrap();
        let last = now.lines().last().unwrap();
        assert!(
            last.starts_with(&format!("{:08} ", lines - 1))
                && now.len() as u64 <= CAP
                && before.len() as u64 <= CAP
                && before.lines().chain(now.lines()).all(|l| l.len() == 1008)
        );
    }
}
