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

/// `bridge [--server NAME] [...] -- COMMAND [ARGS]` starting at `items[0]`.
fn bridge_args(items: &[String]) -> Option<(Option<String>, usize)> {
    if items.first().map(String::as_str) != Some("bridge") {
        return None;
    }
    let dashes = items.iter().position(|a| a == "--")?;
    if dashes + 1 >= items.len() {
        return None;
    }
    let mut server = None;
    for (i, a) in items[..dashes].iter().enumerate() {
        if a == "--server" {
            server = items.get(i + 1).filter(|_| i + 1 < dashes).cloned();
        } else if let Some(s) = a.strip_prefix("--server=") {
            server = Some(s.to_owned());
        }
    }
    Some((server, dashes))
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
                Some((server, dashes)) => Class::Wrapped {
                    bridge: command.value.clone(),
                    server,
                    dashes,
                    command: argv[dashes + 1].clone(),
                    args: argv[dashes + 2..].to_vec(),
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
                Some((server, dashes)) => Class::Wrapped {
                    bridge: first.clone(),
                    server,
                    dashes: dashes + 1,
                    command: rest[dashes + 1].clone(),
                    args: rest[dashes + 2..].to_vec(),
                },
                None => Class::Skip("runs warden itself, not a server to wrap".to_owned()),
            }
        }
    }
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
            ServerEntry {
                name: l.id.name,
                scope: l.id.scope,
                state,
                env_keys: l.env_keys,
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
    fn string(self, s: &str) -> String {
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

/// Edits that put `new` (literals) before the first item of `seq`.
fn prepend(text: &str, seq: &Seq, new: &[String]) -> Vec<Edit> {
    match &seq.style {
        SeqStyle::Flow { open } => match seq.items.first() {
            None => vec![(*open..*open, new.join(", "))],
            Some(first) => {
                let sep = flow_separator(text, seq, *open);
                let mut s = new.join(&sep);
                s.push_str(&sep);
                vec![(first.span.start..first.span.start, s)]
            }
        },
        SeqStyle::Block { line_starts, .. } => {
            let (Some(&ls), Some(first)) = (line_starts.first(), seq.items.first()) else {
                return Vec::new();
            };
            let dash = &text[ls..first.span.start];
            let eol = eol_after(text, first.span.start);
            let s: String = new.iter().map(|n| format!("{dash}{n}{eol}")).collect();
            vec![(ls..ls, s)]
        }
    }
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

/// Parses `new` again and checks that every entry is what the edit intended: `expect`
/// gives the new class of the changed entries; all others must be unchanged.
fn verify(
    dialect: Dialect,
    before: &[(EntryRef, Class)],
    new: &str,
    expect: &dyn Fn(&EntryRef, &Class) -> Option<Class>,
) -> Result<(), EditError> {
    let after = dialect::locate(dialect, new)
        .map_err(|e| EditError::Internal(format!("the edited text does not parse: {e}")))?;
    let after = summaries(&after);
    if after.len() != before.len() {
        return Err(EditError::Internal(format!(
            "{} entries before, {} after",
            before.len(),
            after.len()
        )));
    }
    for ((id, old), (new_id, new_class)) in before.iter().zip(&after) {
        if id != new_id {
            return Err(EditError::Internal(format!("entry {id} became {new_id}")));
        }
        let want = expect(id, old).unwrap_or_else(|| old.clone());
        let same = match (&want, new_class) {
            // The wrapped class carries the position of `--`; compare the rest.
            (
                Class::Wrapped {
                    bridge: b1,
                    server: s1,
                    command: c1,
                    args: a1,
                    ..
                },
                Class::Wrapped {
                    bridge: b2,
                    server: s2,
                    command: c2,
                    args: a2,
                    ..
                },
            ) => b1 == b2 && s1 == s2 && c1 == c2 && a1 == a2,
            (a, b) => a == b,
        };
        if !same {
            return Err(EditError::Internal(format!(
                "entry {id} reads back as {new_class:?}, expected {want:?}"
            )));
        }
    }
    Ok(())
}

/// What the per-entry edit of wrap or unwrap makes of one selected entry.
enum Step {
    /// Left as it is, silently.
    Keep,
    /// Left as it is, for this reason (reported).
    Skip(String),
    /// Changed by these edits; for wrap, with what unwrap needs to undo them exactly.
    Change(Vec<Edit>, Option<WrapRecord>),
}

/// The driver of wrap and unwrap: locates the entries of `text`, asks `step` what to do with
/// each one `select` picks, applies the edits, and checks that the result reads back as
/// intended (`intended`: the class a changed entry must have now).
fn edit_entries(
    dialect: Dialect,
    text: &str,
    select: &dyn Fn(&EntryRef) -> bool,
    step: &dyn Fn(&Located, &Class) -> Step,
    intended: &dyn Fn(&EntryRef, &Class) -> Class,
) -> Result<TextEdit, EditError> {
    let located = dialect::locate(dialect, text)?;
    let before = summaries(&located);
    let mut edits: Vec<Edit> = Vec::new();
    let mut result = TextEdit {
        text: String::new(),
        changed: Vec::new(),
        skipped: Vec::new(),
        records: Vec::new(),
    };
    for (l, (_, class)) in located.iter().zip(&before) {
        if !select(&l.id) {
            continue;
        }
        match step(l, class) {
            Step::Keep => {}
            Step::Skip(reason) => result.skipped.push((l.id.clone(), reason)),
            Step::Change(entry_edits, record) => {
                edits.extend(entry_edits);
                result.records.extend(record);
                result.changed.push(l.id.clone());
            }
        }
    }
    result.text = apply(text, edits)?;
    if !result.changed.is_empty() {
        let changed = &result.changed;
        verify(dialect, &before, &result.text, &|id, old| {
            changed.contains(id).then(|| intended(id, old))
        })?;
    }
    Ok(result)
}

/// Wraps the stdio entries of `text` that `select` picks: their command becomes `warden`
/// and their args `["bridge", "--server", NAME, "--", COMMAND, ARGS...]`.
pub fn wrap_text(
    dialect: Dialect,
    text: &str,
    warden: &str,
    select: &dyn Fn(&EntryRef) -> bool,
) -> Result<TextEdit, EditError> {
    let step = |l: &Located, class: &Class| match class {
        Class::Skip(reason) => Step::Skip(reason.clone()),
        Class::Wrapped { .. } => Step::Skip("already wrapped".to_owned()),
        Class::Unwrapped { .. } => wrap_entry(dialect.syntax(), text, warden, l),
    };
    edit_entries(dialect, text, select, &step, &|id, old| match old {
        Class::Unwrapped { command, args } => Class::Wrapped {
            bridge: warden.to_owned(),
            server: Some(id.name.clone()),
            dashes: 0,
            command: command.clone(),
            args: args.clone(),
        },
        other => other.clone(),
    })
}

/// The edits that wrap one unwrapped entry.
fn wrap_entry(syntax: Syntax, text: &str, warden: &str, l: &Located) -> Step {
    let own = |rest: &str| -> Vec<String> {
        let mut v = vec![syntax.word("bridge")];
        if l.id.name.starts_with('-') {
            // `--server -x` would read `-x` as an option: one `--server=-x` argument.
            v.push(syntax.word(&format!("--server={}", l.id.name)));
        } else {
            v.push(syntax.word("--server"));
            v.push(syntax.word(&l.id.name));
        }
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
                (None, None) => {
                    return Step::Skip(
                        "has no args and Warden cannot tell where to add them; add `args = []` and run again"
                            .to_owned(),
                    );
                }
            };
            edits.push((command.span.clone(), syntax.string(warden)));
            let record = WrapRecord {
                entry: l.id.clone(),
                inserted_args,
                command_raw,
                command_value: command.value.clone(),
            };
            Step::Change(edits, Some(record))
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
            Step::Change(prepend(text, command, &new), Some(record))
        }
        Body::Skip(_) => Step::Keep,
    }
}

/// Unwraps the wrapped entries of `text` that `select` picks, restoring their original
/// command and args. `records` (from [`wrap_text`]) make the restore exact where wrap had
/// to add `args` or re-quote the command.
pub fn unwrap_text(
    dialect: Dialect,
    text: &str,
    select: &dyn Fn(&EntryRef) -> bool,
    records: &[WrapRecord],
) -> Result<TextEdit, EditError> {
    let step = |l: &Located, class: &Class| match class {
        Class::Wrapped { dashes, .. } => {
            let record = records.iter().rev().find(|r| r.entry == l.id);
            unwrap_entry(text, l, *dashes, record)
        }
        Class::Unwrapped { .. } => Step::Skip("not wrapped".to_owned()),
        Class::Skip(reason) => Step::Skip(reason.clone()),
    };
    edit_entries(dialect, text, select, &step, &|_, old| match old {
        Class::Wrapped { command, args, .. } => Class::Unwrapped {
            command: command.clone(),
            args: args.clone(),
        },
        other => other.clone(),
    })
}

/// The edits that unwrap one wrapped entry (`dashes`: where its `--` is).
fn unwrap_entry(text: &str, l: &Located, dashes: usize, record: Option<&WrapRecord>) -> Step {
    match &l.body {
        Body::Split {
            command,
            args: Some(seq),
            insert,
        } => {
            let Some(cmd_item) = seq.items.get(dashes + 1) else {
                return Step::Keep;
            };
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
            Step::Change(edits, None)
        }
        Body::Joined { command } => Step::Change(remove_head(text, command, dashes + 1), None),
        _ => Step::Keep,
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
