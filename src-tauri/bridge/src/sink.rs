//! A background thread for everything the bridge writes that is not protocol: the server's
//! stderr passed through to ours, the JSONL event log, (when on) the debug log of whole
//! messages, and the server's tool pins. No terminal or file write ever runs on the relay's
//! thread, so a client that does not drain our stderr cannot stall the relay, and logging
//! costs the hot path a short lock and no system call.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use serde::Serialize;

use super::router::PinRecord;
use warden_wire::events::{Event, JsonlLog};
use warden_wire::redact::redact_line;

/// Stderr held for the writer beyond this is dropped (and counted) rather than stalling.
const STDERR_BACKLOG: usize = 1 << 20;
const FLUSH_EVERY: Duration = Duration::from_millis(200);
/// The debug log rotates at this size (keeping 2 older files): messages are large.
const DEBUG_LOG_BYTES: u64 = 32 << 20;

#[derive(Default)]
struct Queue {
    events: Vec<Event>,
    stderr: Vec<Bytes>,
    stderr_bytes: usize,
    dropped_stderr: u64,
    /// Whole messages for the debug log: where from, and the line.
    debug: Vec<(&'static str, Bytes)>,
    /// Tool definitions to merge into the server's pin file.
    pins: Vec<PinRecord>,
    closed: bool,
}

type Shared = Arc<(Mutex<Queue>, Condvar)>;

pub struct Sink {
    shared: Shared,
    thread: Mutex<Option<JoinHandle<()>>>,
    debug: AtomicBool,
    /// The supervisor connection, which gets a copy of every event.
    subscriber: Mutex<Option<tokio::sync::mpsc::UnboundedSender<Event>>>,
}

#[derive(Serialize)]
struct Record<'a> {
    server: &'a str,
    session: u32,
    #[serde(flatten)]
    event: &'a Event,
}

/// One line of the debug log.
#[derive(Serialize)]
struct DebugRecord<'a> {
    ts_ms: u64,
    session: u32,
    /// `client`: the client sent it; `server`: the server sent it.
    from: &'a str,
    message: serde_json::Value,
}

/// `<server>-<hash>.jsonl` → `<server>-<hash>.debug.jsonl`.
pub fn debug_log_path(event_log: &Path) -> PathBuf {
    event_log.with_extension("debug.jsonl")
}

impl Sink {
    /// Starts the writer; `log` is the JSONL event log (none: events are dropped). The debug
    /// log, when on, is beside it ([`debug_log_path`]).
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
            debug: AtomicBool::new(false),
            subscriber: Mutex::new(None),
        }
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.shared.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues an event; it reaches the file within [`FLUSH_EVERY`], and the supervisor (if
    /// connected) at once.
    pub fn event(&self, event: Event) {
        if let Some(tx) = &*self
            .subscriber
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
        {
            let _ = tx.send(event.clone());
        }
        self.queue().events.push(event);
    }

    /// Whether a supervisor connection receives the events.
    pub fn has_subscriber(&self) -> bool {
        self.subscriber
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// Sets (or clears) the receiver of a copy of every event.
    pub fn set_subscriber(&self, tx: Option<tokio::sync::mpsc::UnboundedSender<Event>>) {
        *self
            .subscriber
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = tx;
    }

    /// Turns full message logging on or off.
    pub fn set_debug(&self, on: bool) {
        self.debug.store(on, Ordering::Relaxed);
    }

    pub fn debug_on(&self) -> bool {
        self.debug.load(Ordering::Relaxed)
    }

    /// Queues a whole message for the debug log, if debug logging is on. It is redacted on
    /// the writer thread, off the relay's path.
    pub fn debug(&self, from: &'static str, line: &Bytes) {
        if self.debug_on() {
            self.queue().debug.push((from, line.clone()));
        }
    }

    /// Queues tool definitions for the server's pin file (written before the session ends).
    pub fn pins(&self, record: PinRecord) {
        self.queue().pins.push(record);
        self.shared.1.notify_one();
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

/// A log file opened on first use; a failure is reported once and then the log is skipped.
struct LazyLog {
    path: Option<PathBuf>,
    max_bytes: u64,
    keep: u32,
    log: Option<JsonlLog>,
    failed: bool,
}

impl LazyLog {
    fn new(path: Option<PathBuf>, max_bytes: u64, keep: u32) -> LazyLog {
        LazyLog {
            path,
            max_bytes,
            keep,
            log: None,
            failed: false,
        }
    }

    /// Appends the records in one write; nothing happens for none.
    fn append(&mut self, server: &str, records: &[impl Serialize]) {
        if records.is_empty() {
            return;
        }
        if self.log.is_none() && !self.failed {
            let Some(path) = &self.path else { return };
            match JsonlLog::open(path, self.max_bytes, self.keep) {
                Ok(l) => self.log = Some(l),
                Err(e) => {
                    self.failed = true;
                    eprintln!(
                        "warden[{server}]: cannot write {}: {e} (relaying goes on without it; set WARDEN_STATE_DIR to a writable directory)",
                        path.display()
                    );
                }
            }
        }
        if let Some(log) = &mut self.log
            && let Err(e) = log.append_all(records)
        {
            eprintln!("warden[{server}]: log write failed: {e}");
            self.log = None;
            self.failed = true;
        }
    }
}

fn writer(shared: &Shared, server: &str, log_path: Option<PathBuf>) {
    let session = std::process::id();
    let mut debug_log = LazyLog::new(log_path.as_deref().map(debug_log_path), DEBUG_LOG_BYTES, 2);
    let mut log = LazyLog::new(
        log_path,
        JsonlLog::DEFAULT_MAX_BYTES,
        JsonlLog::DEFAULT_KEEP,
    );
    loop {
        let (mut events, stderr, dropped, debug, pins, closed) = {
            let mut q = shared.0.lock().unwrap_or_else(PoisonError::into_inner);
            if q.stderr.is_empty() && q.pins.is_empty() && !q.closed {
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
                std::mem::take(&mut q.debug),
                std::mem::take(&mut q.pins),
                q.closed,
            )
        };
        for record in pins {
            if let Err(e) = record.save() {
                let code = warden_wire::codes::Code::PinsInvalid;
                events.push(Event::new("pins_invalid").code(code).detail(e));
            }
        }
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
        let records: Vec<Record<'_>> = events
            .iter()
            .map(|event| Record {
                server,
                session,
                event,
            })
            .collect();
        log.append(server, &records);
        let ts_ms = Event::new("debug").ts_ms;
        let debug: Vec<DebugRecord<'_>> = debug
            .iter()
            .map(|(from, line)| DebugRecord {
                ts_ms,
                session,
                from,
                message: redact_line(line),
            })
            .collect();
        debug_log.append(server, &debug);
        if closed {
            return;
        }
    }
}
