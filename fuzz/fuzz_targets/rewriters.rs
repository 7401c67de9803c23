//! IDE config rewriters (`wrap_text` / `unwrap_text`) for every format: JSON, JSONC, TOML
//! and YAML, and every dialect.
//!
//! Inputs are mostly generated from a model of a client's config (servers with commands,
//! args, env, remote entries; indentation, CRLF, BOM, comments, trailing commas, inline or
//! block layouts, quoting styles), since random bytes would almost never parse; some get
//! noise spliced in (near-valid files), and some are plain text.
//!
//! Invariants:
//! - no panic;
//! - a generated file that parses (per an independent parser: serde_json, toml, or a
//!   complete saphyr event stream) is accepted by wrap;
//! - when wrap changes something: wrapping again changes nothing; unwrapping with the
//!   records gives back the original bytes; unwrapping without them restores every command
//!   and args (same values per the independent parser, up to an `args: []` wrap added);
//! - the wrapped text still parses, and per the independent parser it is exactly the
//!   original document with each changed entry's command replaced by warden and its args by
//!   `bridge --server NAME -- COMMAND ARGS...`;
//! - when wrap changes nothing, the text is returned unchanged; a text that does not parse
//!   is refused with a `Parse` error (and so never written).
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::Value as J;
use warden_clients::{Dialect, EditError, EntryRef, TextEdit, unwrap_text, wrap_text};

const WARDEN: &str = "/opt/warden/bin/warden";

// ------------------------------------------------------------------ the model

/// Strings that matter to the rewriters, or arbitrary text.
#[derive(Debug, Clone)]
struct Word(String);

const WORDS: &[&str] = &[
    "npx",
    "uvx",
    "-y",
    "@scope/pkg",
    "--",
    "bridge",
    "--server",
    "--server=x",
    "warden",
    WARDEN,
    "warden.exe",
    "C:\\Program Files\\nodejs\\npx.cmd",
    "${workspaceFolder}",
    "",
    " ",
    "a,b",
    "[x]",
    "{y}",
    "#c",
    "- z",
    "yes",
    "null",
    "~",
    "true",
    "123",
    "it's",
    "say \"hi\"",
    "back\\slash",
    "tab\there",
    "line\nbreak",
    "cr\rlf",
    "é",
    "😀",
    "a: b",
    "&anchor",
    "*alias",
    "!tag",
    "%",
    "|",
    ">",
    "'",
    "\"",
    "\\",
    "\u{7f}",
    "\u{85}",
    "\u{feff}",
    "\u{2028}",
    "/* c */",
    "// c",
    "=",
    "[mcp_servers]",
];

impl<'a> Arbitrary<'a> for Word {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Word(match u.int_in_range(0u8..=9)? {
            0..=4 => (*u.choose(WORDS)?).to_owned(),
            5..=7 => {
                let n = u.int_in_range(1u8..=10)?;
                let mut s = String::new();
                for _ in 0..n {
                    s.push(*u.choose(&[
                        'a', 'b', 'z', 'A', '0', '9', '-', '_', '.', '/', '@', ' ', ':', ',', '\'',
                        '"', '\\', '#', '[', ']', '{', '}', 'é',
                    ])?);
                }
                s
            }
            _ => String::arbitrary(u)?.chars().take(12).collect(),
        }))
    }
}

#[derive(Debug, Clone, Copy, Arbitrary, PartialEq)]
enum Kind {
    Stdio,
    /// An explicit `type: stdio` (`type: local` for opencode).
    TypedStdio,
    Remote,
    /// An entry the rewriter must skip: no command, a command that is not a string, ...
    Odd,
}

#[derive(Debug, Clone, Arbitrary)]
struct Server {
    name: Word,
    command: Word,
    args: Option<Vec<Word>>,
    env: Vec<(Word, Word)>,
    kind: Kind,
    /// One line / inline table / flow mapping.
    inline: bool,
    /// Block (`- a` lines) or flow (`[a, b]`) args in YAML; one per line in JSON/TOML.
    multiline_args: bool,
}

#[derive(Debug, Clone, Copy, Arbitrary, PartialEq)]
enum Quote {
    Plain,
    Single,
    Double,
}

#[derive(Debug, Clone, Arbitrary)]
struct Style {
    indent: u8,
    crlf: bool,
    bom: bool,
    comments: bool,
    trailing_commas: bool,
    final_newline: bool,
    quote: Quote,
    /// TOML: `[mcp_servers.x]` tables, inline tables, or dotted keys.
    toml_layout: u8,
    /// YAML: indent the `- item` lines under their key, or not.
    yaml_indent_seq: bool,
}

