//! The file operations of `manage`: which files, checked all before any is written, then
//! written through `write.rs` with backups, and the ledger's records kept.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use super::lines::{self, Edit, fingerprint};
use super::text::{self, ManageEdit, add_text, has_switch};
use super::types::{AddOptions, ManageError, Selection};
use crate::backup;
use crate::detect::{ClientEnv, ConfigFile, Scope, candidates, detect, project_file};
use crate::doc::EntryRef;
use crate::edit;
use crate::ledger::{Ledger, ManagedKind, ManagedRecord};
use crate::model::{ClientError, ClientId, ServerEntry};
use crate::notices::notices_for;
use crate::ops::{FileChange, parse_error, read_text, real_path, unified_diff, utf8};
use crate::remote;
use crate::write;

pub(super) fn client_error(file: &ConfigFile, name: &str, e: ManageError) -> ClientError {
    match e {
        ManageError::Parse(d) => parse_error(file, d),
        ManageError::Exists(entry) => ClientError::Exists {
            path: file.path.clone(),
            name: name.to_owned(),
            entry,
        },
        ManageError::Missing => ClientError::NoSuchServer {
            name: name.to_owned(),
            place: file.path.display().to_string(),
        },
        ManageError::Layout(detail) => ClientError::Layout {
            path: file.path.clone(),
            detail,
        },
        ManageError::Internal(detail) => ClientError::Verify {
            path: file.path.clone(),
            detail,
        },
    }
}

fn check_name(name: &str) -> Result<(), ClientError> {
    let bad = |why| {
        Err(ClientError::BadName {
            name: name.to_owned(),
            why,
        })
    };
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.chars().any(char::is_control) {
        return bad("it holds control characters");
    }
    if name.contains('/') {
        return bad("it holds '/' (the keychain's accounts are SERVER/VAR)");
    }
    if name.starts_with('-') {
        return bad("it starts with '-'");
    }
    // A name every client's format takes as a key (Codex's TOML tables among them): the rule
    // the window and the CLI share.
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return bad("it does not start with a letter or digit");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        return bad("it holds a character other than letters, digits, '-', '_' and '.'");
    }
    Ok(())
}

/// The directory whose existence says that `client` is installed, for its file `path`.
fn install_dir(env: &ClientEnv, client: ClientId, path: &Path) -> PathBuf {
    let parent = path.parent().unwrap_or(Path::new("/")).to_owned();
    if client == ClientId::ClaudeCode && parent == env.home {
        return env.home.join(".claude");
    }
    parent
}

/// The file `add` writes for `client`: its user file the client reads, or (when there is
/// none yet) the place it would be, if the client looks installed. `false`: to be created.
pub(super) fn target_file(
    env: &ClientEnv,
    client: ClientId,
) -> Result<(ConfigFile, bool), ClientError> {
    if let Some(f) = detect(env)
        .into_iter()
        .find(|f| f.client == client && f.active && f.scope == Scope::User)
    {
        return Ok((f, true));
    }
    let places: Vec<ConfigFile> = candidates(env)
        .into_iter()
        .filter(|f| {
            f.client == client
                && f.scope == Scope::User
                && !f.note.as_deref().is_some_and(|n| n.contains("legacy"))
                && f.path.file_name().is_none_or(|n| n != "mcp-config.json")
        })
        .collect();
    for f in &places {
        if install_dir(env, client, &f.path).is_dir() {
            return Ok((f.clone(), false));
        }
    }
    let dir = places
        .first()
        .map_or_else(|| env.home.clone(), |f| install_dir(env, client, &f.path));
    Err(ClientError::NotInstalled { client, dir })
}

/// What one file's edit comes to: the new text, the entries changed, and the ledger's news.
pub(super) struct Outcome {
    pub(super) text: String,
    pub(super) changed: Vec<EntryRef>,
    pub(super) record: Vec<ManagedRecord>,
    pub(super) forget: Vec<(EntryRef, Option<ManagedKind>)>,
}

