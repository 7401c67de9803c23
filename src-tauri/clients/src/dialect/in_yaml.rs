//! Server entries in YAML files (Goose, Continue).

use super::*;

pub(super) fn locate_yaml(dialect: Dialect, text: &str) -> Result<Vec<Located>, DocError> {
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
    if dialect == Dialect::Goose
        && let Some(YNode::Seq(keys)) = map.get("env_keys")
    {
        env_keys.extend(
            keys.items
                .iter()
                .filter_map(|k| k.as_scalar().map(|s| s.value.clone())),
        );
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
        whole: None,
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
            return Body::Skip(format!("remote server (url); {REMOTE_NOT_HERE}"));
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
