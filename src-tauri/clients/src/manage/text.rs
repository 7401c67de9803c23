//! The pure text edits of `servers add | disable | enable | remove` on one file's contents:
//! each computes byte edits (`region.rs`, `switch` below), applies them, and checks that the
//! text reads back as intended (every other entry unchanged) before it is accepted.

use super::lines::{self, Edit, apply, inverse};
use super::region::{self, Content, Region};
use super::render;
use super::types::{ManageError, NewEntry};
use crate::dialect::{Dialect, Syntax};
use crate::doc::EntryRef;
use crate::edit;
use crate::jsonc::{self, JVal};
use crate::model::{ClientId, EntryState, ServerEntry};
use crate::yaml::{self, YNode};

/// The result of one text edit.
#[derive(Debug, Clone)]
pub struct ManageEdit {
    pub text: String,
    pub changed: Vec<EntryRef>,
    /// Edits of `text` that give back the text before.
    pub(crate) undo: Vec<Edit>,
    /// Remove: each entry's own bytes as they were (what enable puts back).
    pub removed: Vec<(EntryRef, String)>,
    /// Disable: the switch's key was added (enable takes it out again).
    pub key_added: bool,
}

fn entries(
    client: ClientId,
    dialect: Dialect,
    text: &str,
) -> Result<Vec<ServerEntry>, ManageError> {
    Ok(edit::entries(client, dialect, text)?)
}

fn finish(text: &str, edits: Vec<Edit>, changed: Vec<EntryRef>) -> Result<ManageEdit, ManageError> {
    let new = apply(text, edits.clone()).map_err(ManageError::Internal)?;
    Ok(ManageEdit {
        undo: inverse(text, &edits),
        text: new,
        changed,
        removed: Vec::new(),
        key_added: false,
    })
}

fn reparse(
    client: ClientId,
    dialect: Dialect,
    text: &str,
) -> Result<Vec<ServerEntry>, ManageError> {
    edit::entries(client, dialect, text)
        .map_err(|e| ManageError::Internal(format!("the edited text does not parse: {e}")))
}

/// Adds `entry` to `text` (a file of `client`'s in `dialect`), wrapped through `warden` when
/// given. Refused when an entry of that name is there already.
pub fn add_text(
    client: ClientId,
    dialect: Dialect,
    text: &str,
    entry: &NewEntry,
    warden: Option<&str>,
) -> Result<ManageEdit, ManageError> {
    let before = entries(client, dialect, text)?;
    if before.iter().any(|e| e.name == entry.name) {
        let id = EntryRef {
            scope: Vec::new(),
            name: entry.name.clone(),
        };
        return Err(ManageError::Exists(shown(dialect, text, &id)));
    }
    let argv = entry.argv(warden);
    let env: Vec<(String, String)> = entry
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let fields = render::fields(client, dialect, &entry.name, &argv, &env);
    let mut edits = append(dialect, text, &entry.name, &Content::New(&fields))?;
    if client == ClientId::GeminiCli && dialect == Dialect::McpServers {
        edits.extend(gemini_allow(text, &entry.name)?);
    }
    let id = EntryRef {
        scope: Vec::new(),
        name: entry.name.clone(),
    };
    let out = finish(text, edits, vec![id.clone()])?;
    let after = reparse(client, dialect, &out.text)?;
    let state = match (warden, &entry.url) {
        (Some(w), Some(url)) => EntryState::Wrapped {
            bridge: w.to_owned(),
            server: Some(entry.name.clone()),
            command: url.clone(),
            args: Vec::new(),
        },
        (Some(w), None) => EntryState::Wrapped {
            bridge: w.to_owned(),
            server: Some(entry.name.clone()),
            command: entry.command.clone(),
            args: entry.args.clone(),
        },
        (None, _) => EntryState::Unwrapped {
            command: entry.command.clone(),
            args: entry.args.clone(),
        },
    };
    let new: Vec<&ServerEntry> = after.iter().filter(|e| e.id() == id).collect();
    let rest: Vec<&ServerEntry> = after.iter().filter(|e| e.id() != id).collect();
    let keys: Vec<&String> = entry.env.keys().collect();
    let ok = matches!(new.as_slice(), [n] if n.state == state && n.enabled
        && n.env_keys.iter().collect::<Vec<_>>() == keys)
        && rest == before.iter().collect::<Vec<_>>();
    if !ok {
        return Err(ManageError::Internal(format!(
            "the new entry {id} does not read back as written: {new:?}"
        )));
    }
    Ok(out)
}

