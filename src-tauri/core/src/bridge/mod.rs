//! The bridge: one process between an MCP client (stdin/stdout) and one stdio server (a child
//! process), relaying both ways with the router's rules.
//!
//! Tasks, all on one current-thread runtime:
//! - client pump: frames from our stdin → router → server writer
//! - server pump: frames from the child's stdout → router → client writer
//! - two writers: batch queued lines into few system calls; bridge-made lines (errors,
//!   cancellations) go through an unbounded side queue so they never wait behind a full pipe
//! - stderr pump: child stderr → sink thread (passthrough) and a tail kept for error messages
//! - watchdog: sleeps until the router's next deadline
//!
//! Every task's end is observed by [`run`]: whatever stops first decides the shutdown, and
//! every request still waiting gets an explicit error. Nothing stalls silently.

pub mod child;
pub mod router;
mod sink;
mod stdio;

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::{Notify, mpsc};
use tokio::task::JoinHandle;

use crate::config::Limits;
use crate::events::Event;
use crate::protocol::FrameReader;
use child::Server;
use router::{Out, Router};
use sink::Sink;

/// Lines queued towards one side before the pump feeding it waits (backpressure).
const QUEUE: usize = 64;
const STDERR_TAIL: usize = 8 * 1024;

pub struct Options {
    pub server: String,
    pub command: Vec<OsString>,
    pub limits: Limits,
    /// The JSONL event log; `None` keeps no log.
    pub event_log: Option<PathBuf>,
}

/// How a bridge session ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Exit {
    /// The client closed stdin (or asked us to stop) and the server was shut down.
    Clean,
    /// The bridge could not go on; the reason is for a person.
    Failed(String),
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Spawn(#[from] child::SpawnError),
    #[error("cannot start the bridge runtime: {0}")]
    Runtime(std::io::Error),
}

/// Runs one session to its end on a new current-thread runtime.
pub fn run(options: Options) -> Result<Exit, Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::Runtime)?;
    runtime.block_on(run_async(options))
}

enum Line {
    Data(Bytes),
    Finish,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Client,
    Server,
}

/// Where router output goes. The side a pump feeds gets its bounded queue; the other side
/// gets the unbounded side queue.
#[derive(Clone)]
struct Links {
    router: Arc<Mutex<Router>>,
    to_client: mpsc::Sender<Bytes>,
    to_server: mpsc::Sender<Bytes>,
    side_client: mpsc::UnboundedSender<Line>,
    side_server: mpsc::UnboundedSender<Line>,
    sink: Arc<Sink>,
    wake: Arc<Notify>,
}

impl Links {
    fn router(&self) -> MutexGuard<'_, Router> {
        self.router.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends what the router produced; `pump` is the side whose bounded queue may apply
    /// backpressure (`None`: the watchdog, which never waits).
    async fn dispatch(&self, outs: &mut Vec<Out>, pump: Option<Side>) {
        for out in outs.drain(..) {
            match out {
                Out::Client(line) if pump == Some(Side::Server) => {
                    let _ = self.to_client.send(line).await;
                }
                Out::Server(line) if pump == Some(Side::Client) => {
                    let _ = self.to_server.send(line).await;
                }
                Out::Client(line) => {
                    let _ = self.side_client.send(Line::Data(line));
                }
                Out::Server(line) => {
                    let _ = self.side_server.send(Line::Data(line));
                }
                Out::Event(event) => self.sink.event(event),
                Out::WakeWatchdog => self.wake.notify_one(),
            }
        }
    }
}

