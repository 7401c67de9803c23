//! Wrap: the per-entry edit that routes a server through `warden bridge`, and the one that
//! moves the secrets of an entry wrapped already.

use super::classify::Class;
use super::driver::{Change, EditError, Intended, Step, TextEdit, WrapRecord, edit_entries};
use super::splice::{Edit, insert_before, prepend};
use crate::dialect::{Dialect, Syntax};
use crate::doc::{Body, EntryRef, Located, Seq, SeqStyle, Whole};
use crate::remote;
use crate::secrets::{self, MoveCheck, PLACEHOLDER};

/// The `--secret-env VAR` arguments for `moves`.
fn secret_args(syntax: Syntax, moves: &[secrets::Move]) -> Vec<String> {
    moves
        .iter()
        .flat_map(|m| [syntax.word("--secret-env"), syntax.word(&m.secret.var)])
        .collect()
}

/// The variables of an entry's `env` that the bridge is to pass on to a sandboxed server
/// (`--pass-env VAR`), in the file's order: all but those moved to the keychain (they get
/// `--secret-env`), and but a name no environment can hold or that would read as an option.
pub(crate) fn pass_env_names<'a>(
    env_keys: impl IntoIterator<Item = &'a String>,
    secret_env: &[String],
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in env_keys {
        let usable = !k.is_empty() && !k.starts_with('-') && !k.contains(['=', '\0']);
        if usable && !secret_env.contains(k) && !out.contains(k) {
            out.push(k.clone());
        }
    }
    out
}

/// The `--pass-env VAR` arguments for `vars`.
fn pass_args(syntax: Syntax, vars: &[String]) -> Vec<String> {
    vars.iter()
        .flat_map(|v| [syntax.word("--pass-env"), syntax.word(v)])
        .collect()
}

/// The edits that replace each moved value by the placeholder, and the values expected then.
fn placeholders(syntax: Syntax, moves: &[secrets::Move]) -> (Vec<Edit>, Vec<(String, String)>) {
    moves
        .iter()
        .map(|m| {
            (
                (m.span.clone(), syntax.string(PLACEHOLDER)),
                (m.secret.var.clone(), PLACEHOLDER.to_owned()),
            )
        })
        .unzip()
}

/// Wraps the stdio entries of `text` that `select` picks: their command becomes `warden`
/// and their args `["bridge", "--server", NAME, "--pass-env", VAR, ..., "--", COMMAND,
/// ARGS...]`, a `--pass-env` for each variable of the entry's `env`, so that a sandboxed
/// server (whose environment the bridge clears) still gets them.
pub fn wrap_text(
    dialect: Dialect,
    text: &str,
    warden: &str,
    select: &dyn Fn(&EntryRef) -> bool,
) -> Result<TextEdit, EditError> {
    wrap_text_with(dialect, text, warden, select, None)
}

/// [`wrap_text`], and with `secrets` the `env` values whose names look secret (and that
/// `secrets` lets go) are replaced by a placeholder and named by `--secret-env VAR`, also in
/// entries wrapped already.
pub fn wrap_text_with(
    dialect: Dialect,
    text: &str,
    warden: &str,
    select: &dyn Fn(&EntryRef) -> bool,
    secrets: Option<&MoveCheck<'_>>,
) -> Result<TextEdit, EditError> {
    let syntax = dialect.syntax();
    let step = |l: &Located, class: &Class| match (class, secrets) {
        (Class::Skip(reason), _) => Step::Skip(reason.clone()),
        (Class::WrappedRemote { .. }, _) => Step::Skip("already wrapped".to_owned()),
        (Class::Remote { url, headers }, _) => wrap_remote(dialect, text, warden, l, url, headers),
        (Class::Wrapped { .. }, None) => Step::Skip("already wrapped".to_owned()),
        (Class::Wrapped { .. }, Some(check)) => move_from_wrapped(syntax, text, l, class, check),
        (Class::Unwrapped { command, args }, _) => {
            let (moves, notes) = match secrets {
                Some(check) => secrets::plan(syntax, text, l, &l.id.name, check),
                None => (Vec::new(), Vec::new()),
            };
            let secret_env: Vec<String> = moves.iter().map(|m| m.secret.var.clone()).collect();
            let pass_env = pass_env_names(&l.env_keys, &secret_env);
            let Some((mut edits, record)) = wrap_entry(syntax, text, warden, l, &moves, &pass_env)
            else {
                return Step::Skip(
                    "has no args and Warden cannot tell where to add them; add `args = []` and run again"
                        .to_owned(),
                );
            };
            let (values, env) = placeholders(syntax, &moves);
            edits.extend(values);
            let class = Class::Wrapped {
                bridge: warden.to_owned(),
                server: Some(l.id.name.clone()),
                dashes: 0,
                secret_env,
                pass_env,
                command: command.clone(),
                args: args.clone(),
            };
            Step::Change(Box::new(Change {
                edits,
                intended: Intended { class, env },
                record: Some(record),
                moves,
                restored: Vec::new(),
                notes,
            }))
        }
    };
    edit_entries(dialect, text, select, &step)
}

