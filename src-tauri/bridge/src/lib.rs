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
//! Every task's end is observed by the session (`session.rs`): a client that leaves ends the
//! session; a server that ends is restarted with backoff (or the breaker opens); every request
//! still waiting gets an explicit error. Nothing stalls silently.
//!
//! Where things are: `session.rs` the session's steps (setup, relay and restart, shutdown),
//! `generation.rs` one server process and its tasks, `pumps.rs` the pumps, writers and
//! watchdog, `links.rs` the queues and the router's dispatch, `signals.rs` the signals that
//! end a session, `reload.rs` the config reload task.

pub mod fallback;

pub mod child;
mod control;
mod generation;
mod guard;
#[cfg_attr(not(windows), allow(dead_code))]
mod launcher;
mod links;
#[cfg(unix)]
mod proxy;
mod pumps;
#[cfg(target_os = "linux")]
pub mod reaper;
mod reload;
pub mod router;
pub mod sandbox;
mod session;
mod signals;
mod sink;
#[cfg(unix)]
mod spin;
#[cfg(target_os = "linux")]
mod splice;
mod stdio;
#[cfg(unix)]
mod tether;
#[cfg(unix)]
mod tunnel;

use child::Server;
use session::Session;
pub use session::{Exit, Options};
use warden_wire::events::now_ms;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot start the bridge runtime: {0}")]
    Runtime(std::io::Error),
}

/// Runs one session to its end on a new current-thread runtime.
pub fn run(options: Options) -> Result<Exit, Error> {
    let mut builder = tokio::runtime::Builder::new_current_thread();
    #[cfg(unix)]
    {
        spin::set_window(options.limits.busy_poll);
        builder.on_thread_park(spin::before_park);
    }
    let runtime = builder.enable_all().build().map_err(Error::Runtime)?;
    runtime.block_on(run_async(options))
}

/// The session's steps: the first server is spawned, the session relays and restarts servers
/// until the client leaves, then shuts down. A first server that cannot be spawned ends the
/// session once the client's `initialize` has been answered with why (`router/start.rs`).
async fn run_async(options: Options) -> Result<Exit, Error> {
    let started_ms = now_ms();
    let id = format!("{}-{started_ms}", std::process::id());
    let first_is_fallback = options.limits.force_fallback;
    let places = sandbox::Places::of_this_process(
        options.reload.as_ref().map(|(p, _)| p.as_path()),
        &options.server,
        &options.pass_env,
    );
    let (first_launch, first_env) = if first_is_fallback {
        (
            sandbox::launch(
                &generation::fallback_command(&options.limits),
                &options.limits,
                &places,
            ),
            Vec::new(),
        )
    } else {
        (
            sandbox::launch(&options.command, &options.limits, &places),
            options.env.clone(),
        )
    };
    let (mode, program) = match &first_launch {
        Ok(l) => (
            l.mode,
            l.argv
                .first()
                .map_or_else(String::new, |p| p.to_string_lossy().into_owned()),
        ),
        Err(_) => ("off", String::new()),
    };
    let spawned = first_launch.map(|l| Server::launch(l, &first_env, None, &id));
    let first_pid = match &spawned {
        Ok(Ok((server, _))) => server.pid,
        _ => 0,
    };
    let mut session = Session::start(options, id, started_ms, first_pid, places);
    session.note_sandbox(mode);
    let first = match spawned {
        Err(refused) => {
            session
                .links
                .route_now(|r, out| r.not_started(refused.code, refused.cause, out));
            None
        }
        Ok(Ok((first, first_pipes))) => {
            Some(session.started(first, first_pipes, 1, first_is_fallback))
        }
        Ok(Err(e)) => {
            session
                .links
                .route_now(|r, out| r.spawn_error(&program, &e.source, out));
            None
        }
    };
    let (client_end, current) = session.relay(first).await;
    let server_how = session.stop_server(current).await;
    Ok(session.end(client_end, &server_how).await)
}

/// A bridge that cannot start its server before trying (invalid settings in config.toml or
/// `--set`: `W-CONFIG-INVALID`; a `--secret-env` value the keychain does not give) still
/// answers the client's `initialize` with `spawn_failed` (`code`, `cause`: "was not started:
/// ...", and the code's fix) and logs it, so the IDE and the supervisor show why instead of a
/// closed pipe. Waits at most `wait` for the client's first line, and not at all on a
/// terminal.
pub fn refuse(
    server: &str,
    command: &[std::ffi::OsString],
    code: warden_wire::codes::Code,
    cause: String,
    wait: std::time::Duration,
) {
    use std::io::{BufRead as _, IsTerminal as _, Write as _};

    let mut router = router::Router::new(server, std::sync::Arc::default());
    let words: Vec<_> = command.iter().map(|a| a.to_string_lossy()).collect();
    router.set_command(words.join(" "));
    let mut out = Vec::new();
    router.not_started(code, cause, &mut out);
    if !std::io::stdin().is_terminal() {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = Vec::new();
            let _ = std::io::stdin().lock().read_until(b'\n', &mut line);
            let _ = tx.send(line);
        });
        if let Ok(line) = rx.recv_timeout(wait) {
            let line = bytes::Bytes::from(line.trim_ascii_end().to_vec());
            let frame = warden_wire::protocol::Frame::Message(line);
            router.from_client(frame, std::time::Instant::now(), &mut out);
        }
    }
    let sink = sink::Sink::start(server, Some(warden_config::paths::event_log(server)));
    let mut stdout = std::io::stdout().lock();
    for o in out {
        match o {
            router::Out::Client(line) => {
                let _ = stdout.write_all(&line);
                let _ = stdout.write_all(b"\n");
            }
            router::Out::Event(event) => sink.event(event),
            _ => {}
        }
    }
    let _ = stdout.flush();
    sink.close();
}
