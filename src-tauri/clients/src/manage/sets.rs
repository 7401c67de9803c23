//! `warden sets apply | remove`: a set's servers (`[sets.NAME]` in config.toml) written, bridged,
//! into chosen clients' files (a project's, or the users'), and taken out again
//! (docs/clients.md, "Projects").
//!
//! A set names servers already in some client's file; each one's entry is made from that
//! entry as its client starts it (the original command behind the bridge, its `env`, its
//! keychain variables) and written by `add_text`, the edit of `servers add`, so it is the
//! same entry `servers add` and `clients wrap` make. Entries already in a file (same name)
//! are left as they are. A client with no project file format is skipped and named.
//!
//! Every added entry is recorded in the ledger as `Added` with its set: remove undoes those
//! edits, newest first, and gives back the bytes before while the file is as Warden left it
//! (else it takes those entries out from the file as it is). A file apply created (the
//! ledger says so) and that remove gives back as Warden created it is deleted, and the
//! directories created for it with it, when empty.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::files::{Outcome, check_writable, delete_created, target_file, undone, write_all};
use super::lines::fingerprint;
use super::remove::unplanned;
use super::text::{self, add_text};
use super::types::{NewEntry, PlannedFile};
use crate::detect::{
    ClientEnv, ConfigFile, PROJECT_FILES, Scope, candidates, detect, project_file,
};
use crate::doc::EntryRef;
use crate::edit;
use crate::ledger::{Ledger, ManagedKind, ManagedRecord};
use crate::model::{ClientError, ClientId, EntryState, ServerEntry};
use crate::ops::{FileChange, launches, list, parse_error, read_text, real_path, unified_diff};
use crate::secrets::{PLACEHOLDER, looks_secret};

/// What `apply` writes: a set's servers into the files of `clients`.
#[derive(Debug, Clone)]
pub struct ApplyOptions {
    pub set: String,
    pub servers: Vec<String>,
    pub clients: Vec<ClientId>,
    /// The project's files; `None`: the clients' user files.
    pub project: Option<PathBuf>,
    /// The command the entries run the bridge with (`warden`, or its absolute path).
    pub warden: String,
    /// A preview's plan ([`super::plan_of`] of its changes): written only while every file
    /// reads as it did then, else nothing is ([`ClientError::Changed`]).
    pub plan: Option<Vec<PlannedFile>>,
    pub dry_run: bool,
}

/// Which files `remove` gives back.
#[derive(Debug, Clone)]
pub struct RemoveOptions {
    pub set: String,
    /// Every client's files when empty.
    pub clients: Vec<ClientId>,
    pub project: Option<PathBuf>,
    /// As [`ApplyOptions::plan`].
    pub plan: Option<Vec<PlannedFile>>,
    pub dry_run: bool,
}

/// One file of an apply or a remove.
#[derive(Debug)]
pub struct SetFile {
    pub change: FileChange,
    /// The set's servers added (apply) or taken out (remove).
    pub done: Vec<String>,
    /// Apply: the set's servers already in the file, left as they are.
    pub kept: Vec<String>,
    /// Apply: the file is (would be) created; remove: it is (would be) deleted.
    pub whole_file: bool,
}

/// What an apply or a remove did (in a dry run: would do).
#[derive(Debug, Default)]
pub struct SetOutcome {
    pub files: Vec<SetFile>,
    /// The clients named that have no project file format.
    pub skipped: Vec<ClientId>,
}

impl SetOutcome {
    /// The plan of a preview: the files that change, each as read then, for the apply or
    /// remove that writes exactly what was shown ([`ApplyOptions::plan`]).
    pub fn plan(&self) -> Vec<PlannedFile> {
        super::remove::plan_of(
            self.files
                .iter()
                .map(|f| &f.change)
                .filter(|c| !c.changed.is_empty() && c.error.is_none()),
        )
    }
}

