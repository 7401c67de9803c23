//! Which `env` values of an entry wrap moves into the OS keychain (`--move-secrets`), and how
//! unwrap writes them back exactly.
//!
//! A moved value is replaced in the file by [`PLACEHOLDER`] (the key stays, so the entry keeps
//! its shape and every format needs only a one-value edit), and the bridge gets
//! `--secret-env VAR`: it reads the value from the keychain (service `mcp-warden`, account
//! `SERVER/VAR`) and puts it into the server's environment. The ledger keeps how the literal
//! was written (quoted, plain or single-quoted), never the value, so unwrap restores the
//! original bytes.

use serde::{Deserialize, Serialize};

use super::dialect::Syntax;
use super::doc::{EntryRef, Located};

/// What a moved value reads in the client's file.
pub const PLACEHOLDER: &str = "moved to the OS keychain by MCP Warden";

/// Words of an environment variable's name that mark its value as a secret.
const WORDS: &[&str] = &[
    "KEY",
    "KEYS",
    "TOKEN",
    "TOKENS",
    "SECRET",
    "SECRETS",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "PAT",
    "CREDENTIAL",
    "CREDENTIALS",
];
/// Parts that mark it wherever they are in the name (`apiKey`, `ACCESSTOKEN`).
const PARTS: &[&str] = &["APIKEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"];

/// Whether an environment variable's name says its value is a secret.
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    PARTS.iter().any(|p| upper.contains(p))
        || upper
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| WORDS.contains(&w))
}

/// How a value was written in the file, so that unwrap writes the same bytes back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Literal {
    /// As Warden quotes strings in this format (JSON's `"..."`).
    #[default]
    Quoted,
    /// YAML's plain (unquoted) scalar.
    Plain,
    /// TOML's literal string or YAML's single-quoted scalar: `'...'`.
    Single,
}

impl Literal {
    pub(super) fn render(self, syntax: Syntax, value: &str) -> String {
        match self {
            Literal::Quoted => syntax.string(value),
            Literal::Plain => value.to_owned(),
            Literal::Single => format!("'{value}'"),
        }
    }

    fn of(syntax: Syntax, raw: &str, value: &str) -> Option<Literal> {
        [Literal::Quoted, Literal::Plain, Literal::Single]
            .into_iter()
            .find(|l| l.render(syntax, value) == raw)
    }
}

/// What unwrap needs to write a moved value back exactly (kept in the ledger; no value).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretRecord {
    pub entry: EntryRef,
    pub var: String,
    pub literal: Literal,
}

/// A value wrap moves: it goes into the keychain before the file is written. Never logged
/// or serialized.
#[derive(Clone, PartialEq, Eq)]
pub struct MovedSecret {
    pub server: String,
    pub var: String,
    pub value: String,
}

impl std::fmt::Debug for MovedSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MovedSecret({}/{})", self.server, self.var)
    }
}

/// Decides whether a value may go to the keychain as `server`/`var` (`Err`: why it stays,
/// e.g. the keychain already holds another value under that name).
pub type MoveCheck<'a> = dyn Fn(&str, &str, &str) -> Result<(), String> + 'a;

/// One value of an entry that wrap moves.
pub(super) struct Move {
    pub span: std::ops::Range<usize>,
    pub secret: MovedSecret,
    pub record: SecretRecord,
}

/// The values of `l`'s `env` that move to the keychain for server `server`, and why others
/// whose names look secret stay.
pub(super) fn plan(
    syntax: Syntax,
    text: &str,
    l: &Located,
    server: &str,
    check: &MoveCheck<'_>,
) -> (Vec<Move>, Vec<String>) {
    let mut moves = Vec::new();
    let mut stay = Vec::new();
    for (var, scalar) in &l.env {
        if !looks_secret(var) || scalar.value == PLACEHOLDER || scalar.value.is_empty() {
            continue;
        }
        let why = if l.env_keys.iter().filter(|k| *k == var).count() > 1 {
            Err("it is set twice in this entry".to_owned())
        } else if scalar.value.starts_with('$') || scalar.value.contains("${") {
            Err("it refers to another variable, not a value".to_owned())
        } else if let Some(literal) = Literal::of(syntax, &text[scalar.span.clone()], &scalar.value)
        {
            check(server, var, &scalar.value).map(|()| literal)
        } else {
            Err("it is written with escapes Warden cannot restore byte for byte".to_owned())
        };
        match why {
            Ok(literal) => moves.push(Move {
                span: scalar.span.clone(),
                secret: MovedSecret {
                    server: server.to_owned(),
                    var: var.clone(),
                    value: scalar.value.clone(),
                },
                record: SecretRecord {
                    entry: l.id.clone(),
                    var: var.clone(),
                    literal,
                },
            }),
            Err(why) => stay.push(format!("{var} stays in the file: {why}")),
        }
    }
    (moves, stay)
}

/// `text` with every moved value replaced by `********` (diffs shown or printed), as written
/// and as a quoted string writes it (`a\"b` for `a"b`).
pub fn mask(text: &str, secrets: &[MovedSecret]) -> String {
    let mut out = text.to_owned();
    for s in secrets.iter().filter(|s| !s.value.is_empty()) {
        let quoted = serde_json::to_string(&s.value).unwrap_or_default();
        let escaped = &quoted[1..quoted.len().saturating_sub(1).max(1)];
        for form in [escaped, s.value.as_str()] {
            if !form.is_empty() {
                out = out.replace(form, "********");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_hides_a_value_also_in_its_escaped_form() {
        let moved = [MovedSecret {
            server: "s".into(),
            var: "K".into(),
            value: r#"p"w\d"#.into(),
        }];
        let diff = r#"-  "K": "p\"w\\d"
+  "K": "moved""#;
        let masked = mask(diff, &moved);
        assert_eq!(masked, "-  \"K\": \"********\"\n+  \"K\": \"moved\"");
    }

    #[test]
    fn names_that_look_secret() {
        for n in [
            "GITHUB_PERSONAL_ACCESS_TOKEN",
            "OPENAI_API_KEY",
            "apiKey",
            "DB_PASSWORD",
            "GITLAB_PAT",
            "AWS_SECRET_ACCESS_KEY",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ] {
            assert!(looks_secret(n), "{n}");
        }
        for n in [
            "PATH",
            "KEYBOARD_LAYOUT",
            "NODE_ENV",
            "DEBUG",
            "PATTERN",
            "HOME",
        ] {
            assert!(!looks_secret(n), "{n}");
        }
    }

    #[test]
    fn literals_round_trip_only_when_exact() {
        assert_eq!(
            Literal::of(Syntax::Json, "\"abc\"", "abc"),
            Some(Literal::Quoted)
        );
        assert_eq!(
            Literal::of(Syntax::Yaml, "abc", "abc"),
            Some(Literal::Plain)
        );
        assert_eq!(
            Literal::of(Syntax::Toml, "'abc'", "abc"),
            Some(Literal::Single)
        );
        assert_eq!(Literal::of(Syntax::Json, "\"\\u0061bc\"", "abc"), None);
    }
}
