//! The operations on files: list, wrap, unwrap and restore. Each reads a file, computes the
//! edit (`edit/`) and writes it safely (`write.rs`).

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use super::backup::{self, Backup};
use super::detect::{ClientEnv, ConfigFile, detect};
use super::doc::{DocError, EntryRef};
use super::edit::{self, EditError, TextEdit, unwrap_text_with, wrap_text_with};
use super::ledger::Ledger;
use super::lock::LockKind;
use super::model::{ClientError, ClientId, ServerEntry};
use super::notices::{Notice, notices_for};
use super::secrets;
use super::write;
use warden_config::keychain::{self, KeychainError};

/// One config file and what is in it.
#[derive(Debug)]
pub struct FileListing {
    pub file: ConfigFile,
    pub servers: Vec<ServerEntry>,
    pub error: Option<ClientError>,
}

/// Where a file really is (symlinks resolved): the ledger's key. A file that is not there yet
/// is its nearest folder that is, resolved, and the rest as given: so a file Warden creates has
/// the same key before and after it exists (on Windows, resolving adds `\\?\`). The path as
/// given if nothing of it resolves.
pub(crate) fn real_path(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let mut tail = Vec::new();
    let mut at = path;
    while let (Some(name), Some(parent)) = (at.file_name(), at.parent()) {
        tail.push(name);
        at = parent;
        if let Ok(base) = std::fs::canonicalize(at) {
            return tail.iter().rev().fold(base, |p, n| p.join(n));
        }
    }
    path.to_owned()
}

/// Lists the servers of every detected config file.
pub fn list(env: &ClientEnv) -> Vec<FileListing> {
    let ledger = Ledger::view(&env.state_dir);
    detect(env)
        .into_iter()
        .map(|f| list_file(&f, &ledger))
        .collect()
}

/// Lists the servers of one config file; marks those Warden wrapped that run unwrapped again
/// without `warden clients unwrap` (the client rewrote them).
fn list_file(file: &ConfigFile, ledger: &Ledger) -> FileListing {
    let entries = read_text(&file.path).and_then(|text| {
        edit::entries(file.client, file.dialect, &text).map_err(|e| parse_error(file, e))
    });
    match entries {
        Ok(mut servers) => {
            let real = real_path(&file.path);
            let records = ledger.records_for(&real);
            for s in &mut servers {
                let id = s.id();
                s.reverted = s.is_unwrapped() && records.iter().any(|r| r.entry == id);
            }
            FileListing {
                file: file.clone(),
                servers,
                error: None,
            }
        }
        Err(error) => FileListing {
            file: file.clone(),
            servers: Vec::new(),
            error: Some(error),
        },
    }
}

/// Which files and servers an operation touches. Empty means all.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub client: Option<ClientId>,
    pub file: Option<PathBuf>,
    pub server: Option<String>,
}

#[derive(Debug, Clone)]
pub struct WrapOptions {
    /// Absolute path of the `warden` binary written into entries.
    pub warden: PathBuf,
    pub filter: Filter,
    /// Compute the diff only; write nothing (no backup either).
    pub dry_run: bool,
    /// Also move `env` values whose names look secret into the OS keychain.
    pub move_secrets: bool,
}

#[derive(Debug, Clone, Default)]
pub struct UnwrapOptions {
    pub filter: Filter,
    pub dry_run: bool,
}

/// The result of wrapping or unwrapping one file.
#[derive(Debug)]
pub struct FileChange {
    pub file: ConfigFile,
    /// Entries that were (or, in a dry run, would be) changed.
    pub changed: Vec<EntryRef>,
    /// Entries the filter matched but that were left alone, with the reason.
    pub skipped: Vec<(EntryRef, String)>,
    /// Unified diff of the change; empty when nothing changes.
    pub diff: String,
    pub written: bool,
    /// The backup taken before writing.
    pub backup: Option<String>,
    /// Values moved into the OS keychain (wrap) or written back from it (unwrap), as
    /// `SERVER/VAR` accounts of service `mcp-warden`.
    pub secrets: Vec<String>,
    /// What the user must do for the client to use the change.
    pub notices: Vec<Notice>,
    pub error: Option<ClientError>,
    /// `servers disable | enable | remove`: the fingerprint of the file's text the change
    /// was computed from (a remove's plan, [`crate::PlannedFile`], carries it back).
    pub fingerprint: Option<String>,
    /// The text written, when written.
    pub new_text: Option<String>,
}

