//! `warden daemon`, `warden status`, `warden probe` and the supervisor's commands (restart,
//! fallback, debug, orphans, history, events): thin shells over `warden_supervisor`.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Subcommand, ValueEnum};

use crate::output::fail;
use warden_control::socket::socket_path;
use warden_supervisor::api::{
    CommandOutcome, HistoryEntry, Orphan, Request, Response, StopResult, op,
};
use warden_supervisor::connection::{Connection, ConnectionError};
use warden_supervisor::{
    self as supervisor, Options, OrphanPolicy, Supervisor, history, orphans, probe,
};
use warden_wire::say;

mod view;
use view::{
    print_entry, print_event, print_json, print_orphans, print_outcome, print_probe, print_stopped,
    server_view, status_table,
};

#[derive(Subcommand)]
pub enum Command {
    /// Run the supervisor without a GUI until SIGTERM or Ctrl-C.
    ///
    /// Bridges connect to it on the control socket ($WARDEN_SOCKET, else a per-user runtime
    /// path); `warden status` and the other commands ask it.
    Daemon {
        /// Probe every known server this often (0: only when asked).
        #[arg(long, value_name = "SECS", default_value_t = 0)]
        probe_interval_secs: u64,
        /// Probe once at start every known server run by npx/uvx (fills their caches, so an
        /// IDE's first start is fast).
        #[arg(long)]
        prewarm: bool,
        /// What to do with server processes whose bridge is gone.
        #[arg(long, value_enum, default_value_t = OrphansArg::Report)]
        orphans: OrphansArg,
        /// How often to look for orphans.
        #[arg(long, value_name = "SECS", default_value_t = 30)]
        orphan_interval_secs: u64,
        /// How much of the persisted event history to load at start.
        #[arg(long, value_name = "HOURS", default_value_t = 6)]
        history_hours: u64,
        /// Watch the IDE config files: report new unwrapped servers and clients that revert
        /// Warden's edits, and wrap new servers when auto-rewrite is on (the tray app's
        /// switch, kept in $WARDEN_STATE_DIR/auto-rewrite).
        #[arg(long)]
        watch_clients: bool,
        /// Probe each stdio server of the detected IDE configs before it is used: at start,
        /// when its entry changes, and again with backoff while it fails (the tray app's
        /// switch, kept in $WARDEN_STATE_DIR/probe-ide).
        #[arg(long)]
        probe_ide: bool,
    },
    /// Servers' health and live sessions, from the running supervisor.
    Status {
        /// As JSON: the supervisor's `StatusReport` (warden-supervisor, src/api/status.rs).
        #[arg(long)]
        json: bool,
        /// One server only, with its figures per tool and its sessions.
        #[arg(long, value_name = "NAME")]
        server: Option<String>,
    },
    /// Start a server, handshake, list its tools, shut it down; report cold-start time and
    /// tool count.
    ///
    /// `--server NAME` probes a server whose command Warden has seen (a bridge of it
    /// connected to a supervisor); otherwise give the command after `--`.
    Probe {
        #[arg(long, conflicts_with = "command")]
        server: Option<String>,
        #[arg(long)]
        json: bool,
        /// Time the server has to answer each step.
        #[arg(long, value_name = "MS", default_value_t = probe::DEFAULT_TIMEOUT.as_millis() as u64)]
        timeout_ms: u64,
        /// The server command and its arguments (no shell).
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Restart the server process of every live session of SERVER.
    Restart {
        server: String,
        #[arg(long)]
        json: bool,
    },
    /// Serve SERVER from local ripgrep search now, or stop (`force_fallback` in config.toml).
    Fallback {
        server: String,
        #[arg(value_enum)]
        state: OnOff,
        #[arg(long)]
        json: bool,
    },
    /// Full message logging of SERVER on or off (`debug` in config.toml).
    Debug {
        server: String,
        #[arg(value_enum)]
        state: OnOff,
        #[arg(long)]
        json: bool,
    },
    /// MCP server processes whose bridge is gone; `--stop` stops them (after asking).
    Orphans {
        #[arg(long)]
        json: bool,
        /// Stop them: SIGTERM, 2 s, SIGKILL.
        #[arg(long)]
        stop: bool,
        /// Do not ask before stopping.
        #[arg(long, short = 'y')]
        yes: bool,
        /// Only these pids (repeatable).
        #[arg(long = "pid", value_name = "PID")]
        pids: Vec<u32>,
    },
    /// The event history kept by the supervisor (or, when none runs, its file).
    History {
        #[arg(long)]
        server: Option<String>,
        /// Only the last N minutes.
        #[arg(long, value_name = "N")]
        since_minutes: Option<u64>,
        #[arg(long, default_value_t = 100)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Print the supervisor's live events until interrupted (one JSON object per line with
    /// --json).
    Events {
        #[arg(long)]
        json: bool,
    },
    /// Calls of `tools_ask` tools waiting for a yes, in every session; answer them.
    ///
    /// Without a subcommand: the list (ID, server, tool, arguments, time left).
    Approvals {
        #[command(subcommand)]
        action: Option<ApprovalsAction>,
        /// As JSON: `{"pending": [{"id", "server", "tool", "arguments", "client", "age_ms"}]}`.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub enum ApprovalsAction {
    /// Runs held call ID.
    Allow {
        id: String,
        /// And stops asking about that tool of that server while its definition is unchanged.
        #[arg(long)]
        always: bool,
    },
    /// Refuses held call ID: it fails with `tool_declined`; the server never sees it.
    Deny { id: String },
    /// Forgets `--always` answers of SERVER (of TOOL, or all): its calls are asked about again.
    Forget {
        server: String,
        tool: Option<String>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum OrphansArg {
    /// Do not look for orphans.
    Off,
    /// Report them in status, events and history.
    Report,
    /// Stop them when found.
    Stop,
}

impl From<OrphansArg> for OrphanPolicy {
    fn from(arg: OrphansArg) -> OrphanPolicy {
        match arg {
            OrphansArg::Off => OrphanPolicy::Off,
            OrphansArg::Report => OrphanPolicy::Report,
            OrphansArg::Stop => OrphanPolicy::Stop,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

pub fn run(command: Command) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return fail(format!("cannot start the runtime: {e}")),
    };
    runtime.block_on(async move {
        match command {
            Command::Daemon {
                probe_interval_secs,
                prewarm,
                orphans,
                orphan_interval_secs,
                history_hours,
                watch_clients,
                probe_ide,
            } => {
                let mut opts = Options::from_env();
                opts.probe_interval =
                    (probe_interval_secs > 0).then(|| Duration::from_secs(probe_interval_secs));
                opts.prewarm = prewarm;
                opts.orphan_policy = orphans.into();
                opts.orphan_interval = Duration::from_secs(orphan_interval_secs.max(1));
                opts.horizon = Duration::from_secs(history_hours * 3600);
                opts.watch_clients = watch_clients;
                opts.probe_ide =
                    probe_ide.then(|| warden_config::paths::state_dir().join("probe-ide"));
                opts.warden_bin = std::env::current_exe().and_then(std::fs::canonicalize).ok();
                daemon(opts).await
            }
            Command::Status { json, server } => status(json, server.as_deref()).await,
            Command::Probe {
                server,
                json,
                timeout_ms,
                command,
            } => probe_cmd(server, command, Duration::from_millis(timeout_ms), json).await,
            Command::Restart { server, json } => {
                command_cmd(Request::Restart(op::Restart { server }), json).await
            }
            Command::Fallback {
                server,
                state,
                json,
            } => {
                let on = state == OnOff::On;
                command_cmd(Request::Fallback(op::Fallback { server, on }), json).await
            }
            Command::Debug {
                server,
                state,
                json,
            } => {
                let on = state == OnOff::On;
                command_cmd(Request::Debug(op::Debug { server, on }), json).await
            }
            Command::Orphans {
                json,
                stop,
                yes,
                pids,
            } => orphans_cmd(json, stop, yes, &pids).await,
            Command::History {
                server,
                since_minutes,
                limit,
                json,
            } => history_cmd(server, since_minutes, limit, json).await,
            Command::Events { json } => events_cmd(json).await,
            Command::Approvals { action, json } => approvals_cmd(action, json).await,
        }
    })
}

/// A connection to the running supervisor; `Ok(None)` when none runs.
async fn connect() -> Result<Option<Connection>, ConnectionError> {
    match Connection::connect(&socket_path()).await {
        Ok(c) => Ok(Some(c)),
        Err(ConnectionError::NotRunning(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

async fn daemon(opts: Options) -> ExitCode {
    let socket = opts.socket.clone();
    let history = opts.history.clone();
    let config = opts.config.clone();
    let sup = match Supervisor::new(opts) {
        Ok(s) => s,
        Err(e) => {
            return fail(format!(
                "cannot open the event history ({e}); check WARDEN_STATE_DIR"
            ));
        }
    };
    let shutdown = async {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            match (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
            ) {
                (Ok(mut term), Ok(mut int)) => {
                    tokio::select! {
                        _ = term.recv() => {}
                        _ = int.recv() => {}
                    }
                }
                _ => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
        // Windows: Ctrl-C or Ctrl-Break of its console; with none to listen to, it runs
        // until it is ended.
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let shown = |p: &Option<PathBuf>| {
        p.as_ref()
            .map_or_else(|| "(none)".to_owned(), |p| p.display().to_string())
    };
    eprintln!(
        "warden daemon: supervising on {} (history {}, config {}); stop it with Ctrl-C or SIGTERM",
        socket.display(),
        shown(&history),
        shown(&config)
    );
    match sup.run(shutdown).await {
        Ok(()) => {
            eprintln!("warden daemon: stopped");
            ExitCode::SUCCESS
        }
        Err(e) => fail(format!(
            "cannot serve the control socket {}: {e}",
            socket.display()
        )),
    }
}

async fn status(json: bool, server: Option<&str>) -> ExitCode {
    let mut conn = match Connection::connect(&socket_path()).await {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let unknown = |name: &str| {
        fail(format!(
            "the supervisor knows no server `{name}`; `warden status` lists the ones it knows"
        ))
    };
    if json {
        let mut v = match conn.status_value().await {
            Ok(v) => v,
            Err(e) => return fail(e),
        };
        if let Some(name) = server {
            // Only that server and its sessions; every field the supervisor sent is kept.
            for (list, key) in [("servers", "name"), ("sessions", "server")] {
                if let Some(items) = v.get_mut(list).and_then(|l| l.as_array_mut()) {
                    items.retain(|item| item[key] == name);
                }
            }
            if v["servers"].as_array().is_none_or(|s| s.is_empty()) {
                return unknown(name);
            }
        }
        print_json!(&v);
        return ExitCode::SUCCESS;
    }
    let report = match conn.status().await {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    match server {
        None => print!("{}", status_table(&report)),
        Some(name) => match server_view(&report, name) {
            Some(text) => print!("{text}"),
            None => return unknown(name),
        },
    }
    ExitCode::SUCCESS
}

async fn probe_cmd(
    server: Option<String>,
    command: Vec<String>,
    timeout: Duration,
    json: bool,
) -> ExitCode {
    if server.is_none() && command.is_empty() {
        return fail(
            "give a server name or a command: `warden probe --server NAME` or `warden probe -- COMMAND [ARG]...`",
        );
    }
    let command = (!command.is_empty()).then_some(command);
    // A running supervisor probes (it records the result and knows the commands).
    let report = match connect().await {
        Err(e) => return fail(e),
        Ok(Some(mut conn)) => {
            let request = op::Probe {
                server: server.clone(),
                command: command.clone(),
                timeout_ms: Some(timeout.as_millis() as u64),
                env: std::collections::BTreeMap::new(),
                // The supervisor runs it where this command runs, as a probe without one does.
                cwd: std::env::current_dir().ok(),
            };
            match conn.ask(request).await {
                Ok(r) => r,
                Err(e) => return fail(e),
            }
        }
        Ok(None) => {
            let command = match (command, &server) {
                (Some(c), _) => c,
                (None, Some(name)) => match command_from_history(name) {
                    Some(c) => c,
                    None => return fail(supervisor::unknown_command_message(name)),
                },
                (None, None) => return fail("nothing to probe"),
            };
            probe::probe(server, &command, &[], None, timeout).await
        }
    };
    if json {
        print_json!(&report);
    } else {
        print_probe(&report);
    }
    if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn command_from_history(server: &str) -> Option<Vec<String>> {
    history::read_all(&history::default_path())
        .into_iter()
        .rev()
        .filter(|e| e.server == server)
        .find_map(|e| e.command)
}

async fn command_cmd(request: Request, json: bool) -> ExitCode {
    match connect().await {
        Err(e) => fail(e),
        Ok(Some(mut conn)) => match conn.request(request).await {
            Ok(Response::Command(o)) => {
                print_outcome(&o, json);
                if o.ok {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                }
            }
            Ok(Response::Error(e)) => fail(e.message),
            Ok(_) => fail("unexpected answer from the supervisor"),
            Err(e) => fail(e),
        },
        Ok(None) => {
            // Without a supervisor, settings still go to config.toml: bridges read it.
            let (server, key, on) = match request {
                Request::Fallback(op::Fallback { server, on }) => (server, "force_fallback", on),
                Request::Debug(op::Debug { server, on }) => (server, "debug", on),
                _ => {
                    return fail(
                        "no supervisor is running; start the tray app or `warden daemon` (a restart is sent to the bridges through it)",
                    );
                }
            };
            let Some(path) = warden_config::default_path() else {
                return fail(
                    "no config file location is known: set WARDEN_CONFIG to your config.toml",
                );
            };
            match warden_config::edit::set_server_key(&path, &server, key, on) {
                Ok(edit) => {
                    let o = CommandOutcome {
                        ok: true,
                        message: format!(
                            "{key} = {on} {} {} [servers.{server}]; no supervisor is running, so which bridges picked it up is not known (running bridges reload the file)",
                            if edit == warden_config::edit::Edit::Changed {
                                "written to"
                            } else {
                                "already in"
                            },
                            path.display()
                        ),
                        config: Some(path),
                        sessions: Vec::new(),
                    };
                    print_outcome(&o, json);
                    ExitCode::SUCCESS
                }
                Err(e) => fail(e),
            }
        }
    }
}

async fn orphans_cmd(json: bool, stop: bool, yes: bool, pids: &[u32]) -> ExitCode {
    let mut conn = match connect().await {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let known = if conn.is_none() {
        local_knowledge()
    } else {
        orphans::Known::default()
    };
    let mut found = match &mut conn {
        Some(c) => match c.ask(op::Orphans).await {
            Ok(orphans) => orphans,
            Err(e) => return fail(e),
        },
        None => orphans::scan(&known),
    };
    if !pids.is_empty() {
        found.retain(|o| pids.contains(&o.pid));
    }
    if !stop {
        if json {
            print_json!(&found);
        } else {
            print_orphans(&found);
        }
        return ExitCode::SUCCESS;
    }
    if found.is_empty() {
        if json {
            print_json!(&Vec::<StopResult>::new());
        } else {
            println!("No orphaned server processes to stop.");
        }
        return ExitCode::SUCCESS;
    }
    if !yes {
        if !std::io::stdin().is_terminal() {
            return fail(
                "stopping processes needs confirmation: run it in a terminal, or add --yes",
            );
        }
        if !confirm_stop(&found) {
            println!("Nothing stopped.");
            return ExitCode::SUCCESS;
        }
    }
    let targets: Vec<u32> = found.iter().map(|o| o.pid).collect();
    let results = match &mut conn {
        Some(c) => match c.ask(op::StopOrphans { pids: targets }).await {
            Ok(stopped) => stopped,
            Err(e) => return fail(e),
        },
        None => orphans::stop(&targets, &known).await,
    };
    if json {
        print_json!(&results);
    } else {
        print_stopped(&results);
    }
    if results.iter().all(|r| r.ok) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Asks on the terminal whether to stop `found`.
fn confirm_stop(found: &[Orphan]) -> bool {
    print_orphans(found);
    print!("Stop these {} processes? [y/N] ", found.len());
    let _ = std::io::stdout().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().read_line(&mut answer);
    matches!(answer.trim(), "y" | "Y" | "yes")
}

/// Sessions and commands from the history file, when no supervisor runs.
fn local_knowledge() -> orphans::Known {
    let mut known = orphans::Known::default();
    for e in history::read_all(&history::default_path()) {
        if let Some(s) = &e.session {
            known.sessions.insert(s.clone(), e.server.clone());
        }
        if let Some(c) = e.command {
            known.commands.retain(|(n, _)| n != &e.server);
            known.commands.push((e.server.clone(), c));
        }
    }
    known
}

async fn history_cmd(
    server: Option<String>,
    since_minutes: Option<u64>,
    limit: usize,
    json: bool,
) -> ExitCode {
    let since_ms = since_minutes.map(|m| supervisor::now_ms().saturating_sub(m * 60_000));
    let entries = match connect().await {
        Err(e) => return fail(e),
        Ok(Some(mut c)) => {
            let request = op::History {
                server,
                since_ms,
                limit: Some(limit),
            };
            match c.ask(request).await {
                Ok(entries) => entries,
                Err(e) => return fail(e),
            }
        }
        Ok(None) => {
            let mut all: Vec<HistoryEntry> = history::read_all(&history::default_path())
                .into_iter()
                .filter(|e| server.as_deref().is_none_or(|s| e.server == s))
                .filter(|e| since_ms.is_none_or(|t| e.event.ts_ms >= t))
                .collect();
            let cut = all.len().saturating_sub(limit);
            all.drain(..cut);
            all
        }
    };
    if json {
        print_json!(&entries);
    } else if entries.is_empty() {
        println!("No events.");
    } else {
        for e in &entries {
            print_entry(e);
        }
    }
    ExitCode::SUCCESS
}

async fn events_cmd(json: bool) -> ExitCode {
    let mut conn = match Connection::connect(&socket_path()).await {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    if let Err(e) = conn.subscribe().await {
        return fail(e);
    }
    // Said once subscribed: from here on no event is missed (tests wait for it).
    eprintln!("warden: following the supervisor's events (Ctrl-C stops)");
    loop {
        match conn.next_event().await {
            Ok(event) => {
                if json {
                    match serde_json::to_string(&event) {
                        Ok(s) => println!("{s}"),
                        Err(e) => return fail(e),
                    }
                } else {
                    print_event(&event);
                }
                let _ = std::io::stdout().flush();
            }
            Err(ConnectionError::Closed) => {
                eprintln!("warden: the supervisor stopped");
                return ExitCode::SUCCESS;
            }
            Err(e) => return fail(e),
        }
    }
}

/// `warden approvals --json` as the contract has it: `{"pending": [{"id", "server", "tool",
/// "arguments", "client", "age_ms"}]}`. `arguments` is the call's arguments as an object
/// (secrets redacted, long values cut), or their text when the whole was cut too long to be
/// JSON; `client` is `name version` from the client's `initialize`, or null.
fn pending_json(
    approvals: &[warden_supervisor::api::PendingApproval],
    clients: &std::collections::HashMap<String, String>,
) -> serde_json::Value {
    let pending: Vec<serde_json::Value> = approvals
        .iter()
        .map(|a| {
            let arguments = serde_json::from_str::<serde_json::Value>(&a.args)
                .unwrap_or_else(|_| serde_json::Value::String(a.args.clone()));
            serde_json::json!({
                "id": a.id,
                "server": a.server,
                "tool": a.tool,
                "arguments": arguments,
                "client": clients.get(&a.session),
                "age_ms": a.age_ms,
            })
        })
        .collect();
    serde_json::json!({ "pending": pending })
}

async fn approvals_cmd(action: Option<ApprovalsAction>, json: bool) -> ExitCode {
    let request = match action {
        None => Request::Approvals,
        Some(ApprovalsAction::Allow { id, always }) => {
            Request::ApprovalAnswer(op::ApprovalAnswer {
                id,
                allow: true,
                always,
            })
        }
        Some(ApprovalsAction::Deny { id }) => Request::ApprovalAnswer(op::ApprovalAnswer {
            id,
            allow: false,
            always: false,
        }),
        Some(ApprovalsAction::Forget { server, tool }) => {
            // The answers live in the server's pin file: no supervisor needed.
            return match warden_config::pins::forget_always(&server, tool.as_deref()) {
                Ok(forgotten) => {
                    let o = CommandOutcome {
                        ok: true,
                        message: if forgotten.is_empty() {
                            format!("no tool of `{server}` was allowed for good")
                        } else {
                            format!(
                                "forgot the always-allow of {} of `{server}`: calls of it are asked about again",
                                forgotten.join(", ")
                            )
                        },
                        config: None,
                        sessions: Vec::new(),
                    };
                    print_outcome(&o, json);
                    ExitCode::SUCCESS
                }
                Err(e) => fail(e),
            };
        }
    };
    if !matches!(request, Request::Approvals) {
        return command_cmd(request, json).await;
    }
    let mut conn = match connect().await {
        Err(e) => return fail(e),
        Ok(None) => {
            return fail(
                "no supervisor is running, so no call can be waiting for it; start the tray app or `warden daemon`",
            );
        }
        Ok(Some(c)) => c,
    };
    match conn.ask(op::Approvals).await {
        Ok(approvals) => {
            if json {
                // Each call's client, from the session holding it (a session that ended
                // meanwhile has none).
                let clients = if approvals.is_empty() {
                    Default::default()
                } else {
                    conn.status()
                        .await
                        .map(|s| {
                            s.sessions
                                .into_iter()
                                .filter_map(|s| Some((s.id, s.client?)))
                                .collect()
                        })
                        .unwrap_or_default()
                };
                print_json!(&pending_json(&approvals, &clients));
            } else if approvals.is_empty() {
                say!("no call is waiting for approval");
            } else {
                for a in &approvals {
                    say!(
                        "{}  {}  {}  {}  ({} s left{})",
                        a.id,
                        a.server,
                        a.tool,
                        a.args,
                        a.left_ms / 1000,
                        if a.client_asked {
                            "; the client is asked too"
                        } else {
                            ""
                        }
                    );
                }
                say!(
                    "answer with `warden approvals allow ID [--always]` or `warden approvals deny ID`"
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}
