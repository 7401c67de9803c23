//! The bridge: one process between an MCP client (stdin/stdout) and one stdio server (a child
//! process), relaying both ways with the router's rules, restarting the server when it dies.
//!
//! Tasks, all on one current-thread runtime:
//! - client pump: frames from our stdin → router → server writer
//! - client writer; watchdog (sleeps until the router's next deadline)
//! - per server process ("generation"): server pump (child stdout → router → client writer),
//!   server writer, stderr pump (→ sink thread, and a tail kept for error messages)
//!
//! Writers batch queued lines into few system calls; bridge-made lines (errors,
//! cancellations, replays) go through an unbounded side queue so they never wait behind a full
//! pipe. Lines for the server carry the generation they were routed for: a line routed for a
//! server that has died goes back to the router instead of reaching its successor before the
//! replayed handshake.
//!
//! Every task's end is observed by [`run`]: a client that leaves ends the session; a server
//! that ends is restarted with backoff (or the breaker opens); every request still waiting
//! gets an explicit error. Nothing stalls silently.

pub mod child;
#[cfg(unix)]
mod control;
mod guard;
pub mod router;
mod sink;
mod stdio;

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::{Notify, mpsc};
use tokio::task::JoinHandle;

use crate::config::{Config, ConfigWatch, Limits, Overrides, debug_flag_path};
use crate::events::Event;
use crate::protocol::{Frame, FrameReader, HEAD_KEEP, TAIL_KEEP};
use child::Server;
use router::{Out, Restart, Router};
use sink::Sink;

/// Lines queued towards one side before the pump feeding it waits (backpressure).
const QUEUE: usize = 64;
const STDERR_TAIL: usize = 8 * 1024;
/// The stderr tail the supervisor shows on a server's page.
const RECENT_STDERR: usize = 4 * 1024;

pub struct Options {
    pub server: String,
    pub command: Vec<OsString>,
    pub limits: Limits,
    /// The JSONL event log; `None` keeps no log.
    pub event_log: Option<PathBuf>,
    /// config.toml to watch, and the `--set` overrides that stay on top of it: edits apply
    /// to the running session.
    pub reload: Option<(PathBuf, Overrides)>,
    /// The supervisor's control socket (`None`: never connect).
    pub control: Option<PathBuf>,
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

/// A queued line, tagged with the server generation it was routed for (0 for the client).
type Tagged = (u64, Line);

enum Line {
    /// A whole line (the newline is added when written).
    Data(Bytes),
    /// Part of a line relayed as it arrives; nothing else is written until its `End`.
    Part(Bytes),
    End,
    /// Write what is queued, then close.
    Finish,
}

/// Lines from the server longer than this are relayed as they arrive (cut-through) instead of
/// being held whole: a 100 MB result costs one pipe transfer of time, not two, and little
/// memory. Such a line is not parsed whole; its id comes from its head or tail.
const STREAM_OVER: usize = 1 << 20;

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
    to_client: mpsc::Sender<Tagged>,
    to_server: mpsc::Sender<Tagged>,
    side_client: mpsc::UnboundedSender<Tagged>,
    side_server: mpsc::UnboundedSender<Tagged>,
    life: mpsc::UnboundedSender<Out>,
    sink: Arc<Sink>,
    wake: Arc<Notify>,
    /// The pid of the running server process (0 while none runs).
    server_pid: Arc<AtomicU32>,
    /// The end of the server's stderr over all generations, and how often it grew (the
    /// heartbeat sends it when that changed).
    recent_stderr: Arc<Mutex<(u64, VecDeque<u8>)>>,
}