/// The entries of `servers` as some client's file has them, in the order given: the
/// original command (behind the bridge when wrapped), `env`, keychain variables. A server no
/// client has stops it all (nothing is written).
pub fn set_entries(
    env: &ClientEnv,
    set: &str,
    servers: &[String],
) -> Result<Vec<NewEntry>, ClientError> {
    let found = launches(env);
    let remote = crate::ops::remote_launches(env);
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for name in servers {
        if !found.iter().any(|l| l.name == *name)
            && let Some(r) = remote.iter().find(|r| r.name == *name)
        {
            // A remote server: the same URL and headers, through the bridge.
            out.push(NewEntry {
                name: name.clone(),
                env: r.env.iter().cloned().collect(),
                secret_env: r.secret_env.clone(),
                url: Some(r.url.clone()),
                headers: r.headers.clone(),
                ..NewEntry::default()
            });
            continue;
        }
        match found.iter().find(|l| l.name == *name) {
            Some(l) => {
                let Some((command, args)) = l.command.split_first() else {
                    missing.push(name.clone());
                    continue;
                };
                out.push(NewEntry {
                    name: name.clone(),
                    command: command.clone(),
                    args: args.to_vec(),
                    env: l.env.iter().cloned().collect(),
                    secret_env: l.secret_env.clone(),
                    url: None,
                    headers: Vec::new(),
                });
            }
            None => missing.push(name.clone()),
        }
    }
    if !missing.is_empty() {
        return Err(ClientError::SetServersMissing {
            set: set.to_owned(),
            missing,
        });
    }
    Ok(out)
}

/// A secret-looking `env` value written out (not a keychain placeholder or a `${VAR}`): not
/// for a project's file, which may be checked in.
fn secret_in_file(entry: &NewEntry) -> Option<&str> {
    entry
        .env
        .iter()
        .find(|(k, v)| {
            looks_secret(k)
                && !entry.secret_env.contains(k)
                && v.as_str() != PLACEHOLDER
                && !v.is_empty()
                && !v.starts_with('$')
                && !v.starts_with("{env:")
        })
        .map(|(k, _)| k.as_str())
}

/// The project directory, made absolute and real (the clients key projects so).
fn project_dir(dir: &Path) -> Result<PathBuf, ClientError> {
    std::fs::canonicalize(dir).map_err(|e| {
        ClientError::io(
            "open the project directory",
            dir,
            "give an existing directory with --project",
            e,
        )
    })
}

fn record_for(set: &str, name: &str, e: &text::ManageEdit) -> ManagedRecord {
    ManagedRecord {
        entry: EntryRef {
            scope: Vec::new(),
            name: name.to_owned(),
        },
        kind: ManagedKind::Added,
        after: fingerprint(&e.text),
        undo: e
            .undo
            .iter()
            .map(|(r, s)| (r.start, r.end, s.clone()))
            .collect(),
        raw: None,
        key_added: false,
        set: Some(set.to_owned()),
    }
}

/// The names in `text` (any scope), and those `disable` kept aside: there already.
fn present(ledger: &Ledger, file: &ConfigFile, text: &str) -> Result<Vec<String>, ClientError> {
    let mut names: Vec<String> = edit::entries(file.client, file.dialect, text)
        .map_err(|e| parse_error(file, e))?
        .into_iter()
        .map(|e| e.name)
        .collect();
    names.extend(
        ledger
            .managed_for(&real_path(&file.path))
            .into_iter()
            .filter(|r| r.kind == ManagedKind::Stashed)
            .map(|r| r.entry.name),
    );
    Ok(names)
}

/// A file of a plan as it reads now: its fingerprint and the entries that change.
fn planned(file: &ConfigFile, text: &str, o: &Outcome) -> PlannedFile {
    PlannedFile {
        path: file.path.clone(),
        fingerprint: fingerprint(text),
        changed: o.changed.iter().map(ToString::to_string).collect(),
    }
}

