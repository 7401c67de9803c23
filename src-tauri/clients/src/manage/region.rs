//! Where a whole entry is in a file, per syntax, and where a new one goes: the byte edits
//! that take an entry out (with its separator, and comment lines of its own above it) and
//! those that put one in at the end of the server list, in the list's own style.

use std::ops::Range;

use super::json::{self, Layout};
use super::lines::{
    self, Edit, blank, eol, hash_comment, indent_width, line_start, next_line, starts_line,
};
use super::render::{self, V};
use super::types::ManageError;
use crate::dialect::Dialect;
use crate::doc::EntryRef;
use crate::jsonc::{self, JObj, JVal};
use crate::yaml::{self, YNode};

/// A new entry's contents: fields to write out, or an entry's own text taken out earlier.
pub(super) enum Content<'a> {
    New(&'a [(&'static str, V)]),
    Raw(&'a str),
}

/// How to take one entry out: the edits, and the entry's own bytes.
pub(super) struct Region {
    pub edits: Vec<Edit>,
    pub raw: Range<usize>,
}

fn layout_error(id: &EntryRef, what: &str) -> ManageError {
    ManageError::Layout(format!("{id}: {what}"))
}

// ---------------------------------------------------------------- JSON

fn json_root(text: &str) -> Result<Option<JObj>, ManageError> {
    match jsonc::parse(text)? {
        None => Ok(None),
        Some(JVal::Obj(o)) => Ok(Some(o)),
        Some(_) => Err(ManageError::Layout(
            "the top level is not an object".to_owned(),
        )),
    }
}

fn servers_path(dialect: Dialect, id: &EntryRef) -> Vec<String> {
    let mut p = id.scope.clone();
    p.push(dialect.servers_key().to_owned());
    p
}

pub(super) fn json_regions(
    dialect: Dialect,
    text: &str,
    id: &EntryRef,
) -> Result<Vec<Region>, ManageError> {
    let Some(root) = json_root(text)? else {
        return Ok(Vec::new());
    };
    let Some(obj) = json::object_at(&root, &servers_path(dialect, id)) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (i, m) in obj.members.iter().enumerate() {
        if m.key != id.name {
            continue;
        }
        let edits = json::remove_member(text, obj, i)
            .ok_or_else(|| layout_error(id, "cannot find the commas around the entry"))?;
        out.push(Region {
            edits,
            raw: m.key_span.start..m.value.span().end,
        });
    }
    // Two members of one name: take both out in one go (their edits may touch).
    if out.len() > 1 {
        return Err(layout_error(
            id,
            "the name appears more than once in the same list; remove the extra one by hand",
        ));
    }
    Ok(out)
}

pub(super) fn json_append(
    dialect: Dialect,
    text: &str,
    name: &str,
    content: &Content<'_>,
) -> Result<Vec<Edit>, ManageError> {
    let render = |l: &Layout| match content {
        Content::New(fields) => render::json_member(name, fields, l),
        Content::Raw(raw) => (*raw).to_owned(),
    };
    let Some(root) = json_root(text)? else {
        // An empty file: a whole document.
        let e = eol(text);
        let l = Layout {
            indent: "    ".to_owned(),
            unit: "  ".to_owned(),
            eol: e,
            multiline: true,
        };
        let key = dialect.servers_key();
        return Ok(vec![(
            text.len()..text.len(),
            format!("{{{e}  \"{key}\": {{{e}    {}{e}  }}{e}}}{e}", render(&l)),
        )]);
    };
    match root.get(dialect.servers_key()) {
        Some(JVal::Obj(servers)) => Ok(json::append_member(text, servers, &render)),
        Some(JVal::Other(r)) if &text[r.clone()] == "null" => Err(ManageError::Layout(format!(
            "`{}` is null; write {{}} there first",
            dialect.servers_key()
        ))),
        Some(_) => Err(ManageError::Layout(format!(
            "`{}` is not an object of servers",
            dialect.servers_key()
        ))),
        None => {
            // No server list yet: one holding the entry, as the root's last member.
            let key = dialect.servers_key();
            Ok(json::append_member(text, &root, &|l: &Layout| {
                let inner = Layout {
                    indent: format!("{}{}", l.indent, l.unit),
                    unit: l.unit.clone(),
                    eol: l.eol,
                    multiline: l.multiline,
                };
                if l.multiline {
                    format!(
                        "\"{key}\": {{{e}{}{}{e}{}}}",
                        inner.indent,
                        render(&inner),
                        l.indent,
                        e = l.eol
                    )
                } else {
                    format!("\"{key}\": {{{}}}", render(&inner))
                }
            }))
        }
    }
}

