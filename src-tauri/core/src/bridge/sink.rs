//! A background thread for everything the bridge writes that is not protocol: the server's
//! stderr passed through to ours, and the JSONL event log. No terminal or file write ever
//! runs on the relay's thread, so a client that does not drain our stderr cannot stall the
//! relay, and logging costs the hot path a short lock and no system call.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use serde::Serialize;

use crate::events::{Event, JsonlLog};

/// Stderr held for the writer beyond this is dropped (and counted) rather than stalling.
const STDERR_BACKLOG: usize = 1 << 20;
const FLUSH_EVERY: Duration = Duration::from_millis(200);

#[derive(Default)]
struct Queue {
    events: Vec<Event>,
    stderr: Vec<Bytes>,
    stderr_bytes: usize,
    dropped_stderr: u64,
    closed: bool,
}

type Shared = Arc<(Mutex<Queue>, Condvar)>;

pub struct Sink {
    shared: Shared,
    thread: Mutex<Option<JoinHandle<()>>>,
}

#[derive(Serialize)]
struct Record<'a> {
    server: &'a str,
    session: u32,
    #[serde(flatten)]
    event: &'a Event,
}

impl Sink {
    /// Starts the writer; `log` is the JSONL file (none: events are dropped).
    pub fn start(server: &str, log: Option<PathBuf>) -> Sink {
        let shared: Shared = Arc::default();
        let thread_shared = Arc::clone(&shared);
        let server = server.to_owned();
        let thread = std::thread::Builder::new()
            .name("warden-sink".into())
            .spawn(move || writer(&thread_shared, &server, log))
            .ok();
        Sink {
            shared,
            thread: Mutex::new(thread),
        }
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.shared.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues an event; it reaches the file within [`FLUSH_EVERY`].
    pub fn event(&self, event: Event) {
        self.queue().events.push(event);
    }

    /// Queues server stderr for passthrough, now.
    pub fn stderr(&self, chunk: Bytes) {
        let mut q = self.queue();
        if q.stderr_bytes + chunk.len() > STDERR_BACKLOG {
            q.dropped_stderr += chunk.len() as u64;
            return;
        }
        q.stderr_bytes += chunk.len();
        q.stderr.push(chunk);
        drop(q);
        self.shared.1.notify_one();
    }

    /// Writes everything queued and stops the thread; later items are dropped.
    pub fn close(&self) {
        self.queue().closed = true;
        self.shared.1.notify_one();
        let thread = self
            .thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

fn writer(shared: &Shared, server: &str, log_path: Option<PathBuf>) {
    let session = std::process::id();
    let mut log = None;
    let mut log_failed = false;
    loop {
        let (events, stderr, dropped, closed) = {
            let mut q = shared.0.lock().unwrap_or_else(PoisonError::into_inner);
            if q.stderr.is_empty() && !q.closed {
                q = shared
                    .1
                    .wait_timeout(q, FLUSH_EVERY)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            q.stderr_bytes = 0;
            (
                std::mem::take(&mut q.events),
                std::mem::take(&mut q.stderr),
                std::mem::take(&mut q.dropped_stderr),
                q.closed,
            )
        };
        if !stderr.is_empty() || dropped > 0 {
            let mut err = std::io::stderr().lock();
            for chunk in &stderr {
                let _ = err.write_all(chunk);
            }
            if dropped > 0 {
                let _ = writeln!(
                    err,
                    "\nwarden[{server}]: {dropped} bytes of server stderr dropped: nobody was reading it"
                );
            }
            let _ = err.flush();
        }
        if !events.is_empty() {
            if let Some(path) = log_path.as_ref().filter(|_| log.is_none() && !log_failed) {
                match JsonlLog::open(path, JsonlLog::DEFAULT_MAX_BYTES, JsonlLog::DEFAULT_KEEP) {
                    Ok(l) => log = Some(l),
                    Err(e) => {
                        log_failed = true;
                        eprintln!(
                            "warden[{server}]: cannot write the event log {}: {e} (relaying goes on without it; set WARDEN_STATE_DIR to a writable directory)",
                            path.display()
                        );
                    }
                }
            }
            if let Some(l) = &mut log {
                for event in &events {
                    if let Err(e) = l.append(&Record {
                        server,
                        session,
                        event,
                    }) {
                        eprintln!("warden[{server}]: event log write failed: {e}");
                        break;
                    }
                }
            }
        }
        if closed {
            return;
        }
    }
}
