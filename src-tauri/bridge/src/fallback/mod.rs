//! Local ripgrep search served as MCP tools: what the bridge runs when a search server is down.
//!
//! The tools, their argument names, input schemas and result texts are those of the npm package
//! `mcp-ripgrep` 0.4.0 (`search`, `advanced-search`, `count-matches`, `list-files`,
//! `list-file-types`), so a client sees the same server whichever one answers. Two engines run
//! the searches: the `rg` binary ([`Engine::Rg`]: an argv, never a shell) and, where no `rg` is
//! installed, ripgrep's own crates built in ([`Engine::Builtin`]), printing the same format.
//!
//! Safety rules, whatever the engine:
//! - every `path` is resolved (relative to the first root, `~` expanded, symlinks followed) and
//!   must lie inside one of the roots;
//! - `--pre` and `--pre-glob` are refused in every argument, and no argument value is ever parsed
//!   by rg as a flag (`--regexp=`, `--glob=`, `--type=`, paths after `--`);
//! - a result holds at most `max_output_bytes` of output; the search is stopped there and a note
//!   tells the model how to narrow the query.
//!
//! A known limit: only the `path` given is resolved and checked. With `followSymlinks: true`
//! (`advanced-search`), the engine follows the links it meets while it walks the path searched
//! (`--follow`, `follow_links`), and those are not checked: they may lead outside the roots.

mod builtin;
mod query;
mod rg;
mod server;

use std::borrow::Cow;
use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{Map, Value};

use query::{Mode, Outcome, Query};
pub use server::{SERVER_NAME, ServerOptions, rg_server_main, serve};

/// Default cap on the output text of one tool result (8 MiB).
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 8 << 20;

/// Which implementation runs the searches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Engine {
    /// The `rg` binary at this absolute path.
    Rg(PathBuf),
    /// ripgrep's crates (`grep-searcher`, `grep-regex`, `ignore`), in process.
    Builtin,
}

/// How to pick the [`Engine`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum EngineChoice {
    /// `rg` if one is found (see [`Engine::select`]), else the built-in engine.
    #[default]
    Auto,
    /// `rg`, or an error if none is found.
    Rg,
    /// The built-in engine.
    Builtin,
}

impl Engine {
    /// Resolves `choice` once: `rg` is `$WARDEN_RG` when set (it must be an executable file),
    /// else the first `rg` on `PATH` (absolute `PATH` entries only).
    pub fn select(choice: EngineChoice) -> Result<Engine, SetupError> {
        let found = || -> Result<Option<PathBuf>, SetupError> {
            match std::env::var_os("WARDEN_RG").filter(|v| !v.is_empty()) {
                Some(v) => std::path::absolute(&v)
                    .ok()
                    .filter(|p| warden_config::paths::is_executable(p))
                    .map(Some)
                    .ok_or_else(|| SetupError::BadRg(PathBuf::from(v))),
                None => Ok(warden_config::paths::find_on_path(OsStr::new("rg"))),
            }
        };
        Ok(match choice {
            EngineChoice::Builtin => Engine::Builtin,
            EngineChoice::Rg => Engine::Rg(found()?.ok_or(SetupError::NoRg)?),
            EngineChoice::Auto => found()?.map_or(Engine::Builtin, Engine::Rg),
        })
    }
}

/// Why a [`Search`] could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A root that does not exist or is not a directory.
    #[error("root {path}: {reason}")]
    Root { path: PathBuf, reason: String },
    /// `$WARDEN_RG` names no executable file.
    #[error("WARDEN_RG={0} is not an executable file (unset it to use rg from PATH)")]
    BadRg(PathBuf),
    /// The `rg` engine was asked for and none was found.
    #[error("no rg found on PATH (install ripgrep, set WARDEN_RG, or use --engine builtin)")]
    NoRg,
}

/// The text result of one tool call, as `mcp-ripgrep` shapes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// The one text content item.
    pub text: String,
    /// True for refused or failed calls (`isError`).
    pub is_error: bool,
}

impl ToolResult {
    fn ok(text: String) -> Self {
        Self {
            text,
            is_error: false,
        }
    }

    fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: true,
        }
    }

    /// The MCP `CallToolResult` as JSON text, keys in `mcp-ripgrep`'s order (`isError` only
    /// when true).
    pub fn to_json_string(&self) -> String {
        let text = Value::from(self.text.as_str());
        let error = if self.is_error {
            ",\"isError\":true"
        } else {
            ""
        };
        format!("{{\"content\":[{{\"type\":\"text\",\"text\":{text}}}]{error}}}")
    }
}

/// The `tools` array of `tools/list`, byte for byte as `mcp-ripgrep` 0.4.0 sends it (one line of
/// JSON, keys in its order).
pub fn tools_json() -> &'static str {
    static TOOLS: OnceLock<String> = OnceLock::new();
    TOOLS.get_or_init(|| minify(include_str!("tools.json")))
}

/// Drops the whitespace outside strings.
fn minify(json: &str) -> String {
    let (mut out, mut in_string, mut escaped) = (String::with_capacity(json.len()), false, false);
    for c in json.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tool {
    Search,
    AdvancedSearch,
    CountMatches,
    ListFiles,
    ListFileTypes,
}

impl Tool {
    fn from_name(name: &str) -> Option<Tool> {
        Some(match name {
            "search" => Tool::Search,
            "advanced-search" => Tool::AdvancedSearch,
            "count-matches" => Tool::CountMatches,
            "list-files" => Tool::ListFiles,
            "list-file-types" => Tool::ListFileTypes,
            _ => return None,
        })
    }
}

/// The search tools over a set of roots: validates calls and runs them on an [`Engine`].
#[derive(Debug)]
pub struct Search {
    roots: Vec<PathBuf>,
    engine: Engine,
    max_output_bytes: usize,
}

impl Search {
    /// `roots` are canonicalized (`~` expanded; relative ones are relative to the current
    /// directory); none means the current directory. The first root is where relative `path`
    /// arguments start.
    pub fn new(
        roots: &[PathBuf],
        engine: Engine,
        max_output_bytes: usize,
    ) -> Result<Search, SetupError> {
        let roots = if roots.is_empty() {
            vec![PathBuf::from(".")]
        } else {
            roots.to_vec()
        };
        let roots = roots
            .iter()
            .map(|root| {
                let fail = |reason: String| SetupError::Root {
                    path: root.clone(),
                    reason,
                };
                let root_path = root.to_str().map_or_else(|| root.clone(), expand_tilde);
                let real = std::fs::canonicalize(root_path).map_err(|e| fail(e.to_string()))?;
                if real.is_dir() {
                    Ok(real)
                } else {
                    Err(fail("not a directory".to_owned()))
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(Search {
            roots,
            engine,
            max_output_bytes,
        })
    }

    /// The canonical roots; paths outside them are refused.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The engine that runs the searches.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Whether `name` is one of the tools.
    pub fn has_tool(name: &str) -> bool {
        Tool::from_name(name).is_some()
    }

    /// Runs tool `name` with `arguments` (an object, or null for none). `None` for an unknown
    /// tool. Invalid or refused arguments give an `is_error` result. Dropping the future stops
    /// the search (the rg process is killed; the built-in engine stops at its next read).
    pub async fn call(&self, name: &str, arguments: &Value) -> Option<ToolResult> {
        let tool = Tool::from_name(name)?;
        let empty = Map::new();
        let args = match arguments {
            Value::Object(map) => map,
            Value::Null => &empty,
            _ => return Some(ToolResult::error("Error: arguments must be an object")),
        };
        let query = match self.query(tool, args) {
            Ok(q) => q,
            Err(message) => return Some(ToolResult::error(message)),
        };
        let cap = self.max_output_bytes;
        let outcome = match &self.engine {
            Engine::Rg(rg) => rg::run(rg, &self.roots[0], &query, cap).await,
            Engine::Builtin => builtin::run_async(self.roots[0].clone(), query.clone(), cap).await,
        };
        Some(finish(&query, outcome, cap))
    }

    /// Reads the arguments the way `mcp-ripgrep` does for `tool`, but strictly: wrong types are
    /// errors instead of being ignored.
    fn query(&self, tool: Tool, args: &Map<String, Value>) -> Result<Query, String> {
        let args = Args(args);
        let mut q = Query {
            line_numbers: true,
            ..Query::default()
        };
        if tool == Tool::ListFileTypes {
            q.mode = Mode::TypeList;
            return Ok(q);
        }
        if tool != Tool::ListFiles {
            q.pattern = args
                .string("pattern")?
                .ok_or("Error: Pattern is required")?;
        }
        let path = args.string("path")?.ok_or_else(|| {
            format!(
                "Error: path is required: a directory or file inside {}",
                self.roots_list()
            )
        })?;
        q.path = self.resolve(&path)?;
        q.glob = args.string("filePattern")?;
        match tool {
            Tool::Search | Tool::AdvancedSearch => {
                q.case_sensitive = args.bool("caseSensitive")?;
                q.max_count = args.count("maxResults")?;
                q.context = args.count("context")?.unwrap_or(0);
                q.colors = args.bool("useColors")?.unwrap_or(false);
            }
            Tool::CountMatches => {
                q.case_sensitive = args.bool("caseSensitive")?;
                q.colors = args.bool("useColors")?.unwrap_or(false);
                q.mode = if args.bool("countLines")?.unwrap_or(true) {
                    Mode::Count
                } else {
                    Mode::CountMatches
                };
            }
            Tool::ListFiles => {
                q.mode = Mode::Files;
                q.file_type = args.string("fileType")?;
                q.hidden = args.bool("includeHidden")?.unwrap_or(false);
            }
            Tool::ListFileTypes => {}
        }
        if tool == Tool::AdvancedSearch {
            q.fixed_strings = args.bool("fixedStrings")?.unwrap_or(false);
            q.file_type = args.string("fileType")?;
            q.invert = args.bool("invertMatch")?.unwrap_or(false);
            q.word = args.bool("wordMatch")?.unwrap_or(false);
            q.hidden = args.bool("includeHidden")?.unwrap_or(false);
            q.follow = args.bool("followSymlinks")?.unwrap_or(false);
            if args.bool("showFilenamesOnly")?.unwrap_or(false) {
                q.mode = Mode::FilesWithMatches;
            }
            q.line_numbers = args.bool("showLineNumbers")?.unwrap_or(true);
        }
        Ok(q)
    }

    /// The path to hand to the engine (relative to the first root), once its real location is
    /// known to be inside a root. A missing path inside a root is "not found"; outside, it is
    /// refused like any other (no hint of what exists out there).
    fn resolve(&self, raw: &str) -> Result<PathBuf, String> {
        let path = expand_tilde(raw);
        let full = self.roots[0].join(&path);
        let (real, missing) = match std::fs::canonicalize(&full) {
            Ok(real) => (real, None),
            Err(e) => (real_location_of_missing(&full), Some(e)),
        };
        if !self.roots.iter().any(|root| real.starts_with(root)) {
            return Err(format!(
                "Error: path {raw:?} is outside the allowed roots (symlinks are followed). \
                 Search a path inside: {}",
                self.roots_list()
            ));
        }
        if let Some(e) = missing {
            return Err(format!(
                "Error: cannot search {raw:?} ({}): {e}",
                full.display()
            ));
        }
        // rg reads standard input for a path `-`, even after `--`.
        Ok(if path == Path::new("-") {
            PathBuf::from("./-")
        } else {
            path
        })
    }

    fn roots_list(&self) -> String {
        let roots: Vec<_> = self.roots.iter().map(|r| r.display().to_string()).collect();
        roots.join(", ")
    }
}

/// Typed access to tool arguments; `null` counts as absent.
struct Args<'a>(&'a Map<String, Value>);

impl Args<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    /// A string argument; empty counts as absent (as in `mcp-ripgrep`).
    fn string(&self, key: &str) -> Result<Option<String>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(Value::String(s)) => {
                refuse_preprocessor(key, s)?;
                Ok(Some(s.clone()))
            }
            Some(other) => Err(format!("Error: {key} must be a string, got {other}")),
        }
    }

    fn bool(&self, key: &str) -> Result<Option<bool>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(format!("Error: {key} must be true or false, got {other}")),
        }
    }

    /// A whole number; zero and negative values are ignored (as in `mcp-ripgrep`).
    fn count(&self, key: &str) -> Result<Option<u64>, String> {
        let Some(value) = self.get(key) else {
            return Ok(None);
        };
        let n = value
            .as_f64()
            .filter(|n| n.fract() == 0.0)
            .ok_or_else(|| format!("Error: {key} must be a whole number, got {value}"))?;
        // Saturating: rg takes 64-bit counts.
        Ok((n > 0.0).then_some(n as u64))
    }
}

