//! IDE and agent clients' MCP config files: find them, list their stdio servers, and route
//! those servers through `warden bridge` (wrap) or back (unwrap).
//!
//! Edits are minimal and lossless: only the bytes of an entry's `command` and `args` values
//! change (opencode: its one `command` list); comments, key order, indentation, BOM and line
//! endings stay as they are. A file that does not parse is refused and left untouched.
//! Writes follow symlinks, keep the file mode, replace atomically, check that nobody wrote
//! the file meanwhile (and redo the edit if somebody did), take Cline's lock where it
//! applies, and keep a timestamped backup first.
//!
//! - [`detect`] / [`list`]: config files and their servers.
//! - [`wrap`] / [`unwrap`]: change files (or, with `dry_run`, compute the diff only).
//! - [`backups`] / [`restore`]: the backups taken before each write.
//! - [`ClientWatcher`]: watches the files and wraps servers that appear (opt-in).
//! - [`wrap_text`] / [`unwrap_text`]: the pure text edits, for one file's contents.

mod backup;
mod detect;
mod dialect;
mod edit;
mod ledger;
mod lock;
mod watch;
mod write;

pub(crate) mod jsonc;
pub(crate) mod yaml;

#[cfg(test)]
mod tests;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use backup::{Backup, RestoreOutcome, backups, restore};
pub use detect::{ClientEnv, ConfigFile, OVERRIDE_VARS, Os, Scope, candidates, detect};
pub use dialect::{Dialect, Format};
pub use edit::{
    EditError, EntryRef, EntrySpans, TextEdit, WrapRecord, entry_spans, unwrap_text, wrap_text,
};
pub use watch::{ClientWatcher, WatchOptions, WatchReport};

/// The clients Warden knows, by their ids in CONTRACT.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum ClientId {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Vscode,
    Cline,
    Windsurf,
    Zed,
    GeminiCli,
    Codex,
    Opencode,
    Kiro,
    LmStudio,
    Continue,
    Goose,
}

impl ClientId {
    pub const ALL: [ClientId; 14] = [
        ClientId::ClaudeDesktop,
        ClientId::ClaudeCode,
        ClientId::Cursor,
        ClientId::Vscode,
        ClientId::Cline,
        ClientId::Windsurf,
        ClientId::Zed,
        ClientId::GeminiCli,
        ClientId::Codex,
        ClientId::Opencode,
        ClientId::Kiro,
        ClientId::LmStudio,
        ClientId::Continue,
        ClientId::Goose,
    ];

    /// The id used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientId::ClaudeDesktop => "claude-desktop",
            ClientId::ClaudeCode => "claude-code",
            ClientId::Cursor => "cursor",
            ClientId::Vscode => "vscode",
            ClientId::Cline => "cline",
            ClientId::Windsurf => "windsurf",
            ClientId::Zed => "zed",
            ClientId::GeminiCli => "gemini-cli",
            ClientId::Codex => "codex",
            ClientId::Opencode => "opencode",
            ClientId::Kiro => "kiro",
            ClientId::LmStudio => "lm-studio",
            ClientId::Continue => "continue",
            ClientId::Goose => "goose",
        }
    }

    /// The product name, for people.
    pub fn display_name(self) -> &'static str {
        match self {
            ClientId::ClaudeDesktop => "Claude Desktop",
            ClientId::ClaudeCode => "Claude Code",
            ClientId::Cursor => "Cursor",
            ClientId::Vscode => "VS Code",
            ClientId::Cline => "Cline",
            ClientId::Windsurf => "Windsurf",
            ClientId::Zed => "Zed",
            ClientId::GeminiCli => "Gemini CLI",
            ClientId::Codex => "Codex",
            ClientId::Opencode => "opencode",
            ClientId::Kiro => "Kiro",
            ClientId::LmStudio => "LM Studio",
            ClientId::Continue => "Continue",
            ClientId::Goose => "Goose",
        }
    }
}

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ClientId {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ClientId::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| {
                let ids: Vec<&str> = ClientId::ALL.iter().map(|c| c.as_str()).collect();
                format!("unknown client {s:?}; known clients: {}", ids.join(", "))
            })
    }
}

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