/// With a plan, `text` of `file` must read as the preview read it (checked again under the
/// file's lock, when the client may just have written it).
fn as_planned(
    plan: Option<&[PlannedFile]>,
    file: &ConfigFile,
    text: &str,
) -> Result<(), ClientError> {
    let Some(plan) = plan else { return Ok(()) };
    match plan.iter().find(|p| p.path == file.path) {
        Some(p) if p.fingerprint == fingerprint(text) => Ok(()),
        _ => Err(ClientError::Changed {
            paths: vec![file.path.clone()],
        }),
    }
}

fn refuse_unplanned(plan: &[PlannedFile], now: &[PlannedFile]) -> Result<(), ClientError> {
    let paths = unplanned(plan, now);
    if paths.is_empty() {
        Ok(())
    } else {
        Err(ClientError::Changed { paths })
    }
}

/// The command a set's (or a project's) new entries run the bridge with, and a warning to
/// give with it: for a user file `this` warden's absolute path (as `clients wrap` writes);
/// for a project's file, which may be checked into git and used on other machines, plain
/// `warden` when `warden` on PATH is `this`, else the absolute path, with a warning.
pub fn bridge_command(this: &Path, project: bool) -> (String, Option<String>) {
    let abs = this.to_string_lossy().into_owned();
    if !project {
        return (abs, None);
    }
    let on_path = warden_on_path();
    if on_path.as_deref() == Some(this) {
        return ("warden".to_owned(), None);
    }
    let why = match on_path {
        Some(p) => format!("`warden` on PATH is another program ({})", p.display()),
        None => "`warden` is not on PATH".to_owned(),
    };
    let warning = format!(
        "{why}, so the project's entries run this Warden by its path, {abs}. On a machine (or an account) without Warden at that path, those entries fail to start. Fix: put this warden on PATH, so that the entries can say plain `warden`, then write them again (for a set: `warden sets remove`, then `warden sets apply`)"
    );
    (abs, Some(warning))
}

/// `warden` on PATH, resolved, if there is one.
fn warden_on_path() -> Option<PathBuf> {
    let name = if cfg!(windows) {
        "warden.exe"
    } else {
        "warden"
    };
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .and_then(|p| std::fs::canonicalize(p).ok())
}

