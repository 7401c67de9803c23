//! The official MCP Registry (API v0.1): its documents, and the exact local command line a
//! server of it becomes in an IDE config (docs/registry.md).
//!
//! Pure: no HTTP, no files. [`parse_server`] and [`parse_list`] read what the registry (or
//! `--file`) gives; [`plan`] turns a [`ServerJson`] into an [`InstallPlan`] (argv, environment,
//! pinned package, warnings) or a [`RegistryError`] that says what to do; [`entry_name`] is
//! the name of the IDE entry.
//!
//! This file is only the front door; the modules import downwards, never in a circle:
//! `document` (the registry's documents as read), error, version, `plan` (what a plan is
//! made of), args, `planner` (document → plan), parse (checked by `layers.rs`).

mod args;
mod document;
mod error;
mod parse;
mod plan;
mod planner;
mod version;
mod view;

#[cfg(test)]
mod tests;

pub use document::{
    Argument, ArgumentKind, Input, KeyValueInput, ListMetadata, OfficialMeta, Package,
    RegistryType, Remote, Repository, ResponseMeta, ServerJson, ServerList, ServerResponse,
    ServerStatus, Transport,
};
pub use error::{InputKind, InputRequest, PackageId, RegistryError, RemoteSummary};
pub use parse::{OFFICIAL_URL, parse_list, parse_server};
pub use plan::{
    InstallPlan, PlanOptions, PlannedEnv, PlannedPackage, RemotePlan, ValueSource, Warning,
    WarningKind,
};
pub use planner::{entry_name, header_env_name, plan, plan_remote, requested_version};
pub use view::{
    Found, PlanView, RegistryAnswer, RegistryRequest, document_view, found, plan_view, registry_op,
};
