//! The integration tests of `warden` and `mcp-fake-server`, in one test binary (one link step;
//! tests of all modules run in parallel). `cargo test -p warden-cli --test integration MODULE`
//! runs one module. On Windows (scripts/cross.sh, under Wine) only `windows` is built: the
//! others drive Unix's sockets, signals, bubblewrap and `/proc`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[cfg(unix)]
mod answers;
#[cfg(unix)]
mod approvals;
#[cfg(unix)]
mod bridge;
#[cfg(unix)]
mod clients;
#[cfg(target_os = "linux")]
mod containment;
#[cfg(unix)]
mod control;
#[cfg(unix)]
mod install;
#[cfg(unix)]
mod locking;
#[cfg(target_os = "linux")]
mod network;
#[cfg(unix)]
mod probe_eras;
#[cfg(target_os = "linux")]
mod reaper;
#[cfg(unix)]
mod registry;
#[cfg(unix)]
mod reload;
#[cfg(unix)]
mod resilience;
#[cfg(unix)]
mod rg_server;
#[cfg(unix)]
mod sandbox;
#[cfg(unix)]
mod secrets;
#[cfg(unix)]
mod servers;
#[cfg(unix)]
mod sets;
#[cfg(target_os = "linux")]
mod side_doors;
#[cfg(unix)]
mod soak_regressions;
#[cfg(unix)]
mod spawn;
#[cfg(unix)]
mod supervisor;
#[cfg(unix)]
mod tools;
#[cfg(windows)]
mod windows;
