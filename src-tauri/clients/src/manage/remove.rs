//! Remove: the entries taken out of the files, and those kept aside by `disable` forgotten,
//! exactly as the preview showed ([`plan_of`]), else nothing written.

use super::files::{
    Outcome, check_writable, client_error, delete_created, files_of, in_scope, kept, nowhere,
    put_back, undone, write_all,
};
use super::lines::fingerprint;
use super::text::{self};
use super::types::{ManageError, PlannedFile, Selection};
use crate::backup;
use crate::detect::{ClientEnv, ConfigFile};
use crate::doc::EntryRef;
use crate::edit;
use crate::ledger::{Ledger, ManagedKind, ManagedRecord};
use crate::model::ClientError;
use crate::ops::{FileChange, parse_error, real_path, unified_diff};
use std::path::PathBuf;

/// The plan of a remove's preview: each file's fingerprint and the entries that go.
pub fn plan_of<'a>(changes: impl IntoIterator<Item = &'a FileChange>) -> Vec<PlannedFile> {
    changes
        .into_iter()
        .filter_map(|c| {
            Some(PlannedFile {
                path: c.file.path.clone(),
                fingerprint: c.fingerprint.clone()?,
                changed: c.changed.iter().map(ToString::to_string).collect(),
            })
        })
        .collect()
}

/// The files of `plan` that do not read as it says now, and those not in it that would
/// change now.
pub(super) fn unplanned(plan: &[PlannedFile], now: &[PlannedFile]) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = plan
        .iter()
        .filter(|p| !now.contains(p))
        .chain(
            now.iter()
                .filter(|n| !plan.iter().any(|p| p.path == n.path)),
        )
        .map(|p| p.path.clone())
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// Takes the entries named `name` out of the files and scope of `sel`, and forgets those
/// kept aside by `disable` (their bytes into the backups first: the file as it reads with
/// them put back). With `plan` (a preview's [`plan_of`]), only while every file reads as it
/// did then; else nothing is written ([`ClientError::Changed`]). Values a wrapped entry
/// read from the OS keychain stay there; each change's `secrets` names them (`SERVER/VAR`).
pub fn remove(
    env: &ClientEnv,
    name: &str,
    sel: &Selection,
    plan: Option<&[PlannedFile]>,
    dry_run: bool,
) -> Result<Vec<FileChange>, ClientError> {
    let ledger = Ledger::lock(&env.state_dir)?;
    let records = |ledger: &Ledger, file: &ConfigFile| ledger.managed_for(&real_path(&file.path));
    let compute =
        |ledger: &Ledger, file: &ConfigFile, text: &str| -> Result<Outcome, ClientError> {
            // Written only as previewed, also when the client wrote just now.
            let planned = plan.and_then(|p| p.iter().find(|p| p.path == file.path));
            if plan.is_some() && planned.is_none_or(|p| p.fingerprint != fingerprint(text)) {
                return Err(ClientError::Changed {
                    paths: vec![file.path.clone()],
                });
            }
            take_out(ledger, file, text, name, sel, &records(ledger, file))
        };
    let mut plans = Vec::new();
    let mut secrets = Vec::new();
    let mut now = Vec::new();
    let mut backups = Vec::new();
    for (file, text) in files_of(env, sel)? {
        let o = take_out(&ledger, &file, &text, name, sel, &records(&ledger, &file))?;
        if o.changed.is_empty() {
            continue;
        }
        if o.text != text {
            check_writable(&file.path)?;
        }
        let records = records(&ledger, &file);
        let stashed = kept(&records, name, sel);
        // What a backup keeps of the kept entries: the file with them put back.
        let with_kept = if stashed.is_empty() {
            None
        } else {
            let targets: Vec<EntryRef> = stashed.iter().map(|r| r.entry.clone()).collect();
            let cannot = |e: ManageError| ClientError::Layout {
                path: file.path.clone(),
                detail: format!(
                    "{name} was turned off by `warden servers disable`, and Warden cannot put its kept bytes back into the file for the backup it takes before forgetting them ({e}); so it was not removed"
                ),
            };
            let back = put_back(&ledger, &file, &text, &stashed, &targets, &cannot)?;
            Some(back)
        };
        let kept_secrets: Vec<String> = edit::launches(file.dialect, &text)
            .unwrap_or_default()
            .into_iter()
            .filter(|l| l.name == name)
            .flat_map(|l| l.secret_env)
            .chain(
                stashed
                    .iter()
                    .filter_map(|r| r.raw.as_deref())
                    .flat_map(|raw| stashed_secret_env(&file, raw)),
            )
            .map(|var| warden_config::keychain::account(name, &var))
            .collect();
        now.push(PlannedFile {
            path: file.path.clone(),
            fingerprint: fingerprint(&text),
            changed: o.changed.iter().map(ToString::to_string).collect(),
        });
        secrets.push(kept_secrets);
        backups.push(with_kept.map(|t| (file.client, real_path(&file.path), t)));
        plans.push((file, true, text, o));
    }
    if let Some(plan) = plan {
        let paths = unplanned(plan, &now);
        if !paths.is_empty() {
            return Err(ClientError::Changed { paths });
        }
    }
    if plans.is_empty() {
        return Err(nowhere(name, sel));
    }
    // Every removal is backed up first, the kept entries' too (their only copy is the
    // ledger's).
    let mut kept_backups = Vec::new();
    for b in backups {
        kept_backups.push(match (b, dry_run) {
            (Some((client, real, text)), false) => Some(backup::save(
                &env.state_dir,
                client,
                &real,
                text.as_bytes(),
            )?),
            _ => None,
        });
    }
    // A file Warden created, given back as it created it: deleted (with the folders it
    // created, when empty), as it was before.
    let mut ledger = ledger;
    let mut deleted: Vec<Option<FileChange>> = Vec::new();
    let mut rest = Vec::new();
    for (file, exists, text, o) in plans {
        let dirs = ledger
            .created(&real_path(&file.path))
            .filter(|_| o.text == text::minimal(file.dialect));
        let Some(dirs) = dirs else {
            deleted.push(None);
            rest.push((file, exists, text, o));
            continue;
        };
        let mut change = FileChange::new(&file);
        change.changed = o.changed.clone();
        change.diff = unified_diff(&text, "", &file.path.display().to_string());
        change.fingerprint = Some(fingerprint(&text));
        if !dry_run
            && let Err(e) = delete_created(env, &mut ledger, &file, &text, &o, &dirs, &mut change)
        {
            change.error = Some(e);
        }
        deleted.push(Some(change));
    }
    let mut written = write_all(env, ledger, rest, &compute, dry_run).into_iter();
    let mut changes: Vec<FileChange> = deleted
        .into_iter()
        .filter_map(|d| d.or_else(|| written.next()))
        .collect();
    for ((c, s), b) in changes.iter_mut().zip(secrets).zip(kept_backups) {
        let mut s = s;
        s.sort();
        s.dedup();
        c.secrets = s;
        if b.is_some() && c.error.is_none() {
            c.backup = b;
        }
    }
    Ok(changes)
}