// ---------------------------------------------------------------- TOML

/// Comment lines right above `pos`'s line, and one blank line above those when `end` is
/// followed by a blank line or the end of the text: where taking a block out starts.
fn lead(
    text: &str,
    pos: usize,
    end: usize,
    comment: fn(&str) -> bool,
    indent: Option<usize>,
) -> usize {
    let mut start = line_start(text, pos);
    while start > 0 {
        let prev = line_start(text, start - 1);
        let line = text[prev..start].trim_end_matches(['\n', '\r']);
        let same_indent = indent.is_none_or(|n| indent_width(line) == n);
        if comment(line) && !blank(line) && same_indent {
            start = prev;
        } else {
            break;
        }
    }
    let after_blank = end >= text.len() || blank(&text[end..lines::line_end(text, end)]);
    if start > 0 && after_blank {
        let prev = line_start(text, start - 1);
        if blank(&text[prev..start]) {
            start = prev;
        }
    }
    start
}

/// The end of the last line before `limit` that is neither blank nor a comment, from `from`.
fn content_end(text: &str, from: usize, limit: usize) -> usize {
    let mut end = next_line(text, from).min(limit.max(from));
    let mut pos = end;
    while pos < limit {
        let line = &text[pos..lines::line_end(text, pos)];
        let next = next_line(text, pos);
        if !blank(line) && !hash_comment(line) {
            end = next.min(limit);
        }
        pos = next;
    }
    end
}

struct TomlDoc {
    off: usize,
    doc: toml_edit::Document<String>,
}

fn toml_doc(text: &str) -> Result<Option<TomlDoc>, ManageError> {
    let off = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let body = &text[off..];
    if body.trim().is_empty() {
        return Ok(None);
    }
    let doc = toml_edit::Document::parse(body.to_owned()).map_err(|e| {
        let at = off + e.span().map_or(0, |s| s.start);
        ManageError::Parse(crate::doc::DocError::at(
            text,
            at,
            e.message().trim().to_owned(),
        ))
    })?;
    Ok(Some(TomlDoc { off, doc }))
}

/// The header spans of `t` and of the tables under it.
fn headers(t: &toml_edit::Table, off: usize, out: &mut Vec<usize>) {
    if let Some(s) = t.span()
        && !t.is_implicit()
    {
        out.push(s.start + off);
    }
    for (_, item) in t.iter() {
        match item {
            toml_edit::Item::Table(sub) if !sub.is_dotted() => headers(sub, off, out),
            toml_edit::Item::ArrayOfTables(a) => {
                for sub in a.iter() {
                    headers(sub, off, out);
                }
            }
            _ => {}
        }
    }
}

pub(super) fn toml_regions(text: &str, id: &EntryRef) -> Result<Vec<Region>, ManageError> {
    let Some(TomlDoc { off, doc }) = toml_doc(text)? else {
        return Ok(Vec::new());
    };
    let Some(servers) = doc.get("mcp_servers").and_then(|i| i.as_table_like()) else {
        return Ok(Vec::new());
    };
    let Some((key, item)) = servers.get_key_value(&id.name) else {
        return Ok(Vec::new());
    };
    match item {
        toml_edit::Item::Table(t) if !t.is_dotted() => {
            let mut all = Vec::new();
            headers(doc.as_table(), off, &mut all);
            all.sort_unstable();
            let mut mine = Vec::new();
            headers(t, off, &mut mine);
            if mine.is_empty() {
                return Err(layout_error(id, "the table has no header of its own"));
            }
            let mut edits = Vec::new();
            let mut raw: Option<Range<usize>> = None;
            for h in mine {
                let next = all.iter().copied().find(|&o| o > h).unwrap_or(text.len());
                let next = if next < text.len() {
                    line_start(text, next)
                } else {
                    next
                };
                let end = content_end(text, h, next);
                let start =
                    lines::unterminated_start(text, lead(text, h, end, hash_comment, None), end);
                let hs = line_start(text, h);
                raw = Some(match raw {
                    None => hs..end,
                    Some(r) => r.start.min(hs)..r.end.max(end),
                });
                edits.push((start..end, String::new()));
            }
            Ok(vec![Region {
                edits,
                raw: raw.unwrap_or(0..0),
            }])
        }
        toml_edit::Item::Value(v) => {
            let (Some(ks), Some(vs)) = (key.span(), v.span()) else {
                return Err(layout_error(id, "no position in the file"));
            };
            let (ks, ve) = (ks.start + off, vs.end + off);
            let rest = &text[ve..lines::line_end(text, ve)];
            if !starts_line(text, ks) || !(blank(rest) || hash_comment(rest)) {
                return Err(layout_error(
                    id,
                    "written on a line with other keys; edit it by hand",
                ));
            }
            let end = next_line(text, ve);
            let start =
                lines::unterminated_start(text, lead(text, ks, end, hash_comment, None), end);
            Ok(vec![Region {
                edits: vec![(start..end, String::new())],
                raw: line_start(text, ks)..end,
            }])
        }
        _ => Err(layout_error(
            id,
            "written with dotted keys; Warden edits `[mcp_servers.NAME]` tables and `NAME = { ... }` lines only",
        )),
    }
}