/// The edits that wrap one unwrapped entry (`None`: Warden cannot tell where its args go).
fn wrap_entry(
    syntax: Syntax,
    text: &str,
    warden: &str,
    l: &Located,
    moves: &[secrets::Move],
    pass_env: &[String],
) -> Option<(Vec<Edit>, WrapRecord)> {
    let own = |rest: &str| -> Vec<String> {
        let mut v = vec![syntax.word("bridge")];
        if l.id.name.starts_with('-') {
            // `--server -x` would read `-x` as an option: one `--server=-x` argument.
            v.push(syntax.word(&format!("--server={}", l.id.name)));
        } else {
            v.push(syntax.word("--server"));
            v.push(syntax.word(&l.id.name));
        }
        v.extend(secret_args(syntax, moves));
        v.extend(pass_args(syntax, pass_env));
        v.push(syntax.word("--"));
        if !rest.is_empty() {
            v.push(rest.to_owned());
        }
        v
    };
    match &l.body {
        Body::Split {
            command,
            args,
            insert,
        } => {
            let raw = &text[command.span.clone()];
            let flow = !matches!(
                args,
                Some(Seq {
                    style: SeqStyle::Block { .. },
                    ..
                })
            );
            let (moved, command_raw) = if syntax.movable(raw, flow) {
                (raw.to_owned(), None)
            } else {
                (syntax.string(&command.value), Some(raw.to_owned()))
            };
            let new = own(&moved);
            let mut inserted_args = None;
            let mut edits = match (args, insert) {
                (Some(seq), _) => prepend(text, seq, &new),
                (None, Some(ins)) => {
                    let s = format!("{}[{}]", ins.prefix, new.join(", "));
                    inserted_args = Some(s.clone());
                    vec![(ins.at..ins.at, s)]
                }
                (None, None) => return None,
            };
            edits.push((command.span.clone(), syntax.string(warden)));
            let record = WrapRecord {
                entry: l.id.clone(),
                inserted_args,
                command_raw,
                command_value: command.value.clone(),
                original: None,
                wrapped: None,
            };
            Some((edits, record))
        }
        Body::Joined { command } => {
            let mut new = vec![syntax.string(warden)];
            new.extend(own(""));
            let record = WrapRecord {
                entry: l.id.clone(),
                inserted_args: None,
                command_raw: None,
                command_value: command
                    .items
                    .first()
                    .map(|s| s.value.clone())
                    .unwrap_or_default(),
                original: None,
                wrapped: None,
            };
            Some((prepend(text, command, &new), record))
        }
        Body::Skip(_) | Body::Remote(_) => None,
    }
}

