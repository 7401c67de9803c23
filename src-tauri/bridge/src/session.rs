//! One bridge session from start to end, in steps: the session's tasks are set up, server
//! processes run one after another (each one's end settled with the router, which says when
//! to start the next), and the shutdown ends the last server before the session itself.
//!
//! When its server cannot be started, the session gives up: it ends the server's process, waits up
//! to 5 s for the client's `initialize` so that it can answer it with the failure, and, when a
//! supervisor's socket existed at the start, up to 1 s for the control connection, so that the
//! supervisor hears of it.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinHandle;

use super::child::{self, Pipes, Server};
use super::generation::{Generation, drain_stale, fallback_command, finish_relay, task_result};
use super::links::{Line, Links, ServerQueues, Side};
use super::pumps::{client_writer, no_cut, pump, watchdog};
use super::reload::reload_config;
use super::router::{Out, Restart, Router};
use super::signals::Signals;
use super::sink::Sink;
use super::stdio;
use warden_config::{Limits, Overrides};
use warden_wire::events::Event;

pub struct Options {
    pub server: String,
    pub command: Vec<OsString>,
    /// Put into the server's environment (not the fallback's): values from the keychain.
    pub env: Vec<(String, String)>,
    /// Variables of the bridge's environment a sandboxed server gets besides the short list
    /// (`--pass-env`); without a sandbox it gets them all.
    pub pass_env: Vec<String>,
    pub limits: Limits,
    /// The JSONL event log; `None` keeps no log.
    pub event_log: Option<PathBuf>,
    /// config.toml to watch, and the `--set` overrides that stay on top of it: edits apply
    /// to the running session.
    pub reload: Option<(PathBuf, Overrides)>,
    /// The supervisor's control socket (`None`: never connect).
    pub control: Option<PathBuf>,
    /// The server is Warden's remote relay (`warden bridge --remote`).
    pub remote: bool,
}

/// How a bridge session ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Exit {
    /// The client closed stdin (or asked us to stop) and the server was shut down.
    Clean,
    /// The bridge could not go on; the reason is for a person.
    Failed(String),
}

/// What lives as long as the session: the links, the session's tasks, and what is needed to
/// start the next server process.
pub(super) struct Session {
    /// Every server process gets it as `WARDEN_SESSION`: `<bridge pid>-<start ms>`.
    id: String,
    command: Vec<OsString>,
    env: Vec<(String, String)>,
    /// The message size limit at the start (the pumps then follow the router's).
    max: usize,
    pub(super) links: Links,
    server_queues: Arc<Mutex<ServerQueues>>,
    /// The router's orders for the server process (kill, start).
    orders: mpsc::UnboundedReceiver<Out>,
    tasks: Tasks,
    reloader: Option<JoinHandle<()>>,
    controller: Option<JoinHandle<()>>,
    /// A supervisor's socket existed at the start (a start failure waits for the connection,
    /// so that the supervisor hears of it).
    supervisor_socket: bool,
    /// What a sandboxed server's sandbox is built from (`sandbox = "on"`).
    places: super::sandbox::Places,
    /// The server's name (the proxy's refusals name its config section).
    #[cfg(unix)]
    name: String,
    /// The destinations the proxy refused in this session (`network_denied` once each).
    #[cfg(unix)]
    net_denied: Arc<std::sync::Mutex<super::proxy::Denied>>,
}

/// How long the bridge waits for the client's `initialize` to answer it with a start failure.
const CLIENT_INIT_WAIT: Duration = Duration::from_secs(5);
/// How long a start failure waits for the control connection to a supervisor that runs.
const CONNECT_WAIT: Duration = Duration::from_secs(1);

/// The session's tasks whose end ends the session.
struct Tasks {
    client_pump: JoinHandle<std::io::Result<()>>,
    client_writer: JoinHandle<std::io::Result<()>>,
    watchdog: JoinHandle<()>,
    signals: Signals,
}

impl Tasks {
    /// Resolves when the session is over: the client left (or cannot be talked to), a signal
    /// asked us to stop, or the watchdog failed.
    async fn ended(&mut self) -> Result<(), String> {
        tokio::select! {
            r = &mut self.client_pump => task_result("reading from the client", r),
            r = &mut self.client_writer => task_result("writing to the client", r),
            () = self.signals.recv() => Ok(()),
            r = &mut self.watchdog => Err(watchdog_failure(r)),
        }
    }
}

