//! The types every part of `clients` shares: the clients, their errors, and a listed entry.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::dialect::Format;

/// The clients Warden knows, by their ids in docs/clients.md ("Clients").
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

    /// Whether this client starts an entry, by its own switch where it has one: Cline,
    /// Windsurf and Kiro skip `"disabled": true`; Codex, Zed, opencode and Goose skip
    /// `enabled = false`; Claude Code skips a project's servers named in that project's
    /// `disabledMcpServers`; Gemini CLI skips names in `mcp.excluded` (or out of
    /// `mcp.allowed`). The other clients have no switch in the file: every entry is on.
    pub(crate) fn switch_on(self, s: &super::doc::Switch) -> bool {
        match self {
            ClientId::Cline | ClientId::Windsurf | ClientId::Kiro => s.disabled != Some(true),
            ClientId::Codex | ClientId::Zed | ClientId::Opencode | ClientId::Goose => {
                s.enabled != Some(false)
            }
            ClientId::ClaudeCode => !s.claude_disabled,
            ClientId::GeminiCli => !s.gemini_excluded,
            ClientId::ClaudeDesktop
            | ClientId::Cursor
            | ClientId::Vscode
            | ClientId::LmStudio
            | ClientId::Continue => true,
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
        "{} stayed locked by another program (lock {}) for {secs} s; nothing was written. Fix: wait until the client or the other Warden command finishes; remove the lock directory only if it is a client's (`<file>.lock`) and no client is running",
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
    #[error(
        "{}: cannot move secrets: {detail}. Nothing was moved and the file was not changed. Fix: start or unlock the OS keychain (on Linux a Secret Service such as gnome-keyring or KeePassXC), or wrap without --move-secrets",
        path.display()
    )]
    Keychain { path: PathBuf, detail: String },
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
    #[error(
        "{}: a server named {name:?} is already there:\n{entry}\nNothing was written to any file. Fix: pick another name, or remove that one first (`warden servers remove {name}`)",
        path.display()
    )]
    Exists {
        path: PathBuf,
        name: String,
        entry: String,
    },
    #[error(
        "{} does not look installed: {} does not exist. Nothing was written. Fix: install {} and start it once, or leave out `--client {client}`",
        client.display_name(), dir.display(), client.display_name()
    )]
    NotInstalled { client: ClientId, dir: PathBuf },
    #[error(
        "no server named {name:?} in {place}. Nothing was changed. Fix: check the name and its clients with `warden servers list`"
    )]
    NoSuchServer { name: String, place: String },
    #[error(
        "--secret-env needs the bridge: the values are in the OS keychain, and only `warden bridge` reads them from there. Nothing was written. Fix: leave out --no-wrap, or pass the value with --env (it is then written into the files)"
    )]
    SecretsNeedBridge,
    #[error("{why}")]
    /// A remote server's URL or headers Warden would not write (`insecure`: plain http off
    /// this machine, or credentials in the URL).
    BadUrl { why: String, insecure: bool },
    #[error(
        "a remote server runs only through the bridge (a client whose file takes a URL can be given it by hand). Nothing was written. Fix: leave out --no-wrap"
    )]
    RemoteNeedsBridge,
    #[error("name at least one client (--client ID). Known clients: {}", ClientId::ALL.map(ClientId::as_str).join(", "))]
    NoClient,
    #[error("{name:?} cannot be a server name: {why}. Fix: use letters, digits, '-', '_' or '.'")]
    BadName { name: String, why: &'static str },
    #[error(
        "{}: {detail}. Nothing was written. Fix: edit the file by hand (`warden clients backups` keeps its earlier versions)",
        path.display()
    )]
    Layout { path: PathBuf, detail: String },
    #[error(
        "{} (Warden's ledger of its edits) cannot be used: {detail}. It was left as it is and nothing was changed. Fix: repair it, or move it aside to start afresh (`mv {} {}.damaged`): unwrap and enable then work from the files alone; an entry `warden servers disable` took out is in the moved file (its `raw`) and in the backups of its client's file in {} (`warden clients backups`, `warden clients restore ID`)",
        path.display(), path.display(), path.display(), backups.display()
    )]
    LedgerUnreadable {
        path: PathBuf,
        backups: PathBuf,
        detail: String,
    },
    #[error(
        "{} changed since the preview was made, so the preview no longer shows what removing would do; Warden did not write it. Fix: look at the new preview and confirm that one (the window shows it; on the command line, run the command again)",
        paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    Changed { paths: Vec<PathBuf> },
    #[error(
        "no set named {set:?} in {}{}. Nothing was written. Fix: add it there (`[sets.{set}]` then `servers = [\"NAME\", ...]`), or pick one of those `warden sets list` shows",
        config.display(),
        if known.is_empty() { " (it has no [sets.NAME] table)".to_owned() } else { format!(" (sets there: {})", known.join(", ")) }
    )]
    NoSuchSet {
        set: String,
        known: Vec<String>,
        config: PathBuf,
    },
    #[error(
        "set {set:?} names {} that no client's file has, so Warden does not know how to start {}. Nothing was written. Fix: add {} to a client first (`warden servers add NAME --client ID -- COMMAND ...`), or take {} out of [sets.{set}] in config.toml (`warden servers list` shows the names known)",
        missing.join(", "),
        if missing.len() == 1 { "it" } else { "them" },
        if missing.len() == 1 { "it" } else { "each" },
        if missing.len() == 1 { "it" } else { "them" }
    )]
    SetServersMissing { set: String, missing: Vec<String> },
    #[error(
        "the entry of {server} holds {var} written out in its `env`, and a project's file is often checked into git, so Warden does not copy it there. Nothing was written. Fix: move it into the OS keychain first (`warden clients wrap --server {server} --move-secrets`), then apply again: the project's entry then reads it from the keychain"
    )]
    SecretInProject { server: String, var: String },
    #[error(
        "set {set:?} added nothing Warden knows of in {place}. Nothing was changed. Fix: check the project and clients (`warden sets list` shows where each set is applied)"
    )]
    SetNotApplied { set: String, place: String },
    #[error(
        "{} has no project file Warden knows of, so nothing goes into {} for it. Nothing was written. Fix: leave out `--client {client}` (clients with a project file: claude-code, cursor, vscode, zed, gemini-cli, codex, opencode, kiro), or add the server to its user file (without --project)",
        client.display_name(), dir.display()
    )]
    NoProjectFile { client: ClientId, dir: PathBuf },
    /// The files cannot be watched (an inotify limit, say).
    #[error(transparent)]
    Watch(#[from] warden_config::fswatch::WatchError),
}