/// Wraps a remote entry: its whole value becomes a bridged stdio entry (`command` warden,
/// `args` `bridge --server NAME --remote URL [--header NAME=ENVVAR]...`; opencode: one
/// `command` list, `type` `local`), its other members kept as they are; the original text
/// goes into the record, so unwrap puts back the very bytes.
fn wrap_remote(
    dialect: Dialect,
    text: &str,
    warden: &str,
    l: &Located,
    url: &str,
    headers: &[String],
) -> Step {
    let (Body::Remote(r), Some(whole)) = (&l.body, &l.whole) else {
        return Step::Keep;
    };
    let syntax = dialect.syntax();
    let args = remote::bridge_args(&l.id.name, url, headers, &[]);
    let list = |items: Vec<String>| {
        let words: Vec<String> = items.iter().map(|a| syntax.string(a)).collect();
        format!("[{}]", words.join(", "))
    };
    let mut members = Vec::new();
    if dialect == Dialect::Opencode {
        members.push("\"type\": \"local\"".to_owned());
        let mut all = vec![warden.to_owned()];
        all.extend(args);
        members.push(format!("\"command\": {}", list(all)));
    } else {
        if r.transport.is_some() {
            members.push("\"type\": \"stdio\"".to_owned());
        }
        members.push(format!("\"command\": {}", syntax.string(warden)));
        members.push(format!("\"args\": {}", list(args)));
    }
    let gone = |k: &str| REMOTE_KEYS.contains(&k);
    let new = render(whole, members, &gone);
    let span = &whole.span;
    let original = text[span.clone()].to_owned();
    let record = WrapRecord {
        entry: l.id.clone(),
        inserted_args: None,
        command_raw: None,
        command_value: url.to_owned(),
        original: Some(original),
        wrapped: Some(new.clone()),
    };
    let class = Class::WrappedRemote {
        bridge: warden.to_owned(),
        server: Some(l.id.name.clone()),
        url: url.to_owned(),
        headers: headers.to_vec(),
        secret_env: Vec::new(),
    };
    Step::Change(Box::new(Change {
        edits: vec![(span.clone(), new)],
        intended: Intended {
            class,
            env: Vec::new(),
        },
        record: Some(record),
        moves: Vec::new(),
        restored: Vec::new(),
        notes: Vec::new(),
    }))
}

/// The keys of a remote entry that its wrapped form no longer has.
pub(super) const REMOTE_KEYS: [&str; 7] = [
    "url",
    "serverUrl",
    "httpUrl",
    "uri",
    "type",
    "transportType",
    "headers",
];

/// An entry's object rewritten: `first`, then the members `gone` does not name, as they
/// were, in the object's layout.
pub(super) fn render(whole: &Whole, first: Vec<String>, gone: &dyn Fn(&str) -> bool) -> String {
    let mut members = first;
    members.extend(
        whole
            .members
            .iter()
            .filter(|(k, _)| !gone(k))
            .map(|(_, raw)| raw.clone()),
    );
    let between = if whole.sep.is_empty() {
        ", ".to_owned()
    } else {
        format!(",{}", whole.sep)
    };
    format!("{{{}{}{}}}", whole.sep, members.join(&between), whole.close)
}

/// Moves the secrets of an entry wrapped already: `--secret-env VAR` go right after
/// `bridge`, the values become the placeholder.
fn move_from_wrapped(
    syntax: Syntax,
    text: &str,
    l: &Located,
    class: &Class,
    check: &MoveCheck<'_>,
) -> Step {
    let Class::Wrapped {
        server, secret_env, ..
    } = class
    else {
        return Step::Keep;
    };
    let Some(server) = server else {
        return Step::Skip(
            "already wrapped, without --server: unwrap and wrap it again to move its secrets"
                .to_owned(),
        );
    };
    let (moves, notes) = secrets::plan(syntax, text, l, server, check);
    if moves.is_empty() {
        let mut why = String::from("already wrapped");
        for n in notes {
            why.push_str("; ");
            why.push_str(&n);
        }
        return Step::Skip(why);
    }
    let (seq, after_bridge) = match &l.body {
        Body::Split {
            args: Some(seq), ..
        } => (seq, 1),
        Body::Joined { command } => (command, 2),
        _ => return Step::Keep,
    };
    let mut edits = insert_before(text, seq, after_bridge, &secret_args(syntax, &moves));
    let (values, env) = placeholders(syntax, &moves);
    edits.extend(values);
    let mut class = class.clone();
    if let Class::Wrapped { secret_env: e, .. } = &mut class {
        *e = moves.iter().map(|m| m.secret.var.clone()).collect();
        e.extend(secret_env.iter().cloned());
    }
    Step::Change(Box::new(Change {
        edits,
        intended: Intended { class, env },
        record: None,
        moves,
        restored: Vec::new(),
        notes,
    }))
}
