//! The document model every format shares: where a file does not parse, and where each
//! server entry's editable values are. Locators (`dialect.rs`) produce it; the edit engine
//! (`edit/`) consumes it.

use std::fmt;
use std::ops::Range;

use serde::{Deserialize, Serialize};

/// Where a file does not parse: 1-based line and column (in characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl DocError {
    pub(crate) fn at(text: &str, offset: usize, message: String) -> DocError {
        let offset = offset.min(text.len());
        let mut cut = offset;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let before = &text[..cut];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[line_start..].chars().count() + 1;
        DocError { line, col, message }
    }
}

impl fmt::Display for DocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.col, self.message
        )
    }
}

/// Identifies an entry within one file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct EntryRef {
    /// Path to the server list inside the file when that is not the file's main list
    /// (Claude Code: `["projects", "/abs/path"]`).
    pub scope: Vec<String>,
    pub name: String,
}

impl fmt::Display for EntryRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.scope.is_empty() {
            f.write_str(&self.name)
        } else {
            write!(f, "{} ({})", self.name, self.scope.join(" "))
        }
    }
}

/// One server entry as found in the text: its name, its env keys and where its values are.
#[derive(Debug, Clone)]
pub(crate) struct Located {
    pub id: EntryRef,
    pub env_keys: Vec<String>,
    /// The `env` members whose value is a plain string, with where the value is.
    pub env: Vec<(String, Scalar)>,
    /// The entry's `cwd` (the directory its client starts it in), when it is a plain string.
    pub cwd: Option<String>,
    /// The client's own on/off switch for the entry, as written.
    pub switch: Switch,
    pub body: Body,
    /// The entry's whole object (JSON files): a remote entry's wrap and unwrap replace it.
    pub whole: Option<Whole>,
}

/// An entry's JSON object as text: where it is, its members and its layout.
#[derive(Debug, Clone)]
pub(crate) struct Whole {
    pub span: Range<usize>,
    /// Each member's key and exact text (`"key": value`).
    pub members: Vec<(String, String)>,
    /// What goes between `{` and each member (a line break and indentation, or a space),
    /// and between the last member and `}`.
    pub sep: String,
    pub close: String,
}

impl Located {
    /// An entry Warden leaves alone, and why.
    pub fn skip(id: EntryRef, reason: String) -> Located {
        Located {
            id,
            env_keys: Vec::new(),
            env: Vec::new(),
            cwd: None,
            switch: Switch::default(),
            body: Body::Skip(reason),
            whole: None,
        }
    }
}

/// What a file says about turning an entry off, read from every key any client uses; which
/// of them counts depends on the client (`ClientId::switch_on`). Only
/// literal booleans and string lists count: anything else is as if absent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Switch {
    /// The entry's `"disabled": true|false` (Cline, Windsurf, Kiro).
    pub disabled: Option<bool>,
    /// The entry's `enabled = true|false` (Codex, Zed, opencode, Goose).
    pub enabled: Option<bool>,
    /// Claude Code's `~/.claude.json`: a project's own server named in that project's
    /// `disabledMcpServers`.
    pub claude_disabled: bool,
    /// Gemini CLI: named in the file's `mcp.excluded` (or `excludeMCPServers`), or left out
    /// of a non-empty `mcp.allowed` (or `allowMCPServers`).
    pub gemini_excluded: bool,
}

#[derive(Debug, Clone)]
pub(crate) enum Body {
    Skip(String),
    /// `command` and (maybe) `args`.
    Split {
        command: Scalar,
        args: Option<Seq>,
        /// Where an `args` key goes: computed whether or not there is one, so that unwrap
        /// can find an `args` that wrap added.
        insert: Option<Insert>,
    },
    /// One list holding the command and its arguments (opencode).
    Joined {
        command: Seq,
    },
    /// A remote server (JSON files): wrap rewrites the whole entry.
    Remote(Box<RemoteBody>),
}

/// A remote server's entry as written, and what wrap needs to write it as a bridged one.
#[derive(Debug, Clone)]
pub(crate) struct RemoteBody {
    pub url: String,
    /// The `headers` strings, or why they cannot be read.
    pub headers: Result<Vec<(String, String)>, String>,
    /// The transport's `type` as written, if any.
    pub transport: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Scalar {
    pub span: Range<usize>,
    pub value: String,
}

#[derive(Debug, Clone)]
pub(crate) struct Seq {
    /// The whole list (`[...]`, or from just after `key:` to the end of the last item).
    pub span: Range<usize>,
    pub items: Vec<Scalar>,
    pub style: SeqStyle,
}

#[derive(Debug, Clone)]
pub(crate) enum SeqStyle {
    /// `[a, b]`; `open` is the offset just after `[`.
    Flow { open: usize },
    /// YAML `- a` lines: where each item's line starts, and where the value of the key
    /// holding the list starts (just after its `:`).
    Block {
        line_starts: Vec<usize>,
        value_start: usize,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct Insert {
    pub at: usize,
    /// Text before the new list, e.g. `,\n    "args": `.
    pub prefix: String,
}