fn undo_record(
    entry: &EntryRef,
    kind: ManagedKind,
    e: &ManageEdit,
    raw: Option<String>,
) -> ManagedRecord {
    ManagedRecord {
        entry: entry.clone(),
        kind,
        after: fingerprint(&e.text),
        undo: e
            .undo
            .iter()
            .map(|(r, s)| (r.start, r.end, s.clone()))
            .collect(),
        raw,
        key_added: e.key_added,
        set: None,
    }
}

/// The text before the edit `rec` records, when `text` is still what that edit left.
/// A record that does not fit that text (a damaged ledger) is an error.
pub(super) fn undone(
    ledger: &Ledger,
    rec: &ManagedRecord,
    text: &str,
) -> Result<Option<String>, ClientError> {
    if rec.after != fingerprint(text) {
        return Ok(None);
    }
    let edits: Vec<Edit> = rec
        .undo
        .iter()
        .map(|(s, e, t)| (*s..*e, t.clone()))
        .collect();
    lines::apply(text, edits).map(Some).map_err(|why| {
        ledger.damaged(format!(
            "its record of {} in the file it names does not fit that file ({why})",
            rec.entry
        ))
    })
}

/// How one file's edit is computed from its current text, with the ledger's records.
type Compute<'a> = dyn Fn(&Ledger, &ConfigFile, &str) -> Result<Outcome, ClientError> + 'a;

/// Writes (or, in a dry run, only computes) each planned file; `compute` makes the outcome
/// from the file's current text, again inside the write (the client may have written). The
/// ledger, locked by the caller before it planned, is saved before each file changes.
pub(super) fn write_all(
    env: &ClientEnv,
    ledger: Ledger,
    plans: Vec<(ConfigFile, bool, String, Outcome)>,
    compute: &Compute<'_>,
    dry_run: bool,
) -> Vec<FileChange> {
    let ledger = RefCell::new(ledger);
    let mut out = Vec::new();
    for (file, exists, old, planned) in plans {
        let mut change = FileChange::new(&file);
        let real = real_path(&file.path);
        let old_text = RefCell::new(old);
        let outcome = RefCell::new(Some(planned));
        // To be created: the directories it needs that are not there yet, deepest first.
        let new_dirs: Option<Vec<PathBuf>> = (!exists).then(|| {
            file.path
                .ancestors()
                .skip(1)
                .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
                .map(Path::to_path_buf)
                .collect()
        });
        let creating = std::cell::Cell::new(!exists);
        if !dry_run {
            // The ledger's news, saved right before the file changes.
            let mut commit = || {
                let o = outcome.borrow();
                let Some(o) = o
                    .as_ref()
                    .filter(|o| !(o.forget.is_empty() && o.record.is_empty()))
                else {
                    return Ok(());
                };
                ledger.borrow_mut().commit(|l| {
                    for (e, kind) in &o.forget {
                        l.forget_managed(&real, e, *kind);
                    }
                    for r in &o.record {
                        l.record_managed(&real, r.clone());
                    }
                    if creating.get() {
                        l.record_created(&real, new_dirs.clone());
                    }
                })
            };
            let mut edit = |bytes: &[u8]| {
                let text = utf8(&file.path, bytes)?;
                let o = compute(&ledger.borrow(), &file, &text)?;
                let new = (o.text != text).then(|| o.text.clone().into_bytes());
                *old_text.borrow_mut() = text;
                *outcome.borrow_mut() = Some(o);
                Ok(new)
            };
            let state = (env.state_dir.as_path(), file.client);
            let created = if exists {
                Ok(false)
            } else {
                let text = outcome.borrow().as_ref().map(|o| o.text.clone());
                write::create_file(
                    &file.path,
                    &env.state_dir,
                    text.unwrap_or_default().as_bytes(),
                    &mut commit,
                )
            };
            ledger
                .borrow_mut()
                .finish(created.as_ref().is_ok_and(|c| *c));
            creating.set(false);
            // Not there when planned, there now (the client saved it first): never
            // replaced, edited like any file.
            let result = match created {
                Ok(true) => Ok(write::Written {
                    written: true,
                    backup: None,
                    attempts: 1,
                }),
                Ok(false) => {
                    write::update_file(&file.path, file.lock, state, &mut edit, &mut commit)
                }
                Err(e) => Err(e),
            };
            // The file needs no change (a kept entry forgotten, say): the ledger's news
            // alone.
            let result = match result {
                Ok(w) if !w.written => commit().map(|()| w),
                other => other,
            };
            ledger.borrow_mut().finish(result.is_ok());
            match result {
                Ok(w) => {
                    change.written = w.written;
                    change.backup = w.backup;
                }
                Err(e) => {
                    change.error = Some(e);
                    out.push(change);
                    continue;
                }
            }
        }
        let old_text = old_text.into_inner();
        if let Some(o) = outcome.into_inner() {
            if o.text != old_text {
                let label = file.path.display().to_string();
                change.diff = unified_diff(&old_text, &o.text, &label);
                change.notices = notices_for(&file, env);
            }
            if change.written {
                change.new_text = Some(o.text);
            }
            change.changed = o.changed;
            change.fingerprint = Some(fingerprint(&old_text));
        }
        out.push(change);
    }
    out
}

