//! Unwrap: the per-entry edit that puts a wrapped server's own command back, with the values
//! that were moved to the keychain.

use super::classify::Class;
use super::driver::{Change, EditError, Intended, Step, TextEdit, WrapRecord, edit_entries};
use super::splice::{Edit, remove_head};
use super::wrap::render;
use crate::dialect::{Dialect, Syntax};
use crate::doc::{Body, EntryRef, Located};
use crate::secrets::{self, MovedSecret, PLACEHOLDER, SecretRecord};

/// Reads a moved value back from the keychain for unwrap: `(server, var)` → the value, or
/// why it cannot be read.
pub type SecretLookup<'a> = dyn Fn(&str, &str) -> Result<String, String> + 'a;

/// Unwraps the wrapped entries of `text` that `select` picks, restoring their original
/// command and args. `records` (from [`wrap_text`]) make the restore exact where wrap had
/// to add `args` or re-quote the command. An entry whose values are in the keychain is left
/// alone (see [`unwrap_text_with`]).
pub fn unwrap_text(
    dialect: Dialect,
    text: &str,
    select: &dyn Fn(&EntryRef) -> bool,
    records: &[WrapRecord],
) -> Result<TextEdit, EditError> {
    let no_keychain = |_: &str, _: &str| Err("no keychain was asked".to_owned());
    unwrap_text_with(dialect, text, select, records, &[], &no_keychain)
}

/// [`unwrap_text`], and values moved to the keychain (`--secret-env`) are read with `lookup`
/// and written back as `secret_records` say they were written.
pub fn unwrap_text_with(
    dialect: Dialect,
    text: &str,
    select: &dyn Fn(&EntryRef) -> bool,
    records: &[WrapRecord],
    secret_records: &[SecretRecord],
    lookup: &SecretLookup<'_>,
) -> Result<TextEdit, EditError> {
    let syntax = dialect.syntax();
    let step = |l: &Located, class: &Class| match class {
        Class::Wrapped {
            dashes,
            server,
            secret_env,
            command,
            args,
            ..
        } => {
            let (values, env, restored) = match restore_secrets(
                syntax,
                l,
                server.as_deref(),
                secret_env,
                secret_records,
                lookup,
            ) {
                Ok(r) => r,
                Err(why) => return Step::Skip(why),
            };
            let record = records.iter().rev().find(|r| r.entry == l.id);
            let Some(mut edits) = unwrap_entry(text, l, *dashes, record) else {
                return Step::Keep;
            };
            edits.extend(values);
            let class = Class::Unwrapped {
                command: command.clone(),
                args: args.clone(),
            };
            Step::Change(Box::new(Change {
                edits,
                intended: Intended { class, env },
                record: None,
                moves: Vec::new(),
                restored,
                notes: Vec::new(),
            }))
        }
        Class::WrappedRemote { url, headers, .. } => {
            unwrap_remote(dialect, text, l, records, url, headers)
        }
        Class::Unwrapped { .. } | Class::Remote { .. } => Step::Skip("not wrapped".to_owned()),
        Class::Skip(reason) => Step::Skip(reason.clone()),
    };
    edit_entries(dialect, text, select, &step)
}

