//! The driver of wrap and unwrap (`edit_entries`): locates the entries of a text, has the
//! per-entry edit say what to do with each selected one, applies the edits, and checks that
//! the text reads back as intended; and the types of its result.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::classify::{Class, summaries};
use super::splice::{Edit, apply};
use crate::dialect::{self, Dialect};
use crate::doc::{DocError, EntryRef, Located};
use crate::secrets::{self, MovedSecret, SecretRecord};

/// What wrap did to one entry beyond the reversible core, so that unwrap can be exact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WrapRecord {
    pub entry: EntryRef,
    /// The entry had no `args`; this exact text was inserted to add one.
    pub inserted_args: Option<String>,
    /// The command literal had to be re-quoted to move into the list; its original text.
    pub command_raw: Option<String>,
    pub command_value: String,
    /// A remote entry, rewritten whole: its original value's exact text (a remote entry
    /// with a header written in the file is never wrapped, so no secret is kept here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    /// And the text wrap wrote in its place: unwrap puts the original back only over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrapped: Option<String>,
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

/// What an edit must leave a changed entry as: its class and some of its `env` values.
pub(super) struct Intended {
    pub(super) class: Class,
    pub(super) env: Vec<(String, String)>,
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
                    pass_env: p1,
                    command: c1,
                    args: a1,
                    ..
                },
                Class::Wrapped {
                    bridge: b2,
                    server: s2,
                    secret_env: e2,
                    pass_env: p2,
                    command: c2,
                    args: a2,
                    ..
                },
            ) => b1 == b2 && s1 == s2 && e1 == e2 && p1 == p2 && c1 == c2 && a1 == a2,
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
pub(super) struct Change {
    pub(super) edits: Vec<Edit>,
    pub(super) intended: Intended,
    /// For wrap: what unwrap needs to undo the edits exactly.
    pub(super) record: Option<WrapRecord>,
    /// For wrap: the values moved to the keychain.
    pub(super) moves: Vec<secrets::Move>,
    /// For unwrap: the values written back.
    pub(super) restored: Vec<MovedSecret>,
    /// Why some values whose names look secret stay in the file.
    pub(super) notes: Vec<String>,
}

/// What the per-entry edit of wrap or unwrap makes of one selected entry.
pub(super) enum Step {
    /// Left as it is, silently.
    Keep,
    /// Left as it is, for this reason (reported).
    Skip(String),
    Change(Box<Change>),
}

/// The driver of wrap and unwrap: locates the entries of `text`, asks `step` what to do with
/// each one `select` picks, applies the edits, and checks that the result reads back as
/// intended.
pub(super) fn edit_entries(
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
    result.text = apply(text, edits).map_err(EditError::Internal)?;
    if !result.changed.is_empty() {
        verify(dialect, &before, &result.text, &expect)?;
    }
    Ok(result)
}
