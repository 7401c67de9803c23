//! The text edits of wrap and unwrap, the same for every format.
//!
//! Wrapping an entry is three byte-level changes, all invertible from the wrapped text:
//! - the command value's bytes become the warden path;
//! - the original command's literal (its exact bytes) and the bridge's own arguments are
//!   inserted before the first argument, separated like the existing arguments are;
//! - when the entry had no `args`, one is added right after the command.
//!
//! Unwrapping moves the literal back and removes exactly what was inserted, so a file that
//! nothing else touched gets its original bytes back. After every edit the new text is
//! parsed again and each entry compared with what was intended; any difference refuses the
//! edit.

use std::fmt;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::dialect::{self, Dialect, Syntax};
use super::doc::{Body, DocError, EntryRef, Located, Scalar, Seq, SeqStyle};
use super::model::{EntryState, ServerEntry};
use super::secrets::{self, MoveCheck, MovedSecret, PLACEHOLDER, SecretRecord};

/// What wrap did to one entry beyond the reversible core, so that unwrap can be exact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WrapRecord {
    pub entry: EntryRef,
    /// The entry had no `args`; this exact text was inserted to add one.
    pub inserted_args: Option<String>,
    /// The command literal had to be re-quoted to move into the list; its original text.
    pub command_raw: Option<String>,
    pub command_value: String,
}

/// The result of a text edit.
#[derive(Debug, Clone)]
pub struct TextEdit {
    pub text: String,
    pub changed: Vec<EntryRef>,
    pub skipped: Vec<(EntryRef, String)>,
    /// For wrap: what unwrap needs to restore these entries exactly.
    pub records: Vec<WrapRecord>,
    /// For wrap: the values to put into the keychain before the text is written.
    pub moved: Vec<MovedSecret>,
    /// For wrap: how the moved values were written (for unwrap).
    pub secret_records: Vec<SecretRecord>,
    /// For unwrap: the values written back (to mask them in diffs).
    pub restored: Vec<MovedSecret>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    /// The file does not parse.
    Parse(DocError),
    /// The edit did not read back as intended (a bug or a layout Warden cannot edit).
    Internal(String),
}