impl Links {
    fn router(&self) -> MutexGuard<'_, Router> {
        self.router.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends what the router produced for server generation `generation` through the side
    /// queues, which never wait.
    fn send_now(&self, out: Out, generation: u64) {
        match out {
            Out::Client(line) => {
                self.sink.debug("warden", &line);
                let _ = self.side_client.send((0, Line::Data(line)));
            }
            Out::Server(line) => {
                self.sink.debug("warden", &line);
                let _ = self.side_server.send((generation, Line::Data(line)));
            }
            Out::Event(event) => self.sink.event(event),
            Out::WakeWatchdog => self.wake.notify_one(),
            Out::KillServer | Out::StartServer => {
                let _ = self.life.send(out);
            }
        }
    }

    /// Runs `f` on the router and dispatches its output at once (side queues).
    fn route_now(&self, f: impl FnOnce(&mut Router, &mut Vec<Out>)) {
        let mut outs = Vec::new();
        let generation = {
            let mut router = self.router();
            f(&mut router, &mut outs);
            router.generation()
        };
        for out in outs {
            self.send_now(out, generation);
        }
    }

    /// Runs `f` on the router for the pump of `side`: lines towards the other side go
    /// through its bounded queue, so a slow reader slows this pump down (backpressure).
    async fn route(&self, side: Side, f: impl FnOnce(&mut Router, &mut Vec<Out>)) {
        let mut outs = Vec::new();
        let generation = {
            let mut router = self.router();
            f(&mut router, &mut outs);
            router.generation()
        };
        for out in outs.drain(..) {
            match (side, out) {
                (Side::Server, Out::Client(line)) => {
                    let _ = self.to_client.send((0, Line::Data(line))).await;
                }
                (Side::Client, Out::Server(line)) => {
                    let _ = self.to_server.send((generation, Line::Data(line))).await;
                }
                (_, other) => self.send_now(other, generation),
            }
        }
    }
}

/// The queues the server writer of the current generation drains.
struct ServerQueues {
    data: mpsc::Receiver<Tagged>,
    side: mpsc::UnboundedReceiver<Tagged>,
}

/// One server process and its tasks.
struct Generation {
    id: u64,
    server: Server,
    pump: JoinHandle<std::io::Result<()>>,
    writer: JoinHandle<std::io::Result<()>>,
    stderr: JoinHandle<()>,
    tail: Arc<Mutex<VecDeque<u8>>>,
}

