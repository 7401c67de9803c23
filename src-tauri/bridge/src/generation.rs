//! One server process ("generation") and its tasks: server pump, server writer, stderr pump.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use super::child::{self, Server};
use super::links::{Line, Links, ServerQueues, Side};
use super::pumps::{STDERR_TAIL, pump, pump_stderr, server_writer};
use warden_config::Limits;

/// One server process and its tasks.
pub(super) struct Generation {
    pub(super) id: u64,
    pub(super) server: Server,
    pub(super) pump: JoinHandle<std::io::Result<()>>,
    writer: JoinHandle<std::io::Result<()>>,
    stderr: JoinHandle<()>,
    tail: Arc<Mutex<VecDeque<u8>>>,
}

impl Generation {
    pub(super) fn start(
        server: Server,
        pipes: child::Pipes,
        id: u64,
        links: &Links,
        queues: &Arc<tokio::sync::Mutex<ServerQueues>>,
        max: usize,
    ) -> Generation {
        let tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL)));
        #[cfg(unix)]
        super::spin::set_server_out(Some(std::os::fd::AsFd::as_fd(&pipes.stdout)));
        #[cfg(target_os = "linux")]
        let cut = links.cut_to.as_ref().and_then(|client| {
            super::splice::Splicer::new(std::os::fd::AsFd::as_fd(&pipes.stdout), client)
        });
        #[cfg(not(target_os = "linux"))]
        let cut = super::pumps::Cut;
        Generation {
            id,
            server,
            pump: tokio::spawn(pump(pipes.stdout, max, links.clone(), Side::Server, cut)),
            writer: tokio::spawn(server_writer(
                Box::pin(pipes.stdin),
                Arc::clone(queues),
                id,
                links.clone(),
            )),
            stderr: tokio::spawn(pump_stderr(pipes.stderr, links.clone(), Arc::clone(&tail))),
            tail,
        }
    }

    /// Resolves when the server can no longer be talked to; says why when it is an error.
    pub(super) async fn ended(&mut self) -> Result<(), String> {
        tokio::select! {
            r = &mut self.pump => task_result("reading from the server", r),
            r = &mut self.writer => task_result("writing to the server", r),
            _ = self.server.exit.wait_for(Option::is_some) => Ok(()),
        }
    }

    /// After the server ended: relay what it already wrote, make sure the process group is
    /// gone, and describe how it ended.
    pub(super) async fn finish(mut self, why: Result<(), String>) -> (String, String) {
        finish_relay(&mut self.pump).await;
        #[cfg(unix)]
        super::spin::set_server_out(None);
        let exited = tokio::time::timeout(
            Duration::from_secs(1),
            self.server.exit.wait_for(Option::is_some),
        )
        .await
        .is_ok();
        let how = if exited {
            self.server.shut_down(Duration::from_millis(500)).await
        } else {
            format!("stopped talking and {}", self.server.kill().await)
        };
        let how = match why {
            Ok(()) => how,
            Err(e) => format!("{how} ({e})"),
        };
        self.stop_tasks().await;
        (how, tail_text(&self.tail))
    }

    pub(super) async fn stop_tasks(&mut self) {
        self.pump.abort();
        self.stderr.abort();
        self.writer.abort();
        // The writer holds the server queues; wait until it let go of them. (A finished
        // writer has; its handle may already have been polled to completion.)
        if !self.writer.is_finished() {
            let _ = (&mut self.writer).await;
        }
    }
}

/// The command line of the local ripgrep fallback: this executable's `rg-server`, searching
/// `fallback_roots` (default: the bridge's working directory).
pub(super) fn fallback_command(limits: &Limits) -> Vec<OsString> {
    // On Linux, the running binary itself: an upgrade that replaced the file on disk (its
    // path then reads `warden (deleted)`) must not break the fallback of running bridges.
    // Not in a sandbox, where /proc/self is the sandbox's own process.
    let exe = if cfg!(target_os = "linux")
        && !limits.sandbox
        && std::path::Path::new("/proc/self/exe").exists()
    {
        OsString::from("/proc/self/exe")
    } else {
        std::env::current_exe().map_or_else(|_| OsString::from("warden"), PathBuf::into_os_string)
    };
    let mut cmd = vec![exe, "rg-server".into()];
    for root in &limits.fallback_roots {
        cmd.push("--root".into());
        cmd.push(root.clone().into_os_string());
    }
    cmd
}

pub(super) fn task_result(
    what: &str,
    r: Result<std::io::Result<()>, tokio::task::JoinError>,
) -> Result<(), String> {
    match r {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!("{what} failed: {e}")),
        Err(e) => Err(format!("{what} stopped unexpectedly: {e}")),
    }
}

/// Hands the lines still queued for a server that is gone back to the router, which drops
/// the requests among them (`server_gone` settled those) and keeps the notifications. Until
/// the next server's writer would, nothing empties the queue, and a client pump waiting for
/// room in it reads nothing: with the circuit open, the next server starts only when the
/// client's next request gets through, so the session would wait forever.
pub(super) async fn drain_stale(queues: &Arc<tokio::sync::Mutex<ServerQueues>>, links: &Links) {
    let mut queues = queues.lock().await;
    while let Ok((_, line)) = queues.data.try_recv() {
        if let Line::Data(bytes) = line {
            links.route_now(|r, out| r.undelivered(bytes, Instant::now(), out));
        }
    }
}

/// Lets the server pump relay what is left (bounded: a grandchild may hold stdout open).
pub(super) async fn finish_relay(server_pump: &mut JoinHandle<std::io::Result<()>>) {
    if !server_pump.is_finished() {
        let _ = tokio::time::timeout(Duration::from_secs(1), &mut *server_pump).await;
    }
}

/// The end of the server's stderr as events and errors carry it: redacted (keychain values,
/// tokens, `KEY=value`).
fn tail_text(tail: &Mutex<VecDeque<u8>>) -> String {
    let tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
    let bytes: Vec<u8> = tail.iter().copied().collect();
    warden_wire::redact::redact_text(&String::from_utf8_lossy(&bytes))
}