impl ClientError {
    /// The stable code of this failure (docs/errors.md).
    pub fn code(&self) -> warden_wire::codes::Code {
        use warden_wire::codes::Code;
        match self {
            ClientError::Parse { .. } | ClientError::NotUtf8 { .. } => Code::ClientParse,
            ClientError::ReadOnly { .. } => Code::ClientReadOnly,
            ClientError::Busy { .. } | ClientError::LockTimeout { .. } => Code::ClientBusy,
            ClientError::Verify { .. } | ClientError::Layout { .. } => Code::ClientLayout,
            ClientError::Keychain { .. } => Code::KeychainUnavailable,
            ClientError::LedgerUnreadable { .. } => Code::LedgerUnreadable,
            ClientError::NoSuchBackup { .. } | ClientError::BadBackup { .. } => Code::ClientBackup,
            ClientError::Exists { .. } => Code::ClientExists,
            ClientError::Changed { .. } => Code::ClientChanged,
            ClientError::NotInstalled { .. } => Code::ClientNotInstalled,
            ClientError::BadUrl { insecure: true, .. } => Code::AuthInsecure,
            ClientError::NoSuchServer { .. }
            | ClientError::SetServersMissing { .. }
            | ClientError::SetNotApplied { .. } => Code::ClientNoSuchServer,
            ClientError::UnknownFile { .. }
            | ClientError::SecretsNeedBridge
            | ClientError::RemoteNeedsBridge
            | ClientError::BadUrl {
                insecure: false, ..
            }
            | ClientError::NoClient
            | ClientError::BadName { .. }
            | ClientError::NoSuchSet { .. }
            | ClientError::SecretInProject { .. }
            | ClientError::NoProjectFile { .. } => Code::ClientUsage,
            ClientError::Io { .. } | ClientError::NoHome | ClientError::Watch(_) => Code::ClientIo,
        }
    }

    /// The message with its code, as every command and the window show it.
    pub fn coded(&self) -> String {
        format!("{self} [{}]", self.code().as_str())
    }

    /// Warden's lock of `path` (under `state_dir`) could not be taken.
    pub(crate) fn lock_failed(state_dir: &Path, path: &Path, e: std::io::Error) -> ClientError {
        if e.kind() == std::io::ErrorKind::TimedOut {
            return ClientError::LockTimeout {
                path: path.to_owned(),
                lock: warden_config::fsutil::lock_file(state_dir, path),
                secs: warden_config::fsutil::LOCK_TIMEOUT.as_secs(),
            };
        }
        ClientError::io(
            "take Warden's lock of",
            path,
            "check that WARDEN_STATE_DIR is writable",
            e,
        )
    }

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
    /// What deserves a look in its (original) command: sudo, a shell line, an unpinned package.
    pub risks: Vec<super::risk::Risk>,
    /// Warden wrapped it, and it runs unwrapped again without `warden clients unwrap`: the
    /// client (or someone) rewrote it. Wrap re-applies.
    pub reverted: bool,
    /// Whether the client starts it, by the client's own switch where it has one (Cline's
    /// `"disabled": true`, Codex's `enabled = false`, ...); an entry of a client without
    /// such a switch is enabled.
    #[serde(default = "on")]
    pub enabled: bool,
}

fn on() -> bool {
    true
}

impl ServerEntry {
    /// Where it sits in its file: what the ledger knows it by.
    pub fn id(&self) -> super::doc::EntryRef {
        super::doc::EntryRef {
            scope: self.scope.clone(),
            name: self.name.clone(),
        }
    }

    /// A stdio server that runs directly, not through the bridge.
    pub fn is_unwrapped(&self) -> bool {
        matches!(self.state, EntryState::Unwrapped { .. })
    }

    /// The URL of a remote server the entry reaches through `warden bridge --remote URL`
    /// (listed as wrapped, its URL in place of a command).
    pub fn remote(&self) -> Option<&str> {
        match &self.state {
            EntryState::Wrapped { command, args, .. }
                if args.is_empty()
                    && (command.starts_with("https://") || command.starts_with("http://")) =>
            {
                Some(command)
            }
            _ => None,
        }
    }
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