fn append(
    dialect: Dialect,
    text: &str,
    name: &str,
    content: &Content<'_>,
) -> Result<Vec<Edit>, ManageError> {
    match dialect.syntax() {
        Syntax::Json => region::json_append(dialect, text, name, content),
        Syntax::Toml => Ok(region::toml_append(text, name, content)),
        Syntax::Yaml => region::yaml_append(dialect, text, name, content),
    }
}

fn regions(dialect: Dialect, text: &str, id: &EntryRef) -> Result<Vec<Region>, ManageError> {
    match dialect.syntax() {
        Syntax::Json => region::json_regions(dialect, text, id),
        Syntax::Toml => region::toml_regions(text, id),
        Syntax::Yaml => region::yaml_regions(dialect, text, id),
    }
}

/// An entry's own text, for messages.
pub(super) fn shown(dialect: Dialect, text: &str, id: &EntryRef) -> String {
    match regions(dialect, text, id) {
        Ok(r) if !r.is_empty() => text[r[0].raw.clone()].trim_end().to_owned(),
        _ => id.name.clone(),
    }
}

/// Takes every entry named `name` out of `text` (in Claude Code's `~/.claude.json`, those
/// of every scope), with its separator and the comment lines of its own above it.
pub fn remove_text(
    client: ClientId,
    dialect: Dialect,
    text: &str,
    name: &str,
) -> Result<ManageEdit, ManageError> {
    let before = entries(client, dialect, text)?;
    let ids: Vec<EntryRef> = dedup(
        before
            .iter()
            .filter(|e| e.name == name)
            .map(ServerEntry::id),
    );
    if ids.is_empty() {
        return Err(ManageError::Missing);
    }
    remove_ids(client, dialect, text, &ids, &before)
}