/// Deletes a file Warden created, now back as it was created (`text`): under its lock, only
/// while it still reads `text`, after a backup and the ledger's news; then the directories
/// created for it, those left empty.
pub(super) fn delete_created(
    env: &ClientEnv,
    ledger: &mut Ledger,
    file: &ConfigFile,
    text: &str,
    o: &Outcome,
    dirs: &[PathBuf],
    change: &mut FileChange,
) -> Result<(), ClientError> {
    let path = &file.path;
    let _lock = warden_config::fsutil::lock(&env.state_dir, path)
        .map_err(|e| ClientError::lock_failed(&env.state_dir, path, e))?;
    if read_text(path)? != text {
        return Err(ClientError::Changed {
            paths: vec![path.clone()],
        });
    }
    let real = real_path(path);
    change.backup = Some(backup::save(
        &env.state_dir,
        file.client,
        &real,
        text.as_bytes(),
    )?);
    ledger.commit(|l| {
        for (e, kind) in &o.forget {
            l.forget_managed(&real, e, *kind);
        }
        l.record_created(&real, None);
    })?;
    let removed = std::fs::remove_file(path);
    ledger.finish(removed.is_ok());
    removed
        .map_err(|e| ClientError::io("delete", path, "check that the directory is writable", e))?;
    for d in dirs {
        // Only an empty directory goes.
        let _ = std::fs::remove_dir(d);
    }
    change.written = true;
    Ok(())
}

pub(super) fn check_writable(path: &Path) -> Result<(), ClientError> {
    let real = real_path(path);
    match std::fs::metadata(&real) {
        Ok(m) if m.permissions().readonly() => Err(ClientError::ReadOnly { path: real }),
        _ => Ok(()),
    }
}

/// Adds `opts.entry` to each chosen client's file (created when the client looks installed
/// but has none yet). Every file is checked first; any refusal writes nothing.
pub fn add(env: &ClientEnv, opts: &AddOptions) -> Result<Vec<FileChange>, ClientError> {
    add_in(env, opts, None)
}

/// [`add`] into each chosen client's project file in `dir` (created, with its folder, when
/// not there). A client with no project file format is refused, nothing written.
pub fn add_to_project(
    env: &ClientEnv,
    opts: &AddOptions,
    dir: &Path,
) -> Result<Vec<FileChange>, ClientError> {
    let dir = std::fs::canonicalize(dir).map_err(|e| {
        ClientError::io(
            "open the project directory",
            dir,
            "give an existing directory with --project",
            e,
        )
    })?;
    add_in(env, opts, Some(&dir))
}