impl From<DocError> for EditError {
    fn from(e: DocError) -> Self {
        EditError::Parse(e)
    }
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EditError::Parse(d) => d.fmt(f),
            EditError::Internal(s) => f.write_str(s),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Class {
    Skip(String),
    Unwrapped {
        command: String,
        args: Vec<String>,
    },
    Wrapped {
        bridge: String,
        server: Option<String>,
        /// Index of `--` in the args list (Split) or in the command list (Joined).
        dashes: usize,
        /// The `--secret-env` variables, in order.
        secret_env: Vec<String>,
        command: String,
        args: Vec<String>,
    },
}

/// `warden` or `warden.exe`, whatever the directory.
pub(crate) fn is_warden(command: &str) -> bool {
    let name = command.rsplit(['/', '\\']).next().unwrap_or(command);
    name.eq_ignore_ascii_case("warden") || name.eq_ignore_ascii_case("warden.exe")
}

fn values(items: &[Scalar]) -> Vec<String> {
    items.iter().map(|s| s.value.clone()).collect()
}

/// The bridge's arguments before `--` that wrap and unwrap read.
struct BridgeArgs {
    server: Option<String>,
    dashes: usize,
    secret_env: Vec<String>,
}

/// `bridge [--server NAME] [--secret-env VAR]... -- COMMAND [ARGS]` starting at `items[0]`.
fn bridge_args(items: &[String]) -> Option<BridgeArgs> {
    if items.first().map(String::as_str) != Some("bridge") {
        return None;
    }
    let dashes = items.iter().position(|a| a == "--")?;
    if dashes + 1 >= items.len() {
        return None;
    }
    let mut server = None;
    let mut secret_env = Vec::new();
    for (i, a) in items[..dashes].iter().enumerate() {
        let next = || items.get(i + 1).filter(|_| i + 1 < dashes).cloned();
        if a == "--server" {
            server = next();
        } else if let Some(s) = a.strip_prefix("--server=") {
            server = Some(s.to_owned());
        } else if a == "--secret-env" {
            secret_env.extend(next());
        } else if let Some(s) = a.strip_prefix("--secret-env=") {
            secret_env.push(s.to_owned());
        }
    }
    Some(BridgeArgs {
        server,
        dashes,
        secret_env,
    })
}

fn classify(body: &Body) -> Class {
    match body {
        Body::Skip(r) => Class::Skip(r.clone()),
        Body::Split { command, args, .. } => {
            let argv = args.as_ref().map(|a| values(&a.items)).unwrap_or_default();
            if !is_warden(&command.value) {
                return Class::Unwrapped {
                    command: command.value.clone(),
                    args: argv,
                };
            }
            match bridge_args(&argv) {
                Some(b) => Class::Wrapped {
                    bridge: command.value.clone(),
                    server: b.server,
                    dashes: b.dashes,
                    secret_env: b.secret_env,
                    command: argv[b.dashes + 1].clone(),
                    args: argv[b.dashes + 2..].to_vec(),
                },
                None => Class::Skip("runs warden itself, not a server to wrap".to_owned()),
            }
        }
        Body::Joined { command } => {
            let argv = values(&command.items);
            let Some((first, rest)) = argv.split_first() else {
                return Class::Skip("the command list is empty".to_owned());
            };
            if !is_warden(first) {
                return Class::Unwrapped {
                    command: first.clone(),
                    args: rest.to_vec(),
                };
            }
            match bridge_args(rest) {
                Some(b) => Class::Wrapped {
                    bridge: first.clone(),
                    server: b.server,
                    dashes: b.dashes + 1,
                    secret_env: b.secret_env,
                    command: rest[b.dashes + 1].clone(),
                    args: rest[b.dashes + 2..].to_vec(),
                },
                None => Class::Skip("runs warden itself, not a server to wrap".to_owned()),
            }
        }
    }
}

/// A stdio server as its client starts it, for probes: the name the bridge reports (its
/// `--server`, else the entry's), the original command, the `env` strings, and the variables
/// the bridge reads from the keychain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub name: String,
    pub command: Vec<String>,
    pub env: Vec<(String, String)>,
    pub secret_env: Vec<String>,
    /// The entry's `cwd`, as written (a relative one is the client's workspace's).
    pub cwd: Option<String>,
    /// From a project's file (the clients run those only in projects the user trusts).
    pub project: bool,
}

/// The stdio servers of a file as their client starts them.
pub(crate) fn launches(dialect: Dialect, text: &str) -> Result<Vec<Launch>, DocError> {
    Ok(dialect::locate(dialect, text)?
        .into_iter()
        .filter_map(|l| {
            let (name, command, args, secret_env) = match classify(&l.body) {
                Class::Skip(_) => return None,
                Class::Unwrapped { command, args } => (l.id.name, command, args, Vec::new()),
                Class::Wrapped {
                    server,
                    command,
                    args,
                    secret_env,
                    ..
                } => (server.unwrap_or(l.id.name), command, args, secret_env),
            };
            Some(Launch {
                name,
                command: std::iter::once(command).chain(args).collect(),
                env: l.env.into_iter().map(|(k, v)| (k, v.value)).collect(),
                secret_env,
                cwd: l.cwd,
                project: false,
            })
        })
        .collect())
}

/// The entries of a file, as listed.
pub(crate) fn entries(dialect: Dialect, text: &str) -> Result<Vec<ServerEntry>, DocError> {
    Ok(dialect::locate(dialect, text)?
        .into_iter()
        .map(|l| {
            let state = match classify(&l.body) {
                Class::Skip(reason) => EntryState::Skipped { reason },
                Class::Unwrapped { command, args } => EntryState::Unwrapped { command, args },
                Class::Wrapped {
                    bridge,
                    server,
                    command,
                    args,
                    ..
                } => EntryState::Wrapped {
                    bridge,
                    server,
                    command,
                    args,
                },
            };
            let risks = match &state {
                EntryState::Unwrapped { command, args }
                | EntryState::Wrapped { command, args, .. } => super::risk::risks(command, args),
                EntryState::Skipped { .. } => Vec::new(),
            };
            ServerEntry {
                name: l.id.name,
                scope: l.id.scope,
                state,
                env_keys: l.env_keys,
                risks,
                reverted: false,
            }
        })
        .collect())
}

// ---------------------------------------------------------------- literals

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

