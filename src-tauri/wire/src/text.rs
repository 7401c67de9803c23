//! One rule for showing text Warden did not write: what a registry document, a client's config
//! file, a server's stdout or stderr, or a tool definition says. The CLI prints through it, the
//! desktop notifications go through it ([`warden_supervisor::desktop::notification_text`]), and the window
//! has its twin (`ui/src/lib/format.ts`); both are tested against the same table of cases
//! (`tests/fixtures/text/printable.json`).
//!
//! - Control characters (C0, DEL, C1) and the characters that reorder or break text — bidi
//!   embeddings, overrides and isolates (U+202A–202E, U+2066–2069), the directional marks
//!   (U+200E, U+200F, U+061C), and the line and paragraph separators (U+2028, U+2029) — are
//!   shown escaped (`\x1b`, `\u{202e}`): such text cannot move the cursor, retitle the
//!   terminal, ring its bell, or show a command other than the one it holds.
//! - In a single-line field ([`line`]), a line break is shown as `⏎` (and a tab as `\t`), so a
//!   value cannot start a line of its own that looks like one of Warden's. [`lines`] keeps line
//!   breaks and tabs, for text shown as a block of its own (a server's stderr, a diff).
//! - A shell argument ([`arg`], [`argv`]) is shown bare only when it holds nothing but
//!   `A-Za-z0-9@%+=:,./_-`; else in POSIX single quotes (escaped as above), so an argument that
//!   holds a space or a line break shows as one.

use std::fmt::Write as _;

/// `println!` of one line that holds text Warden did not write, through [`line`]: whatever the
/// values interpolated hold, it prints one line, with no control or bidi character.
#[macro_export]
macro_rules! say {
    () => {
        println!()
    };
    ($($arg:tt)*) => {
        println!("{}", $crate::text::line(&format!($($arg)*)))
    };
}

/// Shown for a line break inside a single-line field.
pub const NEWLINE: char = '⏎';

/// Whether `c` reorders text or breaks a line without being a control character.
pub fn is_format(c: char) -> bool {
    matches!(
        c,
        '\u{061C}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2066}'..='\u{2069}'
    )
}

fn escape(text: &str, keep_lines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // A CRLF is one line break.
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' if keep_lines => out.push('\n'),
            '\n' => out.push(NEWLINE),
            '\t' if keep_lines => out.push('\t'),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0'..='\u{1F}' | '\u{7F}' => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if c.is_control() || is_format(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` as one line: line breaks shown as `⏎`, control and bidi characters escaped.
pub fn line(text: &str) -> String {
    escape(text, false)
}

/// `text` with its line breaks (and tabs) kept, control and bidi characters escaped.
pub fn lines(text: &str) -> String {
    escape(text, true)
}

/// Whether `a` is shown as it is in a command line.
fn is_safe(a: &str) -> bool {
    !a.is_empty()
        && a.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"@%+=:,./_-".contains(&b))
}

/// One shell argument: bare when it holds only safe characters, else single-quoted (and
/// escaped as [`line`] does).
pub fn arg(a: &str) -> String {
    if is_safe(a) {
        a.to_owned()
    } else {
        format!("'{}'", line(&a.replace('\'', r"'\''")))
    }
}

/// A command line: each argument as [`arg`] shows it, separated by spaces.
pub fn argv<S: AsRef<str>>(argv: &[S]) -> String {
    argv.iter()
        .map(|a| arg(a.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::Value;

    /// The cases both this module and the window's twin are tested against.
    fn cases(kind: &str) -> Vec<(Value, String)> {
        let all: Value =
            serde_json::from_str(include_str!("../tests/fixtures/text/printable.json")).unwrap();
        all[kind]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c[0].clone(), c[1].as_str().unwrap().to_owned()))
            .collect()
    }

    #[test]
    fn the_shared_cases_hold() {
        for (kind, f) in [
            ("line", line as fn(&str) -> String),
            ("lines", lines),
            ("arg", arg),
        ] {
            for (input, want) in cases(kind) {
                let input = input.as_str().unwrap();
                assert_eq!(f(input), want, "{kind}({input:?})");
            }
        }
        for (input, want) in cases("argv") {
            let input: Vec<String> = serde_json::from_value(input).unwrap();
            assert_eq!(argv(&input), want, "argv({input:?})");
        }
    }

    #[test]
    fn nothing_shown_holds_a_control_or_bidi_character() {
        let every: String = (0..0x3000u32).filter_map(char::from_u32).collect();
        for shown in [line(&every), arg(&every)] {
            assert!(
                !shown.chars().any(|c| c.is_control() || is_format(c)),
                "{shown:?}"
            );
        }
        let kept = lines(&every);
        assert!(
            !kept
                .chars()
                .any(|c| (c.is_control() && c != '\n' && c != '\t') || is_format(c))
        );
    }
}