#[derive(Debug, Clone, Copy, Arbitrary, PartialEq)]
enum Fmt {
    Json,
    Jsonc,
    Toml,
    Yaml,
}

#[derive(Debug, Clone, Arbitrary)]
struct Noise {
    at: u16,
    delete: u8,
    insert: Word,
}

#[derive(Debug, Clone, Arbitrary)]
enum Input {
    Generated {
        fmt: Fmt,
        dialect: u8,
        servers: Vec<Server>,
        /// Servers of a Claude Code project (`projects["/p"].mcpServers`).
        project: Vec<Server>,
        style: Style,
        noise: Option<Noise>,
    },
    Text {
        dialect: u8,
        text: String,
    },
}

const DIALECTS: &[Dialect] = &[
    Dialect::McpServers,
    Dialect::ClaudeCodeUser,
    Dialect::Vscode,
    Dialect::Zed,
    Dialect::Opencode,
    Dialect::Codex,
    Dialect::ContinueYaml,
    Dialect::Goose,
];

// ------------------------------------------------------------------ rendering

struct Out<'s> {
    st: &'s Style,
    nl: &'static str,
    ind: &'static str,
}

impl Out<'_> {
    fn i(&self, n: usize) -> String {
        self.ind.repeat(n)
    }
}

fn js(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn unique(servers: &[Server]) -> Vec<(String, &Server)> {
    servers
        .iter()
        .take(6)
        .enumerate()
        .map(|(k, s)| (format!("{}{k}", s.name.0), s))
        .collect()
}

fn json_doc(
    dialect: Dialect,
    servers: &[Server],
    project: &[Server],
    o: &Out<'_>,
    jsonc: bool,
) -> String {
    let nl = o.nl;
    let comments = jsonc && o.st.comments;
    let tc = if jsonc && o.st.trailing_commas {
        ","
    } else {
        ""
    };
    let mut out = String::new();
    if comments {
        out.push_str(&format!("// generated{nl}"));
    }
    out.push_str(&format!("{{{nl}{}\"other\": [1, true, null],{nl}", o.i(1)));
    let key = dialect.servers_key();
    out.push_str(&format!(
        "{}{}: {}",
        o.i(1),
        js(key),
        json_servers(dialect, servers, o, jsonc, 1)
    ));
    if dialect == Dialect::ClaudeCodeUser && !project.is_empty() {
        out.push_str(&format!(
            ",{nl}{}\"projects\": {{{nl}{}\"/p\": {{ \"mcpServers\": {} }}{tc}{nl}{}}}",
            o.i(1),
            o.i(2),
            json_servers(dialect, project, o, jsonc, 2),
            o.i(1)
        ));
    }
    out.push_str(&format!("{tc}{nl}}}"));
    if comments {
        out.push_str(" /* end */");
    }
    out
}

fn json_servers(
    dialect: Dialect,
    servers: &[Server],
    o: &Out<'_>,
    jsonc: bool,
    depth: usize,
) -> String {
    let nl = o.nl;
    let comments = jsonc && o.st.comments;
    let tc = if jsonc && o.st.trailing_commas {
        ","
    } else {
        ""
    };
    let mut out = format!("{{{nl}");
    let list = unique(servers);
    for (k, (name, s)) in list.iter().enumerate() {
        let mut members: Vec<String> = Vec::new();
        let opencode = dialect == Dialect::Opencode;
        match s.kind {
            Kind::TypedStdio => members.push(format!(
                "\"type\": {}",
                js(if opencode { "local" } else { "stdio" })
            )),
            Kind::Remote => {
                members.push("\"type\": \"sse\", \"url\": \"https://example.com/mcp\"".to_owned())
            }
            Kind::Odd => members.push("\"command\": 42".to_owned()),
            Kind::Stdio => {}
        }
        if matches!(s.kind, Kind::Stdio | Kind::TypedStdio) {
            let mut argv: Vec<String> = s.args.iter().flatten().map(|a| js(&a.0)).collect();
            if opencode {
                argv.insert(0, js(&s.command.0));
                members.push(format!(
                    "\"command\": {}",
                    json_list(&argv, o, jsonc, s.multiline_args, depth + 2)
                ));
            } else {
                members.push(format!("\"command\": {}", js(&s.command.0)));
                if s.args.is_some() {
                    members.push(format!(
                        "\"args\": {}",
                        json_list(&argv, o, jsonc, s.multiline_args, depth + 2)
                    ));
                }
            }
        }
        if !s.env.is_empty() {
            let env: Vec<String> = s
                .env
                .iter()
                .map(|(k, v)| format!("{}: {}", js(&k.0), js(&v.0)))
                .collect();
            let key = if opencode { "environment" } else { "env" };
            members.push(format!("\"{key}\": {{ {} }}", env.join(", ")));
        }
        let body = if s.inline {
            format!("{{ {} }}", members.join(", "))
        } else {
            let sep = format!(",{nl}{}", o.i(depth + 2));
            format!(
                "{{{nl}{}{}{tc}{nl}{}}}",
                o.i(depth + 2),
                members.join(&sep),
                o.i(depth + 1)
            )
        };
        out.push_str(&format!("{}{}: {body}", o.i(depth + 1), js(name)));
        if k + 1 < list.len() {
            out.push(',');
        } else {
            out.push_str(tc);
        }
        if comments {
            out.push_str(" // server");
        }
        out.push_str(nl);
    }
    out.push_str(&format!("{}}}", o.i(depth)));
    out
}

fn json_list(items: &[String], o: &Out<'_>, jsonc: bool, multiline: bool, depth: usize) -> String {
    let tc = if jsonc && o.st.trailing_commas && !items.is_empty() {
        ","
    } else {
        ""
    };
    if multiline && !items.is_empty() {
        let nl = o.nl;
        let inner = format!("{nl}{}", o.i(depth + 1));
        let c = if jsonc && o.st.comments {
            " /* a */"
        } else {
            ""
        };
        format!(
            "[{inner}{}{tc}{c}{nl}{}]",
            items.join(&format!(",{inner}")),
            o.i(depth)
        )
    } else {
        format!("[{}{tc}]", items.join(", "))
    }
}

fn toml_str(s: &str, quote: Quote) -> String {
    if quote == Quote::Single && !s.contains('\'') && !s.chars().any(char::is_control) {
        return format!("'{s}'");
    }
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn toml_doc(servers: &[Server], o: &Out<'_>) -> String {
    let nl = o.nl;
    let q = o.st.quote;
    let c = if o.st.comments { " # c" } else { "" };
    let mut out = format!("# generated{nl}model = \"x\"{nl}{nl}");
    let layout = o.st.toml_layout % 3;
    if layout != 0 {
        out.push_str(&format!("[mcp_servers]{c}{nl}"));
    }
    for (name, s) in unique(servers) {
        let key = toml_str(&name, q);
        let mut pairs: Vec<(String, String)> = Vec::new();
        match s.kind {
            Kind::Remote => pairs.push(("url".into(), "\"https://example.com\"".into())),
            Kind::Odd => pairs.push(("command".into(), "[\"x\"]".into())),
            Kind::Stdio | Kind::TypedStdio => {
                pairs.push(("command".into(), toml_str(&s.command.0, q)));
                if let Some(args) = &s.args {
                    let items: Vec<String> = args.iter().map(|a| toml_str(&a.0, q)).collect();
                    let list = if s.multiline_args && !items.is_empty() && layout != 1 {
                        let tc = if o.st.trailing_commas { "," } else { "" };
                        format!(
                            "[{nl}{}{}{tc}{nl}]",
                            o.i(1),
                            items.join(&format!(",{c}{nl}{}", o.i(1)))
                        )
                    } else {
                        format!("[{}]", items.join(", "))
                    };
                    pairs.push(("args".into(), list));
                }
            }
        }
        let env: Vec<String> = s
            .env
            .iter()
            .map(|(k, v)| format!("{} = {}", toml_str(&k.0, q), toml_str(&v.0, q)))
            .collect();
        match layout {
            0 => {
                out.push_str(&format!("[mcp_servers.{key}]{nl}"));
                for (k, v) in &pairs {
                    out.push_str(&format!("{k} = {v}{c}{nl}"));
                }
                if !env.is_empty() {
                    out.push_str(&format!(
                        "{nl}[mcp_servers.{key}.env]{nl}{}{nl}",
                        env.join(nl)
                    ));
                }
            }
            1 => {
                let mut inner: Vec<String> =
                    pairs.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                if !env.is_empty() {
                    inner.push(format!("env = {{ {} }}", env.join(", ")));
                }
                out.push_str(&format!("{key} = {{ {} }}{c}{nl}", inner.join(", ")));
            }
            _ => {
                for (k, v) in &pairs {
                    out.push_str(&format!("{key}.{k} = {v}{c}{nl}"));
                }
            }
        }
        out.push_str(nl);
    }
    out
}

fn yaml_plain_ok(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    !s.is_empty()
        && s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '/' || c == '.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./@+-".contains(c))
        && !["y", "n", "yes", "no", "on", "off", "true", "false", "null"].contains(&lower.as_str())
}

fn yaml_str(s: &str, quote: Quote) -> String {
    let printable = |c: char| {
        matches!(c, '\t' | ' '..='~' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
            && c != '\u{feff}'
    };
    match quote {
        Quote::Plain if yaml_plain_ok(s) => s.to_owned(),
        Quote::Single | Quote::Plain if s.chars().all(|c| printable(c) && c != '\t') => {
            format!("'{}'", s.replace('\'', "''"))
        }
        _ => {
            let mut out = String::from("\"");
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    c if printable(c) && c != '\t' => out.push(c),
                    c => out.push_str(&format!("\\u{:04X}", c as u32)),
                }
            }
            out.push('"');
            out
        }
    }
}

fn yaml_doc(dialect: Dialect, servers: &[Server], o: &Out<'_>) -> String {
    let nl = o.nl;
    let q = o.st.quote;
    let c = if o.st.comments { " # c" } else { "" };
    // YAML indentation is spaces only.
    let ind = if o.ind.is_empty() || o.ind == "\t" {
        "  "
    } else {
        o.ind
    };
    let i = |n: usize| ind.repeat(n);
    let goose = dialect == Dialect::Goose;
    let mut out = format!("name: generated{c}{nl}version: 1.0.0{nl}");
    let list = unique(servers);
    if goose {
        out.push_str(&format!("extensions:{c}{nl}"));
    } else {
        out.push_str(&format!("mcpServers:{c}{nl}"));
    }
    if list.is_empty() {
        out.push_str(&format!("{}{}{nl}", i(1), if goose { "{}" } else { "[]" }));
    }
    for (name, s) in list {
        let mut pairs: Vec<(&str, String)> = Vec::new();
        if !goose {
            pairs.push(("name", yaml_str(&name, q)));
        }
        match s.kind {
            Kind::TypedStdio => pairs.push(("type", "stdio".into())),
            Kind::Remote => pairs.push(("url", "https://example.com/mcp".into())),
            Kind::Odd => pairs.push((if goose { "cmd" } else { "command" }, "[x]".into())),
            Kind::Stdio => {}
        }
        let cmd_key = if goose { "cmd" } else { "command" };
        let args: Option<Vec<String>> = s
            .args
            .as_ref()
            .map(|a| a.iter().map(|w| yaml_str(&w.0, q)).collect());
        if matches!(s.kind, Kind::Stdio | Kind::TypedStdio) {
            pairs.push((cmd_key, yaml_str(&s.command.0, q)));
        }
        let env: Vec<String> = s
            .env
            .iter()
            .map(|(k, v)| format!("{}: {}", yaml_str(&k.0, q), yaml_str(&v.0, q)))
            .collect();
        let env_key = if goose { "envs" } else { "env" };
        let (lead, depth) = if goose {
            (format!("{}{}:{nl}", i(1), yaml_str(&name, q)), 2)
        } else {
            (String::new(), 2)
        };
        if s.inline {
            let mut inner: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            if let (Some(a), true) = (&args, matches!(s.kind, Kind::Stdio | Kind::TypedStdio)) {
                inner.push(format!("args: [{}]", a.join(", ")));
            }
            if !env.is_empty() {
                inner.push(format!("{env_key}: {{{}}}", env.join(", ")));
            }
            let flow = format!("{{{}}}", inner.join(", "));
            if goose {
                out.push_str(&format!("{}{}: {flow}{c}{nl}", i(1), yaml_str(&name, q)));
            } else {
                out.push_str(&format!("{}- {flow}{c}{nl}", i(1)));
            }
            continue;
        }
        out.push_str(&lead);
        let mut lines: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}: {v}{c}")).collect();
        if let (Some(a), true) = (&args, matches!(s.kind, Kind::Stdio | Kind::TypedStdio)) {
            if s.multiline_args && !a.is_empty() {
                let seq_ind = if o.st.yaml_indent_seq {
                    i(depth + 1)
                } else {
                    i(depth)
                };
                let items: Vec<String> = a.iter().map(|x| format!("{seq_ind}- {x}{c}")).collect();
                lines.push(format!("args:{nl}{}", items.join(nl)));
            } else {
                lines.push(format!("args: [{}]", a.join(", ")));
            }
        }
        if !env.is_empty() {
            let inner: Vec<String> = env.iter().map(|e| format!("{}{e}", i(depth + 1))).collect();
            lines.push(format!("{env_key}:{nl}{}", inner.join(nl)));
        }
        if lines.is_empty() {
            lines.push("enabled: true".into());
        }
        for (k, line) in lines.iter().enumerate() {
            if goose {
                out.push_str(&format!("{}{line}{nl}", i(depth)));
            } else if k == 0 {
                out.push_str(&format!("{}- {line}{nl}", i(1)));
            } else {
                // Items of `- ` entries are indented two past the dash.
                out.push_str(&format!("{}  {line}{nl}", i(1)));
            }
        }
    }
    out
}