impl Generation {
    fn start(
        server: Server,
        pipes: child::Pipes,
        id: u64,
        links: &Links,
        queues: &Arc<tokio::sync::Mutex<ServerQueues>>,
        max: usize,
    ) -> Generation {
        let tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL)));
        Generation {
            id,
            server,
            pump: tokio::spawn(pump(pipes.stdout, max, links.clone(), Side::Server)),
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
    async fn ended(&mut self) -> Result<(), String> {
        tokio::select! {
            r = &mut self.pump => task_result("reading from the server", r),
            r = &mut self.writer => task_result("writing to the server", r),
            _ = self.server.exit.wait_for(Option::is_some) => Ok(()),
        }
    }

    /// After the server ended: relay what it already wrote, make sure the process group is
    /// gone, and describe how it ended.
    async fn finish(mut self, why: Result<(), String>) -> (String, String) {
        finish_relay(&mut self.pump).await;
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

    async fn stop_tasks(&mut self) {
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
fn fallback_command(limits: &Limits) -> Vec<OsString> {
    // On Linux, the running binary itself: an upgrade that replaced the file on disk (its
    // path then reads `warden (deleted)`) must not break the fallback of running bridges.
    let exe = if cfg!(target_os = "linux") && std::path::Path::new("/proc/self/exe").exists() {
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

async fn run_async(options: Options) -> Result<Exit, Error> {
    let Options {
        server: name,
        command,
        limits,
        event_log,
        reload,
        control,
    } = options;
    let started_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let session = format!("{}-{started_ms}", std::process::id());
    let config_hash = {
        use std::hash::{DefaultHasher, Hash, Hasher};
        let mut h = DefaultHasher::new();
        format!("{limits:?}").hash(&mut h);
        format!("{:016x}", h.finish())
    };
    let first_is_fallback = limits.force_fallback;
    let first_command = if first_is_fallback {
        fallback_command(&limits)
    } else {
        command.clone()
    };
    let (first, first_pipes) = Server::spawn(&first_command, &session)?;
    let sink = Arc::new(Sink::start(&name, event_log));
    sink.event(Event::new("session_start").detail(format!(
        "pid {} serving {:?}",
        first.pid,
        command.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>()
    )));

    let max = limits.max_message_bytes;
    let router = Arc::new(Mutex::new(Router::new(&name, Arc::new(limits))));
    let (to_client, client_rx) = mpsc::channel(QUEUE);
    let (to_server, server_rx) = mpsc::channel(QUEUE);
    let (side_client, side_client_rx) = mpsc::unbounded_channel();
    let (side_server, side_server_rx) = mpsc::unbounded_channel();
    let (life, mut life_rx) = mpsc::unbounded_channel();
    let links = Links {
        router,
        to_client,
        to_server,
        side_client,
        side_server,
        life,
        sink: Arc::clone(&sink),
        wake: Arc::default(),
        server_pid: Arc::new(AtomicU32::new(first.pid)),
        recent_stderr: Arc::default(),
    };
    let queues = Arc::new(tokio::sync::Mutex::new(ServerQueues {
        data: server_rx,
        side: side_server_rx,
    }));

    let (client_in, client_out) = stdio::client_io();
    let mut client_pump = tokio::spawn(pump(client_in, max, links.clone(), Side::Client));
    let mut client_writer = tokio::spawn(client_writer(client_out, client_rx, side_client_rx));
    let mut watchdog = tokio::spawn(watchdog(links.clone()));
    #[cfg(unix)]
    let controller = control.map(|path| {
        let hello = crate::control::Hello {
            v: crate::control::VERSION,
            session: session.clone(),
            server: name.clone(),
            pid: std::process::id(),
            command: command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            config_hash,
            started_ms,
        };
        tokio::spawn(control::run(links.clone(), path, hello))
    });
    #[cfg(not(unix))]
    let _ = (control, config_hash);
    let reloader = reload.map(|(path, overrides)| {
        tokio::spawn(reload_config(links.clone(), path, name.clone(), overrides))
    });
    let mut signals = Signals::new();

    let mut current = Some(Generation::start(
        first,
        first_pipes,
        1,
        &links,
        &queues,
        max,
    ));
    links.route_now(|r, out| r.server_started(first_is_fallback, Instant::now(), out));
    let mut waiting = Restart::OnRequest;

    let client_end = loop {
        // A server runs: relay until one side ends.
        if let Some(generation) = current.as_mut() {
            let server_end = tokio::select! {
                r = &mut client_pump => break task_result("reading from the client", r),
                r = &mut client_writer => break task_result("writing to the client", r),
                () = signals.recv() => break Ok(()),
                r = &mut watchdog => break Err(watchdog_failure(r)),
                why = generation.ended() => why,
                Some(order) = life_rx.recv() => {
                    if matches!(order, Out::KillServer) {
                        generation.server.kill().await;
                    }
                    continue;
                }
            };
            let Some(generation) = current.take() else {
                continue;
            };
            let (how, tail) = generation.finish(server_end).await;
            links.server_pid.store(0, Ordering::Relaxed);
            links.route_now(|r, out| waiting = r.server_gone(&how, &tail, Instant::now(), out));
            drain_stale(&queues, &links).await;
            continue;
        }
        // No server: wait for the backoff to pass (or, with the breaker open, for a request).
        let delay = match waiting {
            Restart::After(delay) => delay,
            Restart::OnRequest => Duration::MAX,
        };
        tokio::select! {
            r = &mut client_pump => break task_result("reading from the client", r),
            r = &mut client_writer => break task_result("writing to the client", r),
            () = signals.recv() => break Ok(()),
            r = &mut watchdog => break Err(watchdog_failure(r)),
            () = sleep_for(delay) => {}
            Some(order) = life_rx.recv() => {
                if !matches!(order, Out::StartServer) {
                    continue;
                }
            }
        }
        let (generation, fallback, cmd) = {
            let r = links.router();
            let fallback = r.wants_fallback();
            let cmd = if fallback {
                fallback_command(r.limits())
            } else {
                command.clone()
            };
            (r.generation() + 1, fallback, cmd)
        };
        match Server::spawn(&cmd, &session) {
            Ok((server, pipes)) => {
                links.server_pid.store(server.pid, Ordering::Relaxed);
                current = Some(Generation::start(
                    server, pipes, generation, &links, &queues, max,
                ));
                links.route_now(|r, out| r.server_started(fallback, Instant::now(), out));
            }
            Err(e) => links
                .route_now(|r, out| waiting = r.start_failed(&e.to_string(), Instant::now(), out)),
        }
    };

    // The client is done (or we were asked to stop): close the server's stdin and shut it
    // down, still relaying what it writes meanwhile (answers to the last requests).
    links.route_now(|r, out| r.client_gone(Instant::now(), out));
    let how = match current {
        Some(mut generation) => {
            let _ = links.side_server.send((generation.id, Line::Finish));
            // A signal now means whoever started us is escalating (clients SIGKILL 2 s after
            // their SIGTERM): end the server's group at once instead of being killed first and
            // leaving what outlived the stdin close behind.
            let how = tokio::select! {
                how = generation.server.shut_down(child::GRACE) => how,
                () = signals.recv() => generation.server.kill().await,
            };
            finish_relay(&mut generation.pump).await;
            generation.stop_tasks().await;
            how
        }
        None => "was not running".to_owned(),
    };
    let _ = links.side_client.send((0, Line::Finish));
    let _ = tokio::time::timeout(Duration::from_secs(5), &mut client_writer).await;
    let why = client_end
        .as_ref()
        .err()
        .map_or(String::new(), |e| format!(" after an error: {e}"));
    sink.event(Event::new("session_end").detail(format!("client closed{why}; server {how}")));
    client_pump.abort();
    watchdog.abort();
    if let Some(reloader) = reloader {
        reloader.abort();
    }
    #[cfg(unix)]
    if let Some(mut controller) = controller {
        // When connected, let it pass `session_end` on to the supervisor.
        let connected = sink.has_subscriber();
        if !connected
            || tokio::time::timeout(Duration::from_millis(500), &mut controller)
                .await
                .is_err()
        {
            controller.abort();
        }
    }
    sink.close();
    Ok(match client_end {
        Ok(()) => Exit::Clean,
        Err(why) => Exit::Failed(why),
    })
}

async fn sleep_for(delay: Duration) {
    match tokio::time::Instant::now().checked_add(delay) {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn watchdog_failure(r: Result<(), tokio::task::JoinError>) -> String {
    match r {
        Ok(()) => "the watchdog stopped".to_owned(),
        Err(e) => format!("the watchdog failed: {e}"),
    }
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

/// Hands the lines still queued for a server that is gone back to the router, which drops
/// the requests among them (`server_gone` settled those) and keeps the notifications. Until
/// the next server's writer would, nothing empties the queue, and a client pump waiting for
/// room in it reads nothing: with the circuit open, the next server starts only when the
/// client's next request gets through, so the session would wait forever.
async fn drain_stale(queues: &Arc<tokio::sync::Mutex<ServerQueues>>, links: &Links) {
    let mut queues = queues.lock().await;
    while let Ok((_, line)) = queues.data.try_recv() {
        if let Line::Data(bytes) = line {
            links.route_now(|r, out| r.undelivered(bytes, Instant::now(), out));
        }
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
    let mut streaming = Streamed::default();
    if side == Side::Server {
        reader.set_streaming(Some(STREAM_OVER));
    }
    while let Some(frame) = reader.next().await? {
        let frame = match frame {
            Frame::Begin(bytes) => {
                streaming = Streamed {
                    active: true,
                    ..Streamed::default()
                };
                streaming.push(&bytes);
                let _ = links.to_client.send((0, Line::Part(bytes))).await;
                continue;
            }
            Frame::Part { bytes, end } => {
                streaming.push(&bytes);
                let _ = links.to_client.send((0, Line::Part(bytes))).await;
                if end {
                    let _ = links.to_client.send((0, Line::End)).await;
                    let note = format!(r#"{{"streamed_line_bytes":{}}}"#, streaming.len);
                    links.sink.debug("server", &Bytes::from(note));
                    let mut done = std::mem::take(&mut streaming);
                    let tail = done.tail.make_contiguous();
                    links.route_now(|r, out| {
                        r.streamed(&done.head, tail, done.len, Instant::now(), out)
                    });
                }
                continue;
            }
            // A streamed line went over the limit: end the client's copy of it (the client
            // drops it as invalid), then the request gets its error as for any oversize line.
            oversize @ Frame::Oversize { .. } if streaming.active => {
                streaming = Streamed::default();
                let _ = links.to_client.send((0, Line::End)).await;
                oversize
            }
            frame => frame,
        };
        if let Frame::Message(line) = &frame {
            links.sink.debug(
                if side == Side::Client {
                    "client"
                } else {
                    "server"
                },
                line,
            );
        }
        let (mut new_max, mut soft_cap) = (max, 0);
        links
            .route(side, |router, out| {
                match side {
                    Side::Client => router.from_client(frame, Instant::now(), out),
                    Side::Server => router.from_server(frame, Instant::now(), out),
                }
                new_max = router.limits().max_message_bytes;
                soft_cap = router.limits().result_soft_cap_bytes;
            })
            .await;
        reader.set_max(new_max);
        if side == Side::Server {
            // A result that may have to be cut must be held whole.
            reader.set_streaming((soft_cap == 0).then_some(STREAM_OVER));
        }
    }
    Ok(())
}

/// The head and tail of a line being relayed in parts: where its id is.
#[derive(Default)]
struct Streamed {
    active: bool,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    len: u64,
}

impl Streamed {
    fn push(&mut self, bytes: &[u8]) {
        self.len += bytes.len() as u64;
        let room = HEAD_KEEP.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..room.min(bytes.len())]);
        let take = bytes.len().min(TAIL_KEEP);
        self.tail.extend(&bytes[bytes.len() - take..]);
        let excess = self.tail.len().saturating_sub(TAIL_KEEP);
        self.tail.drain(..excess);
    }
}

type BoxWriter = Pin<Box<dyn AsyncWrite + Send>>;

async fn client_writer(
    out: BoxWriter,
    mut data: mpsc::Receiver<Tagged>,
    mut side: mpsc::UnboundedReceiver<Tagged>,
) -> std::io::Result<()> {
    write_loop(out, &mut data, &mut side, |_, line| Some(line)).await
}

/// Writes the lines routed for generation `generation`; a line routed for another one goes
/// back to the router.
async fn server_writer(
    out: BoxWriter,
    queues: Arc<tokio::sync::Mutex<ServerQueues>>,
    generation: u64,
    links: Links,
) -> std::io::Result<()> {
    let mut queues = queues.lock().await;
    let ServerQueues { data, side } = &mut *queues;
    write_loop(out, data, side, |tag, line| {
        if tag == generation {
            return Some(line);
        }
        if let Line::Data(bytes) = line {
            links.route_now(|r, out| r.undelivered(bytes, Instant::now(), out));
        }
        None
    })
    .await
}

async fn write_loop<W: AsyncWrite + Send + ?Sized>(
    out: Pin<Box<W>>,
    data: &mut mpsc::Receiver<Tagged>,
    side: &mut mpsc::UnboundedReceiver<Tagged>,
    mut accept: impl FnMut(u64, Line) -> Option<Line>,
) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(64 * 1024, out);
    let mut finishing = false;
    // Inside a line relayed in parts, nothing may be written between its parts.
    let mut in_line = false;
    loop {
        let (tag, line) = tokio::select! {
            biased;
            Some(item) = side.recv(), if !finishing && !in_line => item,
            Some(item) = data.recv() => item,
            else => break,
        };
        let mut next = accept(tag, line);
        loop {
            match next.take() {
                Some(Line::Data(bytes)) => write_line(&mut out, &bytes).await?,
                Some(Line::Part(bytes)) => {
                    in_line = true;
                    out.write_all(&bytes).await?;
                }
                Some(Line::End) => {
                    in_line = false;
                    out.write_all(b"\n").await?;
                }
                Some(Line::Finish) => finishing = true,
                None => {}
            }
            // Batch whatever else is ready into the same flush.
            let ready = if in_line {
                data.try_recv()
            } else {
                side.try_recv().or_else(|_| data.try_recv())
            };
            next = match ready {
                Ok((tag, line)) => accept(tag, line),
                Err(_) => break,
            };
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
        links.route_now(|r, out| r.on_stderr(Instant::now(), &buf[..n], out));
        links.sink.stderr(Bytes::copy_from_slice(&buf[..n]));
        keep_tail(
            &mut tail.lock().unwrap_or_else(PoisonError::into_inner),
            &buf[..n],
            STDERR_TAIL,
        );
        let mut recent = links
            .recent_stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        recent.0 += 1;
        keep_tail(&mut recent.1, &buf[..n], RECENT_STDERR);
    }
}

fn keep_tail(tail: &mut VecDeque<u8>, bytes: &[u8], max: usize) {
    tail.extend(bytes);
    let excess = tail.len().saturating_sub(max);
    tail.drain(..excess);
}

fn tail_text(tail: &Mutex<VecDeque<u8>>) -> String {
    let tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
    let bytes: Vec<u8> = tail.iter().copied().collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Applies edits of config.toml to the running session; an invalid edit is refused (with an
/// event and a line on stderr) and the last good settings stay. Also follows the debug flag
/// file: debug logging is on while `debug = true` or the flag file exists.
async fn reload_config(links: Links, path: PathBuf, server: String, overrides: Overrides) {
    let flag = debug_flag_path(&path, &server);
    let set_debug = |limits_debug: bool| {
        let on = limits_debug || flag.exists();
        if on != links.sink.debug_on() {
            links.sink.set_debug(on);
            let detail = if on {
                format!(
                    "on: whole messages, secrets redacted, go to the debug log (turn off: debug = false and remove {})",
                    flag.display()
                )
            } else {
                "off".to_owned()
            };
            links.sink.event(Event::new("debug").detail(detail));
        }
    };
    set_debug(links.router().limits().debug);
    let mut watch = match ConfigWatch::new(&[path.clone(), flag.clone()]) {
        Ok(watch) => watch,
        Err(e) => {
            let why = format!(
                "edits of {} apply to new sessions only: {e}",
                path.display()
            );
            links.sink.event(Event::new("config_rejected").detail(why));
            return;
        }
    };
    while watch.changed().await.is_some() {
        match Config::load(&path).and_then(|c| c.limits_for(&server, &overrides)) {
            Ok(limits) => {
                set_debug(limits.debug);
                if **links.router().limits() == limits {
                    continue;
                }
                links.route_now(|r, out| r.set_limits(Arc::new(limits), Instant::now(), out));
                links
                    .sink
                    .event(Event::new("config_reloaded").detail(path.display().to_string()));
            }
            Err(e) => {
                tracing::warn!("config change refused, the previous settings stay in force: {e}");
                links
                    .sink
                    .event(Event::new("config_rejected").detail(e.to_string()));
            }
        }
    }
}

async fn watchdog(links: Links) {
    loop {
        let mut next = None;
        links.route_now(|r, out| next = r.tick(Instant::now(), out));
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