fn add_in(
    env: &ClientEnv,
    opts: &AddOptions,
    project: Option<&Path>,
) -> Result<Vec<FileChange>, ClientError> {
    let entry = &opts.entry;
    check_name(&entry.name)?;
    if opts.clients.is_empty() {
        return Err(ClientError::NoClient);
    }
    if opts.warden.is_none() && !entry.secret_env.is_empty() {
        return Err(ClientError::SecretsNeedBridge);
    }
    if let Some(url) = &entry.url {
        if opts.warden.is_none() {
            return Err(ClientError::RemoteNeedsBridge);
        }
        remote::check_url(url).map_err(|why| ClientError::BadUrl {
            insecure: why.contains("plain http") || why.contains("user name or password"),
            why: format!(
                "{why}. Nothing was written. Fix: give the server's https URL (plain http only to localhost, 127.0.0.1 or ::1), with no user name or password in it"
            ),
        })?;
        if let Err(why) = remote::check_header_args(&entry.headers) {
            return Err(ClientError::BadUrl {
                why: format!(
                    "{why}. Nothing was written. Fix: give it as --header NAME=ENVVAR, e.g. --header Authorization=GITHUB_AUTH"
                ),
                insecure: false,
            });
        }
    }
    let warden = opts
        .warden
        .as_ref()
        .map(|w| w.to_string_lossy().into_owned());
    // Locked before anything is read: what is planned is what is written.
    let ledger = Ledger::lock(&env.state_dir)?;
    let compute = |_: &Ledger, file: &ConfigFile, text: &str| -> Result<Outcome, ClientError> {
        let e = add_text(file.client, file.dialect, text, entry, warden.as_deref())
            .map_err(|e| client_error(file, &entry.name, e))?;
        let id = EntryRef {
            scope: Vec::new(),
            name: entry.name.clone(),
        };
        Ok(Outcome {
            record: vec![undo_record(&id, ManagedKind::Added, &e, None)],
            forget: Vec::new(),
            text: e.text,
            changed: e.changed,
        })
    };
    let mut plans = Vec::new();
    let mut seen = Vec::new();
    for &client in &opts.clients {
        if seen.contains(&client) {
            continue;
        }
        seen.push(client);
        let (file, exists) = match project {
            Some(dir) => project_file(env, client, dir).ok_or(ClientError::NoProjectFile {
                client,
                dir: dir.to_owned(),
            })?,
            None => target_file(env, client)?,
        };
        let text = if exists {
            read_text(&file.path)?
        } else {
            text::minimal(file.dialect).to_owned()
        };
        // One turned off by Warden (kept in the ledger) counts as there.
        let real = real_path(&file.path);
        if let Some(r) = ledger
            .managed_for(&real)
            .into_iter()
            .find(|r| r.kind == ManagedKind::Stashed && r.entry.name == entry.name)
        {
            return Err(ClientError::Exists {
                path: file.path.clone(),
                name: entry.name.clone(),
                entry: format!(
                    "{} (turned off by `warden servers disable`; `warden servers enable {}` puts it back)",
                    r.raw.unwrap_or_default().trim_end(),
                    entry.name
                ),
            });
        }
        let outcome = compute(&ledger, &file, &text)?;
        if exists {
            check_writable(&file.path)?;
        }
        plans.push((file, exists, text, outcome));
    }
    Ok(write_all(env, ledger, plans, &compute, opts.dry_run))
}

/// Whether `id` is of the scope `sel` names (any when it names none).
pub(super) fn in_scope(sel: &Selection, id: &EntryRef) -> bool {
    sel.scope.as_ref().is_none_or(|s| *s == id.scope)
}

/// The records of the entries `disable` kept aside, named `name`, of the scope of `sel`.
pub(super) fn kept<'a>(
    records: &'a [ManagedRecord],
    name: &str,
    sel: &Selection,
) -> Vec<&'a ManagedRecord> {
    records
        .iter()
        .filter(|r| {
            r.kind == ManagedKind::Stashed && r.entry.name == name && in_scope(sel, &r.entry)
        })
        .collect()
}

/// The active files of `sel`, read and checked: any that cannot be read or parsed stops the
/// command.
pub(super) fn files_of(
    env: &ClientEnv,
    sel: &Selection,
) -> Result<Vec<(ConfigFile, String)>, ClientError> {
    let want = sel.file.as_deref().map(real_path);
    let mut out = Vec::new();
    for file in detect(env).into_iter().filter(|f| {
        f.active
            && (sel.clients.is_empty() || sel.clients.contains(&f.client))
            && want.as_ref().is_none_or(|w| real_path(&f.path) == *w)
    }) {
        let text = read_text(&file.path)?;
        edit::entries(file.client, file.dialect, &text).map_err(|e| parse_error(&file, e))?;
        out.push((file, text));
    }
    Ok(out)
}