fn dedup(ids: impl Iterator<Item = EntryRef>) -> Vec<EntryRef> {
    let mut out: Vec<EntryRef> = Vec::new();
    for id in ids {
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

pub(super) fn remove_ids(
    client: ClientId,
    dialect: Dialect,
    text: &str,
    ids: &[EntryRef],
    before: &[ServerEntry],
) -> Result<ManageEdit, ManageError> {
    let mut edits = Vec::new();
    let mut removed = Vec::new();
    for id in ids {
        let rs = regions(dialect, text, id)?;
        if rs.is_empty() {
            return Err(ManageError::Layout(format!(
                "{id}: cannot find where it is written"
            )));
        }
        for r in rs {
            removed.push((id.clone(), text[r.raw.clone()].to_owned()));
            edits.extend(r.edits);
        }
    }
    if client == ClientId::GeminiCli && dialect == Dialect::McpServers {
        for id in ids {
            edits.extend(gemini_forget(text, &id.name)?);
        }
    }
    let mut out = finish(text, edits, ids.to_vec())?;
    out.removed = removed;
    let after = reparse(client, dialect, &out.text)?;
    let expected: Vec<&ServerEntry> = before.iter().filter(|e| !ids.contains(&e.id())).collect();
    if after.iter().collect::<Vec<_>>() != expected {
        return Err(ManageError::Internal(
            "the other entries do not read back unchanged".to_owned(),
        ));
    }
    Ok(out)
}

/// Puts an entry's own text (from [`remove_text`]) back at the end of the server list.
pub(super) fn put_back_raw(
    client: ClientId,
    dialect: Dialect,
    text: &str,
    id: &EntryRef,
    raw: &str,
) -> Result<ManageEdit, ManageError> {
    let before = entries(client, dialect, text)?;
    if before.iter().any(|e| e.id() == *id) {
        return Err(ManageError::Exists(shown(dialect, text, id)));
    }
    if !id.scope.is_empty() {
        return Err(ManageError::Layout(format!(
            "{id}: its list is gone from the file; add it again with `warden servers add`"
        )));
    }
    let edits = append(dialect, text, &id.name, &Content::Raw(raw))?;
    let out = finish(text, edits, vec![id.clone()])?;
    let after = reparse(client, dialect, &out.text)?;
    let rest: Vec<&ServerEntry> = after.iter().filter(|e| e.id() != *id).collect();
    let back = after.iter().filter(|e| e.id() == *id).count();
    if back != 1 || rest != before.iter().collect::<Vec<_>>() {
        return Err(ManageError::Internal(format!(
            "{id} does not read back as it was"
        )));
    }
    Ok(out)
}

/// Whether `client` has an on/off switch of its own for the entry `id` in a `dialect` file.
pub fn has_switch(client: ClientId, dialect: Dialect, id: &EntryRef) -> bool {
    match client {
        ClientId::Cline
        | ClientId::Windsurf
        | ClientId::Kiro
        | ClientId::Codex
        | ClientId::Zed
        | ClientId::Opencode
        | ClientId::Goose => true,
        ClientId::GeminiCli => dialect == Dialect::McpServers,
        ClientId::ClaudeCode => dialect == Dialect::ClaudeCodeUser && !id.scope.is_empty(),
        _ => false,
    }
}

/// Sets the client's own switch of every entry named `name` that has one (see
/// [`has_switch`]). `added`:
/// Warden added the key when it turned the entry off, so turning it on takes the key out.
pub fn set_switch_text(
    client: ClientId,
    dialect: Dialect,
    text: &str,
    name: &str,
    enabled: bool,
    added: bool,
) -> Result<ManageEdit, ManageError> {
    let before = entries(client, dialect, text)?;
    let targets: Vec<EntryRef> = dedup(
        before
            .iter()
            .filter(|e| e.name == name && has_switch(client, dialect, &e.id()))
            .map(ServerEntry::id),
    );
    switch_ids(client, dialect, text, &targets, &before, enabled, added)
}

/// [`set_switch_text`] of the entries `targets` only (each has a switch); `before`: the
/// entries of `text`.
pub(super) fn switch_ids(
    client: ClientId,
    dialect: Dialect,
    text: &str,
    targets: &[EntryRef],
    before: &[ServerEntry],
    enabled: bool,
    added: bool,
) -> Result<ManageEdit, ManageError> {
    if targets.is_empty() {
        return Err(ManageError::Missing);
    }
    let mut edits = Vec::new();
    let mut changed = Vec::new();
    let mut key_added = false;
    for id in targets {
        let cur = before
            .iter()
            .rev()
            .find(|e| e.id() == *id)
            .map(|e| e.enabled);
        if cur == Some(enabled) {
            continue;
        }
        let (e, k) = switch_edits(client, dialect, text, id, enabled, added)?;
        key_added |= k;
        edits.extend(e);
        changed.push(id.clone());
    }
    let mut out = finish(text, edits, changed.clone())?;
    out.key_added = key_added;
    if changed.is_empty() {
        return Ok(out);
    }
    let after = reparse(client, dialect, &out.text)?;
    let good = after.len() == before.len()
        && after.iter().zip(before).all(|(a, b)| {
            if changed.contains(&a.id()) {
                a.id() == b.id() && a.state == b.state && a.enabled == enabled
            } else {
                a == b
            }
        });
    if !good {
        return Err(ManageError::Internal(
            "the switch does not read back as set, or another entry changed".to_owned(),
        ));
    }
    Ok(out)
}

/// The edits that set one entry's switch, and whether they add its key.
fn switch_edits(
    client: ClientId,
    dialect: Dialect,
    text: &str,
    id: &EntryRef,
    enabled: bool,
    added: bool,
) -> Result<(Vec<Edit>, bool), ManageError> {
    let (key, value) = match client {
        ClientId::Cline | ClientId::Windsurf | ClientId::Kiro => ("disabled", !enabled),
        ClientId::GeminiCli => return gemini_edits(text, id, enabled, added),
        ClientId::ClaudeCode => return claude_edits(text, id, enabled, added),
        _ => ("enabled", enabled),
    };
    match dialect.syntax() {
        Syntax::Json => json_switch(dialect, text, id, key, value, enabled && added),
        Syntax::Toml => toml_switch(text, id, value, enabled && added),
        Syntax::Yaml => yaml_switch(dialect, text, id, value, enabled && added),
    }
}

fn json_switch(
    dialect: Dialect,
    text: &str,
    id: &EntryRef,
    key: &str,
    value: bool,
    take_out: bool,
) -> Result<(Vec<Edit>, bool), ManageError> {
    let Some(JVal::Obj(root)) = jsonc::parse(text)? else {
        return Err(ManageError::Missing);
    };
    let mut path = id.scope.clone();
    path.extend([dialect.servers_key().to_owned(), id.name.clone()]);
    let entry = super::json::object_at(&root, &path)
        .ok_or_else(|| ManageError::Layout(format!("{id}: the entry is not an object")))?;
    match entry.members.iter().rposition(|m| m.key == key) {
        Some(i) if take_out => {
            let edits = super::json::remove_member(text, entry, i).ok_or_else(|| {
                ManageError::Layout(format!("{id}: cannot find the commas around `{key}`"))
            })?;
            Ok((edits, false))
        }
        Some(i) => match &entry.members[i].value {
            JVal::Other(r) if matches!(&text[r.clone()], "true" | "false") => {
                Ok((vec![(r.clone(), value.to_string())], false))
            }
            _ => Err(ManageError::Layout(format!(
                "{id}: `{key}` is not true or false; set it by hand"
            ))),
        },
        None => {
            let member = format!("\"{key}\": {value}");
            Ok((
                super::json::append_member(text, entry, &|_| member.clone()),
                true,
            ))
        }
    }
}

fn toml_switch(
    text: &str,
    id: &EntryRef,
    value: bool,
    take_out: bool,
) -> Result<(Vec<Edit>, bool), ManageError> {
    let off = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let doc = toml_edit::Document::parse(text[off..].to_owned()).map_err(|e| {
        ManageError::Parse(crate::doc::DocError::at(
            text,
            off + e.span().map_or(0, |s| s.start),
            e.message().trim().to_owned(),
        ))
    })?;
    let entry = doc
        .get("mcp_servers")
        .and_then(|i| i.as_table_like())
        .and_then(|t| t.get(&id.name))
        .ok_or(ManageError::Missing)?;
    let span = |s: Option<std::ops::Range<usize>>| s.map(|s| s.start + off..s.end + off);
    let layout = || {
        ManageError::Layout(format!(
            "{id}: laid out in a way Warden does not edit; set `enabled` by hand"
        ))
    };
    match entry {
        toml_edit::Item::Table(t) if !t.is_dotted() => {
            if let Some((k, v)) = t.get_key_value("enabled") {
                let vs = span(v.span()).ok_or_else(layout)?;
                if take_out {
                    let ks = span(k.span()).ok_or_else(layout)?;
                    if !lines::starts_line(text, ks.start) {
                        return Err(layout());
                    }
                    let end = lines::next_line(text, vs.end);
                    let from =
                        lines::unterminated_start(text, lines::line_start(text, ks.start), end);
                    return Ok((vec![(from..end, String::new())], false));
                }
                return Ok((vec![(vs, value.to_string())], false));
            }
            let last = t
                .iter()
                .filter_map(|(_, i)| i.as_value().and_then(|v| span(v.span())))
                .map(|s| s.end)
                .max();
            let at = match last {
                Some(end) => lines::next_line(text, end),
                None => lines::next_line(text, span(t.span()).ok_or_else(layout)?.end),
            };
            let e = lines::eol(text);
            let new = lines::insert_lines(text, at, &format!("enabled = {value}{e}"), e);
            Ok((vec![(at..at, new)], true))
        }
        toml_edit::Item::Value(toml_edit::Value::InlineTable(it)) => {
            let kvs: Vec<(String, std::ops::Range<usize>)> = it
                .iter()
                .filter_map(|(k, v)| Some((k.to_owned(), span(v.span())?)))
                .collect();
            match kvs.iter().rposition(|(k, _)| k == "enabled") {
                Some(i) if take_out && i > 0 => {
                    Ok((vec![(kvs[i - 1].1.end..kvs[i].1.end, String::new())], false))
                }
                Some(i) => Ok((vec![(kvs[i].1.clone(), value.to_string())], false)),
                None => {
                    let end = kvs.last().map(|(_, s)| s.end).ok_or_else(layout)?;
                    Ok((vec![(end..end, format!(", enabled = {value}"))], true))
                }
            }
        }
        _ => Err(layout()),
    }
}

fn yaml_switch(
    dialect: Dialect,
    text: &str,
    id: &EntryRef,
    value: bool,
    take_out: bool,
) -> Result<(Vec<Edit>, bool), ManageError> {
    let layout = || {
        ManageError::Layout(format!(
            "{id}: laid out in a way Warden does not edit; set `enabled` by hand"
        ))
    };
    let Some(YNode::Map(root)) = yaml::parse(text)? else {
        return Err(ManageError::Missing);
    };
    let Some(YNode::Map(servers)) = root.get(dialect.servers_key()) else {
        return Err(ManageError::Missing);
    };
    let (key, entry) = servers
        .entries
        .iter()
        .rev()
        .find_map(|(k, v)| {
            let k = k.as_scalar()?;
            (k.value == id.name).then_some((k, v))
        })
        .ok_or(ManageError::Missing)?;
    let YNode::Map(entry) = entry else {
        return Err(layout());
    };
    if let Some((k, v)) = entry.entry("enabled") {
        let v = v.as_scalar().ok_or_else(layout)?;
        if take_out && !entry.flow && lines::starts_line(text, k.span.start) {
            let end = lines::next_line(text, v.span.end);
            let from = lines::unterminated_start(text, lines::line_start(text, k.span.start), end);
            return Ok((vec![(from..end, String::new())], false));
        }
        return Ok((vec![(v.span.clone(), value.to_string())], false));
    }
    if entry.flow || servers.flow || !lines::starts_line(text, key.span.start) {
        return Err(layout());
    }
    let (indent, end) = region::yaml_child_indent(text, key.span.start);
    let e = lines::eol(text);
    let new = lines::insert_lines(text, end, &format!("{indent}enabled: {value}{e}"), e);
    Ok((vec![(end..end, new)], true))
}

/// Gemini CLI: the name into (or out of) `mcp.excluded`.
fn gemini_edits(
    text: &str,
    id: &EntryRef,
    enabled: bool,
    added: bool,
) -> Result<(Vec<Edit>, bool), ManageError> {
    let Some(JVal::Obj(root)) = jsonc::parse(text)? else {
        return Err(ManageError::Missing);
    };
    let quoted = Syntax::Json.string(&id.name);
    let mcp = root.get("mcp").and_then(JVal::as_obj);
    if enabled && added {
        // Warden wrote `mcp` or its `excluded` for this name alone: take that out again.
        if let Some(m) = mcp {
            let only = |v: Option<&JVal>| {
                matches!(v, Some(JVal::Arr(a)) if a.items.len() == 1
                    && a.items[0].as_str().is_some_and(|s| s.value == id.name))
            };
            if only(m.get("excluded")) {
                let (obj, key) = if m.members.len() == 1 {
                    (&root, "mcp")
                } else {
                    (m, "excluded")
                };
                if let Some(i) = obj.members.iter().rposition(|x| x.key == key)
                    && let Some(edits) = super::json::remove_member(text, obj, i)
                {
                    return Ok((edits, false));
                }
            }
        }
    }
    if enabled {
        let mut edits = Vec::new();
        let lists = [
            mcp.and_then(|m| m.get("excluded")),
            root.get("excludeMCPServers"),
        ];
        for list in lists.into_iter().flatten() {
            if let JVal::Arr(arr) = list {
                let mut idx: Vec<usize> = arr
                    .items
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| v.as_str().is_some_and(|s| s.value == id.name))
                    .map(|(i, _)| i)
                    .collect();
                // One at a time from the end, so that the commas stay right.
                idx.truncate(1);
                for i in idx {
                    edits.extend(super::json::remove_item(text, arr, i).ok_or_else(|| {
                        ManageError::Layout("cannot find the commas in mcp.excluded".to_owned())
                    })?);
                }
            }
        }
        if edits.is_empty() {
            return Err(ManageError::Layout(format!(
                "{id}: Gemini CLI leaves it out by `mcp.allowed`; add the name there by hand"
            )));
        }
        return Ok((edits, false));
    }
    match (mcp, mcp.and_then(|m| m.get("excluded"))) {
        (_, Some(JVal::Arr(arr))) => Ok((super::json::append_item(text, arr, &quoted), false)),
        (Some(m), None) => {
            let member = format!("\"excluded\": [{quoted}]");
            Ok((
                super::json::append_member(text, m, &|_| member.clone()),
                true,
            ))
        }
        (None, _) => {
            let member = format!("\"mcp\": {{ \"excluded\": [{quoted}] }}");
            Ok((
                super::json::append_member(text, &root, &|_| member.clone()),
                true,
            ))
        }
        _ => Err(ManageError::Layout(
            "`mcp.excluded` is not a list".to_owned(),
        )),
    }
}

/// Gemini CLI starts only the servers a non-empty `mcp.allowed` (or `allowMCPServers`)
/// names: a new server's name goes there too.
fn gemini_allow(text: &str, name: &str) -> Result<Vec<Edit>, ManageError> {
    let Some(JVal::Obj(root)) = jsonc::parse(text)? else {
        return Ok(Vec::new());
    };
    let list = root
        .get("mcp")
        .and_then(JVal::as_obj)
        .and_then(|m| m.get("allowed"))
        .or_else(|| root.get("allowMCPServers"));
    match list {
        Some(JVal::Arr(arr)) if !arr.items.is_empty() => Ok(super::json::append_item(
            text,
            arr,
            &Syntax::Json.string(name),
        )),
        _ => Ok(Vec::new()),
    }
}

/// Gemini CLI: a removed server's name out of `mcp.allowed` and `mcp.excluded` (and their
/// older spellings).
fn gemini_forget(text: &str, name: &str) -> Result<Vec<Edit>, ManageError> {
    let Some(JVal::Obj(root)) = jsonc::parse(text)? else {
        return Ok(Vec::new());
    };
    let mcp = root.get("mcp").and_then(JVal::as_obj);
    let lists = [
        mcp.and_then(|m| m.get("allowed")),
        mcp.and_then(|m| m.get("excluded")),
        root.get("allowMCPServers"),
        root.get("excludeMCPServers"),
    ];
    let mut edits = Vec::new();
    for list in lists.into_iter().flatten() {
        if let JVal::Arr(arr) = list
            && let Some(i) = arr
                .items
                .iter()
                .position(|v| v.as_str().is_some_and(|s| s.value == name))
        {
            edits.extend(super::json::remove_item(text, arr, i).ok_or_else(|| {
                ManageError::Layout("cannot find the commas in a list of names".to_owned())
            })?);
        }
    }
    Ok(edits)
}

/// Claude Code: the name into (or out of) the project's `disabledMcpServers`.
fn claude_edits(
    text: &str,
    id: &EntryRef,
    enabled: bool,
    added: bool,
) -> Result<(Vec<Edit>, bool), ManageError> {
    let Some(JVal::Obj(root)) = jsonc::parse(text)? else {
        return Err(ManageError::Missing);
    };
    let project = super::json::object_at(&root, &id.scope).ok_or(ManageError::Missing)?;
    let quoted = Syntax::Json.string(&id.name);
    match project.get("disabledMcpServers") {
        Some(JVal::Arr(arr))
            if enabled
                && added
                && arr.items.len() == 1
                && arr.items[0].as_str().is_some_and(|s| s.value == id.name) =>
        {
            let i = project
                .members
                .iter()
                .rposition(|m| m.key == "disabledMcpServers")
                .ok_or(ManageError::Missing)?;
            let edits = super::json::remove_member(text, project, i).ok_or_else(|| {
                ManageError::Layout("cannot find the commas around disabledMcpServers".to_owned())
            })?;
            Ok((edits, false))
        }
        Some(JVal::Arr(arr)) if enabled => {
            let i = arr
                .items
                .iter()
                .position(|v| v.as_str().is_some_and(|s| s.value == id.name))
                .ok_or(ManageError::Missing)?;
            let edits = super::json::remove_item(text, arr, i).ok_or_else(|| {
                ManageError::Layout("cannot find the commas in disabledMcpServers".to_owned())
            })?;
            Ok((edits, false))
        }
        Some(JVal::Arr(arr)) => Ok((super::json::append_item(text, arr, &quoted), false)),
        None if !enabled => {
            let member = format!("\"disabledMcpServers\": [{quoted}]");
            Ok((
                super::json::append_member(text, project, &|_| member.clone()),
                true,
            ))
        }
        _ => Err(ManageError::Layout(format!(
            "{id}: the project's disabledMcpServers is not a list; edit it by hand"
        ))),
    }
}

/// The fields a minimal document of `dialect` starts with, for a file Warden creates.
pub(super) fn minimal(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Codex | Dialect::Goose => "",
        Dialect::ContinueYaml => "name: Local Config\nversion: 1.0.0\nschema: v1\n",
        _ => "{}\n",
    }
}

fn standalone_doc(dialect: Dialect, raw: &str) -> (Dialect, String) {
    let doc = match dialect.syntax() {
        Syntax::Json => format!("{{\"{}\": {{{raw}}}}}", dialect.servers_key()),
        Syntax::Yaml => format!("{}:\n{raw}", dialect.servers_key()),
        Syntax::Toml => raw.to_owned(),
    };
    let dialect = if dialect == Dialect::ClaudeCodeUser {
        Dialect::McpServers
    } else {
        dialect
    };
    (dialect, doc)
}

/// The entry `raw` (a removed entry's own text) as the one entry of a minimal document, to
/// list it.
pub(super) fn standalone(client: ClientId, dialect: Dialect, raw: &str) -> Option<ServerEntry> {
    let (dialect, doc) = standalone_doc(dialect, raw);
    edit::entries(client, dialect, &doc)
        .ok()?
        .into_iter()
        .next()
}

/// How the client would start the entry `raw`.
pub(super) fn standalone_launch(
    client: ClientId,
    dialect: Dialect,
    raw: &str,
) -> Option<edit::Launch> {
    let _ = client;
    let (dialect, doc) = standalone_doc(dialect, raw);
    edit::launches(dialect, &doc).ok()?.into_iter().next()
}