impl FileChange {
    /// Nothing changed in `file` yet.
    pub fn new(file: &ConfigFile) -> FileChange {
        FileChange {
            file: file.clone(),
            changed: Vec::new(),
            skipped: Vec::new(),
            diff: String::new(),
            written: false,
            backup: None,
            secrets: Vec::new(),
            notices: Vec::new(),
            error: None,
            fingerprint: None,
            new_text: None,
        }
    }
}

/// The files an operation with `filter` applies to: detected files (only the ones the
/// client reads, unless `filter.file` names another), or the file named by `filter.file`.
pub fn select_files(env: &ClientEnv, filter: &Filter) -> Result<Vec<ConfigFile>, ClientError> {
    let detected = detect(env);
    let mut files: Vec<ConfigFile> = match &filter.file {
        Some(path) => {
            let real = std::fs::canonicalize(path).map_err(|e| {
                ClientError::io("read", path, "check the path given with --file", e)
            })?;
            let found: Vec<ConfigFile> = detected
                .into_iter()
                .filter(|f| std::fs::canonicalize(&f.path).ok().as_deref() == Some(&real))
                .collect();
            if found.is_empty() {
                vec![
                    ConfigFile::infer(path, filter.client)
                        .ok_or_else(|| ClientError::UnknownFile { path: path.clone() })?,
                ]
            } else {
                found
            }
        }
        None => detected.into_iter().filter(|f| f.active).collect(),
    };
    if let Some(client) = filter.client {
        files.retain(|f| f.client == client);
    }
    Ok(files)
}

fn name_matches(filter: &Filter, entry: &EntryRef) -> bool {
    filter.server.as_deref().is_none_or(|s| s == entry.name)
}

/// The stdio servers of every active file as their clients start them (first one of a name
/// wins), for probes; files that cannot be read are left out.
pub fn launches(env: &ClientEnv) -> Vec<edit::Launch> {
    let mut out: Vec<edit::Launch> = Vec::new();
    for file in detect(env).into_iter().filter(|f| f.active) {
        let Ok(found) = read_text(&file.path).and_then(|text| {
            edit::launches(file.dialect, &text).map_err(|e| parse_error(&file, e))
        }) else {
            continue;
        };
        for mut l in found {
            l.project = matches!(file.scope, super::detect::Scope::Project(_));
            if !out.iter().any(|o| o.name == l.name) {
                out.push(l);
            }
        }
    }
    out
}

/// The remote servers of the clients' active files that the bridge reaches, by name (the first
/// file's entry of a name), as [`launches`] does for stdio servers.
pub fn remote_launches(env: &ClientEnv) -> Vec<edit::RemoteLaunch> {
    let mut out: Vec<edit::RemoteLaunch> = Vec::new();
    for file in detect(env).into_iter().filter(|f| f.active) {
        let Ok(found) = read_text(&file.path).and_then(|text| {
            edit::remote_launches(file.dialect, &text).map_err(|e| parse_error(&file, e))
        }) else {
            continue;
        };
        for l in found {
            if !out.iter().any(|o| o.name == l.name) {
                out.push(l);
            }
        }
    }
    out
}

/// Server `name` of `file` as its client starts it (the file read now), if it is there.
pub fn launch_of(file: &ConfigFile, name: &str) -> Option<edit::Launch> {
    let text = read_text(&file.path).ok()?;
    edit::launches(file.dialect, &text)
        .ok()?
        .into_iter()
        .find(|l| l.name == name)
}

/// The stdio servers of `listing` (from [`list`]) that run unwrapped in active files, except
/// those the user chose to keep unwrapped: what auto-rewrite asks about before it wraps.
pub fn awaiting(env: &ClientEnv, listing: &[FileListing]) -> Vec<(ConfigFile, ServerEntry)> {
    let ledger = Ledger::view(&env.state_dir);
    let mut out = Vec::new();
    for l in listing.iter().filter(|l| l.file.active) {
        let real = real_path(&l.file.path);
        for s in l.servers.iter().cloned() {
            if s.is_unwrapped() && !ledger.user_unwrapped(&real, &s.id()) {
                out.push((l.file.clone(), s));
            }
        }
    }
    out
}

