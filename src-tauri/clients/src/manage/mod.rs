//! `warden servers add | disable | enable | remove`: one server entry put into, turned off
//! in, turned on in, or taken out of the clients' files (docs/clients.md,
//! "`warden servers add | disable | enable | remove`").
//!
//! Like wrap and unwrap: the text edits are planned (`text.rs`, over `region.rs`, `json.rs`,
//! `render.rs`, `lines.rs`), applied, verified by parsing the result again (every other
//! entry must read back unchanged), and written through `write.rs` (lock, backup, atomic
//! replace, redone when the client wrote meanwhile). Every file is checked before any is
//! written: a file that does not parse, is read-only, or already has the name stops the
//! whole command with nothing written.
//!
//! The ledger keeps, per edit, the edits that undo it while the file is exactly as Warden
//! left it, so add then remove, and disable then enable, give back the same bytes; when the
//! file changed meanwhile, remove and enable work from the file as it is (enable puts a
//! kept entry's exact bytes back at the end of the server list).

mod files;
mod json;
mod lines;
mod region;
mod remove;
mod render;
pub mod sets;
mod text;
mod types;

pub use files::{add, add_to_project, set_enabled, stashed};
pub use remove::{plan_of, remove};
pub use text::{ManageEdit, add_text, has_switch, remove_text, set_switch_text};
pub use types::{AddOptions, ManageError, NewEntry, PlannedFile, Selection};