/// What went wrong with one config file. Messages say what happened, where, and what to do;
/// in every case the file was left as it was.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(
        "{}:{}:{}: not valid {format}: {message}. The file was not changed. Fix: correct the {format} at that place (the client cannot read it either), then run the command again",
        path.display(), line, col
    )]
    Parse {
        path: PathBuf,
        format: Format,
        line: usize,
        col: usize,
        message: String,
    },
    #[error(
        "{}: not UTF-8 text (first bad byte at offset {offset}). The file was not changed. Fix: save it as UTF-8",
        path.display()
    )]
    NotUtf8 { path: PathBuf, offset: usize },
    #[error("cannot {action} {}: {source}. Nothing was changed. Fix: {fix}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        fix: &'static str,
        source: std::io::Error,
    },
    #[error(
        "{} is read-only (probably managed by a tool such as home-manager or chezmoi). The file was not changed. Fix: change the entry where the file is generated, or make the file writable",
        path.display()
    )]
    ReadOnly { path: PathBuf },
    #[error(
        "{} kept changing while Warden was writing it ({attempts} attempts); nothing was written. Fix: quit the client that is rewriting it, then run the command again",
        path.display()
    )]
    Busy { path: PathBuf, attempts: u32 },
    #[error(
        "{} stayed locked by another program (lock directory {}) for {secs} s; nothing was written. Fix: wait until the client finishes, or remove the lock directory if no client is running",
        path.display(), lock.display()
    )]
    LockTimeout {
        path: PathBuf,
        lock: PathBuf,
        secs: u64,
    },
    #[error(
        "{}: Warden's edit did not read back as intended ({detail}); the file was not changed. Fix: please report this with the file's layout; edit the entry by hand meanwhile",
        path.display()
    )]
    Verify { path: PathBuf, detail: String },
    #[error("no backup {id:?} in {}. Fix: run `warden clients backups` to see the ids", dir.display())]
    NoSuchBackup { id: String, dir: PathBuf },
    #[error("backup {} is damaged: {detail}. Fix: pick another backup from `warden clients backups`", path.display())]
    BadBackup { path: PathBuf, detail: String },
    #[error(
        "{}: Warden does not know which client reads this file. Fix: name it with --client ID",
        path.display()
    )]
    UnknownFile { path: PathBuf },
    #[error("no home directory: HOME is not set. Fix: set HOME (USERPROFILE on Windows)")]
    NoHome,
}

impl ClientError {
    pub(crate) fn io(
        action: &'static str,
        path: &Path,
        fix: &'static str,
        source: std::io::Error,
    ) -> ClientError {
        ClientError::Io {
            action,
            path: path.to_owned(),
            fix,
            source,
        }
    }
}

/// What the user has to do after a client's file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum NoticeKind {
    /// The client reads the file only at start: restart it.
    Restart,
    /// The client needs a refresh or reload action.
    Reload,
    /// The client asks to approve changed servers again.
    Approval,
    /// An allowlist that matches command lines may block the wrapped command.
    Allowlist,
    /// Nothing to do, or good to know.
    Note,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Notice {
    pub client: ClientId,
    pub kind: NoticeKind,
    pub message: String,
}