pub(super) fn toml_append(text: &str, name: &str, content: &Content<'_>) -> Vec<Edit> {
    let e = eol(text);
    let table = match content {
        Content::New(fields) => render::toml_table(name, fields, e),
        Content::Raw(raw) => (*raw).to_owned(),
    };
    let body = text.trim_start_matches('\u{feff}');
    let prefix = if body.is_empty() {
        ""
    } else if text.ends_with('\n') {
        e
    } else {
        // No final line break: the blank line, and the table without one either.
        let table = table.strip_suffix(e).unwrap_or(&table);
        return vec![(text.len()..text.len(), format!("{e}{e}{table}"))];
    };
    vec![(text.len()..text.len(), format!("{prefix}{table}"))]
}

// ---------------------------------------------------------------- YAML

/// The servers' node of a YAML file: its key (offset, end of the key's `:`) and value.
struct YContainer {
    key_start: usize,
    colon_end: usize,
    value: Option<YNode>,
}

fn yaml_container(dialect: Dialect, text: &str) -> Result<Option<YContainer>, ManageError> {
    let Some(root) = yaml::parse(text)? else {
        return Ok(None);
    };
    let YNode::Map(root) = root else {
        return Err(ManageError::Layout(
            "the top level is not a mapping".to_owned(),
        ));
    };
    if root.flow {
        return Err(ManageError::Layout(
            "the file is one flow mapping ({...}); edit it by hand".to_owned(),
        ));
    }
    let Some((k, v)) = root.entry(dialect.servers_key()) else {
        return Ok(None);
    };
    let colon_end = text[k.span.end..]
        .find(':')
        .map_or(k.span.end, |i| k.span.end + i + 1);
    Ok(Some(YContainer {
        key_start: k.span.start,
        colon_end,
        value: Some(v.clone()),
    }))
}

/// The entries of a block container: (name, offset where the entry starts: Goose's key,
/// Continue's `-`).
fn yaml_entries(
    dialect: Dialect,
    text: &str,
    value: &YNode,
) -> Result<Vec<(String, usize)>, ManageError> {
    let mut out = Vec::new();
    match (dialect, value) {
        (Dialect::Goose, YNode::Map(m)) if !m.flow => {
            for (k, _) in &m.entries {
                if let Some(s) = k.as_scalar() {
                    out.push((s.value.clone(), s.span.start));
                }
            }
        }
        (Dialect::ContinueYaml, YNode::Seq(s)) if !s.flow => {
            for item in &s.items {
                let Some(m) = item.as_map() else { continue };
                let Some(first) = m.entries.first().and_then(|(k, _)| k.as_scalar()) else {
                    continue;
                };
                let name = m
                    .get("name")
                    .and_then(YNode::as_scalar)
                    .map(|s| s.value.clone())
                    .unwrap_or_default();
                let ls = line_start(text, first.span.start);
                let Some(dash) = text[ls..first.span.start].find('-').map(|i| ls + i) else {
                    continue;
                };
                out.push((name, dash));
            }
        }
        _ => {}
    }
    Ok(out)
}

/// The end of the YAML block starting at `start` (column `n`): after its last line that is
/// more indented than `n` (blank and comment lines in between included).
fn yaml_block_end(text: &str, start: usize) -> usize {
    let n = start - line_start(text, start);
    let mut end = next_line(text, start);
    let mut pos = end;
    while pos < text.len() {
        let line = &text[pos..lines::line_end(text, pos)];
        let next = next_line(text, pos);
        if blank(line) || hash_comment(line) {
            pos = next;
            continue;
        }
        if indent_width(line) > n {
            end = next;
            pos = next;
        } else {
            break;
        }
    }
    end
}

