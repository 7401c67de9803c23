//! Secrets out of debug logs.
//!
//! Debug logging writes whole messages, and messages carry credentials: `env` blocks of server
//! configs, `Authorization` headers, API keys in tool arguments. Before a message is written,
//! the value of every key that names a secret, every `env` entry, and every bearer token is
//! replaced by `"[redacted]"`, and so is every value the bridge put into the server's
//! environment from the keychain, wherever it appears.

use std::sync::OnceLock;

use serde_json::Value;

const REDACTED: &str = "[redacted]";

/// Values known to be secret in this process (the bridge's `--secret-env` values).
static KNOWN: OnceLock<Vec<String>> = OnceLock::new();

/// Values shorter than this are not searched for (they would mask ordinary words).
const SHORTEST_KNOWN: usize = 4;

/// Redacts these values wherever they appear from now on (set once per process).
pub fn hide_values(values: Vec<String>) {
    let values = values
        .into_iter()
        .filter(|v| v.len() >= SHORTEST_KNOWN)
        .collect();
    let _ = KNOWN.set(values);
}

/// `s` with every known secret value replaced.
fn hide_known(s: &mut String) {
    for v in KNOWN.get().into_iter().flatten() {
        hide(s, v);
    }
}

/// `s` with each of these values replaced, but for those too short to search for.
pub fn hide_env_values(s: &mut String, env: &[(String, String)]) {
    for (_, v) in env.iter().filter(|(_, v)| v.len() >= SHORTEST_KNOWN) {
        hide(s, v);
    }
}

fn hide(s: &mut String, value: &str) {
    if s.contains(value) {
        *s = s.replace(value, REDACTED);
    }
}

/// Key names whose values are secrets (case-insensitive substring match).
const SECRET_KEYS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "key",
    "authorization",
    "cookie",
    "credential",
    "auth",
];

fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    SECRET_KEYS.iter().any(|s| key.contains(s))
}

/// A redacted copy of one message line. A line that is not JSON is kept only as its size.
pub fn redact_line(line: &[u8]) -> Value {
    match serde_json::from_slice::<Value>(line) {
        Ok(mut v) => {
            redact(&mut v);
            v
        }
        Err(_) => Value::String(format!("[{} bytes that are not JSON]", line.len())),
    }
}

/// Redacts `v` in place: string values of secret-named keys, every `env` value, bearer
/// tokens anywhere in a string.
pub fn redact(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                if key.eq_ignore_ascii_case("env")
                    && let Value::Object(env) = value
                {
                    env.values_mut().for_each(|e| *e = Value::from(REDACTED));
                    continue;
                }
                if is_secret_key(key) && value.is_string() {
                    *value = Value::from(REDACTED);
                } else {
                    redact(value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        Value::String(s) => {
            hide_known(s);
            if let Some(at) = s.to_ascii_lowercase().find("bearer ") {
                s.truncate(at + "bearer ".len());
                s.push_str(REDACTED);
            }
        }
        _ => {}
    }
}

/// Redacts free text (a server's stderr) line by line: bearer tokens, and the value after
/// `=` or `:` of a word that names a secret (`API_KEY=sk-1`, `password: x`).
pub fn redact_text(text: &str) -> String {
    let mut text = text.to_owned();
    hide_known(&mut text);
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let lower = line.to_ascii_lowercase();
        let secret_at = lower
            .find("bearer ")
            .map(|at| at + "bearer ".len())
            .or_else(|| {
                lower.char_indices().find_map(|(i, c)| {
                    if c != '=' && c != ':' {
                        return None;
                    }
                    let word = lower[..i]
                        .trim_end()
                        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                        .next()
                        .unwrap_or("");
                    (!word.is_empty() && is_secret_key(word)).then_some(i + 1)
                })
            });
        match secret_at {
            Some(at) => {
                out.push_str(&line[..at]);
                out.push_str(if at < line.len() && line[..at].ends_with(' ') {
                    ""
                } else {
                    " "
                });
                out.push_str(REDACTED);
                if line.ends_with('\n') {
                    out.push('\n');
                }
            }
            None => out.push_str(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_are_redacted_and_the_rest_kept() {
        let line = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "deploy",
            "arguments": {"api_key": "sk-123", "apiKey": "x", "Password": "hunter2", "query": "keep me",
                          "headers": {"Authorization": "Bearer abc.def"}, "note": "use bearer xyz please",
                          "env": {"GITHUB_TOKEN": "ghp_1", "PATH": "/usr/bin"}, "tokens": 5000},
            "_meta": {"progressToken": 3}}}).to_string();
        let v = redact_line(line.as_bytes());
        let args = &v["params"]["arguments"];
        for k in ["api_key", "apiKey", "Password"] {
            assert_eq!(args[k], "[redacted]", "{k}");
        }
        assert_eq!(args["headers"]["Authorization"], "[redacted]");
        assert_eq!(args["note"], "use bearer [redacted]");
        assert_eq!(args["env"]["GITHUB_TOKEN"], "[redacted]");
        assert_eq!(args["env"]["PATH"], "[redacted]");
        assert_eq!(args["query"], "keep me");
        assert_eq!(args["tokens"], 5000, "numbers are not secrets");
        assert_eq!(v["params"]["_meta"]["progressToken"], 3);
        assert_eq!(v["params"]["name"], "deploy");
        assert_eq!(v["method"], "tools/call");
        assert!(!v.to_string().contains("hunter2") && !v.to_string().contains("sk-123"));
        assert_eq!(
            redact_line(b"not json"),
            json!("[8 bytes that are not JSON]")
        );
    }

    #[test]
    fn secrets_in_free_text_are_redacted() {
        let text = "starting\nGITHUB_TOKEN=ghp_123 loaded\nAuthorization: Bearer abc\npassword: hunter2\nread 3 files: ok\n";
        let out = redact_text(text);
        assert_eq!(
            out,
            "starting\nGITHUB_TOKEN= [redacted]\nAuthorization: Bearer [redacted]\npassword: [redacted]\nread 3 files: ok\n"
        );
    }
}
