//! The types of `manage`: the entry to add, the options of `add`, which entries `disable`,
//! `enable` and `remove` act on, a remove's plan, and why a text edit was refused.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::doc::DocError;
use crate::edit::pass_env_names;
use crate::model::ClientId;
use crate::remote;

/// A server entry to add.
#[derive(Debug, Clone, Default)]
pub struct NewEntry {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// Keys whose values are in the keychain; the bridge gets `--secret-env KEY`.
    pub secret_env: Vec<String>,
    /// A remote server (Streamable HTTP) in place of `command` and `args`: its URL, run by
    /// `warden bridge --remote URL`.
    pub url: Option<String>,
    /// With `url`: the bridge's `--header NAME=ENVVAR`s.
    pub headers: Vec<String>,
}

impl NewEntry {
    /// The argv the entry runs: through the bridge when `warden` is given (`warden bridge
    /// --server NAME [--secret-env K]... [--pass-env K]... -- COMMAND ARGS`, a `--pass-env`
    /// for each `env` key the keychain does not give, so a sandboxed server still gets it),
    /// else the plain command.
    pub fn argv(&self, warden: Option<&str>) -> Vec<String> {
        if let Some(url) = &self.url {
            // `add` refuses a remote server without the bridge.
            let mut argv = vec![warden.unwrap_or("warden").to_owned()];
            argv.extend(remote::bridge_args(
                &self.name,
                url,
                &self.headers,
                &self.secret_env,
            ));
            return argv;
        }
        let mut argv = Vec::new();
        if let Some(w) = warden {
            argv.extend([
                w.to_owned(),
                "bridge".into(),
                "--server".into(),
                self.name.clone(),
            ]);
            for k in &self.secret_env {
                argv.extend(["--secret-env".to_owned(), k.clone()]);
            }
            for k in pass_env_names(self.env.keys(), &self.secret_env) {
                argv.extend(["--pass-env".to_owned(), k]);
            }
            argv.push("--".into());
        }
        argv.push(self.command.clone());
        argv.extend(self.args.iter().cloned());
        argv
    }
}

#[derive(Debug, Clone)]
pub struct AddOptions {
    pub clients: Vec<ClientId>,
    pub entry: NewEntry,
    /// `Some(absolute path of warden)`: the entry runs `warden bridge --server NAME
    /// [--secret-env K]... [--pass-env K]... -- COMMAND ARGS` ([`NewEntry::argv`]); `None`
    /// (`--no-wrap`): the plain command.
    pub warden: Option<PathBuf>,
    pub dry_run: bool,
}

/// Which entries of a name `disable`, `enable` and `remove` act on: those in the files of
/// `clients` (every client's when empty), narrowed to one file and to one scope in it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    pub clients: Vec<ClientId>,
    /// Only this file (as listed; a symlink and its target are the same file).
    pub file: Option<PathBuf>,
    /// Only the entries of this scope (`[]`: the file's own list; Claude Code's projects in
    /// `~/.claude.json`: `["projects", "/abs/path"]`).
    pub scope: Option<Vec<String>>,
}

impl Selection {
    /// Every entry of the name in the files of `clients` (every client's when empty).
    pub fn clients(clients: &[ClientId]) -> Selection {
        Selection {
            clients: clients.to_vec(),
            ..Selection::default()
        }
    }
}

/// One file of a remove's preview, as the preview showed it: `remove` given the plan
/// applies it only while every file still reads so, and refuses otherwise
/// (`ClientError::Changed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PlannedFile {
    pub path: PathBuf,
    /// The file's fingerprint when the preview read it (`FileChange::fingerprint`).
    pub fingerprint: String,
    /// The entries that go, as shown (`name`, or `name (projects /abs/path)`), those kept
    /// aside by `disable` included.
    pub changed: Vec<String>,
}

/// Why a text edit of `manage` was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManageError {
    /// The file does not parse.
    Parse(DocError),
    /// An entry of that name is there already (its text).
    Exists(String),
    /// No entry of that name.
    Missing,
    /// A layout Warden does not edit, and why.
    Layout(String),
    /// The edit did not read back as intended.
    Internal(String),
}

impl From<DocError> for ManageError {
    fn from(e: DocError) -> Self {
        ManageError::Parse(e)
    }
}

impl std::fmt::Display for ManageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ManageError::Parse(d) => d.fmt(f),
            ManageError::Exists(e) => write!(f, "already there: {e}"),
            ManageError::Missing => f.write_str("no entry of that name"),
            ManageError::Layout(s) | ManageError::Internal(s) => f.write_str(s),
        }
    }
}
