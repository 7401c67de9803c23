//! Where the servers are in each client's file, and what an entry looks like.
//!
//! Each locator reads a file with spans and describes every server entry as a [`Located`]:
//! the spans of its command and args (or why it is skipped), and where `args` would go if
//! it is missing. The edit engine (`edit/`) works on that description only.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::doc::{Body, DocError, EntryRef, Insert, Located, Scalar, Seq, SeqStyle, Switch};
use super::jsonc::{self, JObj, JVal};
use super::yaml::{self, YMap, YNode, YScalar};

/// The shape of a client's config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dialect {
    /// JSON with an `mcpServers` object (Claude Desktop, Cursor, Cline, Windsurf, Kiro,
    /// LM Studio, Gemini CLI, Claude Code's `.mcp.json`, Continue's JSON drop-ins).
    McpServers,
    /// Claude Code's `~/.claude.json`: `mcpServers` and `projects[path].mcpServers`.
    ClaudeCodeUser,
    /// VS Code's `mcp.json`: `servers`.
    Vscode,
    /// Zed's `settings.json`: `context_servers`.
    Zed,
    /// opencode: `mcp`, with command and args in one `command` list.
    Opencode,
    /// Codex's TOML: `[mcp_servers.NAME]`.
    Codex,
    /// Continue's YAML: an `mcpServers` list of entries with a `name`.
    ContinueYaml,
    /// Goose's YAML: an `extensions` map, with `cmd` instead of `command`.
    Goose,
}

/// The syntax of a file, as the client reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Strict JSON (Warden also reads comments, but never adds any).
    Json,
    /// JSON with comments and trailing commas.
    Jsonc,
    Toml,
    Yaml,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Json => "JSON",
            Format::Jsonc => "JSONC",
            Format::Toml => "TOML",
            Format::Yaml => "YAML",
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Syntax {
    Json,
    Toml,
    Yaml,
}

impl Dialect {
    pub(crate) fn syntax(self) -> Syntax {
        match self {
            Dialect::Codex => Syntax::Toml,
            Dialect::ContinueYaml | Dialect::Goose => Syntax::Yaml,
            _ => Syntax::Json,
        }
    }

    /// The key that holds the servers, for messages and docs.
    pub fn servers_key(self) -> &'static str {
        match self {
            Dialect::McpServers | Dialect::ClaudeCodeUser | Dialect::ContinueYaml => "mcpServers",
            Dialect::Vscode => "servers",
            Dialect::Zed => "context_servers",
            Dialect::Opencode => "mcp",
            Dialect::Codex => "mcp_servers",
            Dialect::Goose => "extensions",
        }
    }
}

/// Every server entry of `text`, in file order.
pub(crate) fn locate(dialect: Dialect, text: &str) -> Result<Vec<Located>, DocError> {
    match dialect.syntax() {
        Syntax::Json => locate_json(dialect, text),
        Syntax::Toml => locate_toml(text),
        Syntax::Yaml => locate_yaml(dialect, text),
    }
}

const REMOTE_TYPES: &[&str] = &[
    "sse",
    "http",
    "streamableHttp",
    "streamable-http",
    "streamable_http",
    "ws",
    "websocket",
    "remote",
];

fn remote_reason(t: &str) -> String {
    format!("remote server (type {t:?}); only stdio servers are wrapped")
}

// ---------------------------------------------------------------- JSON