/// Keeps the matching unwrapped servers as they are: auto-rewrite no longer asks about them or
/// wraps them (an explicit wrap undoes this). Returns the servers marked.
pub fn keep_unwrapped(env: &ClientEnv, filter: &Filter) -> Result<Vec<String>, ClientError> {
    let mut ledger = Ledger::lock(&env.state_dir)?;
    let mut kept = Vec::new();
    let mut marks = Vec::new();
    for file in select_files(env, filter)? {
        let text = read_text(&file.path)?;
        let entries: Vec<EntryRef> = edit::entries(file.client, file.dialect, &text)
            .map_err(|e| parse_error(&file, e))?
            .into_iter()
            .filter(ServerEntry::is_unwrapped)
            .map(|s| s.id())
            .filter(|e| name_matches(filter, e))
            .collect();
        kept.extend(entries.iter().map(|e| e.name.clone()));
        marks.push((real_path(&file.path), entries));
    }
    ledger.commit(|l| {
        for (real, entries) in &marks {
            l.record_unwrapped(real, entries);
        }
    })?;
    Ok(kept)
}

/// Routes the matching stdio servers through `warden bridge`.
pub fn wrap(env: &ClientEnv, opts: &WrapOptions) -> Result<Vec<FileChange>, ClientError> {
    let files = select_files(env, &opts.filter)?;
    let warden = opts.warden.to_string_lossy().into_owned();
    Ok(files
        .iter()
        .map(|f| {
            change_file(
                env,
                f,
                &Op::Wrap {
                    warden: &warden,
                    move_secrets: opts.move_secrets,
                },
                &|e| name_matches(&opts.filter, e),
                opts.dry_run,
            )
        })
        .collect())
}

/// Restores the matching wrapped entries to their original command and args.
pub fn unwrap(env: &ClientEnv, opts: &UnwrapOptions) -> Result<Vec<FileChange>, ClientError> {
    let files = select_files(env, &opts.filter)?;
    Ok(files
        .iter()
        .map(|f| {
            change_file(
                env,
                f,
                &Op::Unwrap,
                &|e| name_matches(&opts.filter, e),
                opts.dry_run,
            )
        })
        .collect())
}

/// Wraps the entries of one file that `select` picks (the watcher's entry point).
pub fn wrap_file(
    env: &ClientEnv,
    file: &ConfigFile,
    warden: &Path,
    select: &dyn Fn(&EntryRef) -> bool,
    dry_run: bool,
) -> FileChange {
    let warden = warden.to_string_lossy().into_owned();
    let op = Op::Wrap {
        warden: &warden,
        move_secrets: false,
    };
    change_file(env, file, &op, select, dry_run)
}

enum Op<'a> {
    Wrap { warden: &'a str, move_secrets: bool },
    Unwrap,
}

