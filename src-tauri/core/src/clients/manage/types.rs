//! The types of `manage`: the entry to add, the options of `add`, and why a text edit was
//! refused.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::clients::doc::DocError;
use crate::clients::model::ClientId;

/// A server entry to add.
#[derive(Debug, Clone, Default)]
pub struct NewEntry {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// Keys whose values are in the keychain; the bridge gets `--secret-env KEY`.
    pub secret_env: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct AddOptions {
    pub clients: Vec<ClientId>,
    pub entry: NewEntry,
    /// `Some(absolute path of warden)`: the entry runs `warden bridge --server NAME
    /// [--secret-env K]... -- COMMAND ARGS`; `None` (`--no-wrap`): the plain command.
    pub warden: Option<PathBuf>,
    pub dry_run: bool,
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