/// What a client needs after Warden changed `file` (per the research on each client).
pub fn notices_for(file: &ConfigFile, env: &ClientEnv) -> Vec<Notice> {
    let project = matches!(file.scope, Scope::Project(_));
    let mut out = Vec::new();
    let mut push = |kind, message: &str| {
        out.push(Notice {
            client: file.client,
            kind,
            message: message.to_owned(),
        });
    };
    match file.client {
        ClientId::ClaudeDesktop => push(
            NoticeKind::Restart,
            "Quit Claude Desktop completely (also from the system tray or menu bar) and start it again: it reads its config only at launch, and may overwrite edits made while it runs.",
        ),
        ClientId::ClaudeCode => {
            push(
                NoticeKind::Restart,
                "Start new Claude Code sessions (or restart running ones): each session reads its server list once, at start.",
            );
            if project {
                push(
                    NoticeKind::Note,
                    "Project servers in .mcp.json are approved by name; the names did not change, so no new approval is needed.",
                );
            } else {
                push(
                    NoticeKind::Note,
                    "Running Claude Code sessions rewrite ~/.claude.json often; if one put the old command back, run `warden clients wrap` again when no session runs.",
                );
            }
        }
        ClientId::Cursor => push(
            NoticeKind::Approval,
            "Cursor asks to approve each changed server again: open Cursor Settings → MCP and approve them. Open chats may need Developer: Reload Window.",
        ),
        ClientId::Vscode => push(
            NoticeKind::Reload,
            "VS Code sees the change; restart running servers from 'MCP: List Servers'. It may ask you to trust the changed servers.",
        ),
        ClientId::Cline => push(NoticeKind::Note, "Cline reloads its servers by itself."),
        ClientId::Windsurf => {
            push(
                NoticeKind::Reload,
                "Press the refresh button in Windsurf's MCP panel (Cascade → MCP servers).",
            );
            push(
                NoticeKind::Allowlist,
                "On Windsurf Team/Enterprise plans with an MCP allowlist, the command and every argument must match the allowlist: ask your admin to allow the warden bridge command, or Windsurf blocks the server.",
            );
        }
        ClientId::Zed => {
            push(NoticeKind::Note, "Zed reloads its settings by itself.");
            if project {
                push(
                    NoticeKind::Note,
                    "Zed starts project servers only in trusted worktrees.",
                );
            }
        }
        ClientId::GeminiCli => push(
            NoticeKind::Reload,
            "Run /mcp reload in Gemini CLI, or restart it.",
        ),
        ClientId::Codex => {
            push(
                NoticeKind::Restart,
                "Start a new Codex session. A first npx/uvx start can take longer than startup_timeout_sec (10 s by default): raise it for the server if its start times out.",
            );
            if project {
                push(
                    NoticeKind::Note,
                    "Codex reads a project's .codex/config.toml only when the project is trusted.",
                );
            }
        }
        ClientId::Opencode => push(NoticeKind::Restart, "Restart opencode."),
        ClientId::Kiro => push(
            NoticeKind::Reload,
            "Kiro reconnects on save; if it does not, reconnect the servers from its MCP panel.",
        ),
        ClientId::LmStudio => push(
            NoticeKind::Restart,
            "Restart LM Studio: it may not notice edits made outside its own editor.",
        ),
        ClientId::Continue => push(NoticeKind::Note, "Continue reloads its config by itself."),
        ClientId::Goose => {
            push(
                NoticeKind::Restart,
                "Restart goose: edits to config.yaml take effect at the next start.",
            );
            if env.vars.contains_key("GOOSE_ALLOWLIST") {
                push(
                    NoticeKind::Allowlist,
                    "GOOSE_ALLOWLIST is set: goose starts only allowed extension commands, so the warden bridge command must be on that list.",
                );
            }
        }
    }
    out
}

/// A stdio server entry as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ServerEntry {
    pub name: String,
    /// Where the entry sits inside the file when that matters (Claude Code's per-project
    /// servers: `["projects", "/abs/path"]`); empty for the file's own server list.
    pub scope: Vec<String>,
    #[serde(flatten)]
    pub state: EntryState,
    /// Names of the environment variables the entry sets (never their values).
    pub env_keys: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum EntryState {
    /// A stdio server that runs directly.
    Unwrapped { command: String, args: Vec<String> },
    /// Routed through `warden bridge`; `command`/`args` are the original ones.
    Wrapped {
        bridge: String,
        server: Option<String>,
        command: String,
        args: Vec<String>,
    },
    /// Not a stdio server Warden wraps (remote, built-in, odd shape), with the reason.
    Skipped { reason: String },
}

/// One config file and what is in it.
#[derive(Debug)]
pub struct FileListing {
    pub file: ConfigFile,
    pub servers: Vec<ServerEntry>,
    pub error: Option<ClientError>,
}

/// Lists the servers of every detected config file.
pub fn list(env: &ClientEnv) -> Vec<FileListing> {
    detect(env).into_iter().map(|f| list_file(&f)).collect()
}