/// Writes the set's servers missing from each chosen client's file (project or user),
/// bridged; every file is checked first, and any refusal writes nothing.
pub fn apply(env: &ClientEnv, opts: &ApplyOptions) -> Result<SetOutcome, ClientError> {
    if opts.clients.is_empty() {
        return Err(ClientError::NoClient);
    }
    let entries = set_entries(env, &opts.set, &opts.servers)?;
    let project = opts.project.as_deref().map(project_dir).transpose()?;
    if project.is_some()
        && let Some((e, var)) = entries
            .iter()
            .find_map(|e| secret_in_file(e).map(|v| (e, v)))
    {
        return Err(ClientError::SecretInProject {
            server: e.name.clone(),
            var: var.to_owned(),
        });
    }
    let ledger = Ledger::lock(&env.state_dir)?;
    let (set, warden) = (opts.set.as_str(), opts.warden.as_str());
    let plan = opts.plan.as_deref();
    let add_set =
        |ledger: &Ledger, file: &ConfigFile, text: &str| -> Result<Outcome, ClientError> {
            let there = present(ledger, file, text)?;
            let mut out = Outcome {
                text: text.to_owned(),
                changed: Vec::new(),
                record: Vec::new(),
                forget: Vec::new(),
            };
            for entry in entries.iter().filter(|e| !there.contains(&e.name)) {
                let e = add_text(file.client, file.dialect, &out.text, entry, Some(warden))
                    .map_err(|e| super::files::client_error(file, &entry.name, e))?;
                out.record.push(record_for(set, &entry.name, &e));
                out.changed.extend(e.changed.iter().cloned());
                out.text = e.text;
            }
            Ok(out)
        };
    let compute = |ledger: &Ledger, file: &ConfigFile, text: &str| {
        as_planned(plan, file, text)?;
        add_set(ledger, file, text)
    };
    let mut outcome = SetOutcome::default();
    let mut plans = Vec::new();
    let mut seen = Vec::new();
    for &client in &opts.clients {
        if seen.contains(&client) {
            continue;
        }
        seen.push(client);
        let (file, exists) = match &project {
            Some(dir) => match project_file(env, client, dir) {
                Some(f) => f,
                None => {
                    outcome.skipped.push(client);
                    continue;
                }
            },
            None => target_file(env, client)?,
        };
        let text = if exists {
            read_text(&file.path)?
        } else {
            text::minimal(file.dialect).to_owned()
        };
        let o = add_set(&ledger, &file, &text)?;
        if exists && o.text != text {
            check_writable(&file.path)?;
        }
        plans.push((file, exists, text, o));
    }
    // Nothing to add to a file that is not there: it is not created.
    plans.retain(|(_, exists, _, o)| *exists || !o.record.is_empty());
    if let Some(plan) = plan {
        let now: Vec<PlannedFile> = plans
            .iter()
            .filter(|(_, _, _, o)| !o.changed.is_empty())
            .map(|(f, _, text, o)| planned(f, text, o))
            .collect();
        refuse_unplanned(plan, &now)?;
    }
    // Per file: the set's servers there already, whether it is created, the text planned.
    let meta: Vec<(Vec<String>, bool, String)> = plans
        .iter()
        .map(|(_, exists, _, o)| {
            let added: Vec<&String> = o.record.iter().map(|r| &r.entry.name).collect();
            let kept = opts
                .servers
                .iter()
                .filter(|s| !added.contains(s))
                .cloned()
                .collect();
            (kept, !exists, o.text.clone())
        })
        .collect();
    let changes = write_all(env, ledger, plans, &compute, opts.dry_run);
    for (mut change, (kept, created, planned)) in changes.into_iter().zip(meta) {
        let done: Vec<String> = change.changed.iter().map(|e| e.name.clone()).collect();
        if created && change.error.is_none() {
            // A new file: shown as made from nothing.
            let label = change.file.path.display().to_string();
            let new = change.new_text.as_deref().unwrap_or(&planned);
            change.diff = unified_diff("", new, &label);
        }
        outcome.files.push(SetFile {
            change,
            done,
            kept,
            whole_file: created,
        });
    }
    Ok(outcome)
}

/// The files `remove` looks at: the project's files of `clients` (of every client with a
/// project file when empty), or their user files.
fn remove_targets(
    env: &ClientEnv,
    opts: &RemoveOptions,
    project: Option<&Path>,
) -> (Vec<ConfigFile>, Vec<ClientId>) {
    let wanted = |c: ClientId| opts.clients.is_empty() || opts.clients.contains(&c);
    match project {
        Some(dir) => {
            let mut files = Vec::new();
            let mut skipped = Vec::new();
            let clients: Vec<ClientId> = if opts.clients.is_empty() {
                PROJECT_FILES.iter().map(|(c, _)| *c).collect()
            } else {
                opts.clients.clone()
            };
            for c in clients {
                match project_file(env, c, dir) {
                    Some((f, true)) => files.push(f),
                    Some((_, false)) => {}
                    None => skipped.push(c),
                }
            }
            (files, skipped)
        }
        None => (
            detect(env)
                .into_iter()
                .filter(|f| f.active && f.scope == Scope::User && wanted(f.client))
                .collect(),
            Vec::new(),
        ),
    }
}