fn toml_string(s: &str) -> String {
    // A literal string keeps Windows paths readable; it cannot hold ' or control chars.
    if s.contains('\\') && !s.contains('\'') && !s.chars().any(char::is_control) {
        return format!("'{s}'");
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

const YAML_WORDS: &[&str] = &[
    "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~",
];

impl Syntax {
    pub(super) fn string(self, s: &str) -> String {
        match self {
            Syntax::Json | Syntax::Yaml => json_string(s),
            Syntax::Toml => toml_string(s),
        }
    }

    /// One of Warden's own arguments (`bridge`, `--server`, `--`, the server name).
    fn word(self, s: &str) -> String {
        let plain_ok = self == Syntax::Yaml
            && !s.is_empty()
            && (s.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) || s.starts_with("--"))
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            && !YAML_WORDS.contains(&s.to_ascii_lowercase().as_str());
        if plain_ok {
            s.to_owned()
        } else {
            self.string(s)
        }
    }

    /// Whether a command literal can move as-is into a list of the given style.
    fn movable(self, raw: &str, flow: bool) -> bool {
        match self {
            Syntax::Json | Syntax::Toml => true,
            Syntax::Yaml => {
                let quoted = raw.starts_with('"') || raw.starts_with('\'');
                !raw.contains('\n') && (quoted || !flow || !raw.contains([',', '[', ']', '{', '}']))
            }
        }
    }
}

// ---------------------------------------------------------------- edits

type Edit = (Range<usize>, String);

fn apply(text: &str, mut edits: Vec<Edit>) -> Result<String, EditError> {
    edits.sort_by_key(|(r, _)| (r.start, r.end));
    let mut out = String::with_capacity(text.len() + 256);
    let mut pos = 0;
    for (r, s) in &edits {
        if r.start < pos || r.end > text.len() || r.start > r.end {
            return Err(EditError::Internal("overlapping edits".to_owned()));
        }
        out.push_str(&text[pos..r.start]);
        out.push_str(s);
        pos = r.end;
    }
    out.push_str(&text[pos..]);
    Ok(out)
}

/// The separator between list items, copied from the list itself.
fn flow_separator(text: &str, seq: &Seq, open: usize) -> String {
    if let [a, b, ..] = seq.items.as_slice() {
        let between = &text[a.span.end..b.span.start];
        if between.trim_matches([' ', '\t', '\r', '\n']) == "," {
            return between.to_owned();
        }
    }
    if let Some(first) = seq.items.first() {
        let lead = &text[open..first.span.start];
        if let Some(nl) = lead.rfind('\n') {
            let indent = &lead[nl + 1..];
            if indent.chars().all(|c| c == ' ' || c == '\t') {
                let eol = if lead[..nl].ends_with('\r') {
                    "\r\n"
                } else {
                    "\n"
                };
                return format!(",{eol}{indent}");
            }
        }
    }
    ", ".to_owned()
}

/// The line break after `pos`, or the file's first one when `pos` is on the last line
/// (a CRLF file without a final newline keeps getting CRLF).
fn eol_after(text: &str, pos: usize) -> &'static str {
    let nl = text[pos..]
        .find('\n')
        .map(|i| pos + i)
        .or_else(|| text.find('\n'));
    match nl {
        Some(i) if text[..i].ends_with('\r') => "\r\n",
        _ => "\n",
    }
}

/// Edits that put `new` (literals) before item `at` of `seq` (an empty flow list: into it).
fn insert_before(text: &str, seq: &Seq, at: usize, new: &[String]) -> Vec<Edit> {
    match &seq.style {
        SeqStyle::Flow { open } => match seq.items.get(at) {
            None => vec![(*open..*open, new.join(", "))],
            Some(item) => {
                let sep = flow_separator(text, seq, *open);
                let mut s = new.join(&sep);
                s.push_str(&sep);
                vec![(item.span.start..item.span.start, s)]
            }
        },
        SeqStyle::Block { line_starts, .. } => {
            let (Some(&ls), Some(item)) = (line_starts.get(at), seq.items.get(at)) else {
                return Vec::new();
            };
            let dash = &text[ls..item.span.start];
            let eol = eol_after(text, item.span.start);
            let s: String = new.iter().map(|n| format!("{dash}{n}{eol}")).collect();
            vec![(ls..ls, s)]
        }
    }
}