pub(super) fn yaml_regions(
    dialect: Dialect,
    text: &str,
    id: &EntryRef,
) -> Result<Vec<Region>, ManageError> {
    let Some(c) = yaml_container(dialect, text)? else {
        return Ok(Vec::new());
    };
    let Some(value) = &c.value else {
        return Ok(Vec::new());
    };
    let entries = yaml_entries(dialect, text, value)?;
    let mut out = Vec::new();
    for (name, start) in &entries {
        if *name != id.name {
            continue;
        }
        if !starts_line(text, *start) {
            return Err(layout_error(
                id,
                "does not start its own line; edit it by hand",
            ));
        }
        let end = yaml_block_end(text, *start);
        let n = start - line_start(text, *start);
        let from =
            lines::unterminated_start(text, lead(text, *start, end, hash_comment, Some(n)), end);
        let mut edits = vec![(from..end, String::new())];
        if entries.len() == 1 {
            // The list would be empty: say so (`{}` / `[]`), as the clients write it.
            let empty = if dialect == Dialect::Goose {
                " {}"
            } else {
                " []"
            };
            edits.push((c.colon_end..c.colon_end, empty.to_owned()));
        }
        out.push(Region {
            edits,
            raw: line_start(text, *start)..end,
        });
    }
    if out.len() > 1 {
        return Err(layout_error(
            id,
            "the name appears more than once in the same list; remove the extra one by hand",
        ));
    }
    Ok(out)
}

pub(super) fn yaml_append(
    dialect: Dialect,
    text: &str,
    name: &str,
    content: &Content<'_>,
) -> Result<Vec<Edit>, ManageError> {
    let e = eol(text);
    let unit = lines::unit(text);
    let render = |indent: &str, unit: &str| match content {
        Content::New(fields) => render::yaml_entry(dialect, name, fields, indent, unit, e),
        Content::Raw(raw) => (*raw).to_owned(),
    };
    let key = dialect.servers_key();
    let Some(c) = yaml_container(dialect, text)? else {
        let sep = if text.is_empty() || text.ends_with('\n') {
            ""
        } else {
            e
        };
        return Ok(vec![(
            text.len()..text.len(),
            format!("{sep}{key}:{e}{}", render(&unit, &unit)),
        )]);
    };
    let value = c.value.as_ref();
    let entries = match value {
        Some(v) => yaml_entries(dialect, text, v)?,
        None => Vec::new(),
    };
    if let Some((_, start)) = entries.last() {
        let end = yaml_block_end(text, *start);
        let indent = &text[line_start(text, *start)..*start];
        // The step under an entry's key, from the entry itself.
        let n = indent.len();
        let child = text[next_line(text, *start)..end]
            .lines()
            .find(|l| !blank(l) && !hash_comment(l))
            .map(indent_width)
            .filter(|w| *w > n)
            .map_or(unit.clone(), |w| " ".repeat(w - n));
        let child = if dialect == Dialect::ContinueYaml {
            unit.clone()
        } else {
            child
        };
        let new = lines::insert_lines(text, end, &render(indent, &child), e);
        return Ok(vec![(end..end, new)]);
    }
    // An empty list: `{}`, `[]`, `~`, `null` or nothing after the key.
    let line_end = lines::line_end(text, c.colon_end);
    let rest = &text[c.colon_end..line_end];
    let token = rest.trim_start();
    let token = token.split('#').next().unwrap_or("").trim_end();
    let indent = format!(
        "{}{unit}",
        &text[line_start(text, c.key_start)..c.key_start]
    );
    let new = render(&indent, &unit);
    let new = new.strip_suffix(e).unwrap_or(&new);
    match token {
        "" => Ok(vec![(line_end..line_end, format!("{e}{new}"))]),
        "{}" | "[]" | "~" | "null" => {
            let at = c.colon_end + rest.find(token).unwrap_or(0);
            Ok(vec![(c.colon_end..at + token.len(), format!("{e}{new}"))])
        }
        _ => Err(ManageError::Layout(format!(
            "`{key}` is written in flow style ({{...}} or [...]); edit it by hand or write it as a block"
        ))),
    }
}

/// The child indentation of a YAML block entry starting at `start` (for a key added to it).
pub(super) fn yaml_child_indent(text: &str, start: usize) -> (String, usize) {
    let end = yaml_block_end(text, start);
    let n = start - line_start(text, start);
    let child = text[next_line(text, start)..end]
        .lines()
        .find(|l| !blank(l) && !hash_comment(l))
        .map(|l| l[..indent_width(l)].to_owned())
        .filter(|w| w.len() > n)
        .unwrap_or_else(|| {
            format!(
                "{}{}",
                &text[line_start(text, start)..start],
                lines::unit(text)
            )
        });
    (child, end)
}