async fn run_async(options: Options) -> Result<Exit, Error> {
    let Options {
        server: name,
        command,
        limits,
        event_log,
    } = options;
    let (mut server, pipes) = Server::spawn(&command)?;
    let sink = Arc::new(Sink::start(&name, event_log));
    let started = Event::new("session_start").detail(format!(
        "pid {} serving {:?}",
        server.pid,
        command
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
    ));
    sink.event(started);

    let max = limits.max_message_bytes;
    let router = Arc::new(Mutex::new(Router::new(&name, Arc::new(limits))));
    let (to_client, client_rx) = mpsc::channel(QUEUE);
    let (to_server, server_rx) = mpsc::channel(QUEUE);
    let (side_client, side_client_rx) = mpsc::unbounded_channel();
    let (side_server, side_server_rx) = mpsc::unbounded_channel();
    let links = Links {
        router,
        to_client,
        to_server,
        side_client,
        side_server,
        sink: Arc::clone(&sink),
        wake: Arc::default(),
    };

    let (client_in, client_out) = stdio::client_io();
    let stderr_tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL)));
    let mut client_pump = tokio::spawn(pump(client_in, max, links.clone(), Side::Client));
    let mut server_pump = tokio::spawn(pump(pipes.stdout, max, links.clone(), Side::Server));
    let mut client_writer = tokio::spawn(writer(client_out, client_rx, side_client_rx));
    let mut server_writer = tokio::spawn(writer(Box::pin(pipes.stdin), server_rx, side_server_rx));
    let stderr_pump = tokio::spawn(pump_stderr(
        pipes.stderr,
        links.clone(),
        Arc::clone(&stderr_tail),
    ));
    let mut watchdog = tokio::spawn(watchdog(links.clone()));
    let mut signals = Signals::new();

    // Phase 1: relay until one side ends.
    let end = tokio::select! {
        r = &mut client_pump => End::Client(task_result("reading from the client", r)),
        r = &mut client_writer => End::Client(task_result("writing to the client", r)),
        r = &mut server_pump => End::Server(task_result("reading from the server", r)),
        r = &mut server_writer => End::Server(task_result("writing to the server", r)),
        _ = server.exit.wait_for(Option::is_some) => End::Server(Ok(())),
        // The watchdog never returns; if it panics, timeouts would stop silently.
        r = &mut watchdog => End::Server(Err(match r {
            Ok(()) => "the watchdog stopped".to_owned(),
            Err(e) => format!("the watchdog failed: {e}"),
        })),
        () = signals.recv() => End::Client(Ok(())),
    };

    let exit = match end {
        End::Client(result) => {
            // The client is done: close the server's stdin and shut it down, still relaying
            // what it writes meanwhile (answers to the last requests).
            let _ = links.side_server.send(Line::Finish);
            let how = server.shut_down(child::GRACE).await;
            finish_relay(&mut server_pump).await;
            let _ = links.side_client.send(Line::Finish);
            let _ = tokio::time::timeout(Duration::from_secs(5), &mut client_writer).await;
            let why = result
                .as_ref()
                .err()
                .map_or(String::new(), |e| format!(" after an error: {e}"));
            sink.event(
                Event::new("session_end").detail(format!("client closed{why}; server {how}")),
            );
            match result {
                Ok(()) => Exit::Clean,
                Err(why) => Exit::Failed(why),
            }
        }
        End::Server(result) => {
            // The server is gone (or unusable): relay what it already wrote, fail every
            // waiting request with the reason, and stop.
            finish_relay(&mut server_pump).await;
            let exited = tokio::time::timeout(
                Duration::from_secs(1),
                server.exit.wait_for(Option::is_some),
            )
            .await
            .is_ok();
            let how = if exited {
                server.shut_down(Duration::from_millis(500)).await
            } else {
                format!("stopped talking and {}", server.kill().await)
            };
            let how = match result {
                Ok(()) => how,
                Err(why) => format!("{how} ({why})"),
            };
            let tail = tail_text(&stderr_tail);
            let mut outs = Vec::new();
            let failed = {
                let mut r = links.router();
                let n = r.pending_requests();
                r.server_gone(&how, &tail, Instant::now(), &mut outs);
                n
            };
            links.dispatch(&mut outs, None).await;
            let _ = links.side_client.send(Line::Finish);
            let _ = tokio::time::timeout(Duration::from_secs(5), &mut client_writer).await;
            sink.event(Event::new("server_exit").detail(how.clone()));
            let mut reason = format!("server `{name}` {how}");
            if failed > 0 {
                reason.push_str(&format!(
                    "; {failed} waiting request(s) were answered with server_exited"
                ));
            }
            if let Some(last) = tail.trim().lines().last() {
                reason.push_str(&format!(". Its last stderr line: {last}"));
            }
            Exit::Failed(reason)
        }
    };
    for task in [&client_pump, &server_pump] {
        task.abort();
    }
    stderr_pump.abort();
    watchdog.abort();
    server_writer.abort();
    sink.close();
    Ok(exit)
}

/// Which side ended the relay, and whether it ended in an error.
enum End {
    Client(Result<(), String>),
    Server(Result<(), String>),
}

fn task_result(
    what: &str,
    r: Result<std::io::Result<()>, tokio::task::JoinError>,
) -> Result<(), String> {
    match r {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!("{what} failed: {e}")),
        Err(e) => Err(format!("{what} stopped unexpectedly: {e}")),
    }
}

