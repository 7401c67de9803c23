//! The official MCP Registry (API v0.1): its documents, read leniently where the schema is
//! lenient (CONTRACT.md, "Installing from the MCP Registry").
//!
//! This file is only the front door; the modules import downwards, never in a circle.

mod error;
mod parse;
mod types;

pub use error::{InputKind, InputRequest, PackageId, RegistryError, RemoteSummary};
pub use parse::{OFFICIAL_URL, parse_list, parse_server};
pub use types::{
    Argument, ArgumentKind, Input, KeyValueInput, ListMetadata, OfficialMeta, Package,
    RegistryType, Remote, Repository, ResponseMeta, ServerJson, ServerList, ServerResponse,
    ServerStatus, Transport,
};
