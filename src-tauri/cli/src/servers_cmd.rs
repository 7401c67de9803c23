//! `warden servers ...`: the servers of every client config file, by name: list them, add
//! one to several clients, turn one off or on, remove one (docs/clients.md,
//! "`warden servers add | disable | enable | remove`"). The edits are `warden_clients::manage`'s.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use serde_json::{Value, json};
use warden_clients::{
    self as clients, AddOptions, ClientEnv, ClientError, ClientId, ConfigFile, EntryState,
    FileChange, NewEntry, Selection, ServerEntry,
};
use warden_config::keychain;
use warden_wire::say;

use crate::secret_input;

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
    /// Add a server to each client named with --client, in that client's own format (its file
    /// is created when the client is installed but has none). Run through `warden bridge`
    /// unless --no-wrap. Refused, with nothing written, when a file already has the name.
    /// A remote server: --url URL instead of a command (run by `warden bridge --remote URL`).
    Add {
        /// The server's name in the clients' files.
        name: String,
        /// A client to add it to (repeatable; at least one).
        #[arg(long = "client", value_name = "ID", required = true)]
        clients: Vec<ClientId>,
        /// An environment variable written into the entry (repeatable).
        #[arg(long = "env", value_name = "KEY=VALUE", value_parser = parse_kv)]
        env: Vec<(String, String)>,
        /// A secret (repeatable): its value goes into the OS keychain (service `mcp-warden`,
        /// account `NAME/KEY`), never into a file; the bridge puts it into the server's
        /// environment. Give KEY alone: the value is asked for without echo on a terminal, else
        /// read as one line of stdin (one line per KEY, in order). KEY=VALUE works too, but
        /// puts the value where `ps` and your shell's history show it.
        #[arg(long = "secret-env", value_name = "KEY", value_parser = secret_input::parse)]
        secret_env: Vec<(String, Option<String>)>,
        /// Overwrite a keychain item NAME/KEY that holds another value and that an entry of
        /// another client's file still reads (else refused, W-SECRET-IN-USE).
        #[arg(long)]
        replace_secret: bool,
        /// Write the plain command, not run through `warden bridge` (no --secret-env then).
        #[arg(long)]
        no_wrap: bool,
        /// Into the chosen clients' project files in DIR (created, with their folder, when not
        /// there) instead of their user files: a project's own server. The entry runs plain
        /// `warden` when `warden` on PATH is this one (the file may be checked into git),
        /// else this warden's path, with a warning.
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// Print the diffs; write nothing (not the keychain either).
        #[arg(long)]
        dry_run: bool,
        /// A remote server's URL (Streamable HTTP; https, or http to localhost, 127.0.0.1 or
        /// ::1) instead of a command: the entry runs `warden bridge --remote URL`.
        #[arg(long, value_name = "URL", conflicts_with = "command")]
        url: Option<String>,
        /// With --url: send header NAME with the value of the environment variable ENVVAR
        /// (repeatable). With --secret-env ENVVAR too, the value comes from the OS keychain.
        #[arg(long = "header", value_name = "NAME=ENVVAR", requires = "url")]
        header: Vec<String>,
        /// The server's command and its arguments, after `--`.
        #[arg(last = true, required_unless_present = "url", value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Turn a server off without deleting it: with the client's own switch where it has one,
    /// else Warden keeps the entry's bytes and takes it out of the file.
    Disable {
        name: String,
        /// Only this client's files (repeatable; default: every client that has it).
        #[arg(long = "client", value_name = "ID")]
        clients: Vec<ClientId>,
        /// Only this file (as `warden servers list` names it); all its scopes (Claude Code's
        /// projects in `~/.claude.json` too).
        #[arg(long, value_name = "PATH")]
        file: Option<PathBuf>,
        /// Print the diffs; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Turn a server on again (a kept entry comes back with its exact bytes).
    Enable {
        name: String,
        /// Only this client's files (repeatable; default: every client that has it).
        #[arg(long = "client", value_name = "ID")]
        clients: Vec<ClientId>,
        /// Only this file (as `warden servers list` names it); all its scopes (Claude Code's
        /// projects in `~/.claude.json` too).
        #[arg(long, value_name = "PATH")]
        file: Option<PathBuf>,
        /// Print the diffs; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Remove a server from the clients' files (each file is backed up first, with the entries
    /// `disable` kept aside put back). Asks first on a terminal, then applies exactly what it
    /// listed (refused if a file changed meanwhile); without a terminal, --yes is required.
    Remove {
        name: String,
        /// Only this client's files (repeatable; default: every client that has it).
        #[arg(long = "client", value_name = "ID")]
        clients: Vec<ClientId>,
        /// Only this file (as `warden servers list` names it); all its scopes (Claude Code's
        /// projects in `~/.claude.json` too).
        #[arg(long, value_name = "PATH")]
        file: Option<PathBuf>,
        /// Do not ask.
        #[arg(long)]
        yes: bool,
        /// Print the diffs; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

fn parse_kv(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err(format!("{s:?} is not KEY=VALUE")),
    }
}

pub fn run(command: ServersCommand) -> ExitCode {
    let mut env = match ClientEnv::from_process() {
        Ok(env) => env,
        Err(e) => {
            eprintln!("warden: {}", e.coded());
            return ExitCode::FAILURE;
        }
    };
    // `--file` naming a project's file (one `--project` wrote, say): that project's files
    // are read too, wherever the command runs.
    let file = match &command {
        ServersCommand::Disable { file, .. }
        | ServersCommand::Enable { file, .. }
        | ServersCommand::Remove { file, .. } => file.as_deref(),
        _ => None,
    };
    if let Some(dir) = file
        .and_then(|f| std::fs::canonicalize(f).ok())
        .and_then(|f| clients::sets::project_of(&f))
        .filter(|d| !env.projects.contains(d))
    {
        env.projects.push(dir);
    }
    match command {
        ServersCommand::List { json } => list(&env, json),
        ServersCommand::Add {
            name,
            clients,
            env: vars,
            secret_env,
            replace_secret,
            no_wrap,
            project,
            dry_run,
            url,
            header,
            command,
        } => add(
            &env,
            name,
            clients,
            vars,
            Secrets {
                given: secret_env,
                replace: replace_secret,
            },
            no_wrap,
            project,
            dry_run,
            match url {
                Some(url) => Target::Remote { url, header },
                None => Target::Command(command),
            },
        ),
        ServersCommand::Disable {
            name,
            clients,
            file,
            dry_run,
        } => {
            let r = clients::set_enabled(&env, &name, &selection(clients, file), false, dry_run);
            report(r, Verb::Disable, dry_run)
        }
        ServersCommand::Enable {
            name,
            clients,
            file,
            dry_run,
        } => {
            let r = clients::set_enabled(&env, &name, &selection(clients, file), true, dry_run);
            report(r, Verb::Enable, dry_run)
        }
        ServersCommand::Remove {
            name,
            clients,
            file,
            yes,
            dry_run,
        } => remove(&env, &name, &selection(clients, file), yes, dry_run),
    }
}

fn selection(clients: Vec<ClientId>, file: Option<PathBuf>) -> Selection {
    Selection {
        clients,
        file,
        scope: None,
    }
}

/// Exit code 2: refused, nothing written.
fn refused(msg: &str) -> ExitCode {
    eprintln!("warden: {msg}");
    ExitCode::from(2)
}

pub(crate) fn failed(e: &ClientError) -> ExitCode {
    let refusal = matches!(
        e,
        ClientError::Exists { .. }
            | ClientError::NotInstalled { .. }
            | ClientError::SecretsNeedBridge
            | ClientError::RemoteNeedsBridge
            | ClientError::BadUrl { .. }
            | ClientError::NoClient
            | ClientError::BadName { .. }
            | ClientError::NoSuchServer { .. }
            | ClientError::Changed { .. }
            | ClientError::NoSuchSet { .. }
            | ClientError::SetServersMissing { .. }
            | ClientError::SetNotApplied { .. }
            | ClientError::SecretInProject { .. }
            | ClientError::NoProjectFile { .. }
    );
    if refusal {
        refused(&e.coded())
    } else {
        eprintln!("warden: {}", e.coded());
        ExitCode::FAILURE
    }
}

/// `--secret-env`s as given, and `--replace-secret`.
struct Secrets {
    given: Vec<(String, Option<String>)>,
    replace: bool,
}

/// What a new entry runs: a command, or a remote server through the bridge.
enum Target {
    Command(Vec<String>),
    Remote { url: String, header: Vec<String> },
}

#[allow(clippy::too_many_arguments)]
fn add(
    env: &ClientEnv,
    name: String,
    clients: Vec<ClientId>,
    vars: Vec<(String, String)>,
    secrets: Secrets,
    no_wrap: bool,
    project: Option<PathBuf>,
    dry_run: bool,
    target: Target,
) -> ExitCode {
    let (cmd, args, url, headers) = match target {
        Target::Command(command) => match command.split_first() {
            Some((cmd, args)) => (cmd.clone(), args.to_vec(), None, Vec::new()),
            None => return refused("give the server's command after `--`, or its --url"),
        },
        Target::Remote { url, header } => (String::new(), Vec::new(), Some(url), header),
    };
    let mut warning = None;
    let warden = if no_wrap {
        None
    } else {
        // The same path `warden clients wrap` writes; plain `warden` in a project's file
        // when that is this one.
        match crate::sets_cmd::warden_command(project.is_some()) {
            Ok(w) => {
                warning = w.warning;
                Some(PathBuf::from(w.command))
            }
            Err(code) => return code,
        }
    };
    let run_add = |env: &ClientEnv, opts: &AddOptions| match &project {
        Some(dir) => clients::add_to_project(env, opts, dir),
        None => clients::add(env, opts),
    };
    let opts = AddOptions {
        clients,
        entry: NewEntry {
            name: name.clone(),
            command: cmd,
            args,
            env: vars.into_iter().collect(),
            secret_env: secrets.given.iter().map(|(k, _)| k.clone()).collect(),
            url,
            headers,
        },
        warden,
        dry_run: true,
    };
    // Every file is checked (and the diffs computed) before anything is stored or written.
    let planned = match run_add(env, &opts) {
        Ok(c) => c,
        Err(e) => return failed(&e),
    };
    if let Some(e) = planned.iter().find_map(|c| c.error.as_ref()) {
        return failed(e);
    }
    if dry_run {
        let code = report(Ok(planned), Verb::Add, true);
        if let Some(w) = warning {
            println!();
            say!("warning: {w}");
        }
        return code;
    }
    // The values: read (never from the command line unless given there), then checked
    // against what other entries read, all before anything is stored or written.
    let mut secret_env = Vec::new();
    for (k, v) in secrets.given {
        let v = match v {
            Some(v) => {
                secret_input::warn_visible("--secret-env", &k);
                v
            }
            None => match secret_input::read(&k, &format!("{k} for {name}")) {
                Ok(v) => v,
                Err(e) => return refused(&format!("{e}. Nothing was written")),
            },
        };
        if let Err(e) = secret_input::may_store(env, &name, &k, &v, secrets.replace) {
            return refused(&format!("{e}. Nothing was stored or written."));
        }
        secret_env.push((k, v));
    }
    // The secrets into the keychain before any file names them.
    for (k, v) in &secret_env {
        if let Err(e) = keychain::set(&name, k, v) {
            eprintln!(
                "warden: cannot store {k} in the OS keychain ({} {}): {e}. Nothing was written. Fix: start or unlock the OS keychain (on Linux a Secret Service such as gnome-keyring or KeePassXC), or pass the value with --env",
                keychain::SERVICE,
                keychain::account(&name, k)
            );
            return ExitCode::FAILURE;
        }
    }
    let opts = AddOptions {
        dry_run: false,
        ..opts
    };
    let code = report(run_add(env, &opts), Verb::Add, false);
    if let Some(w) = warning {
        println!();
        say!("warning: {w}");
    }
    if !secret_env.is_empty() {
        let accounts: Vec<String> = secret_env
            .iter()
            .map(|(k, _)| keychain::account(&name, k))
            .collect();
        println!(
            "Secrets in the OS keychain (service {}): {}.",
            keychain::SERVICE,
            accounts.join(", ")
        );
    }
    code
}

fn remove(env: &ClientEnv, name: &str, sel: &Selection, yes: bool, dry_run: bool) -> ExitCode {
    let mut plan = None;
    if !yes && !dry_run {
        // What would go, then the question; then exactly that, or nothing.
        let planned = match clients::remove(env, name, sel, None, true) {
            Ok(c) => c,
            Err(e) => return failed(&e),
        };
        if !std::io::stdin().is_terminal() {
            return refused(&format!(
                "removing {name:?} needs --yes when there is no terminal to ask on. Nothing was written. Fix: run `warden servers remove {name} --yes` (see what goes with --dry-run)"
            ));
        }
        for c in &planned {
            println!("{} {}", c.file.client, c.file.path.display());
        }
        print!("Remove {name:?} from {} file(s)? [y/N] ", planned.len());
        let _ = std::io::stdout().flush();
        let mut answer = String::new();
        let _ = std::io::stdin().read_line(&mut answer);
        if !matches!(answer.trim(), "y" | "Y" | "yes" | "Yes") {
            return refused("not removed; nothing was written");
        }
        plan = Some(clients::plan_of(&planned));
    }
    report(
        clients::remove(env, name, sel, plan.as_deref(), dry_run),
        Verb::Remove,
        dry_run,
    )
}

#[derive(Clone, Copy, PartialEq)]
enum Verb {
    Add,
    Disable,
    Enable,
    Remove,
}

fn report(result: Result<Vec<FileChange>, ClientError>, verb: Verb, dry_run: bool) -> ExitCode {
    let changes = match result {
        Ok(c) => c,
        Err(e) => return failed(&e),
    };
    let (done, would) = match verb {
        Verb::Add => ("added", "would add"),
        Verb::Disable => ("turned off", "would turn off"),
        Verb::Enable => ("turned on", "would turn on"),
        Verb::Remove => ("removed", "would remove"),
    };
    let mut n = 0;
    for c in &changes {
        println!("{} {}", c.file.client, c.file.path.display());
        if let Some(e) = &c.error {
            println!("  error: {}", e.coded());
            continue;
        }
        let names: Vec<String> = c.changed.iter().map(ToString::to_string).collect();
        if names.is_empty() {
            println!("  nothing to change (already so)");
        } else {
            n += 1;
            say!(
                "  {}: {}",
                if dry_run { would } else { done },
                names.join(", ")
            );
        }
        if c.diff.is_empty() && !names.is_empty() && verb == Verb::Remove {
            println!(
                "  (it was turned off by `warden servers disable`: Warden forgot the entry it kept)"
            );
        }
        if !c.secrets.is_empty() {
            println!(
                "  still in the OS keychain (service {}): {} — delete them there if no other entry uses them",
                keychain::SERVICE,
                c.secrets.join(", ")
            );
        }
        crate::clients_cmd::print_tail(c, dry_run);
    }
    if dry_run {
        println!("\nDry run: nothing was written. Run again without --dry-run to apply.");
    } else if n > 0 {
        let undo = match verb {
            Verb::Add => "`warden servers remove NAME`",
            Verb::Disable => "`warden servers enable NAME`",
            Verb::Enable => "`warden servers disable NAME`",
            Verb::Remove => "`warden servers add` again",
        };
        println!("\n{n} file(s) changed. Undo with {undo}, or `warden clients restore BACKUP`.");
    }
    if changes.iter().any(|c| c.error.is_some()) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
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
fn by_name<'a>(
    listing: &'a [clients::FileListing],
    kept: &'a [(ConfigFile, ServerEntry)],
) -> BTreeMap<&'a str, Vec<Place<'a>>> {
    let mut out: BTreeMap<&str, Vec<Place<'_>>> = BTreeMap::new();
    for l in listing.iter().filter(|l| l.file.active) {
        if let Some(e) = &l.error {
            eprintln!("warden: skipped {}: {}", l.file.path.display(), e.coded());
            continue;
        }
        for entry in &l.servers {
            out.entry(entry.name.as_str()).or_default().push(Place {
                file: &l.file,
                entry,
            });
        }
    }
    // Entries `disable` took out of their file (kept by Warden): listed as off.
    for (file, entry) in kept {
        out.entry(entry.name.as_str())
            .or_default()
            .push(Place { file, entry });
    }
    out
}

fn list(env: &ClientEnv, as_json: bool) -> ExitCode {
    let listing = clients::list(env);
    let kept = clients::stashed(env);
    let servers = by_name(&listing, &kept);
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
        say!("{name}");
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
            say!(
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
