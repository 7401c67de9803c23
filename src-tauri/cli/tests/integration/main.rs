//! The integration tests of `warden` and `mcp-fake-server`, in one test binary (one link step;
//! tests of all modules run in parallel). `cargo test -p warden-cli --test integration MODULE`
//! runs one module.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

mod approvals;
mod bridge;
mod clients;
#[cfg(target_os = "linux")]
mod containment;
mod control;
mod install;
mod locking;
#[cfg(target_os = "linux")]
mod network;
#[cfg(target_os = "linux")]
mod reaper;
mod registry;
mod reload;
mod resilience;
mod rg_server;
mod sandbox;
mod secrets;
mod servers;
mod soak_regressions;
mod spawn;
mod supervisor;
mod tools;
