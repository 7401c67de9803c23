//! The running service: the control socket served, and the periodic work (session judging,
//! probes and pre-warm, orphan sweeps), until the host shuts it down.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::service::{OrphanPolicy, Supervisor};
use super::{probe, serve};
use warden_control as control;

/// How often sessions are judged and health is recomputed.
pub const TICK: Duration = Duration::from_millis(250);

impl Supervisor {
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
            tokio::spawn(Arc::clone(self).clients_prober()),
            tokio::spawn(Arc::clone(self).sweeper()),
        ];
        shutdown.await;
        // The socket goes first: a connection that then ends tells its peer (the window) that
        // the supervisor stopped, not that it died (which leaves the socket behind).
        let _ = std::fs::remove_file(&self.opts.socket);
        for t in &tasks {
            t.abort();
        }
        if let Some(w) = self.watcher().take() {
            w.stop();
        }
        self.lock().history.close();
        Ok(())
    }

    /// Judges the sessions every [`TICK`].
    async fn ticker(self: Arc<Self>) {
        let mut every = tokio::time::interval(TICK);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            self.tick(Instant::now());
        }
    }

    /// Pre-warms once if asked, then probes every known server each `probe_interval`.
    async fn prober(self: Arc<Self>) {
        if self.opts.prewarm {
            for (name, command) in self.known_commands() {
                if probe::is_package_runner(&command) {
                    tracing::info!("pre-warming {name}: {}", command.join(" "));
                    self.run_probe(Some(name), command, &[], None, probe::PREWARM_TIMEOUT)
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
                if super::clients_probe::runs_unattended(&command) {
                    self.run_probe(Some(name), command, &[], None, self.opts.probe_timeout)
                        .await;
                }
            }
        }
    }

    /// Looks for orphans each `orphan_interval`; stops them under [`OrphanPolicy::Stop`].
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
}
