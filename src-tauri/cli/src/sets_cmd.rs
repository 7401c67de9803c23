//! `warden sets list | apply | remove`: the project sets of config.toml (`[sets.NAME]`),
//! written into a project's client files (or the users') and taken out again
//! (docs/clients.md, "Projects"). The edits and the overview are `warden_clients::sets`'s.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use warden_clients::sets::{self, ApplyOptions, RemoveOptions, SetOutcome};
use warden_clients::{ClientEnv, ClientError, ClientId};
use warden_config::Config;
use warden_wire::say;

#[derive(Subcommand)]
pub enum SetsCommand {
    /// Each set of config.toml with its servers and where it is applied, and the projects the
    /// clients list (Claude Code's and Codex's projects, the folders VS Code and Cursor opened
    /// recently, and those a set was applied in) with what each client starts there.
    List {
        /// Machine-readable output: `{"sets": [{"name", "servers", "unknown", "applied":
        /// [{"client", "file", "project", "present", "missing", "by_warden"}]}], "projects":
        /// [{"dir", "exists", "found_in", "sets", "clients": [{"client", "project_file",
        /// "starts": [{"name", "server", "wrapped", "enabled", "from"}]}]}]}`.
        #[arg(long)]
        json: bool,
    },
    /// Write a set's servers, through `warden bridge`, into each chosen client's project file
    /// in DIR (created with its folder when not there), or into the clients' user files
    /// without --project. Servers already there are left as they are; a client with no
    /// project file is named and skipped. Refused, with nothing written, for an unknown set
    /// or a server no client's file has.
    Apply {
        /// The set (`[sets.SET]` in config.toml).
        set: String,
        /// The project's directory; without it, the clients' user files.
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// A client to write (repeatable; at least one).
        #[arg(long = "client", value_name = "ID", required = true)]
        clients: Vec<ClientId>,
        /// Print the diffs; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Take out exactly the entries `sets apply` added for the set: each file gives back its
    /// bytes from before while nothing else changed it, and a file apply created is deleted
    /// (with the folder it created, if empty).
    Remove {
        set: String,
        /// The project's directory; without it, the clients' user files.
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// Only this client's files (repeatable; default: every client's).
        #[arg(long = "client", value_name = "ID")]
        clients: Vec<ClientId>,
        /// Print the diffs; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

pub fn run(command: SetsCommand) -> ExitCode {
    let env = match ClientEnv::from_process() {
        Ok(env) => env,
        Err(e) => {
            eprintln!("warden: {}", e.coded());
            return ExitCode::FAILURE;
        }
    };
    // Remove works from Warden's ledger alone: a config.toml that does not load does not
    // stop it.
    match command {
        SetsCommand::List { json } => match load_config() {
            Ok((config, _)) => list(&env, &config, json),
            Err(code) => code,
        },
        SetsCommand::Apply {
            set,
            project,
            clients,
            dry_run,
        } => {
            let (config, config_path) = match load_config() {
                Ok(c) => c,
                Err(code) => return code,
            };
            let servers = match config.sets.get(&set) {
                Some(s) => s.clone(),
                None => {
                    return crate::servers_cmd::failed(&no_such_set(&set, &config, config_path));
                }
            };
            let warden = match warden_command(project.is_some()) {
                Ok(w) => w,
                Err(code) => return code,
            };
            let opts = ApplyOptions {
                set: set.clone(),
                servers,
                clients,
                project: project.clone(),
                warden: warden.command.clone(),
                plan: None,
                dry_run,
            };
            let result = sets::apply(&env, &opts);
            let applied = result.is_ok();
            let code = report(&set, result, true, project.as_deref(), dry_run);
            if let Some(w) = warden.warning.filter(|_| applied) {
                println!();
                say!("warning: {w}");
            }
            code
        }
        SetsCommand::Remove {
            set,
            project,
            clients,
            dry_run,
        } => {
            let opts = RemoveOptions {
                set: set.clone(),
                clients,
                project: project.clone(),
                plan: None,
                dry_run,
            };
            report(
                &set,
                sets::remove(&env, &opts),
                false,
                project.as_deref(),
                dry_run,
            )
        }
    }
}

fn load_config() -> Result<(Config, PathBuf), ExitCode> {
    let Some(path) = warden_config::default_path() else {
        eprintln!(
            "warden: no config directory (HOME is not set). Fix: set HOME, or WARDEN_CONFIG to the config file"
        );
        return Err(ExitCode::FAILURE);
    };
    match Config::load(&path) {
        Ok(c) => {
            for w in &c.warnings {
                say!("warden: warning: {w}");
            }
            Ok((c, path))
        }
        Err(e) => {
            eprintln!(
                "warden: {e} [{}]",
                warden_wire::codes::Code::ConfigInvalid.as_str()
            );
            Err(ExitCode::from(2))
        }
    }
}

fn no_such_set(set: &str, config: &Config, path: PathBuf) -> ClientError {
    ClientError::NoSuchSet {
        set: set.to_owned(),
        known: config.sets.keys().cloned().collect(),
        config: path,
    }
}

/// The command the entries run the bridge with, and what to tell about it.
pub(crate) struct WardenCommand {
    pub command: String,
    pub warning: Option<String>,
}

/// What a new entry runs (`sets::bridge_command`): this warden's absolute path in a user
/// file, plain `warden` in a project's when `warden` on PATH is this one.
pub(crate) fn warden_command(project: bool) -> Result<WardenCommand, ExitCode> {
    let this = match std::env::current_exe().and_then(std::fs::canonicalize) {
        Ok(p) => p,
        Err(e) => {
            eprintln!(
                "warden: cannot find the path of the warden binary: {e}. Fix: run warden by its full path"
            );
            return Err(ExitCode::FAILURE);
        }
    };
    let (command, warning) = sets::bridge_command(&this, project);
    Ok(WardenCommand { command, warning })
}

fn report(
    set: &str,
    result: Result<SetOutcome, ClientError>,
    apply: bool,
    project: Option<&Path>,
    dry_run: bool,
) -> ExitCode {
    let outcome = match result {
        Ok(o) => o,
        Err(e) => return crate::servers_cmd::failed(&e),
    };
    let mut n = 0;
    for f in &outcome.files {
        let c = &f.change;
        let whole = match (f.whole_file, apply, dry_run) {
            (false, _, _) => "",
            (true, true, false) => " (created)",
            (true, true, true) => " (would be created)",
            (true, false, false) => " (deleted: Warden had created it)",
            (true, false, true) => " (would be deleted: Warden had created it)",
        };
        say!("{} {}{whole}", c.file.client, c.file.path.display());
        if let Some(e) = &c.error {
            println!("  error: {}", e.coded());
            continue;
        }
        let (done, would) = if apply {
            ("added", "would add")
        } else {
            ("removed", "would remove")
        };
        if !f.done.is_empty() {
            n += 1;
            say!(
                "  {}: {}",
                if dry_run { would } else { done },
                f.done.join(", ")
            );
        }
        if !f.kept.is_empty() {
            say!("  already there, left as they are: {}", f.kept.join(", "));
        }
        crate::clients_cmd::print_tail(c, dry_run);
    }
    if !outcome.skipped.is_empty() {
        let names: Vec<&str> = outcome.skipped.iter().map(|c| c.as_str()).collect();
        println!(
            "skipped (no project file Warden knows of): {}",
            names.join(", ")
        );
    }
    if dry_run {
        println!("\nDry run: nothing was written. Run again without --dry-run to apply.");
    } else if n > 0 {
        let at = project.map_or(String::new(), |p| {
            format!(
                " --project {}",
                warden_wire::text::arg(&p.to_string_lossy())
            )
        });
        if apply {
            println!(
                "\n{n} file(s) changed. Undo with `warden sets remove {set}{at}`, or `warden clients restore BACKUP`."
            );
        } else {
            println!(
                "\n{n} file(s) changed. `warden sets apply {set}{at} --client ID` puts them back."
            );
        }
    }
    if outcome.files.iter().any(|f| f.change.error.is_some()) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn list(env: &ClientEnv, config: &Config, as_json: bool) -> ExitCode {
    let defs: Vec<(String, Vec<String>)> = config
        .sets
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let view = sets::overview(env, &defs);
    if as_json {
        let v = serde_json::to_value(&view).unwrap_or_default();
        crate::clients_cmd::print_json(&v);
        return ExitCode::SUCCESS;
    }
    if view.sets.is_empty() {
        println!(
            "No sets in config.toml. Add one: [sets.NAME] then servers = [\"github\", \"postgres\"] (names from `warden servers list`)."
        );
    }
    for s in &view.sets {
        say!("{}: {}", s.name, s.servers.join(", "));
        if !s.unknown.is_empty() {
            say!(
                "  not in any client's file (apply refuses until they are): {}",
                s.unknown.join(", ")
            );
        }
        if s.applied.is_empty() {
            println!("  applied nowhere");
        }
        for a in &s.applied {
            let place = match &a.project {
                Some(d) => format!("project {}", d.display()),
                None => "user".to_owned(),
            };
            let missing = if a.missing.is_empty() {
                String::new()
            } else {
                format!(" (missing: {})", a.missing.join(", "))
            };
            say!("  {} {} ({place}){missing}", a.client, a.file.display());
        }
    }
    if !view.projects.is_empty() {
        println!("\nProjects:");
    }
    for p in &view.projects {
        let sets = if p.sets.is_empty() {
            String::new()
        } else {
            format!("  sets: {}", p.sets.join(", "))
        };
        let gone = if p.exists { "" } else { " (not there)" };
        say!(
            "  {}{gone}  [{}]{sets}",
            p.dir.display(),
            p.found_in.join(", ")
        );
    }
    ExitCode::SUCCESS
}