fn locate_json(dialect: Dialect, text: &str) -> Result<Vec<Located>, DocError> {
    let Some(root) = jsonc::parse(text)? else {
        return Ok(Vec::new());
    };
    let JVal::Obj(root) = &root else {
        return Err(DocError::at(
            text,
            root.span().start,
            format!("the top level is {}, not an object", root.kind()),
        ));
    };
    // Each server list with the names a list elsewhere in the file turns off.
    let mut groups: Vec<(Vec<String>, &JObj, Vec<String>)> = Vec::new();
    fn servers<'a>(text: &str, obj: &'a JObj, key: &str) -> Result<Option<&'a JObj>, DocError> {
        match obj.get(key) {
            None | Some(JVal::Other(_)) => Ok(None), // absent or null: no servers
            Some(JVal::Obj(o)) => Ok(Some(o)),
            Some(v) => Err(DocError::at(
                text,
                v.span().start,
                format!("`{key}` is {}, not an object of servers", v.kind()),
            )),
        }
    }
    let gemini_off = match dialect {
        Dialect::McpServers => gemini_excluded(root),
        _ => Vec::new(),
    };
    if let Some(o) = servers(text, root, dialect.servers_key())? {
        groups.push((Vec::new(), o, gemini_off));
    }
    if dialect == Dialect::ClaudeCodeUser {
        if let Some(JVal::Obj(projects)) = root.get("projects") {
            for p in &projects.members {
                if let JVal::Obj(project) = &p.value {
                    if let Some(o) = servers(text, project, "mcpServers")? {
                        let off = project
                            .get("disabledMcpServers")
                            .map(json_strings)
                            .unwrap_or_default();
                        groups.push((vec!["projects".to_owned(), p.key.clone()], o, off));
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for (scope, obj, off) in groups {
        for (i, m) in obj.members.iter().enumerate() {
            let id = EntryRef {
                scope: scope.clone(),
                name: m.key.clone(),
            };
            let shadowed = obj.members[i + 1..].iter().any(|later| later.key == m.key);
            let mut located = json_entry(dialect, text, id, &m.value);
            if off.contains(&m.key) {
                match dialect {
                    Dialect::ClaudeCodeUser => located.switch.claude_disabled = true,
                    _ => located.switch.gemini_excluded = true,
                }
            }
            if shadowed {
                located.body = Body::Skip(
                    "duplicate entry: the client uses the later one with this name".to_owned(),
                );
            }
            out.push(located);
        }
    }
    Ok(out)
}

/// The strings of a JSON list (other items, or a value that is not a list: none).
fn json_strings(v: &JVal) -> Vec<String> {
    match v {
        JVal::Arr(a) => a
            .items
            .iter()
            .filter_map(|i| i.as_str().map(|s| s.value.clone()))
            .collect(),
        _ => Vec::new(),
    }
}

/// The names Gemini CLI does not start, by the file's `mcp.excluded` and `mcp.allowed`
/// (or their older top-level spellings `excludeMCPServers` and `allowMCPServers`): the
/// excluded ones, and when an allow list is not empty, every server it leaves out.
fn gemini_excluded(root: &JObj) -> Vec<String> {
    let mcp = root.get("mcp").and_then(JVal::as_obj);
    let list = |new: &str, old: &str| {
        mcp.and_then(|m| m.get(new))
            .or_else(|| root.get(old))
            .map(json_strings)
            .unwrap_or_default()
    };
    let mut off = list("excluded", "excludeMCPServers");
    let allowed = list("allowed", "allowMCPServers");
    if !allowed.is_empty() {
        if let Some(JVal::Obj(servers)) = root.get("mcpServers") {
            off.extend(
                servers
                    .members
                    .iter()
                    .filter(|m| !allowed.contains(&m.key))
                    .map(|m| m.key.clone()),
            );
        }
    }
    off
}

/// A JSON `true` or `false`.
fn json_bool(text: &str, v: &JVal) -> Option<bool> {
    match v {
        JVal::Other(r) => match &text[r.clone()] {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

fn json_entry(dialect: Dialect, text: &str, id: EntryRef, value: &JVal) -> Located {
    let Some(obj) = value.as_obj() else {
        return Located::skip(id, format!("the entry is {}, not an object", value.kind()));
    };
    let switch = Switch {
        disabled: obj.get("disabled").and_then(|v| json_bool(text, v)),
        enabled: obj.get("enabled").and_then(|v| json_bool(text, v)),
        ..Switch::default()
    };
    let env_key = if dialect == Dialect::Opencode {
        "environment"
    } else {
        "env"
    };
    let (env_keys, env) = match obj.get(env_key) {
        Some(JVal::Obj(env)) => (
            env.members.iter().map(|m| m.key.clone()).collect(),
            env.members
                .iter()
                .filter_map(|m| {
                    let s = m.value.as_str()?;
                    Some((
                        m.key.clone(),
                        Scalar {
                            span: s.span.clone(),
                            value: s.value.clone(),
                        },
                    ))
                })
                .collect(),
        ),
        _ => (Vec::new(), Vec::new()),
    };
    let body = json_body(dialect, text, obj);
    Located {
        id,
        env_keys,
        env,
        cwd: obj
            .get("cwd")
            .and_then(JVal::as_str)
            .map(|s| s.value.clone()),
        switch,
        body,
    }
}

fn json_body(dialect: Dialect, text: &str, obj: &JObj) -> Body {
    let type_of = |key: &str| {
        obj.get(key)
            .and_then(JVal::as_str)
            .map(|s| s.value.as_str())
    };
    if dialect == Dialect::Opencode {
        match type_of("type") {
            Some("local") | None => {}
            Some(t) if REMOTE_TYPES.contains(&t) => return Body::Skip(remote_reason(t)),
            Some(t) => return Body::Skip(format!("unknown type {t:?}")),
        }
        return match obj.get("command") {
            Some(JVal::Arr(arr)) => match json_seq(arr) {
                Some(seq) if !seq.items.is_empty() => Body::Joined { command: seq },
                Some(_) => Body::Skip("the command list is empty".to_owned()),
                None => {
                    Body::Skip("the command list holds something that is not a string".to_owned())
                }
            },
            Some(v) => Body::Skip(format!("command is {}, not a list", v.kind())),
            None => Body::Skip("no command".to_owned()),
        };
    }
    for key in ["type", "transportType"] {
        match type_of(key) {
            None | Some("stdio") => {}
            Some(t) if REMOTE_TYPES.contains(&t) => return Body::Skip(remote_reason(t)),
            Some(t) => return Body::Skip(format!("unknown {key} {t:?}")),
        }
    }
    let remote = ["url", "serverUrl", "httpUrl", "uri"]
        .into_iter()
        .any(|k| obj.get(k).is_some());
    let (holder, cmd_key) = match obj.get("command") {
        Some(JVal::Str(_)) => (obj, "command"),
        // Zed's older layout: "command": { "path": ..., "args": [...], "env": {...} }
        Some(JVal::Obj(inner)) if dialect == Dialect::Zed => match inner.get("path") {
            Some(JVal::Str(_)) => (inner, "path"),
            _ => return Body::Skip("command.path is missing or not a string".to_owned()),
        },
        Some(v) => return Body::Skip(format!("command is {}, not a string", v.kind())),
        None if remote => {
            return Body::Skip("remote server (url); only stdio servers are wrapped".to_owned());
        }
        None if dialect == Dialect::Zed => {
            return Body::Skip("provided by a Zed extension (no command)".to_owned());
        }
        None => return Body::Skip("no command".to_owned()),
    };
    let Some(member) = holder.member(cmd_key) else {
        return Body::Skip("no command".to_owned());
    };
    let Some(cmd) = member.value.as_str() else {
        return Body::Skip("command is not a string".to_owned());
    };
    let command = Scalar {
        span: cmd.span.clone(),
        value: cmd.value.clone(),
    };
    let args = match holder.get("args") {
        None => None,
        Some(JVal::Arr(arr)) => match json_seq(arr) {
            Some(seq) => Some(seq),
            None => return Body::Skip("args holds something that is not a string".to_owned()),
        },
        Some(v) => return Body::Skip(format!("args is {}, not a list", v.kind())),
    };
    let insert = json_insert(text, member.key_span.start, cmd.span.end);
    Body::Split {
        command,
        args,
        insert: Some(insert),
    }
}

fn json_seq(arr: &jsonc::JArr) -> Option<Seq> {
    let items = arr
        .items
        .iter()
        .map(|v| {
            v.as_str().map(|s| Scalar {
                span: s.span.clone(),
                value: s.value.clone(),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Seq {
        span: arr.span.clone(),
        items,
        style: SeqStyle::Flow {
            open: arr.span.start + 1,
        },
    })
}

/// Where `"args": [...]` goes when an entry has none: right after the command value, on
/// its own line indented like the command key when that key starts its line.
fn json_insert(text: &str, key_start: usize, value_end: usize) -> Insert {
    let ws = match line_prefix(text, key_start) {
        Some((eol, indent)) if indent.chars().all(|c| c == ' ' || c == '\t') => {
            format!("{eol}{indent}")
        }
        _ => " ".to_owned(),
    };
    Insert {
        at: value_end,
        prefix: format!(",{ws}\"args\": "),
    }
}

/// The text between the start of `pos`'s line and `pos`, with the line break before it;
/// `None` on the first line.
fn line_prefix(text: &str, pos: usize) -> Option<(&'static str, &str)> {
    let nl = text[..pos].rfind('\n')?;
    let eol = if text[..nl].ends_with('\r') {
        "\r\n"
    } else {
        "\n"
    };
    Some((eol, &text[nl + 1..pos]))
}

fn line_start(text: &str, pos: usize) -> usize {
    text[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// The end of the line holding `pos` (before its line break) and that line break
/// (the file's first one when `pos` is on the last line).
fn line_end(text: &str, pos: usize) -> (usize, &'static str) {
    match text[pos..].find('\n') {
        Some(i) => {
            let nl = pos + i;
            if text[..nl].ends_with('\r') {
                (nl - 1, "\r\n")
            } else {
                (nl, "\n")
            }
        }
        None => {
            let eol = match text.find('\n') {
                Some(i) if text[..i].ends_with('\r') => "\r\n",
                _ => "\n",
            };
            (text.len(), eol)
        }
    }
}

// ---------------------------------------------------------------- TOML

fn locate_toml(text: &str) -> Result<Vec<Located>, DocError> {
    let off = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let body = &text[off..];
    if body.trim().is_empty() {
        return Ok(Vec::new());
    }
    let doc = toml_edit::Document::parse(body).map_err(|e| {
        let at = off + e.span().map_or(0, |s| s.start);
        DocError::at(text, at, e.message().trim().to_owned())
    })?;
    let Some(item) = doc.as_table().get("mcp_servers") else {
        return Ok(Vec::new());
    };
    let Some(servers) = item.as_table_like() else {
        return Err(DocError::at(
            text,
            off + item.span().map_or(0, |s| s.start),
            "`mcp_servers` is not a table of servers".to_owned(),
        ));
    };
    let mut out = Vec::new();
    for (name, item) in servers.iter() {
        let id = EntryRef {
            scope: Vec::new(),
            name: name.to_owned(),
        };
        out.push(toml_entry(text, off, id, item));
    }
    Ok(out)
}

fn toml_entry(text: &str, off: usize, id: EntryRef, item: &toml_edit::Item) -> Located {
    let Some(t) = item.as_table_like() else {
        return Located::skip(id, "the entry is not a table".to_owned());
    };
    let env_table = t.get("env").and_then(toml_edit::Item::as_table_like);
    let mut env_keys: Vec<String> = env_table
        .map(|env| env.iter().map(|(k, _)| k.to_owned()).collect())
        .unwrap_or_default();
    let env = env_table
        .map(|env| {
            env.iter()
                .filter_map(|(k, v)| {
                    let span = span_of(off, v.span())?;
                    Some((
                        k.to_owned(),
                        Scalar {
                            span,
                            value: v.as_str()?.to_owned(),
                        },
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    if let Some(vars) = t.get("env_vars").and_then(toml_edit::Item::as_array) {
        env_keys.extend(vars.iter().filter_map(|v| match v {
            toml_edit::Value::String(s) => Some(s.value().clone()),
            toml_edit::Value::InlineTable(it) => {
                it.get("name").and_then(|n| n.as_str()).map(str::to_owned)
            }
            _ => None,
        }));
    }
    let body = toml_body(text, off, item, t);
    Located {
        id,
        env_keys,
        env,
        cwd: t.get("cwd").and_then(|v| v.as_str()).map(str::to_owned),
        switch: Switch {
            enabled: t.get("enabled").and_then(toml_edit::Item::as_bool),
            ..Switch::default()
        },
        body,
    }
}

fn span_of(off: usize, span: Option<std::ops::Range<usize>>) -> Option<std::ops::Range<usize>> {
    span.map(|s| s.start + off..s.end + off)
}

fn toml_body(text: &str, off: usize, item: &toml_edit::Item, t: &dyn toml_edit::TableLike) -> Body {
    let Some(cmd_item) = t.get("command") else {
        if t.get("url").is_some() {
            return Body::Skip("remote server (url); only stdio servers are wrapped".to_owned());
        }
        return Body::Skip("no command".to_owned());
    };
    let (Some(cmd), Some(span)) = (cmd_item.as_str(), span_of(off, cmd_item.span())) else {
        return Body::Skip("command is not a string".to_owned());
    };
    let command = Scalar {
        span: span.clone(),
        value: cmd.to_owned(),
    };
    let args = match t.get("args") {
        None => None,
        Some(a) => {
            let Some(arr) = a.as_array() else {
                return Body::Skip("args is not a list".to_owned());
            };
            let Some(arr_span) = span_of(off, arr.span()) else {
                return Body::Skip("args has no position".to_owned());
            };
            let items = arr
                .iter()
                .map(|v| {
                    Some(Scalar {
                        span: span_of(off, v.span())?,
                        value: v.as_str()?.to_owned(),
                    })
                })
                .collect::<Option<Vec<_>>>();
            let Some(items) = items else {
                return Body::Skip("args holds something that is not a string".to_owned());
            };
            Some(Seq {
                span: arr_span.clone(),
                items,
                style: SeqStyle::Flow {
                    open: arr_span.start + 1,
                },
            })
        }
    };
    let insert = if item.is_table() {
        // `command = ...` on its own line (maybe dotted, `rg.command = ...`): a new line
        // `args = [...]` after it, with the same key prefix.
        t.get_key_value("command")
            .and_then(|(k, _)| span_of(off, k.span()))
            .map(|key| {
                let ls = line_start(text, key.start);
                let prefix = &text[ls..key.start];
                let (at, eol) = line_end(text, span.end);
                Insert {
                    at,
                    prefix: format!("{eol}{prefix}args = "),
                }
            })
    } else {
        Some(Insert {
            at: span.end,
            prefix: ", args = ".to_owned(),
        })
    };
    Body::Split {
        command,
        args,
        insert,
    }
}

// ---------------------------------------------------------------- YAML

fn locate_yaml(dialect: Dialect, text: &str) -> Result<Vec<Located>, DocError> {
    let Some(root) = yaml::parse(text)? else {
        return Ok(Vec::new());
    };
    let YNode::Map(root) = &root else {
        return Err(DocError::at(
            text,
            0,
            format!("the top level is {}, not a mapping", root.kind()),
        ));
    };
    let mut out = Vec::new();
    let key = dialect.servers_key();
    match (dialect, root.entry(key)) {
        (_, None) => {}
        (_, Some((_, YNode::Scalar(s)))) if is_null(s) => {}
        (Dialect::ContinueYaml, Some((_, YNode::Seq(seq)))) => {
            let mut names: Vec<String> = Vec::new();
            for (i, item) in seq.items.iter().enumerate() {
                let name = item
                    .as_map()
                    .and_then(|m| m.get("name"))
                    .and_then(YNode::as_scalar)
                    .map_or_else(|| format!("#{}", i + 1), |s| s.value.clone());
                names.push(name.clone());
                let id = EntryRef {
                    scope: Vec::new(),
                    name,
                };
                out.push(match item.as_map() {
                    Some(m) => yaml_entry(dialect, text, id, m),
                    None => {
                        Located::skip(id, format!("the entry is {}, not a mapping", item.kind()))
                    }
                });
            }
            // Continue identifies entries by name; a repeated name is ambiguous.
            for (i, name) in names.iter().enumerate() {
                if names[i + 1..].contains(name) {
                    out[i].body =
                        Body::Skip("duplicate name: the client uses the later entry".to_owned());
                }
            }
        }
        (Dialect::Goose, Some((_, YNode::Map(map)))) => {
            for (i, (k, v)) in map.entries.iter().enumerate() {
                let Some(k) = k.as_scalar() else { continue };
                let id = EntryRef {
                    scope: Vec::new(),
                    name: k.value.clone(),
                };
                let shadowed = map.entries[i + 1..]
                    .iter()
                    .any(|(later, _)| later.as_scalar().is_some_and(|l| l.value == k.value));
                let mut located = match v.as_map() {
                    Some(m) => yaml_entry(dialect, text, id, m),
                    None => Located::skip(id, format!("the entry is {}, not a mapping", v.kind())),
                };
                if shadowed {
                    located.body = Body::Skip(
                        "duplicate entry: the client uses the later one with this name".to_owned(),
                    );
                }
                out.push(located);
            }
        }
        (_, Some((k, v))) => {
            return Err(DocError::at(
                text,
                k.span.start,
                format!("`{key}` is {}, not the expected list or mapping", v.kind()),
            ));
        }
    }
    Ok(out)
}

fn is_null(s: &YScalar) -> bool {
    s.style == saphyr_parser::ScalarStyle::Plain && matches!(s.value.as_str(), "" | "~" | "null")
}

/// A plain YAML `true` or `false` (YAML 1.2 core schema, as Goose's serde_yaml reads it).
fn yaml_bool(node: &YNode) -> Option<bool> {
    let s = node.as_scalar()?;
    if s.style != saphyr_parser::ScalarStyle::Plain || s.decorated {
        return None;
    }
    match s.value.as_str() {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

fn yaml_scalar(node: &YNode) -> Option<Scalar> {
    let s = node.as_scalar()?;
    let simple = matches!(
        s.style,
        saphyr_parser::ScalarStyle::Plain
            | saphyr_parser::ScalarStyle::SingleQuoted
            | saphyr_parser::ScalarStyle::DoubleQuoted
    );
    (simple && !s.decorated).then(|| Scalar {
        span: s.span.clone(),
        value: s.value.clone(),
    })
}

fn yaml_entry(dialect: Dialect, text: &str, id: EntryRef, map: &YMap) -> Located {
    let mut env_keys: Vec<String> = Vec::new();
    let env_key = if dialect == Dialect::Goose {
        "envs"
    } else {
        "env"
    };
    let mut env = Vec::new();
    if let Some(YNode::Map(vars)) = map.get(env_key) {
        env_keys.extend(
            vars.entries
                .iter()
                .filter_map(|(k, _)| k.as_scalar().map(|s| s.value.clone())),
        );
        env.extend(
            vars.entries
                .iter()
                .filter_map(|(k, v)| Some((k.as_scalar()?.value.clone(), yaml_scalar(v)?))),
        );
    }
    if dialect == Dialect::Goose {
        if let Some(YNode::Seq(keys)) = map.get("env_keys") {
            env_keys.extend(
                keys.items
                    .iter()
                    .filter_map(|k| k.as_scalar().map(|s| s.value.clone())),
            );
        }
    }
    let body = yaml_body(dialect, text, map);
    Located {
        id,
        env_keys,
        env,
        cwd: map.get("cwd").and_then(yaml_scalar).map(|s| s.value),
        switch: Switch {
            disabled: map.get("disabled").and_then(yaml_bool),
            enabled: map.get("enabled").and_then(yaml_bool),
            ..Switch::default()
        },
        body,
    }
}

fn yaml_body(dialect: Dialect, text: &str, map: &YMap) -> Body {
    if map.merges {
        return Body::Skip(
            "uses a YAML merge key (<<): its command may come from elsewhere; edit it by hand"
                .to_owned(),
        );
    }
    let cmd_key = if dialect == Dialect::Goose {
        "cmd"
    } else {
        "command"
    };
    let kind = map
        .get("type")
        .and_then(YNode::as_scalar)
        .map(|s| s.value.as_str());
    match kind {
        None | Some("stdio") => {}
        Some(t @ ("builtin" | "platform" | "frontend" | "inline_python")) => {
            return Body::Skip(format!("built-in goose extension (type {t:?})"));
        }
        Some(t) if REMOTE_TYPES.contains(&t) => return Body::Skip(remote_reason(t)),
        Some(t) => return Body::Skip(format!("unknown type {t:?}")),
    }
    let Some((cmd_k, cmd_v)) = map.entry(cmd_key) else {
        if map.get("url").is_some() || map.get("uri").is_some() {
            return Body::Skip("remote server (url); only stdio servers are wrapped".to_owned());
        }
        return Body::Skip(format!("no {cmd_key}"));
    };
    let Some(command) = yaml_scalar(cmd_v) else {
        return Body::Skip(format!(
            "{cmd_key} is {} Warden does not edit (block scalar, tag, anchor or alias)",
            cmd_v.kind()
        ));
    };
    let args = match map.entry("args") {
        None => None,
        Some((k, YNode::Seq(seq))) => {
            let Some(items) = seq
                .items
                .iter()
                .map(yaml_scalar)
                .collect::<Option<Vec<_>>>()
            else {
                return Body::Skip(
                    "args holds something other than plain or quoted strings".to_owned(),
                );
            };
            let (span, style) = if seq.flow {
                (
                    seq.start..seq.end,
                    SeqStyle::Flow {
                        open: seq.start + 1,
                    },
                )
            } else {
                let line_starts: Vec<usize> = items
                    .iter()
                    .map(|i| line_start(text, i.span.start))
                    .collect();
                let dash_only = items.iter().zip(&line_starts).all(|(i, &ls)| {
                    let prefix = text[ls..i.span.start].trim_start_matches([' ', '\t']);
                    prefix.starts_with('-')
                        && prefix[1..].chars().all(|c| c == ' ' || c == '\t')
                        && prefix.len() > 1
                });
                if !dash_only {
                    return Body::Skip(
                        "args is laid out in a way Warden does not edit (one `- item` per line expected)"
                            .to_owned(),
                    );
                }
                let colon = text[k.span.end..]
                    .find(':')
                    .map_or(k.span.end, |i| k.span.end + i + 1);
                let end = items.last().map_or(colon, |i| i.span.end);
                (
                    colon..end,
                    SeqStyle::Block {
                        line_starts,
                        value_start: colon,
                    },
                )
            };
            Some(Seq { span, items, style })
        }
        Some((_, v)) => {
            return Body::Skip(format!(
                "args is {}, not a list (write `args: []` to let Warden add to it)",
                v.kind()
            ));
        }
    };
    let insert = if map.flow {
        Insert {
            at: command.span.end,
            prefix: ", args: ".to_owned(),
        }
    } else {
        let ls = line_start(text, cmd_k.span.start);
        let indent: String = text[ls..cmd_k.span.start]
            .chars()
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let (at, eol) = line_end(text, command.span.end);
        Insert {
            at,
            prefix: format!("{eol}{indent}args: "),
        }
    };
    Body::Split {
        command,
        args,
        insert: Some(insert),
    }
}
