//! `warden`: the stdio bridge and command-line tools of MCP Warden.
//!
//! What `main` does with its arguments, in order:
//! - the `__sandbox-net` helper (`warden_bridge::sandbox::HELPER`, Linux) runs before clap: inside
//!   a bubblewrap sandbox with a `sandbox_network` list, it hands the proxy's listener to the
//!   bridge and execs the server;
//! - `bridge` is parsed alone (`BridgeArgs`): IDEs start a bridge for every server they run, and
//!   building clap's whole command tree first doubles the parse (~250 µs instead of ~120 µs of
//!   start-up). `the_bridge_alone_parses_as_in_the_whole_tree` keeps both parses alike;
//! - `registry` and `install` are handed to `warden-registry` (`$WARDEN_REGISTRY_BIN`, else the
//!   program beside this one), which takes this process's place (exec on Unix): the registry's code
//!   and its HTTP and TLS stack live there, not in the bridge. `auth login`/`logout` are handed to
//!   `warden-remote` the same way.

mod auth_cmd;
mod clients_cmd;
mod output;
mod secret_input;
mod servers_cmd;
mod sets_cmd;
mod tools_cmd;

mod supervisor_cmd;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use warden_bridge as bridge;
use warden_bridge::fallback;
use warden_config::keychain;
use warden_config::{Config, Overrides};
use warden_wire::codes::Code;

#[derive(Parser)]
#[command(
    name = "warden",
    version,
    about = "Keeps local MCP servers healthy",
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Bridge(BridgeArgs),
    /// Serve ripgrep search over stdio as an MCP server, with the tools of mcp-ripgrep.
    ///
    /// Searches run with `rg` ($WARDEN_RG, else rg on PATH) or, without one, a built-in engine.
    /// Paths outside the roots are refused.
    RgServer {
        /// A directory that searches may touch (repeatable; default: the current directory).
        /// Relative `path` arguments start at the first one.
        #[arg(long = "root", value_name = "DIR")]
        roots: Vec<PathBuf>,
        /// Largest output text of one result, in bytes; longer output is cut with a note.
        #[arg(long, value_name = "N", default_value_t = fallback::DEFAULT_MAX_OUTPUT_BYTES)]
        max_output_bytes: usize,
        /// Which engine searches.
        #[arg(long, value_enum, default_value_t = EngineArg::Auto)]
        engine: EngineArg,
    },
    /// IDE and agent clients' MCP config files: list, wrap, unwrap, backups, restore.
    ///
    /// Wrapping routes a client's stdio servers through `warden bridge`; only the entries'
    /// command and args change, and every change is backed up first.
    Clients {
        #[command(subcommand)]
        command: clients_cmd::ClientsCommand,
    },
    /// MCP servers across the clients' config files, by name: which clients have each one,
    /// wrapped or not, on or off.
    Servers {
        #[command(subcommand)]
        command: servers_cmd::ServersCommand,
    },
    /// Project sets (`[sets.NAME]` in config.toml): servers that go together, written into a
    /// project's client files (or the users'), and taken out again.
    Sets {
        #[command(subcommand)]
        command: sets_cmd::SetsCommand,
    },
    /// Tool pinning: each server's tool definitions as first seen, what changed since, and
    /// approving the changes (works without a supervisor).
    Tools {
        #[command(subcommand)]
        command: tools_cmd::ToolsCommand,
    },
    /// Sign-ins to remote servers (OAuth): list them, sign in, sign out. One sign-in serves
    /// every client.
    Auth {
        #[command(subcommand)]
        command: auth_cmd::AuthCommand,
    },
    /// The MCP Registry: search it, and see what installing a server would run.
    ///
    /// Run by `warden-registry` beside warden (`warden registry --help` for its commands).
    #[command(disable_help_flag = true)]
    Registry {
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "ARGS"
        )]
        args: Vec<OsString>,
    },
    /// Install a server of the MCP Registry into clients' config files, pinned, after asking.
    ///
    /// Run by `warden-registry` beside warden (`warden install --help` for its options).
    #[command(disable_help_flag = true)]
    Install {
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "ARGS"
        )]
        args: Vec<OsString>,
    },
    #[command(flatten)]
    Supervisor(supervisor_cmd::Command),
}

