//! Integration tests of the clients' files (and the fuzzers' regressions) through the public API,
//! in one test binary: `cargo test -p warden-clients --test integration MODULE` runs one module.

mod clients;
mod fuzz_regressions;
mod manage;
mod sets;
