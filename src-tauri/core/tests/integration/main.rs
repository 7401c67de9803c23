//! warden-core's integration tests through its public API, in one test binary.
//! `cargo test -p warden-core --test integration MODULE` runs one module.

mod clients;
mod fuzz_regressions;
mod manage;