/// Whether a value may be stored as `server`/`var`: the keychain has no entry by that name
/// yet, or holds the same value (another file's entry of the same server).
fn may_move(server: &str, var: &str, value: &str) -> Result<(), String> {
    match keychain::get(server, var) {
        Ok(stored) if stored == value => Ok(()),
        Ok(_) => Err(format!(
            "the OS keychain already holds a different value as {}/{} (another client's entry of this server?); give this server another name, or change the stored value first",
            keychain::SERVICE,
            keychain::account(server, var)
        )),
        Err(KeychainError::Missing(_)) => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// The detected files (read by their client or not) with an entry that reads `server`/`var`
/// from the OS keychain: `warden bridge --server SERVER --secret-env VAR` (or an entry named
/// SERVER without `--server`).
pub fn secret_readers(env: &ClientEnv, server: &str, var: &str) -> Vec<ConfigFile> {
    detect(env)
        .into_iter()
        .filter(|file| {
            read_text(&file.path)
                .ok()
                .and_then(|text| edit::launches(file.dialect, &text).ok())
                .is_some_and(|found| {
                    found
                        .iter()
                        .any(|l| l.name == server && l.secret_env.iter().any(|v| v == var))
                })
        })
        .collect()
}

/// The files whose entries still read `server`/`var` from the keychain when it holds a value
/// other than `value` there: storing `value` would change what their servers get. None when
/// the keychain holds no value there, or this one.
pub fn secret_in_use(
    env: &ClientEnv,
    server: &str,
    var: &str,
    value: &str,
) -> Result<Vec<ConfigFile>, KeychainError> {
    match keychain::get(server, var) {
        Ok(stored) if stored != value => Ok(secret_readers(env, server, var)),
        Ok(_) | Err(KeychainError::Missing(_)) => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

fn lookup(server: &str, var: &str) -> Result<String, String> {
    keychain::get(server, var).map_err(|e| e.to_string())
}

fn change_file(
    env: &ClientEnv,
    file: &ConfigFile,
    op: &Op<'_>,
    select: &dyn Fn(&EntryRef) -> bool,
    dry_run: bool,
) -> FileChange {
    let mut change = FileChange::new(file);
    let moving = matches!(
        op,
        Op::Wrap {
            move_secrets: true,
            ..
        }
    );
    if moving && let Err(e) = keychain::check() {
        change.error = Some(ClientError::Keychain {
            path: file.path.clone(),
            detail: e.to_string(),
        });
        return change;
    }
    let real = real_path(&file.path);
    let ledger = match Ledger::lock(&env.state_dir) {
        Ok(l) => RefCell::new(l),
        Err(e) => {
            change.error = Some(e);
            return change;
        }
    };
    let (records, secret_records) = {
        let l = ledger.borrow();
        (l.records_for(&real), l.secrets_for(&real))
    };
    let compute = |text: &str| -> Result<TextEdit, ClientError> {
        let result = match op {
            Op::Wrap { warden, .. } => {
                let check: Option<&secrets::MoveCheck<'_>> = moving.then_some(&may_move);
                wrap_text_with(file.dialect, text, warden, select, check)
            }
            Op::Unwrap => unwrap_text_with(
                file.dialect,
                text,
                select,
                &records,
                &secret_records,
                &lookup,
            ),
        };
        result.map_err(|e| match e {
            EditError::Parse(d) => parse_error(file, d),
            EditError::Internal(detail) => ClientError::Verify {
                path: file.path.clone(),
                detail,
            },
        })
    };

    let outcome: RefCell<Option<TextEdit>> = RefCell::new(None);
    let mut old_text = String::new();
    let result = if dry_run {
        read_text(&file.path).and_then(|text| {
            let edit = compute(&text)?;
            old_text = text;
            *outcome.borrow_mut() = Some(edit);
            Ok(None)
        })
    } else {
        write::update_file(
            &file.path,
            file.lock,
            (&env.state_dir, file.client),
            &mut |bytes: &[u8]| {
                let text = utf8(&file.path, bytes)?;
                let edit = compute(&text)?;
                // Into the keychain before the values leave the file.
                for s in &edit.moved {
                    keychain::set(&s.server, &s.var, &s.value).map_err(|e| {
                        ClientError::Keychain {
                            path: file.path.clone(),
                            detail: e.to_string(),
                        }
                    })?;
                }
                let new = (!edit.changed.is_empty()).then(|| edit.text.clone().into_bytes());
                old_text = text;
                *outcome.borrow_mut() = Some(edit);
                Ok(new)
            },
            &mut || {
                let outcome = outcome.borrow();
                let Some(edit) = outcome.as_ref() else {
                    return Ok(());
                };
                ledger.borrow_mut().commit(|l| match op {
                    Op::Wrap { .. } => {
                        l.record_wrapped(&real, &edit.records);
                        l.record_secrets(&real, &edit.secret_records);
                    }
                    Op::Unwrap => l.record_unwrapped(&real, &edit.changed),
                })
            },
        )
        .map(Some)
    };
    let landed = matches!(&result, Ok(Some(w)) if w.written);
    ledger.borrow_mut().finish(landed);
    match result {
        Err(e) => change.error = Some(e),
        Ok(written) => {
            if let Some(edit) = outcome.into_inner() {
                if !edit.changed.is_empty() {
                    let label = file.path.display().to_string();
                    let diff = unified_diff(&old_text, &edit.text, &label);
                    let shown: Vec<_> = edit.moved.iter().chain(&edit.restored).cloned().collect();
                    change.diff = secrets::mask(&diff, &shown);
                    change.secrets = shown
                        .iter()
                        .map(|s| keychain::account(&s.server, &s.var))
                        .collect();
                    change.notices = notices_for(file, env);
                }
                if let Some(w) = written {
                    change.written = w.written;
                    change.backup = w.backup;
                    if w.written {
                        change.new_text = Some(edit.text.clone());
                    }
                }
                change.changed = edit.changed;
                change.skipped = edit.skipped;
            }
        }
    }
    change
}

pub(crate) fn parse_error(file: &ConfigFile, e: DocError) -> ClientError {
    ClientError::Parse {
        path: file.path.clone(),
        format: file.format,
        line: e.line,
        col: e.col,
        message: e.message,
    }
}

pub(crate) fn read_text(path: &Path) -> Result<String, ClientError> {
    let bytes = std::fs::read(path).map_err(|e| {
        ClientError::io(
            "read",
            path,
            "check that the file exists and is readable",
            e,
        )
    })?;
    utf8(path, &bytes)
}

pub(crate) fn utf8(path: &Path, bytes: &[u8]) -> Result<String, ClientError> {
    String::from_utf8(bytes.to_vec()).map_err(|e| ClientError::NotUtf8 {
        path: path.to_owned(),
        offset: e.utf8_error().valid_up_to(),
    })
}

/// A unified diff of `old` → `new`, labelled with `label`.
pub fn unified_diff(old: &str, new: &str, label: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(label, label)
        .to_string()
}

/// What [`restore`] did (in a dry run: would do).
#[derive(Debug)]
pub struct RestoreOutcome {
    pub backup: Backup,
    pub written: bool,
    /// The backup taken of the current contents before restoring.
    pub previous: Option<String>,
    pub diff: String,
}

/// Writes a backup back to its file (taking a backup of the current contents first).
pub fn restore(env: &ClientEnv, id: &str, dry_run: bool) -> Result<RestoreOutcome, ClientError> {
    let backup = backup::find(&env.state_dir, id)?;
    let bytes = std::fs::read(&backup.file).map_err(|e| ClientError::BadBackup {
        path: backup.file.clone(),
        detail: e.to_string(),
    })?;
    let current = std::fs::read(&backup.original).ok();
    let label = backup.original.display().to_string();
    let diff = unified_diff(
        &String::from_utf8_lossy(current.as_deref().unwrap_or_default()),
        &String::from_utf8_lossy(&bytes),
        &label,
    );
    let mut outcome = RestoreOutcome {
        backup: backup.clone(),
        written: false,
        previous: None,
        diff,
    };
    if dry_run {
        return Ok(outcome);
    }
    let ledger = RefCell::new(Ledger::lock(&env.state_dir)?);
    let real = real_path(&backup.original);
    let forget = user_unwrapped_after_restore(&ledger.borrow(), &backup, &bytes);
    let mut commit = || match &forget {
        Some(entries) => ledger
            .borrow_mut()
            .commit(|l| l.record_unwrapped(&real, entries)),
        None => Ok(()),
    };
    if current.is_none() {
        let created = write::create_file(&backup.original, &env.state_dir, &bytes, &mut commit);
        ledger
            .borrow_mut()
            .finish(created.as_ref().is_ok_and(|c| *c));
        if created? {
            outcome.written = true;
            return Ok(outcome);
        }
    }
    let client = backup.client.unwrap_or(ClientId::ClaudeCode);
    let lock = if backup.client == Some(ClientId::Cline) {
        LockKind::ClineDir
    } else {
        LockKind::None
    };
    let written = write::update_file(
        &backup.original,
        lock,
        (&env.state_dir, client),
        &mut |_old: &[u8]| Ok(Some(bytes.clone())),
        &mut commit,
    );
    ledger
        .borrow_mut()
        .finish(written.as_ref().is_ok_and(|w| w.written));
    let written = written?;
    outcome.written = written.written;
    outcome.previous = written.backup;
    Ok(outcome)
}

/// After a restore: servers Warden had wrapped that the restored contents run unwrapped are
/// the user's choice now (not "reverted", not asked about by auto-rewrite).
fn user_unwrapped_after_restore(
    ledger: &Ledger,
    backup: &Backup,
    bytes: &[u8],
) -> Option<Vec<EntryRef>> {
    let file = ConfigFile::infer(&backup.original, backup.client)?;
    let text = std::str::from_utf8(bytes).ok()?;
    let entries = edit::entries(file.client, file.dialect, text).ok()?;
    let wrapped = ledger.records_for(&real_path(&backup.original));
    let unwrapped: Vec<EntryRef> = entries
        .into_iter()
        .filter(ServerEntry::is_unwrapped)
        .map(|s| s.id())
        .filter(|e| wrapped.iter().any(|r| r.entry == *e))
        .collect();
    (!unwrapped.is_empty()).then_some(unwrapped)
}