/// Run COMMAND as an MCP server and relay stdio to it, with timeouts, limits and logging.
///
/// IDEs launch this instead of the server: `warden bridge --server rg -- npx -y mcp-ripgrep`.
#[derive(Parser)]
#[command(
    name = "bridge",
    bin_name = "warden bridge",
    display_name = "warden-bridge",
    version
)]
struct BridgeArgs {
    /// Name of the server in config.toml, logs and the UI (default: COMMAND's file name).
    #[arg(long)]
    server: Option<String>,
    /// Config file (default: $WARDEN_CONFIG, else <config dir>/warden/config.toml).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override one config key for this session, e.g. --set idle_timeout_ms=20000.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Put VAR into the server's environment from the OS keychain (service `mcp-warden`,
    /// account `SERVER/VAR`), where `warden clients wrap --move-secrets` stored it
    /// (repeatable).
    #[arg(long = "secret-env", value_name = "VAR")]
    secret_env: Vec<String>,
    /// With `sandbox = "on"`, the server's environment is cleared to a short list (PATH,
    /// HOME, USER, LOGNAME, SHELL, TERM, LANG, LC_*, TZ): pass VAR from this environment to
    /// it as well (repeatable; `clients wrap` writes one for each variable of the entry).
    #[arg(long = "pass-env", value_name = "VAR")]
    pass_env: Vec<String>,
    /// A remote server's URL (Streamable HTTP; https, or http to this machine) instead of a
    /// COMMAND: the bridge runs `warden-remote` (beside warden) as the server, and guards it as
    /// it guards a local one.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    remote: Option<String>,
    /// With --remote: send header NAME with the value of the environment variable ENVVAR
    /// (repeatable), e.g. --header Authorization=GITHUB_AUTH.
    #[arg(long = "header", value_name = "NAME=ENVVAR", requires = "remote")]
    header: Vec<String>,
    /// The server command and its arguments.
    #[arg(
        last = true,
        required_unless_present = "remote",
        value_name = "COMMAND"
    )]
    command: Vec<OsString>,
}

#[derive(Clone, Copy, ValueEnum)]
enum EngineArg {
    /// rg if found, else built-in.
    Auto,
    /// The rg binary.
    Rg,
    /// ripgrep's crates, built into warden.
    Builtin,
}

/// IDEs start a bridge for every server they run, so its arguments are parsed alone: building
/// clap's whole command tree first doubles the parse (~250 µs instead of ~120 µs of start-up).
fn parse() -> Cli {
    if std::env::args_os().nth(1).is_some_and(|a| a == "bridge") {
        let args = BridgeArgs::parse_from(std::env::args_os().skip(1));
        return Cli {
            command: Command::Bridge(args),
        };
    }
    Cli::parse()
}

fn main() -> ExitCode {
    // Inside a bubblewrap sandbox with a `sandbox_network` list, before the server: hands the
    // proxy's listener to the bridge and execs the server (returns only on failure).
    #[cfg(target_os = "linux")]
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == warden_bridge::sandbox::HELPER)
    {
        let args: Vec<std::ffi::OsString> = std::env::args_os().skip(2).collect();
        let e = warden_bridge::sandbox::helper(&args);
        eprintln!("warden: the sandbox's way to its sandbox_network proxy failed: {e}");
        return ExitCode::from(126);
    }
    let cli = parse();
    init_logging();
    match cli.command {
        Command::Bridge(BridgeArgs {
            server,
            config,
            set,
            secret_env,
            pass_env,
            remote,
            header,
            command,
        }) => {
            let launch = match remote {
                Some(url) => match remote_command(server, &url, &header) {
                    Ok(launch) => launch,
                    Err(code) => return code,
                },
                None => BridgeLaunch {
                    server,
                    command,
                    hidden: Vec::new(),
                    remote: false,
                },
            };
            bridge_main(launch, config, &set, &secret_env, pass_env)
        }
        Command::RgServer {
            roots,
            max_output_bytes,
            engine,
        } => {
            let engine = match engine {
                EngineArg::Auto => fallback::EngineChoice::Auto,
                EngineArg::Rg => fallback::EngineChoice::Rg,
                EngineArg::Builtin => fallback::EngineChoice::Builtin,
            };
            ExitCode::from(fallback::rg_server_main(fallback::ServerOptions {
                roots,
                engine,
                max_output_bytes,
            }))
        }
        Command::Clients { command } => clients_cmd::run(command),
        Command::Servers { command } => servers_cmd::run(command),
        Command::Sets { command } => sets_cmd::run(command),
        Command::Tools { command } => tools_cmd::run(command),
        Command::Auth { command } => auth_cmd::run(command),
        Command::Registry { args } => registry("registry", args),
        Command::Install { args } => registry("install", args),
        Command::Supervisor(command) => supervisor_cmd::run(command),
    }
}

