//! Members of JSON objects and items of JSON lists, put in and taken out in the style around
//! them. Appending and then removing the last member (or item) gives back the same bytes.

use super::lines::{Edit, eol, indent_at, line_end, newline_between, starts_line, unit};
use crate::jsonc::{JArr, JObj};

/// Where a new member is written: its indentation (and the step of the file's indentation),
/// the line break, and whether members go on lines of their own.
pub(super) struct Layout {
    pub indent: String,
    pub unit: String,
    pub eol: &'static str,
    pub multiline: bool,
}

/// The first offset from `pos` that is not whitespace or a comment.
pub(super) fn skip_trivia(text: &str, mut pos: usize) -> usize {
    let b = text.as_bytes();
    while pos < b.len() {
        match b[pos] {
            b' ' | b'\t' | b'\r' | b'\n' => pos += 1,
            b'/' if b.get(pos + 1) == Some(&b'/') => {
                pos = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
            }
            b'/' if b.get(pos + 1) == Some(&b'*') => {
                pos = text[pos + 2..]
                    .find("*/")
                    .map_or(text.len(), |i| pos + 2 + i + 2);
            }
            _ => break,
        }
    }
    pos
}

/// The comma after a value ending at `end`, if any.
fn comma_after(text: &str, end: usize) -> Option<usize> {
    let p = skip_trivia(text, end);
    (text.as_bytes().get(p) == Some(&b',')).then_some(p)
}

/// One member or item: where it starts and ends, and the comma after it.
struct Slot {
    start: usize,
    end: usize,
    comma: Option<usize>,
}

fn member_slots(text: &str, obj: &JObj) -> Vec<Slot> {
    obj.members
        .iter()
        .map(|m| {
            let end = m.value.span().end;
            Slot {
                start: m.key_span.start,
                end,
                comma: comma_after(text, end),
            }
        })
        .collect()
}

fn item_slots(text: &str, arr: &JArr) -> Vec<Slot> {
    arr.items
        .iter()
        .map(|v| {
            let s = v.span();
            Slot {
                start: s.start,
                end: s.end,
                comma: comma_after(text, s.end),
            }
        })
        .collect()
}

/// Where the removal of a slot that follows the token ending at `prev` begins: the end of
/// that token's line when the slot starts a later line (comments on lines of their own
/// above it go with it), else right after the token.
fn anchor(text: &str, prev: usize, start: usize) -> usize {
    if newline_between(text, prev, start) {
        line_end(text, prev)
    } else {
        prev
    }
}

/// Edits that take slot `i` out of a container opening at `open` (the offset of `{`/`[`).
fn remove_slot(text: &str, open: usize, slots: &[Slot], i: usize) -> Option<Vec<Edit>> {
    let s = slots.get(i)?;
    let last = i + 1 == slots.len();
    let prev_end = if i == 0 {
        open + 1
    } else {
        slots[i - 1].comma? + 1
    };
    if !last {
        let next = &slots[i + 1];
        let after = s.comma? + 1;
        if i == 0 && !newline_between(text, open, s.start) {
            // `{"a": 1, "b": 2}`: from the member to the next one.
            let to = if newline_between(text, after, next.start) {
                line_end(text, after)
            } else {
                next.start
            };
            return Some(vec![(s.start..to, String::new())]);
        }
        let from = anchor(text, prev_end, s.start);
        let to = anchor(text, after, next.start);
        return Some(vec![(from..to, String::new())]);
    }
    let from = anchor(text, prev_end, s.start);
    match (s.comma, i) {
        (Some(c), _) => Some(vec![(from..c + 1, String::new())]),
        (None, 0) => Some(vec![(from..s.end, String::new())]),
        (None, _) => {
            let c = slots[i - 1].comma?;
            Some(vec![
                (c..c + 1, String::new()),
                (from..s.end, String::new()),
            ])
        }
    }
}

/// Edits that add `new` (rendered for the returned layout) as the last slot of a container
/// spanning `open..close+1`.
fn append_slot(
    text: &str,
    open: usize,
    close: usize,
    slots: &[Slot],
    render: &dyn Fn(&Layout) -> String,
) -> Vec<Edit> {
    let eol = eol(text);
    let unit = unit(text);
    let Some(last) = slots.last() else {
        let interior = &text[open + 1..close];
        let outer = indent_at(text, open).to_owned();
        let layout = Layout {
            indent: format!("{outer}{unit}"),
            unit,
            eol,
            multiline: true,
        };
        let new = render(&layout);
        if interior.contains('\n') {
            let at = line_end(text, open);
            return vec![(at..at, format!("{eol}{}{new}", layout.indent))];
        }
        let close_indent = if starts_line(text, close) {
            indent_at(text, close).to_owned()
        } else {
            outer
        };
        return vec![(
            open + 1..close,
            format!("{eol}{}{new}{eol}{close_indent}", layout.indent),
        )];
    };
    let multiline = starts_line(text, last.start);
    let layout = Layout {
        indent: if multiline {
            indent_at(text, last.start).to_owned()
        } else {
            String::new()
        },
        unit,
        eol,
        multiline,
    };
    let new = render(&layout);
    match last.comma {
        // A trailing comma: the new one gets one too.
        Some(c) if newline_between(text, c, close) => {
            let at = line_end(text, c);
            vec![(at..at, format!("{eol}{}{new},", layout.indent))]
        }
        Some(c) => vec![(c + 1..c + 1, format!(" {new},"))],
        None if newline_between(text, last.end, close) => {
            let at = line_end(text, last.end);
            vec![
                (last.end..last.end, ",".to_owned()),
                (at..at, format!("{eol}{}{new}", layout.indent)),
            ]
        }
        None => vec![(last.end..last.end, format!(", {new}"))],
    }
}

pub(super) fn remove_member(text: &str, obj: &JObj, i: usize) -> Option<Vec<Edit>> {
    remove_slot(text, obj.span.start, &member_slots(text, obj), i)
}

pub(super) fn append_member(
    text: &str,
    obj: &JObj,
    render: &dyn Fn(&Layout) -> String,
) -> Vec<Edit> {
    let close = obj.span.end - 1;
    append_slot(
        text,
        obj.span.start,
        close,
        &member_slots(text, obj),
        render,
    )
}

pub(super) fn remove_item(text: &str, arr: &JArr, i: usize) -> Option<Vec<Edit>> {
    remove_slot(text, arr.span.start, &item_slots(text, arr), i)
}

pub(super) fn append_item(text: &str, arr: &JArr, literal: &str) -> Vec<Edit> {
    let close = arr.span.end - 1;
    let slots = item_slots(text, arr);
    if slots.is_empty() && !text[arr.span.start + 1..close].contains('\n') {
        // `[]` stays on one line: `["x"]`.
        return vec![(arr.span.start + 1..close, literal.to_owned())];
    }
    append_slot(text, arr.span.start, close, &slots, &|_| literal.to_owned())
}

/// The object at `path` (member names) under `root`.
pub(super) fn object_at<'a>(root: &'a JObj, path: &[String]) -> Option<&'a JObj> {
    let mut cur = root;
    for key in path {
        cur = cur.get(key)?.as_obj()?;
    }
    Some(cur)
}