/// `text` without the entries `records` added: each edit undone, newest first, while the
/// text is as it left it; the rest taken out of the text as it is.
fn take_out_set(
    ledger: &Ledger,
    file: &ConfigFile,
    text: &str,
    records: &[ManagedRecord],
) -> Result<Outcome, ClientError> {
    let mut out = Outcome {
        text: text.to_owned(),
        changed: Vec::new(),
        record: Vec::new(),
        forget: Vec::new(),
    };
    let mut left: Vec<&ManagedRecord> = records.iter().collect();
    while let Some(i) = left.iter().position(|r| r.after == fingerprint(&out.text)) {
        let r = left.remove(i);
        let Some(back) = undone(ledger, r, &out.text)? else {
            left.insert(i, r);
            break;
        };
        out.text = back;
        out.changed.push(r.entry.clone());
    }
    // The file changed since: the entries still there come out of it as it is.
    let entries =
        edit::entries(file.client, file.dialect, &out.text).map_err(|e| parse_error(file, e))?;
    let ids: Vec<EntryRef> = left
        .iter()
        .map(|r| r.entry.clone())
        .filter(|id| entries.iter().any(|e| e.id() == *id))
        .collect();
    if !ids.is_empty() {
        let e = text::remove_ids(file.client, file.dialect, &out.text, &ids, &entries)
            .map_err(|e| super::files::client_error(file, &ids[0].name, e))?;
        out.text = e.text;
        out.changed.extend(ids);
    }
    for r in records {
        out.forget.push((r.entry.clone(), Some(ManagedKind::Added)));
    }
    Ok(out)
}

/// Takes out of the files exactly the entries `apply` added for the set, byte for byte
/// while a file is as apply left it; a file apply created goes again. Refused, with nothing
/// written, when the set added nothing there.
pub fn remove(env: &ClientEnv, opts: &RemoveOptions) -> Result<SetOutcome, ClientError> {
    let project = opts.project.as_deref().map(project_dir).transpose()?;
    let (files, skipped) = remove_targets(env, opts, project.as_deref());
    let mut ledger = Ledger::lock(&env.state_dir)?;
    let set = opts.set.as_str();
    let records = |ledger: &Ledger, file: &ConfigFile| -> Vec<ManagedRecord> {
        ledger
            .managed_for(&real_path(&file.path))
            .into_iter()
            .filter(|r| r.kind == ManagedKind::Added && r.set.as_deref() == Some(set))
            .collect()
    };
    let plan = opts.plan.as_deref();
    let compute = |ledger: &Ledger, file: &ConfigFile, text: &str| {
        as_planned(plan, file, text)?;
        take_out_set(ledger, file, text, &records(ledger, file))
    };
    let mut plans = Vec::new();
    let mut deletes = Vec::new();
    let mut now = Vec::new();
    for file in files {
        let recs = records(&ledger, &file);
        if recs.is_empty() {
            continue;
        }
        let text = read_text(&file.path)?;
        let o = take_out_set(&ledger, &file, &text, &recs)?;
        if o.text != text {
            check_writable(&file.path)?;
        }
        if !o.changed.is_empty() {
            now.push(planned(&file, &text, &o));
        }
        let real = real_path(&file.path);
        match ledger.created(&real) {
            Some(dirs) if o.text == text::minimal(file.dialect) => {
                deletes.push((file, text, o, dirs));
            }
            _ => plans.push((file, true, text, o)),
        }
    }
    if let Some(plan) = plan {
        refuse_unplanned(plan, &now)?;
    }
    if plans.is_empty() && deletes.is_empty() {
        let place = match &project {
            Some(d) => d.display().to_string(),
            None => "the clients' user files".to_owned(),
        };
        return Err(ClientError::SetNotApplied {
            set: set.to_owned(),
            place,
        });
    }
    let mut outcome = SetOutcome {
        files: Vec::new(),
        skipped,
    };
    for (file, text, o, dirs) in deletes {
        let mut change = FileChange::new(&file);
        change.changed = o.changed.clone();
        change.diff = unified_diff(&text, "", &file.path.display().to_string());
        change.fingerprint = Some(fingerprint(&text));
        if !opts.dry_run
            && let Err(e) = delete_created(env, &mut ledger, &file, &text, &o, &dirs, &mut change)
        {
            change.error = Some(e);
        }
        let done = change.changed.iter().map(|e| e.name.clone()).collect();
        outcome.files.push(SetFile {
            change,
            done,
            kept: Vec::new(),
            whole_file: true,
        });
    }
    for change in write_all(env, ledger, plans, &compute, opts.dry_run) {
        let done = change.changed.iter().map(|e| e.name.clone()).collect();
        outcome.files.push(SetFile {
            change,
            done,
            kept: Vec::new(),
            whole_file: false,
        });
    }
    Ok(outcome)
}

