//! Health before the first call: the stdio servers of the IDE configs are probed before any
//! client starts them (the app does this; `warden daemon --probe-ide`). Each server of every
//! active config file is started once at start and again when its entry changes, with the
//! `env` its client gives it (which also fills npx/uvx caches, so the IDE's first start is
//! fast); one that fails is probed again with backoff, 1 minute doubling to 30. Not probed:
//! servers with a live session (their bridge reports), commands that run as root (they would
//! ask for a password) or are shell command lines (they can do anything; the consent window
//! flags both), and servers whose secrets are in the keychain (reading it could ask to unlock
//! it; their bridge reads it when the client starts them). The switch is kept in a file
//! (`off` turns probing off). Config changes are seen through the config watcher (the app
//! runs it; `warden daemon --watch-clients`); without it, at the next retry.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::api::{ApiError, ErrorCode};
use super::service::{Supervisor, blocking};
use super::switches;
use super::{clients_api, probe};
use warden_clients::{self as clients, Launch, RiskKind};

/// The wait before a failed server is probed again; doubled after each failure.
const FIRST_RETRY: Duration = Duration::from_secs(60);
/// The longest wait between two probes of a failing server (and between two looks when
/// nothing fails, besides config changes).
const LAST_RETRY: Duration = Duration::from_secs(1800);

struct Tried {
    launch: Launch,
    ok: bool,
    next: Instant,
    backoff: Duration,
}

/// Whether `l` may be probed without asking anything of the user: from the user's own config
/// (not a project's), no keychain secrets, no `env` value the client would expand first
/// (`${VAR}`, `${input:x}`, `{env:VAR}`), not run as root, not a shell line; and it can be
/// started where its client starts it: no `cwd`, or one that is an existing absolute
/// directory (a relative one is the client's workspace's, which Warden does not know).
fn probeable(l: &Launch) -> bool {
    let expands = |v: &str| v.contains("${") || v.contains("{env:");
    if l.project || l.env.iter().any(|(_, v)| expands(v)) {
        return false;
    }
    let cwd_known = l
        .cwd
        .as_deref()
        .is_none_or(|d| !expands(d) && Path::new(d).is_absolute() && Path::new(d).is_dir());
    cwd_known && l.secret_env.is_empty() && runs_unattended(&l.command)
}

/// Whether `command` runs without asking anything (no sudo) and is not a shell command line:
/// what scheduled probes and the IDE prober may start on their own.
pub(super) fn runs_unattended(command: &[String]) -> bool {
    let (program, args) = command
        .split_first()
        .map_or(("", &[][..]), |(p, a)| (p.as_str(), a));
    !clients::risks(program, args)
        .iter()
        .any(|r| matches!(r.kind, RiskKind::Sudo | RiskKind::Shell))
}

impl Supervisor {
    /// Whether this supervisor probes the IDE servers: `None` when it never does.
    pub(super) fn probe_ide(&self) -> Option<bool> {
        self.opts
            .probe_ide
            .as_ref()
            .map(|_| self.probing.load(Ordering::SeqCst))
    }

    /// `ProbeIde`: turns probing on or off, and keeps the choice.
    pub(super) fn set_probe_ide(&self, on: bool) -> Result<bool, ApiError> {
        let Some(path) = &self.opts.probe_ide else {
            return Err(ApiError::new(
                ErrorCode::Invalid,
                "this supervisor does not probe IDE servers (the tray app does; `warden daemon --probe-ide`)",
            ));
        };
        switches::save_probe_ide(path, on)?;
        self.probing.store(on, Ordering::SeqCst);
        self.clients_changed.notify_one();
        Ok(on)
    }

    /// Probes what is due, then waits for a config change, the switch, or the next retry.
    pub(super) async fn clients_prober(self: Arc<Self>) {
        if self.opts.probe_ide.is_none() {
            return;
        }
        let mut tried: HashMap<String, Tried> = HashMap::new();
        loop {
            // Read before probing, so a config change during a long probe is not missed.
            let mut watch = self.watcher().as_ref().map(|w| w.progress());
            let seen = watch
                .as_ref()
                .map_or(0, warden_config::fswatch::Progress::passes);
            let on = self.probing.load(Ordering::SeqCst);
            if on {
                self.probe_due(&mut tried).await;
            }
            let now = Instant::now();
            let wait = tried
                .values()
                .filter(|t| on && !t.ok)
                .map(|t| t.next.saturating_duration_since(now))
                .min()
                .unwrap_or(LAST_RETRY)
                .max(Duration::from_secs(1));
            let config_changed = async {
                match &mut watch {
                    Some(p) => p.pass_after(seen).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = self.clients_changed.notified() => {}
                () = tokio::time::sleep(wait) => {}
                Some(()) = config_changed => {}
            }
        }
    }

    /// Probes the servers that may be probed now and are new, changed, or due for a retry;
    /// forgets the others (a server back from a live session is probed afresh).
    async fn probe_due(&self, tried: &mut HashMap<String, Tried>) {
        let asks = self
            .watcher()
            .as_ref()
            .is_some_and(|w| w.auto_rewrite() && !w.without_asking());
        let (launches, awaiting) = blocking(move || {
            let env = clients_api::env()?;
            let awaiting: BTreeSet<String> = if asks {
                clients::awaiting(&env, &clients::list(&env))
                    .into_iter()
                    .map(|(_, s)| s.name)
                    .collect()
            } else {
                BTreeSet::new()
            };
            Ok((clients::launches(&env), awaiting))
        })
        .await
        .unwrap_or_default();
        let live: BTreeSet<String> = self
            .lock()
            .sessions
            .values()
            .map(|s| s.hello.server.clone())
            .collect();
        let eligible: Vec<Launch> = launches
            .into_iter()
            .filter(|l| !live.contains(&l.name) && !awaiting.contains(&l.name) && probeable(l))
            .collect();
        tried.retain(|name, _| eligible.iter().any(|l| l.name == *name));
        for l in eligible {
            let before = tried.get(&l.name);
            let due = before.is_none_or(|t| t.launch != l || (!t.ok && Instant::now() >= t.next));
            if !due {
                continue;
            }
            let backoff = match before {
                Some(t) if !t.ok && t.launch == l => (t.backoff * 2).min(LAST_RETRY),
                _ => FIRST_RETRY,
            };
            let timeout = if probe::is_package_runner(&l.command) {
                probe::PREWARM_TIMEOUT
            } else {
                self.opts.probe_timeout
            };
            let report = self
                .run_probe(
                    Some(l.name.clone()),
                    l.command.clone(),
                    &l.env,
                    l.cwd.as_deref().map(Path::new),
                    timeout,
                )
                .await;
            tried.insert(
                l.name.clone(),
                Tried {
                    launch: l,
                    ok: report.ok,
                    next: Instant::now() + backoff,
                    backoff,
                },
            );
        }
    }
}
