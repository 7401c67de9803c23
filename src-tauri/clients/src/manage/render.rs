//! A new server entry in each client's own shape, written out as JSON, TOML or YAML.

use super::json::Layout;
use crate::dialect::{Dialect, Syntax};
use crate::model::ClientId;

/// A field's value.
#[derive(Debug, Clone)]
pub(super) enum V {
    Str(String),
    Bool(bool),
    Int(i64),
    List(Vec<String>),
    Map(Vec<(String, String)>),
}

/// The fields of a new entry of `client` (in a file of `dialect`) running `argv` with `env`,
/// in the order the client's own tools write them.
pub(super) fn fields(
    client: ClientId,
    dialect: Dialect,
    name: &str,
    argv: &[String],
    env: &[(String, String)],
) -> Vec<(&'static str, V)> {
    let (command, args) = match argv.split_first() {
        Some((c, a)) => (c.clone(), a.to_vec()),
        None => (String::new(), Vec::new()),
    };
    let env_map = V::Map(env.to_vec());
    let mut f: Vec<(&'static str, V)> = Vec::new();
    match dialect {
        Dialect::Opencode => {
            f.push(("type", V::Str("local".to_owned())));
            f.push(("command", V::List(argv.to_vec())));
            if !env.is_empty() {
                f.push(("environment", env_map));
            }
        }
        Dialect::Goose => {
            f.push(("name", V::Str(name.to_owned())));
            f.push(("type", V::Str("stdio".to_owned())));
            f.push(("cmd", V::Str(command)));
            f.push(("args", V::List(args)));
            f.push(("envs", env_map));
            f.push(("enabled", V::Bool(true)));
            f.push(("timeout", V::Int(300)));
        }
        Dialect::ContinueYaml => {
            f.push(("name", V::Str(name.to_owned())));
            f.push(("command", V::Str(command)));
            f.push(("args", V::List(args)));
            if !env.is_empty() {
                f.push(("env", env_map));
            }
        }
        _ => {
            if dialect == Dialect::Vscode || dialect == Dialect::ClaudeCodeUser {
                f.push(("type", V::Str("stdio".to_owned())));
            }
            f.push(("command", V::Str(command)));
            f.push(("args", V::List(args)));
            if !env.is_empty() || dialect == Dialect::ClaudeCodeUser {
                f.push(("env", env_map));
            }
            let _ = client;
        }
    }
    f
}

fn json_str(s: &str) -> String {
    Syntax::Json.string(s)
}

fn json_list(items: &[String]) -> String {
    let inner: Vec<String> = items.iter().map(|s| json_str(s)).collect();
    format!("[{}]", inner.join(", "))
}

/// `"name": {...}` for a JSON object laid out as `l` says.
pub(super) fn json_member(name: &str, fields: &[(&'static str, V)], l: &Layout) -> String {
    let key = json_str(name);
    if !l.multiline {
        let parts: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("{}: {}", json_str(k), json_value(v, None, l)))
            .collect();
        return format!("{key}: {{{}}}", parts.join(", "));
    }
    let inner = format!("{}{}", l.indent, l.unit);
    let parts: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{inner}{}: {}", json_str(k), json_value(v, Some(&inner), l)))
        .collect();
    format!(
        "{key}: {{{eol}{}{eol}{}}}",
        parts.join(&format!(",{}", l.eol)),
        l.indent,
        eol = l.eol
    )
}

fn json_value(v: &V, indent: Option<&str>, l: &Layout) -> String {
    match v {
        V::Str(s) => json_str(s),
        V::Bool(b) => b.to_string(),
        V::Int(i) => i.to_string(),
        V::List(items) => json_list(items),
        V::Map(m) if m.is_empty() => "{}".to_owned(),
        V::Map(m) => match indent {
            None => {
                let parts: Vec<String> = m
                    .iter()
                    .map(|(k, v)| format!("{}: {}", json_str(k), json_str(v)))
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            Some(ind) => {
                let inner = format!("{ind}{}", l.unit);
                let parts: Vec<String> = m
                    .iter()
                    .map(|(k, v)| format!("{inner}{}: {}", json_str(k), json_str(v)))
                    .collect();
                format!(
                    "{{{eol}{}{eol}{ind}}}",
                    parts.join(&format!(",{}", l.eol)),
                    eol = l.eol
                )
            }
        },
    }
}

/// A TOML key: bare when it can be.
pub(super) fn toml_key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        k.to_owned()
    } else {
        let mut s = String::from('"');
        for c in k.chars() {
            match c {
                '"' => s.push_str("\\\""),
                '\\' => s.push_str("\\\\"),
                c if c.is_control() => s.push_str(&format!("\\u{:04X}", c as u32)),
                c => s.push(c),
            }
        }
        s.push('"');
        s
    }
}

fn toml_value(v: &V) -> String {
    match v {
        V::Str(s) => Syntax::Toml.string(s),
        V::Bool(b) => b.to_string(),
        V::Int(i) => i.to_string(),
        V::List(items) => {
            let inner: Vec<String> = items.iter().map(|s| Syntax::Toml.string(s)).collect();
            format!("[{}]", inner.join(", "))
        }
        V::Map(m) => {
            let inner: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{} = {}", toml_key(k), Syntax::Toml.string(v)))
                .collect();
            if inner.is_empty() {
                "{}".to_owned()
            } else {
                format!("{{ {} }}", inner.join(", "))
            }
        }
    }
}

/// `[mcp_servers.NAME]` and its keys, each line ending with `eol`.
pub(super) fn toml_table(name: &str, fields: &[(&'static str, V)], eol: &str) -> String {
    let mut out = format!("[mcp_servers.{}]{eol}", toml_key(name));
    for (k, v) in fields {
        out.push_str(&format!("{} = {}{eol}", toml_key(k), toml_value(v)));
    }
    out
}

fn yaml_str(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '@'))
        && !s.starts_with(['-', '@', '.'])
        && s.parse::<f64>().is_err()
        && ![
            "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~",
        ]
        .contains(&s.to_ascii_lowercase().as_str());
    if plain {
        s.to_owned()
    } else {
        Syntax::Yaml.string(s)
    }
}

/// The lines of a new YAML entry: Goose's `NAME:` mapping at `indent`, or Continue's
/// `- name: NAME` list item with its dash at `indent`. `unit` indents what is under a key.
pub(super) fn yaml_entry(
    dialect: Dialect,
    name: &str,
    fields: &[(&'static str, V)],
    indent: &str,
    unit: &str,
    eol: &str,
) -> String {
    let (mut out, inner, rest): (String, String, &[(&'static str, V)]) = match dialect {
        Dialect::ContinueYaml => {
            let inner = format!("{indent}  ");
            let first = fields
                .first()
                .map(|(k, v)| format!("{indent}- {k}: {}{eol}", yaml_scalar(v)))
                .unwrap_or_default();
            (first, inner, fields.get(1..).unwrap_or_default())
        }
        _ => (
            format!("{indent}{}:{eol}", yaml_str(name)),
            format!("{indent}{unit}"),
            fields,
        ),
    };
    for (k, v) in rest {
        match v {
            V::List(items) if !items.is_empty() => {
                out.push_str(&format!("{inner}{k}:{eol}"));
                for i in items {
                    out.push_str(&format!("{inner}{unit}- {}{eol}", yaml_str(i)));
                }
            }
            V::Map(m) if !m.is_empty() => {
                out.push_str(&format!("{inner}{k}:{eol}"));
                for (mk, mv) in m {
                    out.push_str(&format!(
                        "{inner}{unit}{}: {}{eol}",
                        yaml_str(mk),
                        yaml_str(mv)
                    ));
                }
            }
            v => out.push_str(&format!("{inner}{k}: {}{eol}", yaml_scalar(v))),
        }
    }
    out
}

fn yaml_scalar(v: &V) -> String {
    match v {
        V::Str(s) => yaml_str(s),
        V::Bool(b) => b.to_string(),
        V::Int(i) => i.to_string(),
        V::List(_) => "[]".to_owned(),
        V::Map(_) => "{}".to_owned(),
    }
}
