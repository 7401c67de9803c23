//! `warden install`: a server of the MCP Registry (or a server.json on disk) written into the
//! chosen clients' config files, after showing what will run and asking (docs/registry.md,
//! "Installing").
//!
//! The steps, and where each one's work is done:
//! 1. the document: the registry's (`Registry::server`, cached like `warden registry show`)
//!    or `--file`;
//! 2. the plan (`warden_registry::plan`): the pinned argv, the environment, or a
//!    refusal; values it lacks are asked for on a terminal (secret ones without echo);
//! 3. a dry run of `warden_clients::add`: the files that change and their diffs (an
//!    existing entry of that name is refused here, before anything is asked or stored);
//! 4. the consent screen, then yes/no (`--yes`, else a terminal, else refused);
//! 5. secrets into the OS keychain (`mcp-warden`, `ENTRY/VAR`), then the files (`add`);
//! 6. a probe of the entry as written (through `warden bridge`, which pins the tools the
//!    first time it sees them listed); a server that does not start is reported, not undone.
//!
//! Exit status: 0 installed (or a dry run), 1 failed, 2 refused; nothing is written on 1 or 2
//! unless the report says which files were.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use warden_clients::{
    self as clients, AddOptions, ClientEnv, ClientError, ClientId, FileChange, NewEntry, RiskKind,
    add,
};
use warden_config::keychain;
use warden_registry::{
    self as registry, InputRequest, InstallPlan, PlanOptions, RegistryError, RemotePlan,
    ServerResponse, ServerStatus,
};
use warden_supervisor::api::{AddStep, FileChangeView, ProbeReport};
use warden_supervisor::{flows, probe};
use warden_wire::codes::Code;
use warden_wire::{say, text};

use crate::registry_cmd::Registry;
use crate::{Failure, secret_input};

#[derive(Args)]
pub struct InstallArgs {
    /// The registry's full name, with an exact version or without (the latest, pinned):
    /// `io.github.microsoft/playwright-mcp` or `io.github.microsoft/playwright-mcp@0.0.79`.
    #[arg(
        value_name = "NAME[@VERSION]",
        required_unless_present = "file",
        conflicts_with = "file"
    )]
    spec: Option<String>,
    /// Install from this server.json document instead of the registry.
    #[arg(long, value_name = "SERVER_JSON")]
    file: Option<PathBuf>,
    /// A client whose config file gets the entry (repeatable): claude-desktop, claude-code,
    /// cursor, vscode, cline, windsurf, zed, gemini-cli, codex, opencode, kiro, lm-studio,
    /// continue, goose.
    #[arg(long = "client", value_name = "ID", required = true)]
    clients: Vec<ClientId>,
    /// The entry's name in the files (default: the registry name after its last `/`).
    #[arg(long = "as", value_name = "ENTRY")]
    as_name: Option<String>,
    /// A value the server asks for (repeatable): an environment variable, or an input of its
    /// arguments (`warden registry show NAME` lists them). Secret ones go to the OS keychain.
    /// Give a secret as KEY alone: its value is asked for without echo on a terminal, else
    /// read as one line of stdin (one line per KEY, in order); KEY=VALUE puts it where `ps`
    /// and your shell's history show it.
    #[arg(long = "env", value_name = "KEY[=VALUE]")]
    env: Vec<String>,
    /// Overwrite a keychain item ENTRY/KEY that holds another value and that an entry of
    /// another client's file still reads (else refused, W-SECRET-IN-USE).
    #[arg(long)]
    replace_secret: bool,
    /// Agree without being asked.
    #[arg(long)]
    yes: bool,
    /// Show what would run and the diff of each file; write nothing, store no secret.
    #[arg(long)]
    dry_run: bool,
    /// Write the server's own command, not routed through `warden bridge`.
    #[arg(long)]
    no_wrap: bool,
    /// Do not start the server after writing it.
    #[arg(long)]
    no_probe: bool,
    /// Ask the registry again instead of using an answer cached in the last 10 minutes.
    #[arg(long)]
    refresh: bool,
}

/// Why the install stopped.
enum Stop {
    /// Warden would not go on (exit 2): nothing was written.
    Refused(String),
    /// Something failed (exit 1), with its code when it has one.
    Failed(Option<Code>, String),
}

impl From<Failure> for Stop {
    fn from(f: Failure) -> Stop {
        Stop::Failed(Some(f.code), f.message)
    }
}

