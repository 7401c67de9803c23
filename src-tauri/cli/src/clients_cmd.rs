//! `warden clients ...`: list, wrap, unwrap, backups, restore.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::output::fail;
use serde_json::{Value, json};
use warden_clients::{
    self as clients, ClientEnv, ClientError, ClientId, ConfigFile, EntryState, FileChange, Filter,
    Scope, UnwrapOptions, WrapOptions,
};
use warden_wire::{say, text};

#[derive(Subcommand)]
pub enum ClientsCommand {
    /// List detected client config files and their servers, wrapped or not.
    List {
        #[command(flatten)]
        scope: ProjectArgs,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Route stdio servers through `warden bridge` (only the entries' command and args change).
    Wrap {
        #[command(flatten)]
        filter: FilterArgs,
        /// Print the diff; write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Also move `env` values whose names look secret (TOKEN, KEY, SECRET, PASSWORD, PAT,
        /// CREDENTIAL...) into the OS keychain (service `mcp-warden`); the file keeps a
        /// placeholder and the bridge gets `--secret-env VAR`. Unwrap writes them back.
        #[arg(long)]
        move_secrets: bool,
        #[arg(long)]
        json: bool,
    },
    /// Restore wrapped entries to their original command and args.
    Unwrap {
        #[command(flatten)]
        filter: FilterArgs,
        /// Print the diff; write nothing.
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
    },
    /// List the backups taken before each change, newest first.
    Backups {
        #[arg(long)]
        json: bool,
    },
    /// Write a backup back to its config file (the current contents are backed up first).
    Restore {
        /// A backup id from `warden clients backups` (or a unique prefix of one).
        backup: String,
        /// Print the diff; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Args)]
pub struct ProjectArgs {
    /// Also look for project-level files in DIR (repeatable; the current directory and its
    /// git root are always included).
    #[arg(long = "project", value_name = "DIR")]
    projects: Vec<PathBuf>,
}

#[derive(Args)]
pub struct FilterArgs {
    /// Only this client.
    #[arg(long, value_name = "ID")]
    client: Option<ClientId>,
    /// Only this config file (also one Warden does not detect; name its client with --client).
    #[arg(long, value_name = "PATH")]
    file: Option<PathBuf>,
    /// Only servers with this name.
    #[arg(long, value_name = "NAME")]
    server: Option<String>,
    #[command(flatten)]
    scope: ProjectArgs,
}

pub fn run(command: ClientsCommand) -> ExitCode {
    let projects = match &command {
        ClientsCommand::List { scope, .. } => scope.projects.clone(),
        ClientsCommand::Wrap { filter, .. } | ClientsCommand::Unwrap { filter, .. } => {
            filter.scope.projects.clone()
        }
        _ => Vec::new(),
    };
    let mut env = match ClientEnv::from_process() {
        Ok(env) => env,
        Err(e) => return fail(e.coded()),
    };
    for p in projects {
        let p = std::fs::canonicalize(&p).unwrap_or(p);
        if !env.projects.contains(&p) {
            env.projects.push(p);
        }
    }
    match command {
        ClientsCommand::List { json, .. } => list(&env, json),
        ClientsCommand::Wrap {
            filter,
            dry_run,
            move_secrets,
            json,
        } => {
            let warden = match std::env::current_exe().and_then(std::fs::canonicalize) {
                Ok(p) => p,
                Err(e) => {
                    return fail(format!(
                        "cannot find the path of the warden binary: {e}. Fix: run warden by its full path"
                    ));
                }
            };
            let server = filter.server.clone();
            let opts = WrapOptions {
                warden,
                filter: to_filter(filter),
                dry_run,
                move_secrets,
            };
            report(clients::wrap(&env, &opts), Op::Wrap, dry_run, json, server)
        }
        ClientsCommand::Unwrap {
            filter,
            dry_run,
            json,
        } => {
            let server = filter.server.clone();
            let opts = UnwrapOptions {
                filter: to_filter(filter),
                dry_run,
            };
            report(
                clients::unwrap(&env, &opts),
                Op::Unwrap,
                dry_run,
                json,
                server,
            )
        }
        ClientsCommand::Backups { json } => backups(&env, json),
        ClientsCommand::Restore { backup, dry_run } => restore(&env, &backup, dry_run),
    }
}

fn to_filter(f: FilterArgs) -> Filter {
    Filter {
        client: f.client,
        file: f.file,
        server: f.server,
    }
}

/// The end of a file's report: its backup, the diff of a dry run, what the client needs next.
pub(crate) fn print_tail(c: &FileChange, dry_run: bool) {
    if let Some(b) = &c.backup {
        println!("  backup: {b}");
    }
    if dry_run && !c.diff.is_empty() {
        println!();
        print!("{}", text::lines(&c.diff));
        if !c.diff.ends_with('\n') {
            println!();
        }
        println!();
    }
    for n in &c.notices {
        say!("  next: {}", n.message);
    }
}

/// Pretty JSON on stdout: what every `--json` of the CLI prints.
pub(crate) fn print_json(v: &Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
    );
}

fn file_json(f: &ConfigFile) -> Value {
    let (scope, project) = match &f.scope {
        Scope::User => ("user", Value::Null),
        Scope::Project(dir) => ("project", json!(dir)),
    };
    json!({
        "client": f.client.as_str(),
        "path": f.path,
        "scope": scope,
        "project": project,
        "format": f.format,
        "active": f.active,
        "note": f.note,
    })
}

fn scope_label(f: &ConfigFile) -> String {
    match &f.scope {
        Scope::User => "user".to_owned(),
        Scope::Project(dir) => format!("project {}", dir.display()),
    }
}

fn argv(command: &str, args: &[String]) -> String {
    text::argv(&[&[command.to_owned()], args].concat())
}

fn list(env: &ClientEnv, as_json: bool) -> ExitCode {
    let listing = clients::list(env);
    if as_json {
        let files: Vec<Value> = listing
            .iter()
            .map(|l| {
                let mut v = file_json(&l.file);
                v["error"] = l.error.as_ref().map_or(Value::Null, |e| json!(e.coded()));
                v["servers"] = json!(l.servers);
                v
            })
            .collect();
        print_json(&json!({ "files": files }));
        return ExitCode::SUCCESS;
    }
    if listing.is_empty() {
        println!(
            "No MCP client config files found (home {}). Clients: {}.",
            env.home.display(),
            ClientId::ALL.map(ClientId::as_str).join(", ")
        );
        return ExitCode::SUCCESS;
    }
    let mut totals = (0, 0);
    for l in &listing {
        let f = &l.file;
        say!(
            "{} ({}) {} [{}, {}]",
            f.client.display_name(),
            f.client,
            f.path.display(),
            scope_label(f),
            f.format
        );
        if let Some(note) = &f.note {
            let mark = if f.active {
                ""
            } else {
                "not read by the client: "
            };
            say!("  note: {mark}{note}");
        }
        if let Some(e) = &l.error {
            println!("  error: {}", e.coded());
            continue;
        }
        if l.servers.is_empty() {
            println!("  (no servers)");
        }
        let width = l
            .servers
            .iter()
            .map(|s| s.name.chars().count())
            .max()
            .unwrap_or(0);
        for s in &l.servers {
            let name = if s.scope.is_empty() {
                s.name.clone()
            } else {
                format!("{} ({})", s.name, s.scope.join(" "))
            };
            let line = match &s.state {
                EntryState::Unwrapped { command, args } if s.reverted => {
                    totals.0 += 1;
                    format!(
                        "reverted     {} (Warden had wrapped it)",
                        argv(command, args)
                    )
                }
                EntryState::Unwrapped { command, args } => {
                    totals.0 += 1;
                    format!("not wrapped  {}", argv(command, args))
                }
                EntryState::Wrapped { command, args, .. } => {
                    totals.1 += 1;
                    format!("wrapped      {}", argv(command, args))
                }
                EntryState::Skipped { reason } => format!("skipped      {reason}"),
            };
            say!("  {name:<width$}  {line}");
            for r in &s.risks {
                say!("  {:width$}  ! {}", "", r.detail);
            }
        }
    }
    println!(
        "\n{} file(s); {} stdio server(s) wrapped, {} not wrapped.",
        listing.len(),
        totals.1,
        totals.0
    );
    if totals.0 > 0 {
        println!("Wrap them with `warden clients wrap` (try --dry-run first).");
    }
    ExitCode::SUCCESS
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Wrap,
    Unwrap,
}

fn change_json(c: &FileChange) -> Value {
    let mut v = file_json(&c.file);
    v["changed"] = json!(c.changed.iter().map(|e| &e.name).collect::<Vec<_>>());
    v["skipped"] = json!(
        c.skipped
            .iter()
            .map(|(e, r)| json!({ "server": e.name, "reason": r }))
            .collect::<Vec<_>>()
    );
    v["written"] = json!(c.written);
    v["backup"] = json!(c.backup);
    v["secrets"] = json!(c.secrets);
    v["diff"] = json!(c.diff);
    v["notices"] = json!(c.notices);
    v["error"] = c.error.as_ref().map_or(Value::Null, |e| json!(e.coded()));
    v
}

fn report(
    result: Result<Vec<FileChange>, ClientError>,
    op: Op,
    dry_run: bool,
    as_json: bool,
    server: Option<String>,
) -> ExitCode {
    let changes = match result {
        Ok(c) => c,
        Err(e) => return fail(e.coded()),
    };
    let failed = changes.iter().any(|c| c.error.is_some());
    let matched = changes
        .iter()
        .any(|c| !c.changed.is_empty() || !c.skipped.is_empty());
    let missing = server.is_some() && !matched;
    if as_json {
        print_json(&json!({
            "dry_run": dry_run,
            "files": changes.iter().map(change_json).collect::<Vec<_>>(),
        }));
    } else {
        human_report(&changes, op, dry_run);
        if let (true, Some(name)) = (missing, &server) {
            eprintln!(
                "warden: no server named {name:?} in the selected files. Fix: check the name with `warden clients list`"
            );
        }
    }
    if failed || missing {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn human_report(changes: &[FileChange], op: Op, dry_run: bool) {
    let (done, doing) = match (op, dry_run) {
        (Op::Wrap, false) => ("wrapped", "Wrapped"),
        (Op::Wrap, true) => ("would wrap", "Would wrap"),
        (Op::Unwrap, false) => ("unwrapped", "Unwrapped"),
        (Op::Unwrap, true) => ("would unwrap", "Would unwrap"),
    };
    if changes.is_empty() {
        println!("No matching client config files. See `warden clients list`.");
        return;
    }
    let mut servers = 0;
    let mut files = 0;
    for c in changes {
        println!("{} {}", c.file.client, c.file.path.display());
        if let Some(e) = &c.error {
            println!("  error: {}", e.coded());
            continue;
        }
        if !c.changed.is_empty() {
            files += 1;
            servers += c.changed.len();
            let names: Vec<String> = c.changed.iter().map(ToString::to_string).collect();
            say!("  {done}: {}", names.join(", "));
        }
        if !c.secrets.is_empty() {
            let how = match op {
                Op::Wrap => "moved into",
                Op::Unwrap => "written back from",
            };
            println!(
                "  secrets {how} the OS keychain (service {}): {}",
                warden_config::keychain::SERVICE,
                c.secrets.join(", ")
            );
            if let (Op::Wrap, Some(b)) = (op, &c.backup) {
                println!(
                    "  note: backup {b} still holds them in plain text; delete it (`warden clients backups` shows where) once the servers work"
                );
            }
        }
        for (e, reason) in &c.skipped {
            if c.changed.contains(e) {
                say!("  note: {e}: {reason}");
            } else {
                say!("  left as is: {e} ({reason})");
            }
        }
        if c.changed.is_empty() && c.skipped.is_empty() {
            println!("  no matching servers");
        }
        print_tail(c, dry_run);
    }
    println!("\n{doing} {servers} server(s) in {files} file(s).");
    if dry_run {
        println!("Dry run: nothing was written. Run again without --dry-run to apply.");
    } else if servers > 0 {
        println!(
            "Undo with `warden clients {}`, or `warden clients restore BACKUP`.",
            match op {
                Op::Wrap => "unwrap",
                Op::Unwrap => "wrap",
            }
        );
    }
}

fn backups(env: &ClientEnv, as_json: bool) -> ExitCode {
    let all = match clients::backups(&env.state_dir) {
        Ok(b) => b,
        Err(e) => return fail(e.coded()),
    };
    if as_json {
        print_json(&json!({ "backups": all }));
        return ExitCode::SUCCESS;
    }
    if all.is_empty() {
        println!(
            "No backups yet in {}. Warden takes one before each change.",
            env.state_dir.join("backups").display()
        );
        return ExitCode::SUCCESS;
    }
    for b in &all {
        println!(
            "{}  {}  {}  {} bytes",
            b.id,
            b.client.map_or("?", ClientId::as_str),
            b.original.display(),
            b.size
        );
    }
    println!(
        "\n{} backup(s) in {}. Restore one with `warden clients restore ID`.",
        all.len(),
        env.state_dir.join("backups").display()
    );
    ExitCode::SUCCESS
}

fn restore(env: &ClientEnv, id: &str, dry_run: bool) -> ExitCode {
    match clients::restore(env, id, dry_run) {
        Ok(out) => {
            let path = out.backup.original.display();
            if dry_run {
                if out.diff.is_empty() {
                    println!("{path} already holds backup {}.", out.backup.id);
                } else {
                    print!("{}", out.diff);
                    println!("\nDry run: nothing was written.");
                }
            } else if out.written {
                println!("Restored {path} from backup {}.", out.backup.id);
                if let Some(prev) = out.previous {
                    println!("Its previous contents are in backup {prev}.");
                }
            } else {
                println!(
                    "{path} already holds backup {}; nothing to do.",
                    out.backup.id
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(e.coded()),
    }
}