pub(super) fn nowhere(name: &str, sel: &Selection) -> ClientError {
    let mut place = match &sel.file {
        Some(f) => f.display().to_string(),
        None if sel.clients.is_empty() => "the clients' files".to_owned(),
        None => {
            let ids: Vec<&str> = sel.clients.iter().map(|c| c.as_str()).collect();
            format!("the files of {}", ids.join(", "))
        }
    };
    if let Some(scope) = sel.scope.as_ref().filter(|s| !s.is_empty()) {
        place.push_str(&format!(" ({})", scope.join(" ")));
    }
    ClientError::NoSuchServer {
        name: name.to_owned(),
        place,
    }
}

/// Turns the entries named `name` off (`enabled: false`) or on in the files and scope of
/// `sel`: with the client's own switch where it has one, else by taking the entry out of the
/// file into Warden's ledger (and putting it back).
pub fn set_enabled(
    env: &ClientEnv,
    name: &str,
    sel: &Selection,
    enabled: bool,
    dry_run: bool,
) -> Result<Vec<FileChange>, ClientError> {
    let ledger = Ledger::lock(&env.state_dir)?;
    let records = |ledger: &Ledger, file: &ConfigFile| ledger.managed_for(&real_path(&file.path));
    let compute = |ledger: &Ledger, file: &ConfigFile, text: &str| {
        toggle(
            ledger,
            file,
            text,
            name,
            sel,
            enabled,
            &records(ledger, file),
        )
    };
    let mut plans = Vec::new();
    for (file, text) in files_of(env, sel)? {
        let o = compute(&ledger, &file, &text)?;
        let present = edit::entries(file.client, file.dialect, &text)
            .map_err(|e| parse_error(&file, e))?
            .iter()
            .any(|e| e.name == name && in_scope(sel, &e.id()));
        if !present && kept(&records(&ledger, &file), name, sel).is_empty() {
            continue;
        }
        if o.text != text {
            check_writable(&file.path)?;
        }
        plans.push((file, true, text, o));
    }
    if plans.is_empty() {
        return Err(nowhere(name, sel));
    }
    Ok(write_all(env, ledger, plans, &compute, dry_run))
}

/// [`undone`], when what it gives back differs from `text` only in the entries `targets`
/// (one edit may have turned off several entries, of which only some are asked for now).
fn undone_within(
    ledger: &Ledger,
    file: &ConfigFile,
    rec: &ManagedRecord,
    text: &str,
    targets: &[EntryRef],
) -> Result<Option<String>, ClientError> {
    let Some(back) = undone(ledger, rec, text)? else {
        return Ok(None);
    };
    let others = |t: &str| -> Option<Vec<ServerEntry>> {
        let all = edit::entries(file.client, file.dialect, t).ok()?;
        Some(
            all.into_iter()
                .filter(|e| !targets.contains(&e.id()))
                .collect(),
        )
    };
    Ok(match (others(text), others(&back)) {
        (Some(a), Some(b)) if a == b => Some(back),
        _ => None,
    })
}

/// `text` with the entries `disable` kept aside (`kept`) put back: exactly where they were
/// while the file is as Warden left it, else at the end of their list (their own bytes).
/// `err` says why an entry cannot go back in; a record that does not fit is the ledger's
/// error.
pub(super) fn put_back(
    ledger: &Ledger,
    file: &ConfigFile,
    text: &str,
    kept: &[&ManagedRecord],
    targets: &[EntryRef],
    err: &dyn Fn(ManageError) -> ClientError,
) -> Result<String, ClientError> {
    let mut out = text.to_owned();
    for r in kept {
        out = match undone_within(ledger, file, r, &out, targets)? {
            Some(t) => t,
            None => {
                let raw = r.raw.as_deref().unwrap_or_default();
                text::put_back_raw(file.client, file.dialect, &out, &r.entry, raw)
                    .map_err(err)?
                    .text
            }
        };
    }
    Ok(out)
}

