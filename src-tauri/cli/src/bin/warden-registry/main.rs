//! `warden-registry`: what `warden registry` and `warden install` run. `warden` hands those
//! commands to this program beside it (the same arguments), so that the registry's code and
//! the HTTP and TLS stack it needs stay out of `warden`: the bridge every IDE starts pays for
//! none of it in start-up time, memory or size (docs/BENCHMARKS.md; scripts/test.sh checks
//! `warden`'s symbols).

mod http;
mod install_cmd;
#[path = "../../net.rs"]
mod net;
mod registry_cmd;
#[path = "../../secret_input.rs"]
mod secret_input;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use serde_json::Value;
use warden_wire::codes::Code;

/// The commands as `warden` shows them: its help and errors read `warden registry ...`.
#[derive(Parser)]
#[command(name = "warden", bin_name = "warden", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The MCP Registry: search it, and see what installing a server would run.
    ///
    /// Base URL: $WARDEN_REGISTRY_URL, else `[registry] url` in config.toml, else the official
    /// registry. Answers are cached for 10 minutes (`--refresh` asks again).
    Registry {
        #[command(subcommand)]
        command: registry_cmd::RegistryCommand,
    },
    /// Install a server of the MCP Registry (or a server.json) into clients' config files:
    /// the exact version, pinned, after showing what will run and asking.
    ///
    /// Secret values go to the OS keychain; the entry runs through `warden bridge` unless
    /// --no-wrap; it is started once afterwards (its tools pinned) unless --no-probe.
    /// Exit status: 0 installed, 1 failed, 2 refused (nothing written).
    Install(install_cmd::InstallArgs),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Registry { command } => registry_cmd::run(command),
        Command::Install(args) => install_cmd::run(args),
    }
}

/// A failure with its code; the message says what to do.
#[derive(Debug)]
pub(crate) struct Failure {
    pub code: Code,
    pub message: String,
}

impl Failure {
    pub fn new(code: Code, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }
}

/// Pretty JSON on stdout, as every `--json` of `warden` prints it.
pub(crate) fn print_json(v: &Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
    );
}
