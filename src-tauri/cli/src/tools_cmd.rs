//! `warden tools`: a server's pinned tool definitions, what changed since they were pinned, and
//! approving the current ones. Reads and writes the pin file in the state directory, so it
//! works without a supervisor; running bridges of the server follow the file.

use std::process::ExitCode;

use clap::Subcommand;

use crate::output::fail;
use serde_json::{Value, json};
use warden_config::pins::{self, PinFile, PinState};
use warden_wire::{say, text};

#[derive(Subcommand)]
pub enum ToolsCommand {
    /// The server's tools as pinned, and each one's state: approved, changed or new.
    List {
        /// The server's name (as in `warden bridge --server NAME`).
        server: String,
        #[arg(long)]
        json: bool,
    },
    /// What changed in each tool that is not approved, word by word ([-old-] {+new+}).
    Diff {
        server: String,
        /// Only these tools (default: every changed or new one).
        tools: Vec<String>,
    },
    /// Approve the definitions the server shows now: all of them, or the named tools.
    /// Running sessions list the tools again.
    Approve { server: String, tools: Vec<String> },
}

pub fn run(command: ToolsCommand) -> ExitCode {
    match command {
        ToolsCommand::List { server, json } => with_pins(&server, |f| list(&server, f, json)),
        ToolsCommand::Diff { server, tools } => with_pins(&server, |f| diff(&server, f, &tools)),
        ToolsCommand::Approve { server, tools } => approve(&server, &tools),
    }
}

fn with_pins(server: &str, f: impl FnOnce(&PinFile) -> ExitCode) -> ExitCode {
    match pins::load(server) {
        Ok(file) => f(&file),
        Err(e) => fail(&e),
    }
}

fn names(file: &PinFile) -> Vec<&String> {
    let mut all: Vec<&String> = file.pinned.keys().chain(file.pending.keys()).collect();
    all.sort();
    all.dedup();
    all
}

fn list(server: &str, file: &PinFile, json: bool) -> ExitCode {
    let rows: Vec<(&String, PinState)> = names(file)
        .into_iter()
        .map(|n| (n, file.state(n)))
        .collect();
    if json {
        let tools: Vec<Value> = rows
            .iter()
            .map(|(name, state)| {
                let definition = file
                    .pending
                    .get(*name)
                    .map(|s| &s.definition)
                    .or_else(|| file.pinned.get(*name));
                json!({"name": name, "pin": state.as_str(), "definition": definition})
            })
            .collect();
        println!("{}", json!({"server": server, "tools": tools}));
        return ExitCode::SUCCESS;
    }
    for (name, state) in &rows {
        say!("{:<9} {name}", state.as_str());
    }
    let waiting = rows
        .iter()
        .filter(|(_, s)| *s != PinState::Approved)
        .count();
    if waiting > 0 {
        println!(
            "\n{waiting} not approved: `warden tools diff {server}` shows what changed, `warden tools approve {server} [TOOL]...` approves it."
        );
    }
    ExitCode::SUCCESS
}

fn diff(server: &str, file: &PinFile, tools: &[String]) -> ExitCode {
    let wanted: Vec<&String> = if tools.is_empty() {
        file.pending.keys().collect()
    } else {
        tools.iter().collect()
    };
    if wanted.is_empty() {
        println!("Every tool of `{server}` is as approved.");
        return ExitCode::SUCCESS;
    }
    for name in wanted {
        match file.diff(name) {
            Some(d) => {
                say!("== {name} ({})", file.state(name).as_str());
                println!("{}\n", text::lines(&d));
            }
            None if names(file).contains(&name) => {
                say!("== {name}: as approved");
                println!();
            }
            None => {
                return fail(format!(
                    "server `{server}` has no tool `{name}`; `warden tools list {server}` lists them"
                ));
            }
        }
    }
    ExitCode::SUCCESS
}

fn approve(server: &str, tools: &[String]) -> ExitCode {
    match pins::approve(server, tools) {
        Ok(done) if done.is_empty() => println!("Every tool of `{server}` is already approved."),
        Ok(done) => say!(
            "Approved {} tool(s) of `{server}`: {}",
            done.len(),
            done.join(", ")
        ),
        Err(e) => return fail(&e),
    }
    ExitCode::SUCCESS
}
