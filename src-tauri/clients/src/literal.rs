//! How Warden writes a string into a file of each syntax ([`Syntax`]'s `string`, `word` and
//! `movable`): used by the edits of wrap and unwrap (`edit/`) and by the values moved to and
//! from the keychain (`secrets.rs`).

use super::dialect::Syntax;

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
    pub(super) fn word(self, s: &str) -> String {
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
    pub(super) fn movable(self, raw: &str, flow: bool) -> bool {
        match self {
            Syntax::Json | Syntax::Toml => true,
            Syntax::Yaml => {
                let quoted = raw.starts_with('"') || raw.starts_with('\'');
                !raw.contains('\n') && (quoted || !flow || !raw.contains([',', '[', ']', '{', '}']))
            }
        }
    }
}