pub fn run(args: InstallArgs) -> ExitCode {
    match install(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Stop::Refused(why)) => {
            eprintln!(
                "warden: {} Nothing was written.",
                sentence(&text::lines(&why))
            );
            ExitCode::from(2)
        }
        Err(Stop::Failed(code, why)) => {
            let code = code
                .map(|c| format!(" [{}]", c.as_str()))
                .unwrap_or_default();
            eprintln!("warden: {}{code}", text::lines(&why));
            ExitCode::FAILURE
        }
    }
}

/// `text` ending with a full stop.
fn sentence(text: &str) -> String {
    let text = text.trim_end();
    if text.ends_with(['.', '!', '?']) {
        text.to_owned()
    } else {
        format!("{text}.")
    }
}

/// Where the document came from, for the consent screen.
enum Source {
    Registry(String),
    File(PathBuf),
}

fn install(args: InstallArgs) -> Result<(), Stop> {
    let (mut inputs, on_command_line) = parse_env(&args.env)?;
    let (response, source, version) = document(&args)?;
    let doc = &response.server;
    if status(&response) == Some(&ServerStatus::Deleted) {
        return Err(Stop::Refused(format!(
            "the registry deleted {} (servers are deleted when moderated, e.g. as malware); Warden does not install it. Fix: choose another server",
            doc.name
        )));
    }
    let entry = registry::entry_name(&doc.name, args.as_name.as_deref());
    if doc.packages.is_empty() && !doc.remotes.is_empty() {
        let remote = with_inputs(&response, &mut inputs, version, registry::plan_remote)?;
        let (env, secrets) = split_env(&remote.env, &on_command_line);
        return install_remote(&args, &response, &source, &entry, &remote, env, secrets);
    }
    let plan = with_inputs(&response, &mut inputs, version, registry::plan)?;
    let (env, secrets) = split_env(&plan.env, &on_command_line);
    if args.no_wrap && !secrets.is_empty() {
        let names: Vec<&str> = secrets.iter().map(|(k, _)| k.as_str()).collect();
        return Err(Stop::Refused(format!(
            "{} {} secret, and with --no-wrap nothing would read {} from the OS keychain: the value would have to be written into the files in plain text. Fix: leave out --no-wrap (the bridge puts secrets into the server's environment)",
            names.join(", "),
            if names.len() == 1 { "is" } else { "are" },
            if names.len() == 1 { "it" } else { "them" },
        )));
    }
    let warden = if args.no_wrap {
        None
    } else {
        Some(warden_path()?)
    };
    let new_entry = NewEntry {
        name: entry.clone(),
        command: plan.command.clone(),
        args: plan.args.clone(),
        env: env.clone(),
        secret_env: secrets.iter().map(|(k, _)| k.clone()).collect(),
        ..NewEntry::default()
    };
    // As `add` writes it (the same path, the same bridge arguments).
    let warden_arg = warden.as_ref().map(|w| w.to_string_lossy().into_owned());
    let written_argv = new_entry.argv(warden_arg.as_deref());
    let client_env = ClientEnv::from_process().map_err(|e| Stop::Failed(None, e.coded()))?;
    let opts = AddOptions {
        clients: args.clients.clone(),
        entry: new_entry,
        warden,
        dry_run: true,
    };
    // The files, the diffs, and a refusal of a name that is there already: before anything
    // is asked or stored.
    let preview = add(&client_env, &opts).map_err(refusal)?;
    file_errors(&preview)?;
    // A keychain that does not answer is found out before you are asked, not after.
    if !args.dry_run && !secrets.is_empty() {
        keychain::check().map_err(|e| keychain_failure(&entry, &secrets[0].0, &e))?;
        // Nor is an item another client's entry still reads replaced unasked.
        for (var, value) in &secrets {
            secret_input::may_store(&client_env, &entry, var, value, args.replace_secret)
                .map_err(Stop::Refused)?;
        }
    }

    consent_screen(&Screen {
        response: &response,
        source: &source,
        entry: &entry,
        plan: Planned::Package(&plan),
        written: &written_argv,
        env: &env,
        secrets: &secrets,
        files: &preview,
    });
    if args.dry_run {
        print_diffs(&preview);
        return Ok(());
    }
    if !args.yes {
        agree(preview.len())?;
    }
    let add = flows::add::Add {
        entry: opts.entry,
        clients: opts.clients,
        secrets: secrets.iter().cloned().collect(),
        warden: opts.warden,
        sandbox: None,
        ask_destructive: false,
        start: !args.no_probe,
    };
    let wrapped = add.warden.is_some();
    let done = commit(&add, &client_env, &secrets)?;
    file_errors(&done.changes)?;
    if args.no_probe {
        println!(
            "\nNot started (--no-probe). `warden probe -- {}` starts it once and lists its tools.",
            text::argv(&written_argv)
        );
    } else if let Some(report) = &done.probe {
        report_probe(&entry, report, &written_argv, wrapped);
    }
    Ok(())
}