/// What [`Session::relay`] does next.
enum Step {
    /// The session is over (how the client side ended).
    End(Result<(), String>),
    /// The running server ended (why, when it is an error).
    ServerEnded(Result<(), String>),
    /// Start the next server.
    Start,
    /// The server could not be started: answer the client's `initialize` and end.
    GaveUp,
    /// Nothing changed (an order carried out, or one with nothing to do): look again.
    Wait,
}

impl Session {
    /// Starts the session's tasks (client pump and writer, watchdog, the control connection,
    /// the config reload) while the first server process, `first_pid`, runs.
    pub(super) fn start(
        options: Options,
        id: String,
        started_ms: u64,
        first_pid: u32,
        places: super::sandbox::Places,
    ) -> Session {
        let Options {
            server: name,
            command,
            env,
            pass_env: _,
            limits,
            event_log,
            reload,
            control,
            remote,
        } = options;
        let sink = Arc::new(Sink::start(&name, event_log));
        let serving = if first_pid == 0 {
            "no server".to_owned()
        } else {
            format!("pid {first_pid}")
        };
        sink.event(Event::new("session_start").detail(format!(
            "{serving} serving {:?}",
            command.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>()
        )));
        let hello = hello(&id, &name, &command, &limits, started_ms);
        let max = limits.max_message_bytes;
        let mut router = Router::new(&name, Arc::new(limits));
        router.remote = remote;
        router.set_command(
            command
                .iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
        );
        let supervisor_socket = control
            .as_ref()
            .is_some_and(|path| warden_control::socket::exists(path));
        #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
        let (mut links, queues) = Links::new(router, sink, first_pid);
        // Before the first message: a listing must be checked against the pins on disk.
        let pins = warden_config::pins::path(&name);
        links.route_now(|r, out| r.set_pins(warden_config::pins::PinFile::load(&pins), out));

        let (client_in, client_out, second_out) = stdio::client_io();
        #[cfg(target_os = "linux")]
        {
            links.cut_to = second_out.and_then(super::splice::target);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = second_out;
        // `Cut` is `()` but on Linux.
        #[cfg_attr(not(target_os = "linux"), allow(clippy::unit_arg))]
        let tasks = Tasks {
            client_pump: tokio::spawn(pump(client_in, max, links.clone(), Side::Client, no_cut())),
            client_writer: tokio::spawn(client_writer(
                client_out,
                queues.client,
                queues.side_client,
            )),
            watchdog: tokio::spawn(watchdog(links.clone())),
            signals: Signals::new(),
        };
        let controller =
            control.map(|path| tokio::spawn(super::control::run(links.clone(), path, hello)));
        let reloader = reload.map(|(path, overrides)| {
            tokio::spawn(reload_config(links.clone(), path, name.clone(), overrides))
        });
        Session {
            id,
            command,
            env,
            max,
            links,
            server_queues: queues.server,
            orders: queues.life,
            tasks,
            reloader,
            controller,
            supervisor_socket,
            places,
            #[cfg(unix)]
            name,
            #[cfg(unix)]
            net_denied: Arc::default(),
        }
    }

    /// Starts the tasks of server process number `generation` and tells the router.
    pub(super) fn started(
        &self,
        #[cfg_attr(not(target_os = "linux"), allow(unused_mut))] mut server: Server,
        pipes: Pipes,
        generation: u64,
        fallback: bool,
    ) -> Generation {
        #[cfg(unix)]
        if let Some((list, listen)) = server.net.take() {
            let cx = super::proxy::Context {
                server: self.name.clone(),
                list,
                sink: Arc::clone(&self.links.sink),
                denied: Arc::clone(&self.net_denied),
            };
            match super::proxy::start(listen, cx) {
                Ok(proxy) => server.proxy = Some(proxy),
                Err(e) => self.links.sink.event(
                    Event::new("proxy_failed")
                        .detail(format!("the sandbox_network proxy could not start: {e}")),
                ),
            }
        }
        self.links.server_pid.store(server.pid, Ordering::Relaxed);
        let generation = Generation::start(
            server,
            pipes,
            generation,
            &self.links,
            &self.server_queues,
            self.max,
        );
        self.links
            .route_now(|r, out| r.server_started(fallback, Instant::now(), out));
        generation
    }

    /// Relays until the session is over, restarting each server that ends when the router
    /// says so. Returns how the client side ended and the server still running.
    pub(super) async fn relay(
        &mut self,
        first: Option<Generation>,
    ) -> (Result<(), String>, Option<Generation>) {
        let mut current = first;
        let mut waiting = Restart::OnRequest;
        loop {
            let step = match current.as_mut() {
                Some(generation) => self.while_running(generation).await,
                None => self.while_down(waiting).await,
            };
            match step {
                Step::End(client_end) => return (client_end, current),
                Step::ServerEnded(why) => {
                    if let Some(generation) = current.take() {
                        waiting = self.server_gone(generation, why).await;
                    }
                }
                Step::Start => match self.start_next() {
                    Ok(generation) => current = Some(generation),
                    Err(retry) => waiting = retry,
                },
                Step::GaveUp => return (self.give_up(current.as_mut()).await, current),
                Step::Wait => {}
            }
        }
    }

    /// A server runs: relay until one side ends; the router's kill order is carried out here.
    async fn while_running(&mut self, generation: &mut Generation) -> Step {
        tokio::select! {
            client_end = self.tasks.ended() => Step::End(client_end),
            why = generation.ended() => Step::ServerEnded(why),
            Some(order) = self.orders.recv() => match order {
                Out::KillServer => {
                    generation.server.kill().await;
                    Step::Wait
                }
                Out::GaveUp => Step::GaveUp,
                _ => Step::Wait,
            }
        }
    }

    /// No server: wait for the backoff to pass (or, with the breaker open, for a request).
    async fn while_down(&mut self, waiting: Restart) -> Step {
        let delay = match waiting {
            Restart::After(delay) => delay,
            Restart::OnRequest => Duration::MAX,
        };
        tokio::select! {
            client_end = self.tasks.ended() => Step::End(client_end),
            () = sleep_for(delay) => Step::Start,
            Some(order) = self.orders.recv() => match order {
                Out::StartServer => Step::Start,
                Out::GaveUp => Step::GaveUp,
                _ => Step::Wait,
            }
        }
    }

    /// The server could not be started: its process (a server that never answered) is ended,
    /// the client's `initialize` is awaited (bounded) and has been answered, and a supervisor
    /// that runs gets the chance to connect and hear of it. Returns the reason to exit with.
    async fn give_up(&mut self, current: Option<&mut Generation>) -> Result<(), String> {
        if let Some(generation) = current {
            generation.server.kill().await;
        }
        let deadline = tokio::time::Instant::now() + CLIENT_INIT_WAIT;
        while !self.links.router().initialize_refused() {
            tokio::select! {
                _ = self.tasks.ended() => break,
                () = tokio::time::sleep_until(deadline) => break,
                Some(_) = self.orders.recv() => {}
            }
        }
        if self.supervisor_socket && self.controller.is_some() {
            let deadline = tokio::time::Instant::now() + CONNECT_WAIT;
            while !self.links.sink.has_subscriber() && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        Err(self
            .links
            .router()
            .start_failure_line()
            .unwrap_or_else(|| "the server could not be started".to_owned()))
    }

    /// The server ended: its end is settled with the router (requests failed or kept for the
    /// next one), which says when to start the next.
    async fn server_gone(&mut self, generation: Generation, why: Result<(), String>) -> Restart {
        let (how, tail) = generation.finish(why).await;
        self.links.server_pid.store(0, Ordering::Relaxed);
        let mut waiting = Restart::OnRequest;
        #[cfg(unix)]
        let refused = {
            let set = self
                .net_denied
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let mut list: Vec<String> = set.names().cloned().collect();
            list.sort();
            list
        };
        #[cfg(not(unix))]
        let refused = Vec::new();
        self.links.route_now(|r, out| {
            r.note_net_refused(refused);
            waiting = r.server_gone(&how, &tail, Instant::now(), out);
        });
        drain_stale(&self.server_queues, &self.links).await;
        waiting
    }

    /// The current server process's sandbox (`off`, `bwrap`, `landlock`) for the heartbeats;
    /// a change to a sandbox is a `sandbox` event (its mode), and Landlock, the fallback, is
    /// also reported as degraded.
    pub(super) fn note_sandbox(&self, mode: &'static str) {
        let n = super::sandbox::mode_number(mode);
        let was = self.links.sandbox.swap(n, Ordering::Relaxed);
        if was == n || n == 0 {
            return;
        }
        self.links.sink.event(Event::new("sandbox").detail(mode));
        if mode == super::sandbox::LANDLOCK {
            let listed = matches!(
                self.links.router().limits().sandbox_network,
                warden_config::network::Network::Only(_)
            );
            let mut detail = "bubblewrap cannot make a sandbox here, so Landlock confines the server: its files, TCP, signals and sockets as configured, but no pid namespace".to_owned();
            if listed {
                // Landlock's network rules name ports, not hosts (docs/sandbox.md).
                detail.push_str("; its sandbox_network list holds only for a well-behaved server: Landlock limits its TCP to the proxy's port number, on any address");
            }
            self.links.sink.event(
                Event::new("sandbox_degraded")
                    .code(warden_wire::codes::Code::SandboxDegraded)
                    .detail(detail),
            );
        }
    }

    /// Starts the next server process: the real one, or the fallback when the router wants
    /// it. When it cannot be spawned, the router says when to try again.
    fn start_next(&self) -> Result<Generation, Restart> {
        let (generation, fallback, cmd, env) = {
            let r = self.links.router();
            let fallback = r.wants_fallback();
            let (cmd, env) = if fallback {
                (
                    super::sandbox::launch(&fallback_command(r.limits()), r.limits(), &self.places),
                    &[][..],
                )
            } else {
                (
                    super::sandbox::launch(&self.command, r.limits(), &self.places),
                    &self.env[..],
                )
            };
            (r.generation() + 1, fallback, cmd, env)
        };
        let cmd = match cmd {
            Ok(cmd) => cmd,
            Err(why) => {
                let mut waiting = Restart::OnRequest;
                self.links.route_now(|r, out| {
                    waiting = r.start_failed(
                        &format!("{} [{}]", why.cause, why.code.as_str()),
                        Instant::now(),
                        out,
                    );
                });
                return Err(waiting);
            }
        };
        self.note_sandbox(cmd.mode);
        match Server::launch(cmd, env, None, &self.id) {
            Ok((server, pipes)) => Ok(self.started(server, pipes, generation, fallback)),
            Err(e) => {
                let mut waiting = Restart::OnRequest;
                self.links.route_now(|r, out| {
                    waiting = r.start_failed(&e.to_string(), Instant::now(), out);
                });
                Err(waiting)
            }
        }
    }

    /// The client is done (or we were asked to stop): close the server's stdin and shut it
    /// down, still relaying what it writes meanwhile (answers to the last requests). Returns
    /// how the server ended.
    pub(super) async fn stop_server(&mut self, current: Option<Generation>) -> String {
        self.links
            .route_now(|r, out| r.client_gone(Instant::now(), out));
        let Some(mut generation) = current else {
            return "was not running".to_owned();
        };
        let _ = self.links.side_server.send((generation.id, Line::Finish));
        // A signal now means whoever started us is escalating (clients SIGKILL 2 s after
        // their SIGTERM): end the server's group at once instead of being killed first and
        // leaving what outlived the stdin close behind.
        let how = tokio::select! {
            how = generation.server.shut_down(child::GRACE) => how,
            () = self.tasks.signals.recv() => generation.server.kill().await,
        };
        finish_relay(&mut generation.pump).await;
        generation.stop_tasks().await;
        how
    }

    /// Ends the session: the client gets what is queued for it, `session_end` is logged (and
    /// passed on to the supervisor when connected), and the session's tasks stop.
    pub(super) async fn end(mut self, client_end: Result<(), String>, server_how: &str) -> Exit {
        let sink = Arc::clone(&self.links.sink);
        let _ = self.links.side_client.send((0, Line::Finish));
        let _ = tokio::time::timeout(Duration::from_secs(5), &mut self.tasks.client_writer).await;
        let why = client_end
            .as_ref()
            .err()
            .map_or(String::new(), |e| format!(" after an error: {e}"));
        sink.event(
            Event::new("session_end").detail(format!("client closed{why}; server {server_how}")),
        );
        self.tasks.client_pump.abort();
        self.tasks.watchdog.abort();
        if let Some(reloader) = self.reloader {
            reloader.abort();
        }
        if let Some(mut controller) = self.controller {
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
        match client_end {
            Ok(()) => Exit::Clean,
            Err(why) => Exit::Failed(why),
        }
    }
}

/// What the bridge tells the supervisor about itself when it connects.
fn hello(
    session: &str,
    server: &str,
    command: &[OsString],
    limits: &warden_config::Limits,
    started_ms: u64,
) -> warden_control::Hello {
    let config_hash = {
        use std::hash::{DefaultHasher, Hash, Hasher};
        let mut h = DefaultHasher::new();
        format!("{limits:?}").hash(&mut h);
        format!("{:016x}", h.finish())
    };
    warden_control::Hello {
        v: warden_control::VERSION,
        session: session.to_owned(),
        server: server.to_owned(),
        pid: std::process::id(),
        command: command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        config_hash,
        started_ms,
    }
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
