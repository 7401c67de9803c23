//! Where the servers are in each client's file, and what an entry looks like.
//!
//! Each locator reads a file with spans and describes every server entry as a [`Located`]:
//! the spans of its command and args (or why it is skipped), and where `args` would go if
//! it is missing. The edit engine (`edit/`) works on that description only.

mod in_json;
mod in_toml;
mod in_yaml;

use std::fmt;

use serde::{Deserialize, Serialize};

use super::doc::{
    Body, DocError, EntryRef, Insert, Located, RemoteBody, Scalar, Seq, SeqStyle, Switch, Whole,
};
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
        Syntax::Json => in_json::locate_json(dialect, text),
        Syntax::Toml => in_toml::locate_toml(text),
        Syntax::Yaml => in_yaml::locate_yaml(dialect, text),
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

/// Why a remote entry of a TOML or YAML file stays as it is.
fn remote_reason(t: &str) -> String {
    format!("remote server (type {t:?}); {REMOTE_NOT_HERE}")
}

const REMOTE_NOT_HERE: &str =
    "Warden wraps remote servers in JSON files only so far; the entry stays as it is";

/// The text between the start of `pos`'s line and `pos`, with the line break before it;
/// `None` on the first line.
pub(super) fn line_prefix(text: &str, pos: usize) -> Option<(&'static str, &str)> {
    let nl = text[..pos].rfind('\n')?;
    let eol = if text[..nl].ends_with('\r') {
        "\r\n"
    } else {
        "\n"
    };
    Some((eol, &text[nl + 1..pos]))
}

pub(super) fn line_start(text: &str, pos: usize) -> usize {
    text[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// The end of the line holding `pos` (before its line break) and that line break
/// (the file's first one when `pos` is on the last line).
pub(super) fn line_end(text: &str, pos: usize) -> (usize, &'static str) {
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
