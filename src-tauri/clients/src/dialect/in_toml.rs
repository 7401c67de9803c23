//! Server entries in TOML files (Codex).

use super::*;

pub(super) fn locate_toml(text: &str) -> Result<Vec<Located>, DocError> {
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
        whole: None,
    }
}

fn span_of(off: usize, span: Option<std::ops::Range<usize>>) -> Option<std::ops::Range<usize>> {
    span.map(|s| s.start + off..s.end + off)
}

fn toml_body(text: &str, off: usize, item: &toml_edit::Item, t: &dyn toml_edit::TableLike) -> Body {
    let Some(cmd_item) = t.get("command") else {
        if t.get("url").is_some() {
            return Body::Skip(format!("remote server (url); {REMOTE_NOT_HERE}"));
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