/// Edits that put `new` (literals) before the first item of `seq`.
fn prepend(text: &str, seq: &Seq, new: &[String]) -> Vec<Edit> {
    insert_before(text, seq, 0, new)
}

/// Edits that remove items `0..keep_from` of `seq` (`keep_from` may be `len`).
fn remove_head(text: &str, seq: &Seq, keep_from: usize) -> Vec<Edit> {
    let items = &seq.items;
    let Some(first) = items.first() else {
        return Vec::new();
    };
    match &seq.style {
        SeqStyle::Flow { .. } => match items.get(keep_from) {
            Some(next) => vec![(first.span.start..next.span.start, String::new())],
            None => {
                let last = &items[items.len() - 1];
                vec![(first.span.start..last.span.end, String::new())]
            }
        },
        SeqStyle::Block {
            line_starts,
            value_start,
        } => match line_starts.get(keep_from) {
            Some(&next) => vec![(line_starts[0]..next, String::new())],
            None => {
                let last = &items[items.len() - 1];
                let _ = text;
                vec![(*value_start..last.span.end, " []".to_owned())]
            }
        },
    }
}

fn summaries(located: &[Located]) -> Vec<(EntryRef, Class)> {
    located
        .iter()
        .map(|l| (l.id.clone(), classify(&l.body)))
        .collect()
}

/// What an edit must leave a changed entry as: its class and some of its `env` values.
struct Intended {
    class: Class,
    env: Vec<(String, String)>,
}

/// Parses `new` again and checks that every entry is what the edit intended: `expect`
/// gives what the changed entries must be now; all others must be unchanged.
fn verify(
    dialect: Dialect,
    before: &[(EntryRef, Class)],
    new: &str,
    expect: &[(EntryRef, Intended)],
) -> Result<(), EditError> {
    let located = dialect::locate(dialect, new)
        .map_err(|e| EditError::Internal(format!("the edited text does not parse: {e}")))?;
    let after = summaries(&located);
    if after.len() != before.len() {
        return Err(EditError::Internal(format!(
            "{} entries before, {} after",
            before.len(),
            after.len()
        )));
    }
    for (((id, old), (new_id, new_class)), l) in before.iter().zip(&after).zip(&located) {
        if id != new_id {
            return Err(EditError::Internal(format!("entry {id} became {new_id}")));
        }
        let intended = expect.iter().find(|(e, _)| e == id).map(|(_, i)| i);
        let want = intended.map_or(old, |i| &i.class);
        let same = match (want, new_class) {
            // The wrapped class carries the position of `--`; compare the rest.
            (
                Class::Wrapped {
                    bridge: b1,
                    server: s1,
                    secret_env: e1,
                    command: c1,
                    args: a1,
                    ..
                },
                Class::Wrapped {
                    bridge: b2,
                    server: s2,
                    secret_env: e2,
                    command: c2,
                    args: a2,
                    ..
                },
            ) => b1 == b2 && s1 == s2 && e1 == e2 && c1 == c2 && a1 == a2,
            (a, b) => a == b,
        };
        if !same {
            return Err(EditError::Internal(format!(
                "entry {id} reads back as {new_class:?}, expected {want:?}"
            )));
        }
        for (var, value) in intended.map_or(&[][..], |i| &i.env) {
            let got = l.env.iter().find(|(k, _)| k == var);
            if got.map(|(_, s)| &s.value) != Some(value) {
                // Never the value itself: it may be a secret.
                return Err(EditError::Internal(format!(
                    "entry {id}: env {var} does not read back as intended"
                )));
            }
        }
    }
    Ok(())
}

/// How wrap or unwrap changes one entry.
struct Change {
    edits: Vec<Edit>,
    intended: Intended,
    /// For wrap: what unwrap needs to undo the edits exactly.
    record: Option<WrapRecord>,
    /// For wrap: the values moved to the keychain.
    moves: Vec<secrets::Move>,
    /// For unwrap: the values written back.
    restored: Vec<MovedSecret>,
    /// Why some values whose names look secret stay in the file.
    notes: Vec<String>,
}

/// What the per-entry edit of wrap or unwrap makes of one selected entry.
enum Step {
    /// Left as it is, silently.
    Keep,
    /// Left as it is, for this reason (reported).
    Skip(String),
    Change(Box<Change>),
}