/// `--pre` runs a program on every file searched: never let it reach rg, in any form.
fn refuse_preprocessor(key: &str, value: &str) -> Result<(), String> {
    let names_pre = value.split_whitespace().any(|word| {
        let flag = word.split('=').next().unwrap_or(word);
        flag == "--pre" || flag == "--pre-glob"
    });
    if names_pre {
        return Err(format!(
            "Error: refused {key} {value:?}: ripgrep's --pre and --pre-glob run a program on \
             every file searched, so this server never passes them to rg. To search for that \
             text, write the pattern as \"[-]-pre\"."
        ));
    }
    Ok(())
}

/// Where a path that does not exist would be: its deepest existing ancestor, canonicalized,
/// with the rest applied (a missing component cannot be a symlink).
fn real_location_of_missing(path: &Path) -> PathBuf {
    let parts: Vec<Component<'_>> = path.components().collect();
    for len in (1..=parts.len()).rev() {
        let Ok(mut real) = std::fs::canonicalize(parts[..len].iter().collect::<PathBuf>()) else {
            continue;
        };
        for part in &parts[len..] {
            match part {
                Component::ParentDir => {
                    real.pop();
                }
                Component::Normal(name) => real.push(name),
                _ => {}
            }
        }
        return real;
    }
    path.to_path_buf()
}