fn stashed_secret_env(file: &ConfigFile, raw: &str) -> Vec<String> {
    text::standalone_launch(file.client, file.dialect, raw)
        .map(|l| l.secret_env)
        .unwrap_or_default()
}

fn take_out(
    ledger: &Ledger,
    file: &ConfigFile,
    text: &str,
    name: &str,
    sel: &Selection,
    records: &[ManagedRecord],
) -> Result<Outcome, ClientError> {
    let (client, dialect) = (file.client, file.dialect);
    let entries = edit::entries(client, dialect, text).map_err(|e| parse_error(file, e))?;
    let ids: Vec<EntryRef> = {
        let mut v: Vec<EntryRef> = Vec::new();
        for e in entries
            .iter()
            .filter(|e| e.name == name && in_scope(sel, &e.id()))
        {
            if !v.contains(&e.id()) {
                v.push(e.id());
            }
        }
        v
    };
    let mut out = Outcome {
        text: text.to_owned(),
        changed: Vec::new(),
        record: Vec::new(),
        forget: Vec::new(),
    };
    for r in kept(records, name, sel) {
        out.changed.push(r.entry.clone());
        out.forget.push((r.entry.clone(), None));
    }
    if ids.is_empty() {
        return Ok(out);
    }
    // Added by Warden and nothing changed since: exactly the bytes before.
    let added = records
        .iter()
        .find(|r| r.kind == ManagedKind::Added && ids.len() == 1 && r.entry == ids[0]);
    let back = match added {
        Some(r) => undone(ledger, r, text)?,
        None => None,
    };
    out.text = match back {
        Some(t) => t,
        None => {
            text::remove_ids(client, dialect, text, &ids, &entries)
                .map_err(|e| client_error(file, name, e))?
                .text
        }
    };
    for id in ids {
        out.forget.push((id.clone(), None));
        out.changed.push(id);
    }
    Ok(out)
}
