//! The registry module against the project's own registry documents (tests/fixtures/registry,
//! one per case), against small documents written here, one rule each, and, as an extra, against
//! the real published documents when a copy of them sits beside the repository (`real.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod fixtures;
mod real;
mod rules;
mod view;

use std::collections::BTreeMap;
use std::path::Path;

use super::*;

/// The project's own registry documents (tests/fixtures/registry/README.md says which case
/// each one is); the CLI's integration tests serve the same files.
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/registry");

/// A fixture's text.
fn fixture(name: &str) -> String {
    let path = Path::new(FIXTURES).join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("fixture {} cannot be read: {e}", path.display()))
}

/// A fixture holding one server document.
fn server(name: &str) -> ServerJson {
    parse_server(&fixture(name)).unwrap().server
}

/// Entry `i` of seed.json (a JSON array of server documents).
fn seed(i: usize) -> ServerJson {
    let all: Vec<ServerJson> = serde_json::from_str(&fixture("seed.json")).unwrap();
    all[i].clone()
}

/// A document written in a test.
fn doc(json: serde_json::Value) -> ServerJson {
    serde_json::from_value(json).unwrap()
}

fn inputs(pairs: &[(&str, &str)]) -> PlanOptions {
    PlanOptions {
        inputs: pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
        ..PlanOptions::default()
    }
}

fn argv(plan: &InstallPlan) -> Vec<&str> {
    std::iter::once(plan.command.as_str())
        .chain(plan.args.iter().map(String::as_str))
        .collect()
}

fn env<'a>(plan: &'a InstallPlan, name: &str) -> &'a PlannedEnv {
    plan.env.iter().find(|e| e.name == name).unwrap()
}

fn missing_keys(err: &RegistryError) -> Vec<&str> {
    match err {
        RegistryError::MissingInputs { inputs, .. } => {
            inputs.iter().map(|i| i.key.as_str()).collect()
        }
        other => panic!("expected MissingInputs, got {other:?}"),
    }
}
