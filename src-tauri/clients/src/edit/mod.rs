//! The text edits of wrap and unwrap, the same for every format.
//!
//! Wrapping an entry is three byte-level changes, all invertible from the wrapped text:
//! - the command value's bytes become the warden path;
//! - the original command's literal (its exact bytes) and the bridge's own arguments are
//!   inserted before the first argument, separated like the existing arguments are;
//! - when the entry had no `args`, one is added right after the command.
//!
//! Unwrapping moves the literal back and removes exactly what was inserted, so a file that
//! nothing else touched gets its original bytes back. After every edit the new text is
//! parsed again and each entry compared with what was intended; any difference refuses the
//! edit.
//!
//! This file only declares and re-exports, in the order the files import each other:
//! [`classify`] (what an entry is) and [`splice`] (byte edits of lists), [`driver`] (the
//! result types and the driver), then the per-entry edits [`wrap`] and [`unwrap`].

mod classify;
mod driver;
pub(crate) mod splice;
mod unwrap;
mod wrap;

pub use classify::{EntrySpans, Launch, RemoteLaunch, entry_spans};
pub(crate) use classify::{entries, launches, remote_launches};
pub use driver::{EditError, TextEdit, WrapRecord};
pub use unwrap::{SecretLookup, unwrap_text, unwrap_text_with};
pub(crate) use wrap::pass_env_names;
pub use wrap::{wrap_text, wrap_text_with};