/// Lets the server pump relay what is left (bounded: a grandchild may hold stdout open).
async fn finish_relay(server_pump: &mut JoinHandle<std::io::Result<()>>) {
    if !server_pump.is_finished() {
        let _ = tokio::time::timeout(Duration::from_secs(1), &mut *server_pump).await;
    }
}

async fn pump<R: AsyncRead + Send + Unpin>(
    input: R,
    max: usize,
    links: Links,
    side: Side,
) -> std::io::Result<()> {
    let mut reader = FrameReader::new(input, max);
    let mut outs = Vec::with_capacity(4);
    while let Some(frame) = reader.next().await? {
        {
            let mut router = links.router();
            match side {
                Side::Client => router.from_client(frame, Instant::now(), &mut outs),
                Side::Server => router.from_server(frame, Instant::now(), &mut outs),
            }
            reader.set_max(router.limits().max_message_bytes);
        }
        links.dispatch(&mut outs, Some(side)).await;
    }
    Ok(())
}

async fn writer<W: AsyncWrite + Send + ?Sized>(
    out: std::pin::Pin<Box<W>>,
    mut data: mpsc::Receiver<Bytes>,
    mut side: mpsc::UnboundedReceiver<Line>,
) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(64 * 1024, out);
    let mut finishing = false;
    loop {
        let line = tokio::select! {
            biased;
            Some(line) = side.recv(), if !finishing => line,
            Some(line) = data.recv() => Line::Data(line),
            else => break,
        };
        match line {
            Line::Data(bytes) => write_line(&mut out, &bytes).await?,
            Line::Finish => finishing = true,
        }
        // Batch whatever else is ready into the same flush.
        loop {
            match side.try_recv() {
                Ok(Line::Data(bytes)) => write_line(&mut out, &bytes).await?,
                Ok(Line::Finish) => finishing = true,
                Err(_) => break,
            }
        }
        while let Ok(bytes) = data.try_recv() {
            write_line(&mut out, &bytes).await?;
        }
        out.flush().await?;
        if finishing && data.is_empty() {
            break;
        }
    }
    out.flush().await?;
    out.shutdown().await
}

async fn write_line<W: AsyncWrite + Unpin>(out: &mut W, line: &[u8]) -> std::io::Result<()> {
    out.write_all(line).await?;
    out.write_all(b"\n").await
}

async fn pump_stderr<R: AsyncRead + Unpin>(
    mut input: R,
    links: Links,
    tail: Arc<Mutex<VecDeque<u8>>>,
) {
    let mut buf = vec![0u8; 8 * 1024];
    loop {
        let n = match input.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        links.router().on_stderr(Instant::now());
        links.sink.stderr(Bytes::copy_from_slice(&buf[..n]));
        let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
        tail.extend(&buf[..n]);
        let excess = tail.len().saturating_sub(STDERR_TAIL);
        tail.drain(..excess);
    }
}

fn tail_text(tail: &Mutex<VecDeque<u8>>) -> String {
    let tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
    let bytes: Vec<u8> = tail.iter().copied().collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

async fn watchdog(links: Links) {
    let mut outs = Vec::new();
    loop {
        let next = links.router().tick(Instant::now(), &mut outs);
        links.dispatch(&mut outs, None).await;
        match next {
            Some(at) => {
                tokio::select! {
                    _ = tokio::time::sleep_until(at.into()) => {}
                    _ = links.wake.notified() => {}
                }
            }
            None => links.wake.notified().await,
        }
    }
}

/// SIGTERM, SIGINT and SIGHUP all mean: shut down cleanly.
struct Signals {
    #[cfg(unix)]
    list: [Option<tokio::signal::unix::Signal>; 3],
}

impl Signals {
    fn new() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let kinds = [
                SignalKind::terminate(),
                SignalKind::interrupt(),
                SignalKind::hangup(),
            ];
            Signals {
                list: kinds.map(|k| signal(k).ok()),
            }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    async fn recv(&mut self) {
        #[cfg(unix)]
        {
            async fn one(s: &mut Option<tokio::signal::unix::Signal>) {
                match s {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending().await,
                }
            }
            let [a, b, c] = &mut self.list;
            tokio::select! {
                () = one(a) => {}
                () = one(b) => {}
                () = one(c) => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