/// The add workflow (`flows::add`): the secrets, the files, and the first start unless
/// `--no-probe`, each reported as it happens.
fn commit(
    add: &flows::add::Add,
    env: &ClientEnv,
    secrets: &[(String, String)],
) -> Result<flows::add::Done, Stop> {
    let entry = add.entry.name.as_str();
    let progress = |step: AddStep| match step {
        AddStep::Written { changes } => report_written(&changes, entry, secrets),
        AddStep::FirstStart => {
            println!("\nStarting it once to check it (--no-probe skips this)...")
        }
        AddStep::Network { .. } => {}
    };
    let mut fx = flows::add::Real {
        env,
        server: entry,
        config: None,
        timeout: probe::PREWARM_TIMEOUT,
        wrote: &|_, _| {},
        progress: &progress,
        config_changed: &|| {},
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Stop::Failed(None, format!("cannot start an async runtime: {e}")))?;
    runtime
        .block_on(flows::add::commit(add, &mut fx))
        .map_err(|e| match e {
            flows::add::AddError::Secret { var, error, .. } => {
                keychain_failure(entry, &var, &error)
            }
            flows::add::AddError::Files { error, .. } => refusal(error),
            other => Stop::Failed(None, other.message()),
        })
}

fn keychain_failure(entry: &str, var: &str, e: &dyn std::fmt::Display) -> Stop {
    Stop::Failed(
        Some(Code::KeychainUnavailable),
        format!(
            "cannot store {var} in the OS keychain ({} {}): {e}. Nothing was written. Fix: unlock the keychain (or start one: GNOME Keyring, KeePassXC, KWallet), then run the command again",
            keychain::SERVICE,
            keychain::account(entry, var)
        ),
    )
}

/// What `add` would not do is a refusal (the name is there already, the client is not
/// installed, the name cannot be one); a file it could not read or write is a failure.
fn refusal(e: ClientError) -> Stop {
    match e {
        ClientError::Exists { .. }
        | ClientError::NotInstalled { .. }
        | ClientError::BadName { .. }
        | ClientError::NoClient
        | ClientError::RemoteNeedsBridge
        | ClientError::BadUrl { .. }
        | ClientError::SecretsNeedBridge => Stop::Refused(e.coded()),
        e => Stop::Failed(None, e.coded()),
    }
}

/// `--env KEY=VALUE`s and `--env KEY`s (the value read: without echo on a terminal, else a
/// line of stdin), by key; and the keys whose values were on the command line.
fn parse_env(given: &[String]) -> Result<(BTreeMap<String, String>, BTreeSet<String>), Stop> {
    let mut out = BTreeMap::new();
    let mut on_command_line = BTreeSet::new();
    for kv in given {
        let (key, value) = secret_input::parse(kv).map_err(|e| {
            Stop::Refused(format!(
                "`--env {kv}`: {e}. Fix: pass each value as --env KEY (asked for) or --env KEY=VALUE"
            ))
        })?;
        let value = match value {
            Some(v) => {
                on_command_line.insert(key.clone());
                v
            }
            None => secret_input::read(&key, &key).map_err(Stop::Refused)?,
        };
        out.insert(key, value);
    }
    Ok((out, on_command_line))
}

/// The server's document, where it came from, and the version asked for.
fn document(args: &InstallArgs) -> Result<(ServerResponse, Source, Option<String>), Stop> {
    if let Some(path) = &args.file {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Stop::Failed(
                None,
                format!(
                    "cannot read {}: {e}. Fix: check the path given with --file",
                    path.display()
                ),
            )
        })?;
        let response = registry::parse_server(&text)
            .map_err(|e| Stop::Failed(Some(Code::RegistryInvalid), e.to_string()))?;
        return Ok((response, Source::File(path.clone()), None));
    }
    let spec = args.spec.as_deref().unwrap_or_default().trim();
    let (name, version) = match spec.rsplit_once('@') {
        Some((name, version)) if !name.is_empty() => (name, Some(version)),
        _ => (spec, None),
    };
    if let Some(v) = version {
        registry::requested_version(name, v).map_err(|e| Stop::Refused(e.to_string()))?;
    }
    let registry = Registry::new(args.refresh)?;
    let (response, _) = registry.server(name, version, "give one of those after the @")?;
    let source = Source::Registry(registry.base.clone());
    Ok((response, source, version.map(str::to_owned)))
}