/// Lists the servers of one config file.
pub fn list_file(file: &ConfigFile) -> FileListing {
    let entries = read_text(&file.path)
        .and_then(|text| edit::entries(file.dialect, &text).map_err(|e| parse_error(file, e)));
    match entries {
        Ok(servers) => FileListing {
            file: file.clone(),
            servers,
            error: None,
        },
        Err(error) => FileListing {
            file: file.clone(),
            servers: Vec::new(),
            error: Some(error),
        },
    }
}

/// Which files and servers an operation touches. Empty means all.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub client: Option<ClientId>,
    pub file: Option<PathBuf>,
    pub server: Option<String>,
}

#[derive(Debug, Clone)]
pub struct WrapOptions {
    /// Absolute path of the `warden` binary written into entries.
    pub warden: PathBuf,
    pub filter: Filter,
    /// Compute the diff only; write nothing (no backup either).
    pub dry_run: bool,
}

#[derive(Debug, Clone, Default)]
pub struct UnwrapOptions {
    pub filter: Filter,
    pub dry_run: bool,
}

/// The result of wrapping or unwrapping one file.
#[derive(Debug)]
pub struct FileChange {
    pub file: ConfigFile,
    /// Entries that were (or, in a dry run, would be) changed.
    pub changed: Vec<EntryRef>,
    /// Entries the filter matched but that were left alone, with the reason.
    pub skipped: Vec<(EntryRef, String)>,
    /// Unified diff of the change; empty when nothing changes.
    pub diff: String,
    pub written: bool,
    /// The backup taken before writing.
    pub backup: Option<String>,
    /// What the user must do for the client to use the change.
    pub notices: Vec<Notice>,
    pub error: Option<ClientError>,
    /// The text written, when written.
    pub(crate) new_text: Option<String>,
}

/// The files an operation with `filter` applies to: detected files (only the ones the
/// client reads, unless `filter.file` names another), or the file named by `filter.file`.
pub fn select_files(env: &ClientEnv, filter: &Filter) -> Result<Vec<ConfigFile>, ClientError> {
    let detected = detect(env);
    let mut files: Vec<ConfigFile> = match &filter.file {
        Some(path) => {
            let real = std::fs::canonicalize(path).map_err(|e| {
                ClientError::io("read", path, "check the path given with --file", e)
            })?;
            let found: Vec<ConfigFile> = detected
                .into_iter()
                .filter(|f| std::fs::canonicalize(&f.path).ok().as_deref() == Some(&real))
                .collect();
            if found.is_empty() {
                vec![
                    ConfigFile::infer(path, filter.client)
                        .ok_or_else(|| ClientError::UnknownFile { path: path.clone() })?,
                ]
            } else {
                found
            }
        }
        None => detected.into_iter().filter(|f| f.active).collect(),
    };
    if let Some(client) = filter.client {
        files.retain(|f| f.client == client);
    }
    Ok(files)
}

fn name_matches(filter: &Filter, entry: &EntryRef) -> bool {
    filter.server.as_deref().is_none_or(|s| s == entry.name)
}

/// Routes the matching stdio servers through `warden bridge`.
pub fn wrap(env: &ClientEnv, opts: &WrapOptions) -> Result<Vec<FileChange>, ClientError> {
    let files = select_files(env, &opts.filter)?;
    let warden = opts.warden.to_string_lossy().into_owned();
    Ok(files
        .iter()
        .map(|f| {
            change_file(
                env,
                f,
                &Op::Wrap { warden: &warden },
                &|e| name_matches(&opts.filter, e),
                opts.dry_run,
            )
        })
        .collect())
}

/// Restores the matching wrapped entries to their original command and args.
pub fn unwrap(env: &ClientEnv, opts: &UnwrapOptions) -> Result<Vec<FileChange>, ClientError> {
    let files = select_files(env, &opts.filter)?;
    Ok(files
        .iter()
        .map(|f| {
            change_file(
                env,
                f,
                &Op::Unwrap,
                &|e| name_matches(&opts.filter, e),
                opts.dry_run,
            )
        })
        .collect())
}

