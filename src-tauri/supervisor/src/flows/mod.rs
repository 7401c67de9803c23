//! One workflow per user intent, in Rust, that the `warden` commands and the window both run:
//! adding a server ([`add`]) and setting a tool's policy ([`policy`]). The window only shows
//! their plans, progress and outcomes.

pub mod add;
pub mod policy;