/// What goes where: declared secrets (and undeclared values whose names look secret) to the
/// keychain, everything else into the entry's `env`.
fn split_env(
    planned: &[registry::PlannedEnv],
    on_command_line: &BTreeSet<String>,
) -> (BTreeMap<String, String>, Vec<(String, String)>) {
    let mut env = BTreeMap::new();
    let mut secrets: Vec<(String, String)> = Vec::new();
    for e in planned {
        let Some(value) = &e.value else { continue };
        if is_secret(e) {
            if on_command_line.contains(&e.name) {
                secret_input::warn_visible("--env", &e.name);
            }
            secrets.push((e.name.clone(), value.clone()));
        } else {
            env.insert(e.name.clone(), value.clone());
        }
    }
    (env, secrets)
}

/// A remote server (a document with `remotes` only) installed: the entry runs `warden bridge
/// --remote URL`, each header sent from a variable whose value is in the OS keychain (a
/// secret) or the entry's `env`. The same steps as a package's, after the same consent; not
/// started afterwards (a remote server may ask for a sign-in in the browser: the first start
/// of a client does that).
fn install_remote(
    args: &InstallArgs,
    response: &ServerResponse,
    source: &Source,
    entry: &str,
    remote: &RemotePlan,
    env: BTreeMap<String, String>,
    secrets: Vec<(String, String)>,
) -> Result<(), Stop> {
    if args.no_wrap {
        return Err(Stop::Refused(
            "a remote server runs only through the bridge (`warden bridge --remote URL`). Fix: leave out --no-wrap".to_owned(),
        ));
    }
    let warden = warden_path()?;
    let new_entry = NewEntry {
        name: entry.to_owned(),
        env: env.clone(),
        secret_env: secrets.iter().map(|(k, _)| k.clone()).collect(),
        url: Some(remote.url.clone()),
        headers: remote.headers.clone(),
        ..NewEntry::default()
    };
    let written_argv = new_entry.argv(Some(&warden.to_string_lossy()));
    let client_env = ClientEnv::from_process().map_err(|e| Stop::Failed(None, e.coded()))?;
    let opts = AddOptions {
        clients: args.clients.clone(),
        entry: new_entry,
        warden: Some(warden),
        dry_run: true,
    };
    let preview = add(&client_env, &opts).map_err(refusal)?;
    file_errors(&preview)?;
    if !args.dry_run && !secrets.is_empty() {
        keychain::check().map_err(|e| keychain_failure(entry, &secrets[0].0, &e))?;
        for (var, value) in &secrets {
            secret_input::may_store(&client_env, entry, var, value, args.replace_secret)
                .map_err(Stop::Refused)?;
        }
    }
    consent_screen(&Screen {
        response,
        source,
        entry,
        plan: Planned::Remote(remote),
        written: &written_argv,
        env: &env,
        secrets: &secrets,
        files: &preview,
    });
    if args.dry_run {
        print_diffs(&preview);
        return Ok(());
    }
    if !args.yes {
        agree(preview.len())?;
    }
    let add = flows::add::Add {
        entry: opts.entry,
        clients: opts.clients,
        secrets: secrets.iter().cloned().collect(),
        warden: opts.warden,
        sandbox: None,
        ask_destructive: false,
        start: false,
    };
    let done = commit(&add, &client_env, &secrets)?;
    file_errors(&done.changes)?;
    println!(
        "\nNot started: a client starts it (and signs in, if the server asks). `warden probe -- {}` starts it once and lists its tools.",
        text::argv(&written_argv)
    );
    Ok(())
}

/// The diffs of a dry run.
fn print_diffs(preview: &[FileChange]) {
    for change in preview {
        if !change.diff.is_empty() {
            println!("\n{} {}", change.file.client, change.file.path.display());
            print!("{}", text::lines(&change.diff));
            if !change.diff.ends_with('\n') {
                println!();
            }
        }
    }
    println!("\nDry run: nothing was written and no secret was stored.");
}

