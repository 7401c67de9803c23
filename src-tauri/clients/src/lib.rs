//! IDE and agent clients' MCP config files: find them, list their stdio servers, and route
//! those servers through `warden bridge` (wrap) or back (unwrap).
//!
//! Edits are minimal and lossless: only the bytes of an entry's `command` and `args` values
//! change (opencode: its one `command` list); comments, key order, indentation, BOM and line
//! endings stay as they are. A file that does not parse is refused and left untouched.
//! Writes follow symlinks, keep the file mode, replace atomically, check that nobody wrote
//! the file meanwhile (and redo the edit if somebody did), take Warden's own lock of the
//! file (every Warden process writes it one at a time) and Cline's where it applies, and
//! keep a timestamped backup first. Warden's ledger of its edits is saved before each file
//! changes, under its own lock, taken before any file's.
//!
//! - [`detect`] / [`list`]: config files and their servers.
//! - [`wrap`] / [`unwrap`]: change files (or, with `dry_run`, compute the diff only).
//! - [`add`] / [`set_enabled`] / [`remove`]: one server entry into, on/off in, or out of the
//!   clients' files (`warden servers ...`); [`stashed`]: entries `disable` took out of a file.
//! - [`backups`] / [`restore`]: the backups taken before each write.
//! - [`ClientWatcher`]: watches the files and wraps servers that appear (opt-in).
//! - [`wrap_text`] / [`unwrap_text`]: the pure text edits, for one file's contents.
//!
//! This file is only the front door; the modules import downwards, never in a circle (the
//! layers are in docs/ARCHITECTURE.md).

mod backup;
mod detect;
mod dialect;
mod doc;
mod edit;
mod ledger;
mod literal;
mod lock;
mod manage;
mod model;
mod notices;
mod ops;
mod remote;
mod risk;
mod secrets;
mod watch;
mod write;

pub(crate) mod jsonc;
pub(crate) mod yaml;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_macos;
#[cfg(test)]
mod tests_remote;

pub use backup::{Backup, backups};
pub use detect::{
    ClientEnv, ConfigFile, OVERRIDE_VARS, Os, PROJECT_FILES, Scope, candidates, detect,
    project_file,
};
pub use dialect::{Dialect, Format};
pub use doc::{DocError, EntryRef};
pub use edit::{
    EditError, EntrySpans, Launch, SecretLookup, TextEdit, WrapRecord, entry_spans, unwrap_text,
    unwrap_text_with, wrap_text, wrap_text_with,
};
pub use manage::sets;
pub use manage::{
    AddOptions, ManageEdit, ManageError, NewEntry, PlannedFile, Selection, add, add_text,
    add_to_project, has_switch, plan_of, remove, remove_text, set_enabled, set_switch_text,
    stashed,
};
pub use model::{ClientError, ClientId, EntryState, ServerEntry};
pub use notices::{Notice, NoticeKind, notices_for};
pub use ops::{
    FileChange, FileListing, Filter, RestoreOutcome, UnwrapOptions, WrapOptions, awaiting,
    keep_unwrapped, launch_of, launches, list, restore, secret_in_use, secret_readers,
    select_files, unified_diff, unwrap, wrap, wrap_file,
};
pub use remote::{
    bridge_args as remote_bridge_args, check_header_args as check_remote_headers,
    check_url as check_remote_url,
};
pub use risk::{
    Risk, RiskKind, STEERING_ENV, document_env_risk, entry_risks, env_risks, risks, steering_env,
};
pub use secrets::{Literal, MoveCheck, MovedSecret, PLACEHOLDER, SecretRecord, looks_secret, mask};
pub use watch::{ClientWatcher, WatchOptions, WatchReport};