fn expand_tilde(raw: &str) -> PathBuf {
    let home = warden_config::paths::home_dir;
    match raw.strip_prefix('~') {
        Some("") => home().unwrap_or_else(|| PathBuf::from(raw)),
        Some(rest) if rest.starts_with('/') => home()
            .map(|h| h.join(rest.trim_start_matches('/')))
            .unwrap_or_else(|| PathBuf::from(raw)),
        _ => PathBuf::from(raw),
    }
}

/// The result text as `mcp-ripgrep` makes it, cut at `cap` with a note.
fn finish(query: &Query, outcome: Outcome, cap: usize) -> ToolResult {
    let (mut bytes, cut) = match outcome {
        Outcome::Failed(text) => return ToolResult::error(strip_ansi(&text)),
        Outcome::Output { bytes, cut } => (bytes, cut),
    };
    if cut {
        bytes.truncate(cut_point(&bytes, cap));
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut text = if query.colors {
        text.into_owned()
    } else {
        strip_ansi(&text).into_owned()
    };
    if cut {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[warden: output cut at {} bytes (limit {cap}) and the search stopped; the rest is \
             missing. Narrow the query: {}.]",
            bytes.len(),
            query.narrowing_hint()
        ));
    }
    if text.is_empty() {
        text = query.no_output_text().to_owned();
    }
    ToolResult::ok(text)
}

/// Where to cut `bytes` to keep at most `cap`: after the last whole line if there is one.
fn cut_point(bytes: &[u8], cap: usize) -> usize {
    let cap = cap.min(bytes.len());
    memchr::memrchr(b'\n', &bytes[..cap]).map_or(cap, |i| i + 1)
}

/// Removes what `mcp-ripgrep` removes: `ESC [ [0-9;]* [A-Za-z]`.
fn strip_ansi(text: &str) -> Cow<'_, str> {
    if !text.contains('\x1b') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\x1b') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(body) = after.strip_prefix('[') {
            let params = body
                .bytes()
                .take_while(|b| b.is_ascii_digit() || *b == b';')
                .count();
            if body
                .as_bytes()
                .get(params)
                .is_some_and(u8::is_ascii_alphabetic)
            {
                rest = &body[params + 1..];
                continue;
            }
        }
        out.push('\x1b');
        rest = after;
    }
    out.push_str(rest);
    Cow::Owned(out)
}

// Their trees have symbolic links, which Windows gives only to administrators.
#[cfg(all(test, unix))]
mod tests;