/// The program `name` beside this one (`$ENV` when set), to run or hand over to.
fn beside(name: &str, env: &str) -> Result<PathBuf, ExitCode> {
    std::env::var_os(env)
        .filter(|b| !b.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            let exe = std::env::current_exe().ok()?;
            Some(exe.with_file_name(format!("{name}{}", std::env::consts::EXE_SUFFIX)))
        })
        .ok_or_else(|| {
            eprintln!(
                "warden: cannot find warden's own executable to find {name} beside it. Fix: set {env} to the {name} program"
            );
            ExitCode::FAILURE
        })
}

/// A bridge's server name, command, and the values its logs must never show.
struct BridgeLaunch {
    server: Option<String>,
    command: Vec<OsString>,
    /// What its logs must never show.
    hidden: Vec<String>,
    /// The server is `warden-remote`: its sign-in's line on stderr means a person is at work.
    remote: bool,
}

/// `warden bridge --remote URL`: the server is `warden-remote URL`, named after the URL's host
/// unless `--server` names it. Also returns what the bridge's logs must never show: the values
/// of the header variables and the URL's query (it may hold a key).
fn remote_command(
    server: Option<String>,
    url: &str,
    headers: &[String],
) -> Result<BridgeLaunch, ExitCode> {
    let program = beside("warden-remote", "WARDEN_REMOTE_BIN")?;
    let server = server.unwrap_or_else(|| remote_host(url).unwrap_or("remote").to_owned());
    let mut command = vec![
        program.into_os_string(),
        format!("--server={server}").into(),
    ];
    let mut hidden = Vec::new();
    for h in headers {
        command.push(format!("--header={h}").into());
        if let Some(value) = h
            .split_once('=')
            .and_then(|(_, var)| std::env::var(var).ok())
        {
            hidden.push(value);
        }
    }
    if let Some((_, query)) = url.split_once('?') {
        hidden.push(query.split('#').next().unwrap_or(query).to_owned());
    }
    command.push("--".into());
    command.push(url.into());
    Ok(BridgeLaunch {
        server: Some(server),
        command,
        hidden,
        remote: true,
    })
}

/// The host of `url` as an HTTP client reads it: after any `user@`, before the port.
fn remote_host(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?,
        None => host.split(':').next()?,
    };
    (!host.is_empty()).then_some(host)
}

/// Runs `warden-registry COMMAND ARGS...` (`registry` or `install`) in this process's place:
/// the registry's code and its HTTP and TLS stack live there, not in the bridge every IDE
/// starts.
fn registry(command: &str, mut args: Vec<OsString>) -> ExitCode {
    args.insert(0, command.into());
    hand_over("warden-registry", "WARDEN_REGISTRY_BIN", args)
}