/// Sets, projects and what each client starts in them: what `warden sets list --json` prints
/// and the window's Manage page shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Overview {
    pub sets: Vec<SetView>,
    pub projects: Vec<ProjectView>,
}

/// One `[sets.NAME]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SetView {
    pub name: String,
    pub servers: Vec<String>,
    /// Servers of the set no client's file has (apply refuses the set until they are).
    pub unknown: Vec<String>,
    /// The files that have every server of the set, or entries apply added for it.
    pub applied: Vec<Applied>,
}

/// A set in one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Applied {
    pub client: ClientId,
    pub file: PathBuf,
    /// The project's directory; `None`: a user file.
    pub project: Option<PathBuf>,
    /// The set's servers the file has (by entry name, or the bridge's `--server`).
    pub present: Vec<String>,
    /// The set's servers it has not.
    pub missing: Vec<String>,
    /// `warden sets apply` added entries of the set there (its remove takes them out).
    pub by_warden: bool,
}

/// A project: from the clients' own lists of recent projects, or where a set was applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ProjectView {
    pub dir: PathBuf,
    pub exists: bool,
    /// Where it was found: `claude-code` (`projects` in `~/.claude.json`), `codex`
    /// (`[projects."DIR"]` in `~/.codex/config.toml`), `vscode` and `cursor` (their recently
    /// opened folders), `warden` (a set applied there).
    pub found_in: Vec<String>,
    /// The sets applied there (in any client's project file).
    pub sets: Vec<String>,
    /// Per client with a file: what it starts in this project.
    pub clients: Vec<ProjectClient>,
}

/// What one client starts in a project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ProjectClient {
    pub client: ClientId,
    /// Its project file there, if it has one.
    pub project_file: Option<PathBuf>,
    pub starts: Vec<Starts>,
}

/// One server a client starts in a project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Starts {
    /// The entry's name.
    pub name: String,
    /// The bridge's `--server` when wrapped, else the entry's name.
    pub server: String,
    pub wrapped: bool,
    /// By the client's own switch.
    pub enabled: bool,
    /// `project` (the project's file), `local` (Claude Code's servers of this project in
    /// `~/.claude.json`) or `user`.
    pub from: String,
}

/// The server an entry runs: the bridge's `--server`, else its name.
fn server_of(e: &ServerEntry) -> &str {
    match &e.state {
        EntryState::Wrapped {
            server: Some(s), ..
        } => s,
        _ => &e.name,
    }
}