/// The plan (`plan`: a package's or a remote's), asking on a terminal for the values it
/// lacks (each once) and refusing without one.
fn with_inputs<T>(
    response: &ServerResponse,
    inputs: &mut BTreeMap<String, String>,
    version: Option<String>,
    plan: fn(&registry::ServerJson, &PlanOptions) -> Result<T, RegistryError>,
) -> Result<T, Stop> {
    let mut asked = 0;
    loop {
        let opts = PlanOptions {
            inputs: inputs.clone(),
            version: version.clone(),
            ..PlanOptions::default()
        };
        match plan(&response.server, &opts) {
            Ok(plan) => return Ok(plan),
            // Each round can only ask for more (an argument's variables, say): bounded anyway.
            Err(RegistryError::MissingInputs {
                server,
                inputs: missing,
            }) if std::io::stdin().is_terminal() && asked < 4 => {
                asked += 1;
                say!("{server} needs values Warden cannot choose for you:");
                for request in &missing {
                    let value = ask_value(request)?;
                    inputs.insert(request.key.clone(), value);
                }
            }
            Err(e) => return Err(Stop::Refused(e.to_string())),
        }
    }
}

/// One value, typed on the terminal (a secret one without echo).
fn ask_value(request: &InputRequest) -> Result<String, Stop> {
    let mut prompt = request.key.clone();
    if let Some(d) = &request.description {
        prompt = format!("{prompt} ({})", d.trim());
    }
    if !request.choices.is_empty() {
        prompt = format!("{prompt} [one of {}]", request.choices.join(", "));
    }
    let prompt = text::line(&format!("{prompt}: "));
    let value = if request.secret {
        rpassword::prompt_password(format!("{prompt}(secret, not shown) "))
            .map_err(|e| Stop::Failed(None, format!("cannot read {}: {e}", request.key)))?
    } else {
        eprint!("{prompt}");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| Stop::Failed(None, format!("cannot read {}: {e}", request.key)))?;
        line.trim_end_matches(['\r', '\n']).to_owned()
    };
    if value.is_empty() {
        return Err(Stop::Refused(format!(
            "no value was given for `{}`. Fix: type one, or pass {}",
            request.key,
            request.flag()
        )));
    }
    Ok(value)
}

fn is_secret(e: &registry::PlannedEnv) -> bool {
    e.secret || (!e.declared && clients::looks_secret(&e.name))
}

/// The `warden` that wrapped entries run: `$WARDEN_BIN` as given, else the `warden` beside
/// this program, canonical (the rule of the desktop app's sidecar check).
fn warden_path() -> Result<PathBuf, Stop> {
    if let Some(p) = std::env::var_os("WARDEN_BIN").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let beside = std::env::current_exe()
        .map(|me| me.with_file_name(format!("warden{}", std::env::consts::EXE_SUFFIX)))
        .map_err(|e| Stop::Failed(None, format!("cannot find warden-registry's own path: {e}. Fix: set WARDEN_BIN to the warden program")))?;
    std::fs::canonicalize(&beside).map_err(|e| {
        Stop::Failed(
            None,
            format!(
                "cannot find warden beside warden-registry ({}: {e}), the program a wrapped entry runs. Fix: reinstall Warden, set WARDEN_BIN to the warden program, or pass --no-wrap",
                beside.display()
            ),
        )
    })
}

fn status(s: &ServerResponse) -> Option<&ServerStatus> {
    s.meta.official.as_ref()?.status.as_ref()
}

/// A file the dry run or the write could not do: reported, and the install stops.
fn file_errors(changes: &[FileChange]) -> Result<(), Stop> {
    let errors: Vec<String> = changes
        .iter()
        .filter_map(|c| c.error.as_ref().map(|e| e.coded()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Stop::Failed(None, errors.join("\n")))
    }
}

/// What the consent screen shows.
struct Screen<'a> {
    response: &'a ServerResponse,
    source: &'a Source,
    entry: &'a str,
    plan: Planned<'a>,
    written: &'a [String],
    env: &'a BTreeMap<String, String>,
    secrets: &'a [(String, String)],
    files: &'a [FileChange],
}