fn render(
    fmt: Fmt,
    dialect_pick: u8,
    servers: &[Server],
    project: &[Server],
    style: &Style,
) -> (Dialect, String) {
    let nl = if style.crlf { "\r\n" } else { "\n" };
    let ind = ["", " ", "  ", "\t", "    "][usize::from(style.indent % 5)];
    let o = Out { st: style, nl, ind };
    let (dialect, mut text) = match fmt {
        Fmt::Json | Fmt::Jsonc => {
            let d = DIALECTS[usize::from(dialect_pick % 5)];
            (d, json_doc(d, servers, project, &o, fmt == Fmt::Jsonc))
        }
        Fmt::Toml => (Dialect::Codex, toml_doc(servers, &o)),
        Fmt::Yaml => {
            let d = if dialect_pick.is_multiple_of(2) {
                Dialect::ContinueYaml
            } else {
                Dialect::Goose
            };
            (d, yaml_doc(d, servers, &o))
        }
    };
    if !style.final_newline {
        while text.ends_with(['\n', '\r']) {
            text.pop();
        }
    } else if !text.ends_with('\n') {
        text.push_str(nl);
    }
    if style.bom {
        text.insert(0, '\u{feff}');
    }
    (dialect, text)
}

fn splice(text: &mut String, noise: &Noise) {
    let mut at = usize::from(noise.at) % (text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let mut end = (at + usize::from(noise.delete % 8)).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    text.replace_range(at..end, &noise.insert.0);
}

// ------------------------------------------------------------------ independent readers

/// A document as an independent parser sees it, in one shape for every format.
#[derive(Debug, Clone, PartialEq)]
enum V {
    Scalar(String),
    Seq(Vec<V>),
    /// Keys in order; compared as sorted (key order is not meaning).
    Map(Vec<(String, V)>),
    Other,
}

impl V {
    fn norm(self) -> V {
        match self {
            V::Seq(v) => V::Seq(v.into_iter().map(V::norm).collect()),
            V::Map(mut m) => {
                m.sort_by(|a, b| a.0.cmp(&b.0));
                V::Map(m.into_iter().map(|(k, v)| (k, v.norm())).collect())
            }
            v => v,
        }
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        match self {
            V::Map(m) => m.iter_mut().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn set(&mut self, key: &str, value: V) {
        if let Some(v) = self.get_mut(key) {
            *v = value;
        } else if let V::Map(m) = self {
            m.push((key.to_owned(), value));
        }
    }

    fn strings(&self) -> Option<Vec<String>> {
        match self {
            V::Seq(items) => items
                .iter()
                .map(|i| match i {
                    V::Scalar(s) => Some(s.clone()),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }
}

fn from_json(j: J) -> V {
    match j {
        J::String(s) => V::Scalar(s),
        J::Array(a) => V::Seq(a.into_iter().map(from_json).collect()),
        J::Object(o) => V::Map(o.into_iter().map(|(k, v)| (k, from_json(v))).collect()),
        other => V::Scalar(format!("json:{other}")),
    }
}

fn from_toml(t: toml::Value) -> V {
    match t {
        toml::Value::String(s) => V::Scalar(s),
        toml::Value::Array(a) => V::Seq(a.into_iter().map(from_toml).collect()),
        toml::Value::Table(o) => V::Map(o.into_iter().map(|(k, v)| (k, from_toml(v))).collect()),
        other => V::Scalar(format!("toml:{other}")),
    }
}

/// The first YAML document from a complete event stream (every later one must parse too).
/// `None` when saphyr refuses the text or a mapping key is not a plain value or repeats.
fn from_yaml(text: &str) -> Option<V> {
    use saphyr_parser::{Event, Parser};
    enum F {
        Seq(Vec<V>),
        Map(Vec<(String, V)>, Option<String>),
    }
    let mut stack: Vec<F> = Vec::new();
    let mut root: Option<V> = None;
    let mut docs = 0;
    for item in Parser::new_from_str(text) {
        let (event, _) = item.ok()?;
        let node = match event {
            Event::DocumentStart(_) => {
                docs += 1;
                continue;
            }
            Event::SequenceStart(..) => {
                stack.push(F::Seq(Vec::new()));
                continue;
            }
            Event::MappingStart(..) => {
                stack.push(F::Map(Vec::new(), None));
                continue;
            }
            Event::SequenceEnd => match stack.pop()? {
                F::Seq(v) => V::Seq(v),
                F::Map(..) => return None,
            },
            Event::MappingEnd => match stack.pop()? {
                F::Map(m, _) => V::Map(m),
                F::Seq(_) => return None,
            },
            Event::Scalar(v, ..) => V::Scalar(v.into_owned()),
            Event::Alias(_) => V::Other,
            _ => continue,
        };
        if docs > 1 {
            continue;
        }
        match stack.last_mut() {
            None => root = root.or(Some(node)),
            Some(F::Seq(v)) => v.push(node),
            Some(F::Map(m, pending)) => match pending.take() {
                None => match node {
                    V::Scalar(k) if !m.iter().any(|(e, _)| *e == k) => *pending = Some(k),
                    _ => return None,
                },
                Some(k) => m.push((k, node)),
            },
        }
    }
    Some(root.unwrap_or(V::Other))
}

fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// The document per the independent parser of `dialect`'s format; `None` if it refuses it.
fn read(dialect: Dialect, text: &str) -> Option<V> {
    let body = strip_bom(text);
    match dialect {
        Dialect::Codex => toml::from_str::<toml::Table>(body)
            .ok()
            .map(|t| from_toml(toml::Value::Table(t))),
        Dialect::ContinueYaml | Dialect::Goose => from_yaml(text),
        _ => serde_json::from_str::<J>(body).ok().map(from_json),
    }
}

/// The entry `id` of the document.
fn entry_mut<'v>(dialect: Dialect, doc: &'v mut V, id: &EntryRef) -> Option<&'v mut V> {
    let mut holder = doc;
    for key in &id.scope {
        holder = holder.get_mut(key)?;
    }
    let servers = holder.get_mut(if id.scope.is_empty() {
        dialect.servers_key()
    } else {
        "mcpServers"
    })?;
    match dialect {
        Dialect::ContinueYaml => match servers {
            V::Seq(items) => items.iter_mut().enumerate().rev().find_map(|(i, item)| {
                let name = match item.get_mut("name") {
                    Some(V::Scalar(n)) => n.clone(),
                    _ => format!("#{}", i + 1),
                };
                (name == id.name).then_some(item)
            }),
            _ => None,
        },
        _ => servers.get_mut(&id.name),
    }
}

fn scalars(items: &[&str]) -> Vec<V> {
    items.iter().map(|s| V::Scalar((*s).to_owned())).collect()
}

/// `doc` with the `changed` entries wrapped (or, `wrapped == false`, with only an empty
/// `args` added where there was none: what an unwrap without records leaves).
fn expected(dialect: Dialect, mut doc: V, changed: &[EntryRef], wrapped: bool) -> Option<V> {
    for id in changed {
        let entry = entry_mut(dialect, &mut doc, id)?;
        // A name that starts with `-` goes in one `--server=NAME` argument.
        let joined = format!("--server={}", id.name);
        let own: Vec<&str> = if id.name.starts_with('-') {
            vec!["bridge", &joined, "--"]
        } else {
            vec!["bridge", "--server", &id.name, "--"]
        };
        if dialect == Dialect::Opencode {
            let old = entry.get_mut("command")?.strings()?;
            if wrapped {
                let mut argv = scalars(&[WARDEN]);
                argv.extend(scalars(&own));
                argv.extend(old.iter().map(|s| V::Scalar(s.clone())));
                entry.set("command", V::Seq(argv));
            }
            continue;
        }
        let cmd_key = if dialect == Dialect::Goose {
            "cmd"
        } else {
            "command"
        };
        let V::Scalar(old_cmd) = entry.get_mut(cmd_key)?.clone() else {
            return None;
        };
        let old_args = match entry.get_mut("args") {
            Some(a) => a.strings()?,
            None => Vec::new(),
        };
        if wrapped {
            entry.set(cmd_key, V::Scalar(WARDEN.to_owned()));
            let mut argv = scalars(&own);
            argv.push(V::Scalar(old_cmd));
            argv.extend(old_args.iter().map(|s| V::Scalar(s.clone())));
            entry.set("args", V::Seq(argv));
        } else if entry.get_mut("args").is_none() {
            entry.set("args", V::Seq(Vec::new()));
        }
    }
    Some(doc.norm())
}

/// The variables wrap is to name with `--pass-env` for the entry `id` of `doc`, as a sorted
/// set: the keys of its environment map and of Codex's `env_vars` and Goose's `env_keys`,
/// but a name no environment can hold or that would read as an option.
fn env_names(dialect: Dialect, doc: &mut V, id: &EntryRef) -> Option<Vec<String>> {
    let entry = entry_mut(dialect, doc, id)?;
    let key = match dialect {
        Dialect::Opencode => "environment",
        Dialect::Goose => "envs",
        _ => "env",
    };
    let mut names: Vec<String> = Vec::new();
    if let Some(V::Map(m)) = entry.get_mut(key) {
        names.extend(m.iter().map(|(k, _)| k.clone()));
    }
    let listed = match dialect {
        Dialect::Codex => entry.get_mut("env_vars"),
        Dialect::Goose => entry.get_mut("env_keys"),
        _ => None,
    };
    if let Some(V::Seq(items)) = listed {
        for item in items.iter_mut() {
            match item {
                V::Scalar(s) => names.push(s.clone()),
                V::Map(_) if dialect == Dialect::Codex => {
                    if let Some(V::Scalar(s)) = item.get_mut("name") {
                        names.push(s.clone());
                    }
                }
                _ => {}
            }
        }
    }
    names.retain(|k| !k.is_empty() && !k.starts_with('-') && !k.contains(['=', '\0']));
    names.sort();
    names.dedup();
    Some(names)
}

/// Takes the `--pass-env VAR` pairs out of the bridge's arguments of the wrapped entry `id`
/// (those before its `--`) and gives their variables as a sorted set.
fn take_pass_env(dialect: Dialect, doc: &mut V, id: &EntryRef) -> Option<Vec<String>> {
    let entry = entry_mut(dialect, doc, id)?;
    let key = match dialect {
        Dialect::Opencode => "command",
        _ => "args",
    };
    let V::Seq(argv) = entry.get_mut(key)? else {
        return None;
    };
    let dashes = argv.iter().position(|a| *a == V::Scalar("--".to_owned()))?;
    let mut names = Vec::new();
    let mut kept = Vec::new();
    let mut rest = std::mem::take(argv).into_iter().enumerate();
    while let Some((i, a)) = rest.next() {
        if i < dashes && a == V::Scalar("--pass-env".to_owned()) {
            let (_, V::Scalar(name)) = rest.next()? else {
                return None;
            };
            names.push(name);
        } else {
            kept.push(a);
        }
    }
    *argv = kept;
    names.sort();
    Some(names)
}

// ------------------------------------------------------------------ checks

fn all(_: &EntryRef) -> bool {
    true
}

fn check(dialect: Dialect, text: &str, must_accept: bool) {
    let before = read(dialect, text);
    let wrapped = match wrap_text(dialect, text, WARDEN, &all) {
        Ok(w) => w,
        Err(EditError::Parse(e)) => {
            assert!(!e.message.is_empty() && e.line >= 1 && e.col >= 1, "{e:?}");
            if dialect == Dialect::Codex {
                assert!(
                    before.is_none(),
                    "refused TOML that toml reads: {e}\n{text:?}"
                );
            }
            assert!(
                !must_accept || before.is_none(),
                "refused a generated {dialect:?} file: {e}\n{text}"
            );
            return;
        }
        Err(EditError::Internal(e)) => {
            // Warden refused its own edit (it reads back wrong): safe, but on a generated
            // file that parses it means a layout it should handle.
            assert!(
                !must_accept || before.is_none(),
                "wrap refused its own edit of a generated {dialect:?} file: {e}\n{text}"
            );
            return;
        }
    };
    if wrapped.changed.is_empty() {
        assert_eq!(wrapped.text, text, "nothing changed, yet the text did");
        return;
    }
    check_wrapped(dialect, text, &wrapped, before);
}

fn check_wrapped(dialect: Dialect, text: &str, wrapped: &TextEdit, before: Option<V>) {
    let what = || {
        format!(
            "{dialect:?}\n--- original\n{text:?}\n--- wrapped\n{:?}",
            wrapped.text
        )
    };
    // BOM and line endings are kept.
    assert_eq!(
        text.starts_with('\u{feff}'),
        wrapped.text.starts_with('\u{feff}'),
        "BOM: {}",
        what()
    );
    if text.contains("\r\n") && !text.replace("\r\n", "").contains('\n') {
        assert!(
            !wrapped.text.replace("\r\n", "").contains('\n'),
            "a bare LF in a CRLF file: {}",
            what()
        );
    }
    // Idempotent.
    let again = wrap_text(dialect, &wrapped.text, WARDEN, &all)
        .unwrap_or_else(|e| panic!("wrap of the wrapped text failed: {e}: {}", what()));
    assert!(
        again.changed.is_empty(),
        "wrapped twice: {:?}: {}",
        again.changed,
        what()
    );
    assert_eq!(again.text, wrapped.text);
    // Exact undo (of what this wrap did: entries wrapped before stay as they are).
    let ours = |e: &EntryRef| wrapped.changed.contains(e);
    let unwrapped = unwrap_text(dialect, &wrapped.text, &ours, &wrapped.records)
        .unwrap_or_else(|e| panic!("unwrap failed: {e}: {}", what()));
    assert_eq!(unwrapped.changed, wrapped.changed, "{}", what());
    assert_eq!(
        unwrapped.text,
        text,
        "unwrap did not restore the bytes: {}",
        what()
    );
    // Undo without the records restores the values.
    let bare = unwrap_text(dialect, &wrapped.text, &ours, &[])
        .unwrap_or_else(|e| panic!("unwrap without records failed: {e}: {}", what()));
    assert_eq!(bare.changed, wrapped.changed, "{}", what());
    let rewrapped = wrap_text(dialect, &bare.text, WARDEN, &ours)
        .unwrap_or_else(|e| panic!("wrap after a bare unwrap failed: {e}: {}", what()));
    assert_eq!(rewrapped.changed, wrapped.changed, "{}", what());
    // The independent parser agrees on every value.
    let Some(before) = before else {
        return;
    };
    let mut after = read(dialect, &wrapped.text)
        .unwrap_or_else(|| panic!("the wrapped text does not parse: {}", what()));
    // Each wrapped entry names its environment's variables with `--pass-env` (in the file's
    // order, which these parsers do not all keep: compared as sets).
    for id in &wrapped.changed {
        let mut doc = before.clone();
        if let (Some(want), Some(got)) = (
            env_names(dialect, &mut doc, id),
            take_pass_env(dialect, &mut after, id),
        ) {
            assert_eq!(got, want, "--pass-env of {}: {}", id.name, what());
        }
    }
    if let Some(want) = expected(dialect, before.clone(), &wrapped.changed, true) {
        assert_eq!(
            after.norm(),
            want,
            "the wrapped document means something else: {}",
            what()
        );
    }
    let restored = read(dialect, &bare.text)
        .unwrap_or_else(|| panic!("the bare unwrap does not parse: {}", bare.text));
    if let Some(want) = expected(dialect, before, &wrapped.changed, false) {
        assert_eq!(
            restored.norm(),
            want,
            "unwrap without records: {}\n--- bare\n{}",
            what(),
            bare.text
        );
    }
}

fuzz_target!(|input: Input| {
    match input {
        Input::Generated {
            fmt,
            dialect,
            servers,
            project,
            style,
            noise,
        } => {
            let (d, mut text) = render(fmt, dialect, &servers, &project, &style);
            let clean = noise.is_none();
            if let Some(n) = &noise {
                splice(&mut text, n);
            }
            check(d, &text, clean);
        }
        Input::Text { dialect, text } => {
            check(
                DIALECTS[usize::from(dialect) % DIALECTS.len()],
                &text,
                false,
            );
        }
    }
});