/// Runs the program `name` beside this one (`$ENV` when set) with `args` in this process's
/// place (exec on Unix; elsewhere it waits and passes the exit code on).
fn hand_over(name: &str, env: &str, args: Vec<OsString>) -> ExitCode {
    let program = match beside(name, env) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut child = std::process::Command::new(&program);
    child.args(args);
    let failed = |e: std::io::Error| {
        eprintln!(
            "warden: cannot run {}: {e}. Fix: reinstall Warden ({name} belongs beside warden), or set {env} to it",
            program.display()
        );
        ExitCode::FAILURE
    };
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        failed(child.exec())
    }
    #[cfg(not(unix))]
    match child.status() {
        Ok(status) => ExitCode::from(status.code().map_or(1, |c| u8::try_from(c).unwrap_or(1))),
        Err(e) => failed(e),
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("WARDEN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false)
        .with_env_filter(filter)
        .init();
}

fn bridge_main(
    launch: BridgeLaunch,
    config: Option<PathBuf>,
    set: &[String],
    secret_env: &[String],
    pass_env: Vec<String>,
) -> ExitCode {
    let BridgeLaunch {
        server,
        command,
        hidden,
        remote,
    } = launch;
    let server = server.unwrap_or_else(|| {
        command
            .first()
            .map(|c| {
                PathBuf::from(c).file_name().map_or_else(
                    || c.to_string_lossy().into_owned(),
                    |n| n.to_string_lossy().into_owned(),
                )
            })
            .unwrap_or_else(|| "server".to_owned())
    });
    // Settings or secrets that cannot be used: the client's `initialize` still learns why.
    let refuse = |code: Code, cause: String| {
        eprintln!("warden: server `{server}` {cause} [{}]", code.as_str());
        bridge::refuse(
            &server,
            &command,
            code,
            cause,
            std::time::Duration::from_secs(10),
        );
        ExitCode::from(2)
    };
    let fail = |msg: String| {
        let cause = format!("was not started: Warden's settings for it are invalid: {msg}");
        refuse(Code::ConfigInvalid, cause)
    };
    let path = config.or_else(warden_config::default_path);
    let config = match path
        .as_deref()
        .map_or_else(|| Ok(Config::default()), Config::load)
    {
        Ok(c) => c,
        Err(e) => return fail(e.to_string()),
    };
    for warning in &config.warnings {
        tracing::warn!("{warning}");
    }
    let overrides = match Overrides::parse(set) {
        Ok(o) => o,
        Err(e) => return fail(e.to_string()),
    };
    let limits = match config.limits_for(&server, &overrides) {
        Ok(l) => l,
        Err(e) => return fail(e.to_string()),
    };
    let mut env = Vec::new();
    for var in secret_env {
        match keychain::get(&server, var) {
            Ok(value) => env.push((var.clone(), value)),
            Err(e) => {
                let code = match e {
                    keychain::KeychainError::Missing(_) => Code::SecretMissing,
                    keychain::KeychainError::Unavailable(_) => Code::KeychainUnavailable,
                };
                let cause =
                    format!("was not started: its {var} (--secret-env) cannot be read: {e}");
                return refuse(code, cause);
            }
        }
    }
    warden_wire::redact::hide_values(env.iter().map(|(_, v)| v.clone()).chain(hidden).collect());
    let options = bridge::Options {
        event_log: Some(warden_config::paths::event_log(&server)),
        server,
        command,
        env,
        pass_env,
        limits,
        reload: path.map(|p| (p, overrides)),
        control: Some(warden_control::socket::socket_path()),
        remote,
    };
    match bridge::run(options) {
        Ok(bridge::Exit::Clean) => ExitCode::SUCCESS,
        Ok(bridge::Exit::Failed(reason)) => {
            eprintln!("warden: {reason}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("warden: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::{BridgeArgs, Cli};

    /// The bridge's own parser (the start-up path) takes what `warden bridge` takes in the
    /// whole tree, and shows the same help.
    #[test]
    fn the_bridge_alone_parses_as_in_the_whole_tree() {
        Cli::command().debug_assert();
        BridgeArgs::command().debug_assert();
        let mut tree = Cli::command();
        tree.build();
        let help = |c: &mut clap::Command| c.render_long_help().to_string();
        let whole = tree.find_subcommand_mut("bridge").map(help);
        assert_eq!(whole, Some(help(&mut BridgeArgs::command())));
    }

    #[test]
    fn a_remote_server_is_named_after_the_host_a_client_would_reach() {
        let names: Vec<_> = [
            "https://github.com:x@evil.example/mcp",
            "https://api.example.com:8443/mcp?key=1",
            "http://[::1]:9/mcp",
            "https:///nohost",
        ]
        .iter()
        .map(|u| super::remote_host(u))
        .collect();
        assert_eq!(
            names,
            vec![
                Some("evil.example"),
                Some("api.example.com"),
                Some("::1"),
                None
            ]
        );
    }
}