/// The project directories the clients list: Claude Code's `projects` keys in its user file,
/// Codex's `[projects."DIR"]` tables, the folders VS Code and Cursor opened recently; with
/// where each was found.
pub fn recent_projects(env: &ClientEnv) -> Vec<(PathBuf, Vec<String>)> {
    let mut out: Vec<(PathBuf, Vec<String>)> = Vec::new();
    let mut add = |dir: &str, by: &str| {
        let dir = PathBuf::from(dir);
        if !dir.is_absolute() {
            return;
        }
        match out.iter_mut().find(|(d, _)| *d == dir) {
            Some((_, found)) if found.iter().any(|f| f == by) => {}
            Some((_, found)) => found.push(by.to_owned()),
            None => out.push((dir, vec![by.to_owned()])),
        }
    };
    for f in candidates(env)
        .into_iter()
        .filter(|f| f.scope == Scope::User)
    {
        let Ok(text) = std::fs::read_to_string(&f.path) else {
            continue;
        };
        match f.client {
            ClientId::ClaudeCode if f.dialect == crate::dialect::Dialect::ClaudeCodeUser => {
                let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
                if let Some(p) = v.get("projects").and_then(|p| p.as_object()) {
                    for k in p.keys() {
                        add(k, "claude-code");
                    }
                }
            }
            ClientId::Codex => {
                if let Ok(doc) = text.parse::<toml_edit::DocumentMut>()
                    && let Some(t) = doc.get("projects").and_then(|p| p.as_table_like())
                {
                    for (k, _) in t.iter() {
                        add(k, "codex");
                    }
                }
            }
            _ => {}
        }
    }
    for (product, by) in [
        ("Code", "vscode"),
        ("Code - Insiders", "vscode"),
        ("VSCodium", "vscode"),
        ("Cursor", "cursor"),
    ] {
        let db = env
            .editor_user_dir(product)
            .join("globalStorage")
            .join("state.vscdb");
        for dir in recently_opened(&db, env.os) {
            add(&dir, by);
        }
    }
    out
}

/// The folders VS Code (and Cursor, its fork) lists as recently opened: the `folderUri`s
/// (`file:` only) of `history.recentlyOpenedPathsList` in its application storage, the
/// `ItemTable` of `User/globalStorage/state.vscdb`. Read-only, without waiting on the editor's
/// own writes; nothing when the database is not there or not as expected.
fn recently_opened(db: &Path, os: crate::detect::Os) -> Vec<String> {
    use rusqlite::{Connection, OpenFlags, types::Value};
    if !db.is_file() {
        return Vec::new();
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let Ok(conn) = Connection::open_with_flags(db, flags) else {
        return Vec::new();
    };
    let value = conn.query_row(
        "SELECT value FROM ItemTable WHERE key = 'history.recentlyOpenedPathsList'",
        [],
        |row| row.get::<_, Value>(0),
    );
    let text = match value {
        Ok(Value::Text(t)) => t,
        Ok(Value::Blob(b)) => String::from_utf8_lossy(&b).into_owned(),
        _ => return Vec::new(),
    };
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    v.get("entries")
        .and_then(|e| e.as_array())
        .into_iter()
        .flatten()
        .filter_map(|e| e.get("folderUri")?.as_str())
        .filter_map(|uri| file_uri_path(uri, os))
        .collect()
}

/// The path of a `file:` URI as VS Code writes it (`file:///home/u/my%20app`,
/// `file:///c%3A/Users/u/app`); `None` for another scheme (a remote folder) or a host.
fn file_uri_path(uri: &str, os: crate::detect::Os) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h)? * 16 + hex(l)?) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    let path = String::from_utf8(out).ok()?;
    if os == crate::detect::Os::Windows {
        // `/c:/Users/u` is `c:\Users\u`.
        let p = path.strip_prefix('/')?;
        return Some(p.replace('/', "\\"));
    }
    Some(path)
}

/// The project a project file of [`PROJECT_FILES`] (or opencode's other names) is in.
pub fn project_of(path: &Path) -> Option<PathBuf> {
    let rels = PROJECT_FILES.iter().map(|(_, r)| *r).chain([
        "opencode.jsonc",
        ".opencode/opencode.json",
        ".opencode/opencode.jsonc",
    ]);
    for rel in rels {
        let mut dir = path.to_path_buf();
        let mut ok = true;
        for part in Path::new(rel).components().rev() {
            if dir.file_name() != Some(part.as_os_str()) {
                ok = false;
                break;
            }
            dir.pop();
        }
        if ok {
            return Some(dir);
        }
    }
    None
}

