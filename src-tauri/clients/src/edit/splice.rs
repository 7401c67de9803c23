//! The byte edits of a text: ranges replaced, and items put into or taken out of a list in
//! the list's own style (flow or block, its separators and line breaks).

use std::ops::Range;

use crate::doc::{Seq, SeqStyle};

pub(crate) type Edit = (Range<usize>, String);

/// `text` with `edits` made. Refused, with the reason, when two of them overlap or one does
/// not fit the text: past its end, reversed, or cutting a character in two (the undo
/// ranges of ledger records come from disk, so they are checked, never trusted).
pub(crate) fn apply(text: &str, mut edits: Vec<Edit>) -> Result<String, String> {
    edits.sort_by_key(|(r, _)| (r.start, r.end));
    let mut out = String::with_capacity(text.len() + 256);
    let mut pos = 0;
    for (r, s) in &edits {
        if r.start > r.end || r.end > text.len() {
            return Err(format!(
                "the range {}..{} is not within the text's {} bytes",
                r.start,
                r.end,
                text.len()
            ));
        }
        if !text.is_char_boundary(r.start) || !text.is_char_boundary(r.end) {
            return Err(format!(
                "the range {}..{} cuts a character in two",
                r.start, r.end
            ));
        }
        if r.start < pos {
            return Err(format!("the range {}..{} overlaps another", r.start, r.end));
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
pub(super) fn insert_before(text: &str, seq: &Seq, at: usize, new: &[String]) -> Vec<Edit> {
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
pub(super) fn prepend(text: &str, seq: &Seq, new: &[String]) -> Vec<Edit> {
    insert_before(text, seq, 0, new)
}

/// Edits that remove items `0..keep_from` of `seq` (`keep_from` may be `len`).
pub(super) fn remove_head(text: &str, seq: &Seq, keep_from: usize) -> Vec<Edit> {
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
