//! Line arithmetic on a text: where lines start and end, their indentation, and which lines
//! are blank or only a comment. Shared by the JSON, TOML and YAML edits of `manage/`.

use std::ops::Range;

pub(super) use crate::edit::splice::{Edit, apply};

/// The edits that turn the result of `edits` on `text` back into `text`: ranges in the new
/// text, with the old bytes they replace.
pub(super) fn inverse(text: &str, edits: &[Edit]) -> Vec<Edit> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|(r, _)| (r.start, r.end));
    let mut shift: isize = 0;
    let mut out = Vec::new();
    for (r, s) in sorted {
        let start = (r.start as isize + shift) as usize;
        out.push((start..start + s.len(), text[r.clone()].to_owned()));
        shift += s.len() as isize - (r.end - r.start) as isize;
    }
    out
}

/// The start of the line holding `pos`.
pub(super) fn line_start(text: &str, pos: usize) -> usize {
    text[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// The end of the line holding `pos`, before its line break.
pub(super) fn line_end(text: &str, pos: usize) -> usize {
    match text[pos..].find('\n') {
        Some(i) if text[..pos + i].ends_with('\r') => pos + i - 1,
        Some(i) => pos + i,
        None => text.len(),
    }
}

/// The start of the line after the one holding `pos` (the end of the text on the last line).
pub(super) fn next_line(text: &str, pos: usize) -> usize {
    text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1)
}

/// The file's line break: its first one, `\n` when it has none.
pub(super) fn eol(text: &str) -> &'static str {
    match text.find('\n') {
        Some(i) if text[..i].ends_with('\r') => "\r\n",
        _ => "\n",
    }
}

/// The spaces and tabs at the start of the line holding `pos`.
pub(super) fn indent_at(text: &str, pos: usize) -> &str {
    let ls = line_start(text, pos);
    let rest = &text[ls..];
    let n = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    &rest[..n]
}

/// Whether only spaces and tabs come before `pos` on its line.
pub(super) fn starts_line(text: &str, pos: usize) -> bool {
    text[line_start(text, pos)..pos]
        .chars()
        .all(|c| c == ' ' || c == '\t')
}

/// Whether a line break lies between `a` and `b`.
pub(super) fn newline_between(text: &str, a: usize, b: usize) -> bool {
    text[a.min(b)..a.max(b)].contains('\n')
}

/// The lines of `text` as ranges (without their line break), with where the next starts.
pub(super) fn lines(text: &str) -> Vec<(Range<usize>, usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let end = line_end(text, pos);
        let next = next_line(text, pos);
        out.push((pos..end, next));
        pos = next;
    }
    out
}

/// Whether a line holds only whitespace.
pub(super) fn blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// Whether a line holds only a `#` comment (TOML, YAML).
pub(super) fn hash_comment(line: &str) -> bool {
    line.trim_start().starts_with('#')
}

/// The width of a line's indentation, in characters.
pub(super) fn indent_width(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

/// The indentation step the file uses: the first indented line's indentation (a tab, or
/// 2 or 4 spaces), two spaces when nothing is indented.
pub(super) fn unit(text: &str) -> String {
    for (r, _) in lines(text) {
        let line = &text[r];
        if blank(line) {
            continue;
        }
        let w = indent_width(line);
        if w > 0 {
            let ind = &line[..w];
            if ind.starts_with('\t') {
                return "\t".to_owned();
            }
            return " ".repeat(w.min(8));
        }
    }
    "  ".to_owned()
}

/// Where taking out `start..end` begins so that a text without a final line break keeps
/// none: when `end` is the end of such a text, the line break before `start` goes too.
pub(super) fn unterminated_start(text: &str, start: usize, end: usize) -> usize {
    if end < text.len() || text.ends_with('\n') || start == 0 {
        return start;
    }
    let before = &text[..start];
    if before.ends_with("\r\n") {
        start - 2
    } else if before.ends_with('\n') {
        start - 1
    } else {
        start
    }
}

/// Text `new` (ending with a line break) inserted at `at`: at the end of a text without a
/// final line break, the break goes first instead, so that the text still ends without one.
pub(super) fn insert_lines(text: &str, at: usize, new: &str, eol: &str) -> String {
    if at == text.len() && !text.is_empty() && !text.ends_with('\n') {
        format!("{eol}{}", new.strip_suffix(eol).unwrap_or(new))
    } else {
        new.to_owned()
    }
}

/// FNV-1a of `text`, hex: what the ledger keeps of a file to tell whether it changed since.
pub(super) fn fingerprint(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}-{}", text.len())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn inverse_undoes_edits() {
        let text = "abcdef";
        let edits = vec![(1..2, "XYZ".to_owned()), (4..4, "--".to_owned())];
        let new = apply(text, edits.clone()).unwrap();
        assert_eq!(new, "aXYZcd--ef");
        assert_eq!(apply(&new, inverse(text, &edits)).unwrap(), text);
    }

    #[test]
    fn ranges_that_do_not_fit_are_refused_not_a_panic() {
        let text = "{\"n\": \"é\"}";
        let inside = text.find('é').unwrap() + 1;
        for (edits, why) in [
            (vec![(inside..inside, "x".to_owned())], "cuts a character"),
            (vec![(2..text.len() + 1, String::new())], "not within"),
            (
                vec![(Range { start: 3, end: 2 }, String::new())],
                "not within",
            ),
            (
                vec![(1..4, String::new()), (2..5, String::new())],
                "overlaps",
            ),
        ] {
            let err = apply(text, edits).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
    }
}