/// The sets of config.toml (`sets`: name and servers), where each is applied, the projects
/// the clients list (and those a set was applied in), and what each client starts there.
/// Reads the files and Warden's ledger; writes nothing.
pub fn overview(env: &ClientEnv, sets: &[(String, Vec<String>)]) -> Overview {
    let ledger = Ledger::view(&env.state_dir);
    let mut projects = recent_projects(env);
    for (path, _) in ledger.of_sets() {
        if let Some(dir) = project_of(&path) {
            match projects.iter_mut().find(|(d, _)| *d == dir) {
                Some((_, by)) if by.iter().any(|b| b == "warden") => {}
                Some((_, by)) => by.push("warden".to_owned()),
                None => projects.push((dir, vec!["warden".to_owned()])),
            }
        }
    }
    let mut penv = env.clone();
    penv.projects = projects.iter().map(|(d, _)| d.clone()).collect();
    let listing = list(&penv);
    let known: Vec<String> = launches(env).into_iter().map(|l| l.name).collect();
    let by_set = ledger.of_sets();
    let views: Vec<SetView> = sets
        .iter()
        .map(|(name, servers)| {
            let mut applied = Vec::new();
            for l in listing
                .iter()
                .filter(|l| l.file.active && l.error.is_none())
            {
                let real = real_path(&l.file.path);
                let by_warden = by_set.iter().any(|(p, recs)| {
                    *p == real && recs.iter().any(|r| r.set.as_deref() == Some(name))
                });
                let (present, missing): (Vec<String>, Vec<String>) =
                    servers.iter().cloned().partition(|s| {
                        l.servers
                            .iter()
                            .any(|e| e.scope.is_empty() && (e.name == *s || server_of(e) == s))
                    });
                if by_warden || (missing.is_empty() && !servers.is_empty()) {
                    applied.push(Applied {
                        client: l.file.client,
                        file: l.file.path.clone(),
                        project: match &l.file.scope {
                            Scope::Project(d) => Some(d.clone()),
                            Scope::User => None,
                        },
                        present,
                        missing,
                        by_warden,
                    });
                }
            }
            SetView {
                name: name.clone(),
                servers: servers.clone(),
                unknown: servers
                    .iter()
                    .filter(|s| !known.contains(s))
                    .cloned()
                    .collect(),
                applied,
            }
        })
        .collect();
    let projects = projects
        .into_iter()
        .map(|(dir, found_in)| {
            let mut clients: Vec<ProjectClient> = Vec::new();
            let starts_of = |e: &ServerEntry, from: &str| Starts {
                name: e.name.clone(),
                server: server_of(e).to_owned(),
                wrapped: matches!(e.state, EntryState::Wrapped { .. }),
                enabled: e.enabled,
                from: from.to_owned(),
            };
            for l in listing.iter().filter(|l| l.file.active) {
                let local = vec!["projects".to_owned(), dir.to_string_lossy().into_owned()];
                let (from_file, project_file) = match &l.file.scope {
                    Scope::Project(d) if *d == dir => (true, Some(l.file.path.clone())),
                    Scope::Project(_) => continue,
                    Scope::User => (false, None),
                };
                let starts: Vec<Starts> = l
                    .servers
                    .iter()
                    .filter_map(|e| {
                        if from_file {
                            Some(starts_of(e, "project"))
                        } else if e.scope.is_empty() {
                            Some(starts_of(e, "user"))
                        } else if e.scope == local {
                            Some(starts_of(e, "local"))
                        } else {
                            None
                        }
                    })
                    .collect();
                match clients.iter_mut().find(|c| c.client == l.file.client) {
                    Some(c) => {
                        c.starts.extend(starts);
                        if project_file.is_some() {
                            c.project_file = project_file;
                        }
                    }
                    None => clients.push(ProjectClient {
                        client: l.file.client,
                        project_file,
                        starts,
                    }),
                }
            }
            let sets = views
                .iter()
                .filter(|v| v.applied.iter().any(|a| a.project.as_ref() == Some(&dir)))
                .map(|v| v.name.clone())
                .collect();
            ProjectView {
                exists: dir.is_dir(),
                dir,
                found_in,
                sets,
                clients,
            }
        })
        .collect();
    Overview {
        sets: views,
        projects,
    }
}