/// The driver of wrap and unwrap: locates the entries of `text`, asks `step` what to do with
/// each one `select` picks, applies the edits, and checks that the result reads back as
/// intended.
fn edit_entries(
    dialect: Dialect,
    text: &str,
    select: &dyn Fn(&EntryRef) -> bool,
    step: &dyn Fn(&Located, &Class) -> Step,
) -> Result<TextEdit, EditError> {
    let located = dialect::locate(dialect, text)?;
    let before = summaries(&located);
    let mut edits: Vec<Edit> = Vec::new();
    let mut expect = Vec::new();
    let mut result = TextEdit {
        text: String::new(),
        changed: Vec::new(),
        skipped: Vec::new(),
        records: Vec::new(),
        moved: Vec::new(),
        secret_records: Vec::new(),
        restored: Vec::new(),
    };
    for (l, (_, class)) in located.iter().zip(&before) {
        if !select(&l.id) {
            continue;
        }
        match step(l, class) {
            Step::Keep => {}
            Step::Skip(reason) => result.skipped.push((l.id.clone(), reason)),
            Step::Change(c) => {
                edits.extend(c.edits);
                result.records.extend(c.record);
                for m in c.moves {
                    result.moved.push(m.secret);
                    result.secret_records.push(m.record);
                }
                result.restored.extend(c.restored);
                let notes = c.notes.into_iter().map(|n| (l.id.clone(), n));
                result.skipped.extend(notes);
                result.changed.push(l.id.clone());
                expect.push((l.id.clone(), c.intended));
            }
        }
    }
    result.text = apply(text, edits)?;
    if !result.changed.is_empty() {
        verify(dialect, &before, &result.text, &expect)?;
    }
    Ok(result)
}

/// The `--secret-env VAR` arguments for `moves`.
fn secret_args(syntax: Syntax, moves: &[secrets::Move]) -> Vec<String> {
    moves
        .iter()
        .flat_map(|m| [syntax.word("--secret-env"), syntax.word(&m.secret.var)])
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
/// and their args `["bridge", "--server", NAME, "--", COMMAND, ARGS...]`.
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
        (Class::Wrapped { .. }, None) => Step::Skip("already wrapped".to_owned()),
        (Class::Wrapped { .. }, Some(check)) => move_from_wrapped(syntax, text, l, class, check),
        (Class::Unwrapped { command, args }, _) => {
            let (moves, notes) = match secrets {
                Some(check) => secrets::plan(syntax, text, l, &l.id.name, check),
                None => (Vec::new(), Vec::new()),
            };
            let Some((mut edits, record)) = wrap_entry(syntax, text, warden, l, &moves) else {
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
                secret_env: moves.iter().map(|m| m.secret.var.clone()).collect(),
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
            };
            Some((prepend(text, command, &new), record))
        }
        Body::Skip(_) => None,
    }
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
        Class::Unwrapped { .. } => Step::Skip("not wrapped".to_owned()),
        Class::Skip(reason) => Step::Skip(reason.clone()),
    };
    edit_entries(dialect, text, select, &step)
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

/// Where an entry's editable values are (for tests that check that nothing else changed).
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntrySpans {
    pub entry: EntryRef,
    /// The command value (absent for opencode's single list).
    pub command: Option<Range<usize>>,
    /// The args list, or opencode's command list.
    pub args: Option<Range<usize>>,
    /// Where wrap adds `args` when the entry has none.
    pub insert_at: Option<usize>,
}

#[doc(hidden)]
pub fn entry_spans(dialect: Dialect, text: &str) -> Result<Vec<EntrySpans>, DocError> {
    Ok(dialect::locate(dialect, text)?
        .into_iter()
        .map(|l| {
            let (command, args, insert_at) = match &l.body {
                Body::Skip(_) => (None, None, None),
                Body::Split {
                    command,
                    args,
                    insert,
                } => (
                    Some(command.span.clone()),
                    args.as_ref().map(|a| a.span.clone()),
                    insert.as_ref().map(|i| i.at),
                ),
                Body::Joined { command } => (None, Some(command.span.clone()), None),
            };
            EntrySpans {
                entry: l.id,
                command,
                args,
                insert_at,
            }
        })
        .collect())
}