/// A package's plan or a remote server's.
#[derive(Clone, Copy)]
enum Planned<'a> {
    Package(&'a InstallPlan),
    Remote(&'a RemotePlan),
}

impl Planned<'_> {
    fn version(&self) -> Option<&str> {
        match self {
            Planned::Package(p) => p.version.as_deref(),
            Planned::Remote(r) => r.version.as_deref(),
        }
    }

    fn env(&self) -> &[registry::PlannedEnv] {
        match self {
            Planned::Package(p) => &p.env,
            Planned::Remote(r) => &r.env,
        }
    }

    fn warnings(&self) -> &[registry::Warning] {
        match self {
            Planned::Package(p) => &p.warnings,
            Planned::Remote(r) => &r.warnings,
        }
    }
}

fn consent_screen(s: &Screen<'_>) {
    let doc = &s.response.server;
    match s.source {
        Source::Registry(url) => say!("Installing `{}` from the MCP Registry ({url}):", s.entry),
        Source::File(path) => say!("Installing `{}` from {}:", s.entry, path.display()),
    }
    say!(
        "  server:      {} {}",
        doc.name,
        s.plan.version().unwrap_or("(no version)")
    );
    if let Some(official) = &s.response.meta.official
        && official.status == Some(ServerStatus::Deprecated)
    {
        say!(
            "  DEPRECATED:  {}",
            official
                .status_message
                .as_deref()
                .unwrap_or("the registry marks it deprecated")
        );
    }
    say!(
        "  publisher:   {} (the namespace before the /)",
        doc.namespace()
    );
    say!(
        "  repository:  {}",
        doc.repository
            .as_ref()
            .and_then(|r| r.url.as_deref())
            .unwrap_or("(none given)")
    );
    match s.plan {
        Planned::Package(plan) => {
            say!(
                "  package:     {} {} {} (run with {})",
                plan.package.registry_type,
                plan.package.identifier,
                plan.package.version,
                plan.command
            );
            say!("  command:     {}", text::argv(&plan.argv()));
            if s.written.len() != plan.argv().len() {
                say!("  written as:  {}", text::argv(s.written));
            }
        }
        Planned::Remote(remote) => {
            say!(
                "  remote:      {} {} (its own server: Warden runs only the bridge)",
                remote.transport,
                remote.url
            );
            for h in &remote.headers {
                if let Some((name, var)) = h.split_once('=') {
                    say!("  header:      {name}, sent from the variable {var}");
                }
            }
            say!("  written as:  {}", text::argv(s.written));
        }
    }
    if s.plan.env().is_empty() {
        say!("  environment: none");
    } else {
        say!("  environment:");
    }
    for e in s.plan.env() {
        let mut flags = vec![if e.required { "required" } else { "optional" }.to_owned()];
        if is_secret(e) {
            flags.push("secret".to_owned());
        }
        if !e.declared {
            flags.push("yours, not declared by the server".to_owned());
        }
        if let Some(d) = &e.default {
            flags.push(format!("default {d:?}"));
        }
        let line = format!("    {} ({})", e.name, flags.join(", "));
        let set = if s.secrets.iter().any(|(k, _)| k == &e.name) {
            format!(
                "given, kept in the OS keychain ({} {})",
                keychain::SERVICE,
                keychain::account(s.entry, &e.name)
            )
        } else if let Some(v) = s.env.get(&e.name) {
            format!("set to {v:?}")
        } else {
            "not set".to_owned()
        };
        say!("{line}: {set}");
        if let Some(d) = &e.description {
            say!("      | {}", d.trim());
        }
    }
    if let Planned::Package(plan) = s.plan {
        package_risks(plan);
    } else {
        say!(
            "  risks:       a remote server runs on its publisher's machines: what it does with your calls is not checked here"
        );
    }
    for w in s.plan.warnings() {
        say!("  warning:     {}", w.message);
    }
    say!("  files:");
    for c in s.files {
        say!(
            "    {:<14} {}",
            c.file.client.as_str(),
            c.file.path.display()
        );
    }
    document_words(doc);
}

/// A package's left-out inputs and risks, on the consent screen.
fn package_risks(plan: &InstallPlan) {
    for input in &plan.optional_inputs {
        say!(
            "    (optional argument `{}` left out; {} sets it)",
            input.key,
            input.flag()
        );
    }
    if plan.risks.is_empty() {
        say!(
            "  risks:       none found (no root, no shell line, version pinned, no runner option or variable that widens what it gets)"
        );
    } else {
        say!("  risks:");
        for r in &plan.risks {
            let mark = if r.kind == RiskKind::LoaderEnvByDocument {
                "!!"
            } else {
                "! "
            };
            say!("    {mark} {}", r.detail);
        }
    }
}

