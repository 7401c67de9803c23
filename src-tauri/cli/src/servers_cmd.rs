//! `warden servers ...`: the servers of every client config file, by name.
//!
//! Read-only for now (`list`); `add`, `disable`, `enable` and `remove` are in CONTRACT.md.

use std::collections::BTreeMap;
use std::process::ExitCode;

use clap::Subcommand;
use serde_json::{Value, json};
use warden_core::clients::{self, ClientEnv, ClientId, ConfigFile, EntryState, ServerEntry};

#[derive(Subcommand)]
pub enum ServersCommand {
    /// Every server name in the client config files, with each client file that has it:
    /// whether the entry runs through `warden bridge`, and whether the client starts it (by
    /// the client's own on/off switch, where it has one).
    List {
        /// Machine-readable output: `[{"name", "clients": [{"client", "file", "wrapped",
        /// "enabled"}]}]`.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(command: ServersCommand) -> ExitCode {
    let env = match ClientEnv::from_process() {
        Ok(env) => env,
        Err(e) => {
            eprintln!("warden: {e}");
            return ExitCode::FAILURE;
        }
    };
    match command {
        ServersCommand::List { json } => list(&env, json),
    }
}

/// One entry of one file.
struct Place<'a> {
    file: &'a ConfigFile,
    entry: &'a ServerEntry,
}

impl Place<'_> {
    fn wrapped(&self) -> bool {
        matches!(self.entry.state, EntryState::Wrapped { .. })
    }
}

/// The entries of the files the clients read, by server name (names sorted; within a name,
/// in the order the files were found). Files that cannot be read are reported on stderr.
fn by_name(listing: &[clients::FileListing]) -> BTreeMap<&str, Vec<Place<'_>>> {
    let mut out: BTreeMap<&str, Vec<Place<'_>>> = BTreeMap::new();
    for l in listing.iter().filter(|l| l.file.active) {
        if let Some(e) = &l.error {
            eprintln!("warden: skipped {}: {e}", l.file.path.display());
            continue;
        }
        for entry in &l.servers {
            out.entry(entry.name.as_str()).or_default().push(Place {
                file: &l.file,
                entry,
            });
        }
    }
    out
}

fn list(env: &ClientEnv, as_json: bool) -> ExitCode {
    let listing = clients::list(env);
    let servers = by_name(&listing);
    if as_json {
        let out: Vec<Value> = servers
            .iter()
            .map(|(name, places)| {
                let clients: Vec<Value> = places
                    .iter()
                    .map(|p| {
                        json!({
                            "client": p.file.client.as_str(),
                            "file": p.file.path,
                            "wrapped": p.wrapped(),
                            "enabled": p.entry.enabled,
                        })
                    })
                    .collect();
                json!({ "name": name, "clients": clients })
            })
            .collect();
        crate::clients_cmd::print_json(&Value::Array(out));
        return ExitCode::SUCCESS;
    }
    if servers.is_empty() {
        println!(
            "No MCP servers in the client config files (home {}). Clients: {}.",
            env.home.display(),
            ClientId::ALL.map(ClientId::as_str).join(", ")
        );
        return ExitCode::SUCCESS;
    }
    let width = servers
        .values()
        .flatten()
        .map(|p| p.file.client.as_str().len())
        .max()
        .unwrap_or(0);
    let mut off = 0;
    for (name, places) in &servers {
        println!("{name}");
        for p in places {
            let state = match &p.entry.state {
                EntryState::Wrapped { .. } => "wrapped",
                EntryState::Unwrapped { .. } => "not wrapped",
                EntryState::Skipped { .. } => "skipped",
            };
            let on = if p.entry.enabled {
                "on"
            } else {
                off += 1;
                "off"
            };
            let scope = if p.entry.scope.is_empty() {
                String::new()
            } else {
                format!(" ({})", p.entry.scope.join(" "))
            };
            println!(
                "  {:width$}  {state:<11}  {on:<3}  {}{scope}",
                p.file.client.as_str(),
                p.file.path.display()
            );
        }
    }
    let entries: usize = servers.values().map(Vec::len).sum();
    println!(
        "\n{} server(s), {entries} entr{} in the clients' files; {off} turned off by their client's switch.",
        servers.len(),
        if entries == 1 { "y" } else { "ies" }
    );
    println!("Details per file: `warden clients list`.");
    ExitCode::SUCCESS
}
