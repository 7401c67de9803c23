//! Server entries in the JSON and JSONC clients' files.

use super::*;

pub(super) fn locate_json(dialect: Dialect, text: &str) -> Result<Vec<Located>, DocError> {
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
    if dialect == Dialect::ClaudeCodeUser
        && let Some(JVal::Obj(projects)) = root.get("projects")
    {
        for p in &projects.members {
            if let JVal::Obj(project) = &p.value
                && let Some(o) = servers(text, project, "mcpServers")?
            {
                let off = project
                    .get("disabledMcpServers")
                    .map(json_strings)
                    .unwrap_or_default();
                groups.push((vec!["projects".to_owned(), p.key.clone()], o, off));
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
    if !allowed.is_empty()
        && let Some(JVal::Obj(servers)) = root.get("mcpServers")
    {
        off.extend(
            servers
                .members
                .iter()
                .filter(|m| !allowed.contains(&m.key))
                .map(|m| m.key.clone()),
        );
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
        whole: Some(json_whole(text, obj)),
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
            Some(t) if REMOTE_TYPES.contains(&t) => return json_remote(obj, Some(t)),
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
            Some(t) if REMOTE_TYPES.contains(&t) => return json_remote(obj, Some(t)),
            Some(t) => return Body::Skip(format!("unknown {key} {t:?}")),
        }
    }
    let remote = URL_KEYS.into_iter().any(|k| obj.get(k).is_some());
    let (holder, cmd_key) = match obj.get("command") {
        Some(JVal::Str(_)) => (obj, "command"),
        // Zed's older layout: "command": { "path": ..., "args": [...], "env": {...} }
        Some(JVal::Obj(inner)) if dialect == Dialect::Zed => match inner.get("path") {
            Some(JVal::Str(_)) => (inner, "path"),
            _ => return Body::Skip("command.path is missing or not a string".to_owned()),
        },
        Some(v) => return Body::Skip(format!("command is {}, not a string", v.kind())),
        None if remote => return json_remote(obj, None),
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

/// The keys that give a remote server's URL.
const URL_KEYS: [&str; 4] = ["url", "serverUrl", "httpUrl", "uri"];

/// A remote entry: its URL, headers and transport, and its other members, which stay.
fn json_remote(obj: &JObj, transport: Option<&str>) -> Body {
    if obj.get("command").is_some() {
        return Body::Skip(
            "has both a command and a remote URL or type; edit it by hand".to_owned(),
        );
    }
    let Some(url) = URL_KEYS
        .into_iter()
        .find_map(|k| obj.get(k).and_then(JVal::as_str))
    else {
        return Body::Skip(match transport {
            Some(t) => format!("remote server (type {t:?}) without a URL string"),
            None => "remote server whose URL is not a string".to_owned(),
        });
    };
    let headers = match obj.get("headers") {
        None => Ok(Vec::new()),
        Some(JVal::Obj(h)) => h
            .members
            .iter()
            .map(|m| match m.value.as_str() {
                Some(v) => Ok((m.key.clone(), v.value.clone())),
                None => Err(format!(
                    "its header {:?} is {}, not a string; the entry stays as it is",
                    m.key,
                    m.value.kind()
                )),
            })
            .collect(),
        Some(v) => Err(format!(
            "its headers are {}, not an object; the entry stays as it is",
            v.kind()
        )),
    };
    Body::Remote(Box::new(RemoteBody {
        url: url.value.clone(),
        headers,
        transport: transport.map(str::to_owned),
    }))
}

/// An entry's object as text: its members and its layout.
fn json_whole(text: &str, obj: &JObj) -> Whole {
    let members = obj
        .members
        .iter()
        .map(|m| {
            let raw = &text[m.key_span.start..m.value.span().end];
            (m.key.clone(), raw.to_owned())
        })
        .collect();
    let blank = |s: &str| s.chars().all(char::is_whitespace);
    let (sep, close) = match (obj.members.first(), obj.members.last()) {
        (Some(first), Some(last)) => {
            let open = &text[obj.span.start + 1..first.key_span.start];
            let end = &text[last.value.span().end..obj.span.end - 1];
            let sep = if blank(open) { open } else { " " };
            let close = if blank(end) {
                end.to_owned()
            } else if sep.contains('\n') {
                // A comment before `}`: a line break and the indentation of `}`'s line.
                let start = line_start(text, obj.span.end - 1);
                let line = &text[start..obj.span.end - 1];
                let indent = &line[..line.len() - line.trim_start().len()];
                let (_, eol) = line_end(text, start);
                format!("{eol}{indent}")
            } else {
                " ".to_owned()
            };
            (sep.to_owned(), close)
        }
        _ => (" ".to_owned(), " ".to_owned()),
    };
    Whole {
        span: obj.span.clone(),
        members,
        sep,
        close,
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