fn toggle(
    ledger: &Ledger,
    file: &ConfigFile,
    text: &str,
    name: &str,
    sel: &Selection,
    enabled: bool,
    records: &[ManagedRecord],
) -> Result<Outcome, ClientError> {
    let err = |e| client_error(file, name, e);
    let (client, dialect) = (file.client, file.dialect);
    let entries_of = |t: &str| edit::entries(client, dialect, t).map_err(|e| parse_error(file, e));
    let mut out = Outcome {
        text: text.to_owned(),
        changed: Vec::new(),
        record: Vec::new(),
        forget: Vec::new(),
    };
    let entries = entries_of(text)?;
    let mine: Vec<&ServerEntry> = entries
        .iter()
        .filter(|e| e.name == name && in_scope(sel, &e.id()))
        .collect();
    if enabled {
        let stashed = kept(records, name, sel);
        let off: Vec<EntryRef> = mine
            .iter()
            .filter(|e| !e.enabled && has_switch(client, dialect, &e.id()))
            .map(|e| e.id())
            .collect();
        let targets: Vec<EntryRef> = stashed
            .iter()
            .map(|r| r.entry.clone())
            .chain(off.iter().cloned())
            .collect();
        // Kept entries back: exactly where they were while the file is as Warden left it.
        out.text = put_back(ledger, file, &out.text, &stashed, &targets, &err)?;
        for r in stashed {
            out.changed.push(r.entry.clone());
            out.forget
                .push((r.entry.clone(), Some(ManagedKind::Stashed)));
        }
        for id in off {
            let rec = records
                .iter()
                .find(|r| r.kind == ManagedKind::Switched && r.entry == id);
            let back = match rec {
                Some(r) => undone_within(ledger, file, r, &out.text, &targets)?,
                None => None,
            };
            let new = match back {
                Some(t) => t,
                None => {
                    let added = rec.is_some_and(|r| r.key_added);
                    let now = entries_of(&out.text)?;
                    let one = std::slice::from_ref(&id);
                    text::switch_ids(client, dialect, &out.text, one, &now, true, added)
                        .map_err(err)?
                        .text
                }
            };
            out.text = new;
            out.changed.push(id.clone());
            out.forget.push((id, Some(ManagedKind::Switched)));
        }
        return Ok(out);
    }
    let on: Vec<EntryRef> = mine.iter().filter(|e| e.enabled).map(|e| e.id()).collect();
    let (switched, aside): (Vec<EntryRef>, Vec<EntryRef>) = on
        .into_iter()
        .partition(|id| has_switch(client, dialect, id));
    if !switched.is_empty() {
        let e = text::switch_ids(
            client, dialect, &out.text, &switched, &entries, false, false,
        )
        .map_err(err)?;
        for id in &switched {
            out.record
                .push(undo_record(id, ManagedKind::Switched, &e, None));
        }
        out.changed.extend(e.changed.iter().cloned());
        out.text = e.text;
    }
    if !aside.is_empty() {
        let before = entries_of(&out.text)?;
        let e = text::remove_ids(client, dialect, &out.text, &aside, &before).map_err(err)?;
        for (id, raw) in &e.removed {
            out.record
                .push(undo_record(id, ManagedKind::Stashed, &e, Some(raw.clone())));
        }
        out.changed.extend(e.changed.iter().cloned());
        out.text = e.text;
    }
    Ok(out)
}

/// The entries taken out of the active files by `disable`, as listed (`enabled: false`).
pub fn stashed(env: &ClientEnv) -> Vec<(ConfigFile, ServerEntry)> {
    let ledger = Ledger::view(&env.state_dir);
    let kept = ledger.stashed();
    if kept.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for file in detect(env).into_iter().filter(|f| f.active) {
        let real = real_path(&file.path);
        let Some((_, records)) = kept.iter().find(|(p, _)| *p == real) else {
            continue;
        };
        for r in records {
            let raw = r.raw.as_deref().unwrap_or_default();
            if let Some(mut e) = text::standalone(file.client, file.dialect, raw) {
                e.name = r.entry.name.clone();
                e.scope = r.entry.scope.clone();
                e.enabled = false;
                out.push((file.clone(), e));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_name_is_letters_digits_dots_underscores_and_dashes_from_a_letter_or_digit() {
        let ok = |n: &str| super::check_name(n).is_ok();
        assert_eq!(
            [
                "weather",
                "my.server_2-x",
                "9lives",
                "we ather",
                "-x",
                ".x",
                "a/b",
                "é",
                ""
            ]
            .map(ok),
            [true, true, true, false, false, false, false, false, false]
        );
    }
}