/// Wraps the entries of one file that `select` picks (the watcher's entry point).
pub fn wrap_file(
    env: &ClientEnv,
    file: &ConfigFile,
    warden: &Path,
    select: &dyn Fn(&EntryRef) -> bool,
    dry_run: bool,
) -> FileChange {
    let warden = warden.to_string_lossy().into_owned();
    change_file(env, file, &Op::Wrap { warden: &warden }, select, dry_run)
}

pub(crate) enum Op<'a> {
    Wrap { warden: &'a str },
    Unwrap,
}

fn change_file(
    env: &ClientEnv,
    file: &ConfigFile,
    op: &Op<'_>,
    select: &dyn Fn(&EntryRef) -> bool,
    dry_run: bool,
) -> FileChange {
    let mut change = FileChange {
        file: file.clone(),
        changed: Vec::new(),
        skipped: Vec::new(),
        diff: String::new(),
        written: false,
        backup: None,
        notices: Vec::new(),
        error: None,
        new_text: None,
    };
    let real = std::fs::canonicalize(&file.path).unwrap_or_else(|_| file.path.clone());
    let mut ledger = ledger::Ledger::load(&env.state_dir);
    let records = ledger.records_for(&real);
    let compute = |text: &str| -> Result<TextEdit, ClientError> {
        let result = match op {
            Op::Wrap { warden } => wrap_text(file.dialect, text, warden, select),
            Op::Unwrap => unwrap_text(file.dialect, text, select, &records),
        };
        result.map_err(|e| match e {
            edit::EditError::Parse(d) => parse_error(file, d),
            edit::EditError::Internal(detail) => ClientError::Verify {
                path: file.path.clone(),
                detail,
            },
        })
    };

    let mut outcome: Option<TextEdit> = None;
    let mut old_text = String::new();
    let result = if dry_run {
        read_text(&file.path).and_then(|text| {
            let edit = compute(&text)?;
            old_text = text;
            outcome = Some(edit);
            Ok(None)
        })
    } else {
        write::update_file(
            &file.path,
            file.lock,
            Some((&env.state_dir, file.client)),
            &mut |bytes: &[u8]| {
                let text = utf8(&file.path, bytes)?;
                let edit = compute(&text)?;
                let new = (!edit.changed.is_empty()).then(|| edit.text.clone().into_bytes());
                old_text = text;
                outcome = Some(edit);
                Ok(new)
            },
        )
        .map(Some)
    };
    match result {
        Err(e) => change.error = Some(e),
        Ok(written) => {
            if let Some(edit) = outcome {
                if !edit.changed.is_empty() {
                    let label = file.path.display().to_string();
                    change.diff = unified_diff(&old_text, &edit.text, &label);
                    change.notices = notices_for(file, env);
                }
                if let Some(w) = written {
                    change.written = w.written;
                    change.backup = w.backup;
                    if w.written {
                        change.new_text = Some(edit.text.clone());
                        match op {
                            Op::Wrap { .. } => ledger.record_wrapped(&real, &edit.records),
                            Op::Unwrap => ledger.record_unwrapped(&real, &edit.changed),
                        }
                        if let Err(e) = ledger.save() {
                            tracing::warn!("{e}");
                        }
                    }
                }
                change.changed = edit.changed;
                change.skipped = edit.skipped;
            }
        }
    }
    change
}

fn parse_error(file: &ConfigFile, e: DocError) -> ClientError {
    ClientError::Parse {
        path: file.path.clone(),
        format: file.format,
        line: e.line,
        col: e.col,
        message: e.message,
    }
}

pub(crate) fn read_text(path: &Path) -> Result<String, ClientError> {
    let bytes = std::fs::read(path).map_err(|e| {
        ClientError::io(
            "read",
            path,
            "check that the file exists and is readable",
            e,
        )
    })?;
    utf8(path, &bytes)
}

fn utf8(path: &Path, bytes: &[u8]) -> Result<String, ClientError> {
    String::from_utf8(bytes.to_vec()).map_err(|e| ClientError::NotUtf8 {
        path: path.to_owned(),
        offset: e.utf8_error().valid_up_to(),
    })
}

/// A unified diff of `old` → `new`, labelled with `label`.
pub fn unified_diff(old: &str, new: &str, label: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(label, label)
        .to_string()
}