/// Unwraps a remote entry: the original text wrap recorded goes back in place of exactly
/// what wrap wrote. Without that record (wrapped elsewhere, the ledger gone, or the entry
/// changed since) the entry is written as the client's plain remote entry: its URL, its
/// headers from the same variables, and its other members as they are.
fn unwrap_remote(
    dialect: Dialect,
    text: &str,
    l: &Located,
    records: &[WrapRecord],
    url: &str,
    headers: &[String],
) -> Step {
    let Some(whole) = &l.whole else {
        return Step::Skip(
            "runs a remote server through the bridge, and Warden writes remote entries back in JSON files only; nothing was changed in this entry. Fix: `warden servers remove NAME`, then add the server as the client's docs say"
                .to_owned(),
        );
    };
    let span = &whole.span;
    let current = &text[span.clone()];
    let record = records
        .iter()
        .rev()
        .find(|r| r.entry == l.id && r.wrapped.as_deref() == Some(current));
    let syntax = dialect.syntax();
    let restored = match record.and_then(|r| r.original.clone()) {
        Some(original) => original,
        None => {
            let had_type = whole.members.iter().any(|(k, _)| k == "type");
            let mut first = Vec::new();
            // The bridge's arguments keep no transport: a URL ending in /sse was HTTP+SSE.
            let http = if crate::remote::is_sse_url(url) {
                "\"type\": \"sse\""
            } else {
                "\"type\": \"http\""
            };
            match dialect {
                Dialect::Opencode => first.push("\"type\": \"remote\"".to_owned()),
                Dialect::Vscode => first.push(http.to_owned()),
                _ if had_type => first.push(http.to_owned()),
                _ => {}
            }
            first.push(format!("\"url\": {}", syntax.string(url)));
            if !headers.is_empty() {
                let pairs: Vec<String> = headers
                    .iter()
                    .filter_map(|h| h.split_once('='))
                    .map(|(name, var)| {
                        let value = match dialect {
                            Dialect::Vscode => format!("${{env:{var}}}"),
                            Dialect::Opencode => format!("{{env:{var}}}"),
                            _ => format!("${{{var}}}"),
                        };
                        format!("{}: {}", syntax.string(name), syntax.string(&value))
                    })
                    .collect();
                first.push(format!("\"headers\": {{ {} }}", pairs.join(", ")));
            }
            let gone = |k: &str| matches!(k, "type" | "command" | "args");
            render(whole, first, &gone)
        }
    };
    let class = Class::Remote {
        url: url.to_owned(),
        headers: headers.to_vec(),
    };
    Step::Change(Box::new(Change {
        edits: vec![(span.clone(), restored)],
        intended: Intended {
            class,
            env: Vec::new(),
        },
        record: None,
        moves: Vec::new(),
        restored: Vec::new(),
        notes: Vec::new(),
    }))
}

type Restores = (Vec<Edit>, Vec<(String, String)>, Vec<MovedSecret>);

/// The edits that write the moved values of an entry back in place of the placeholder (a
/// value the user has put there since stays), or why the entry cannot be unwrapped now.
fn restore_secrets(
    syntax: Syntax,
    l: &Located,
    server: Option<&str>,
    secret_env: &[String],
    secret_records: &[SecretRecord],
    lookup: &SecretLookup<'_>,
) -> Result<Restores, String> {
    let mut out: Restores = (Vec::new(), Vec::new(), Vec::new());
    for var in secret_env {
        let Some((_, scalar)) = l.env.iter().find(|(k, _)| k == var) else {
            continue;
        };
        if scalar.value != PLACEHOLDER {
            continue;
        }
        let Some(server) = server else {
            return Err(format!(
                "its {var} is in the OS keychain but the bridge has no --server to name it; nothing was changed in this entry. Fix: add `--server NAME` as it was wrapped, or put the value back by hand"
            ));
        };
        let value = lookup(server, var).map_err(|why| {
            format!("its {var} cannot be read back from the OS keychain: {why}; nothing was changed in this entry. Fix: unlock the keychain and run unwrap again")
        })?;
        let literal = secret_records
            .iter()
            .rev()
            .find(|r| r.entry == l.id && r.var == *var)
            .map_or(secrets::Literal::Quoted, |r| r.literal);
        out.0
            .push((scalar.span.clone(), literal.render(syntax, &value)));
        out.1.push((var.clone(), value.clone()));
        out.2.push(MovedSecret {
            server: server.to_owned(),
            var: var.clone(),
            value,
        });
    }
    Ok(out)
}

/// The edits that unwrap one wrapped entry (`dashes`: where its `--` is).
fn unwrap_entry(
    text: &str,
    l: &Located,
    dashes: usize,
    record: Option<&WrapRecord>,
) -> Option<Vec<Edit>> {
    match &l.body {
        Body::Split {
            command,
            args: Some(seq),
            insert,
        } => {
            let cmd_item = seq.items.get(dashes + 1)?;
            let moved = &text[cmd_item.span.clone()];
            let restored = match record {
                Some(WrapRecord {
                    command_raw: Some(raw),
                    command_value,
                    ..
                }) if *command_value == cmd_item.value => raw.clone(),
                _ => moved.to_owned(),
            };
            let mut edits = vec![(command.span.clone(), restored)];
            let inserted = match (record.and_then(|r| r.inserted_args.as_deref()), insert) {
                (Some(s), Some(ins)) if text[ins.at..].starts_with(s) => {
                    Some(ins.at..ins.at + s.len())
                }
                _ => None,
            };
            match inserted {
                // The whole `args` was Warden's: remove it.
                Some(range) if seq.items.len() == dashes + 2 => {
                    edits.push((range, String::new()));
                }
                _ => edits.extend(remove_head(text, seq, dashes + 2)),
            }
            Some(edits)
        }
        Body::Joined { command } => Some(remove_head(text, command, dashes + 1)),
        _ => None,
    }
}