/// The document's own title and description, last and each of their lines behind a bar: text
/// the publisher wrote, which no line of Warden's above can be mistaken for.
fn document_words(doc: &registry::ServerJson) {
    let words: Vec<&str> = doc
        .title
        .iter()
        .map(|t| t.trim())
        .chain([doc.description.trim()])
        .filter(|w| !w.is_empty())
        .collect();
    if words.is_empty() {
        return;
    }
    say!("  the document describes it as (its publisher's words, not checked by Warden):");
    for line in words.iter().flat_map(|w| w.lines()) {
        say!("    | {line}");
    }
}

/// Yes or no on a terminal; no terminal is a refusal.
fn agree(files: usize) -> Result<(), Stop> {
    if !std::io::stdin().is_terminal() {
        return Err(Stop::Refused(
            "there is no terminal to ask on. Fix: read the above, then run the command again with --yes to agree (or --dry-run to see the diffs)"
                .to_owned(),
        ));
    }
    eprint!(
        "\nWrite this entry into {files} file{}? [y/N] ",
        if files == 1 { "" } else { "s" }
    );
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Stop::Failed(None, format!("cannot read the answer: {e}")))?;
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        Ok(())
    } else {
        Err(Stop::Refused("you did not agree".to_owned()))
    }
}

fn report_written(changes: &[FileChangeView], entry: &str, secrets: &[(String, String)]) {
    println!();
    if !secrets.is_empty() {
        let accounts: Vec<String> = secrets
            .iter()
            .map(|(k, _)| keychain::account(entry, k))
            .collect();
        println!(
            "Stored in the OS keychain (service {}): {}",
            keychain::SERVICE,
            accounts.join(", ")
        );
    }
    let mut backups = Vec::new();
    for c in changes.iter().filter(|c| c.written) {
        println!("Wrote `{entry}` into {} {}", c.client, c.path.display());
        if let Some(b) = &c.backup {
            println!("  backup: {b}");
            backups.push(b.clone());
        }
        for n in &c.notices {
            println!("  next: {}", n.message);
        }
    }
    println!(
        "Undo with `warden servers remove {entry}`{}.",
        if backups.is_empty() {
            String::new()
        } else {
            ", or `warden clients restore BACKUP` with a backup above".to_owned()
        }
    );
}

/// The first start's report: its start-up time and tools, or why it did not start (with its
/// code and fix). Through the bridge, the first listing pinned the tools.
fn report_probe(entry: &str, report: &ProbeReport, argv: &[String], wrapped: bool) {
    if report.ok {
        let tools = report.tools.unwrap_or(0);
        let era = report
            .era
            .map(|e| format!(" ({} MCP)", e.as_str()))
            .unwrap_or_default();
        say!(
            "Started in {} ms{era}, {tools} tool{}{}",
            report.cold_start_ms.unwrap_or(0),
            if tools == 1 { "" } else { "s" },
            if report.tool_names.is_empty() {
                String::new()
            } else {
                format!(": {}", report.tool_names.join(", "))
            }
        );
        if !wrapped {
            println!(
                "Tools not pinned: the entry does not run through `warden bridge` (--no-wrap), which is what pins and checks them."
            );
        } else {
            match warden_config::pins::load(entry) {
                Ok(file) => println!(
                    "Pinned {} tool definition{} (`warden tools list {entry}`): a change is reported when a client next lists them.",
                    file.pinned.len(),
                    if file.pinned.len() == 1 { "" } else { "s" }
                ),
                Err(e) => say!(
                    "Tools not pinned: {e} (pin_tools may be \"off\" for this server in config.toml)"
                ),
            }
        }
        return;
    }
    let code = report
        .code
        .as_deref()
        .and_then(|c| Code::ALL.iter().copied().find(|k| k.as_str() == c));
    say!(
        "It did not start: {}{}",
        report.error.as_deref().unwrap_or("no reason given"),
        code.map(|c| format!(" [{}]", c.as_str()))
            .unwrap_or_default()
    );
    if let Some(c) = code {
        say!("  Fix: {}", c.fix());
    }
    say!(
        "The entry stays written: once the cause is fixed, `warden probe -- {}` checks it again (undo with `warden servers remove {entry}`).",
        text::argv(argv)
    );
}
