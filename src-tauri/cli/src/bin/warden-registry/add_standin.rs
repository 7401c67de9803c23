#![allow(dead_code)]
//! Stand-in for `warden_core::clients::{add, AddOptions, NewEntry}` while they are written on
//! the `servers-manage` branch: the same types, and an `add` that writes nothing and fails.
//! Removed when that branch is merged (install_cmd.rs then imports the real ones).

use std::collections::BTreeMap;
use std::path::PathBuf;

use warden_core::clients::{ClientEnv, ClientError, ClientId, FileChange};

pub struct NewEntry {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub secret_env: Vec<String>,
}

pub struct AddOptions {
    pub clients: Vec<ClientId>,
    pub entry: NewEntry,
    pub warden: Option<PathBuf>,
    pub dry_run: bool,
}

pub fn add(_env: &ClientEnv, _opts: &AddOptions) -> Result<Vec<FileChange>, ClientError> {
    Err(ClientError::Io {
        action: "write",
        path: PathBuf::new(),
        fix: "wait for `warden servers add` (branch servers-manage)",
        source: std::io::Error::other("adding entries is not there yet"),
    })
}
