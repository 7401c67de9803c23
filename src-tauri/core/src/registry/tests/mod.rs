//! The registry module against the real documents of shared/fixtures/registry (read where
//! they are, never copied) and against small documents written here, one rule each.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod fixtures;
mod rules;
mod view;

use std::collections::BTreeMap;
use std::path::Path;

use super::*;

/// shared/fixtures/registry, beside the repository (CI checks out ../shared there too).
const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/registry"
);

/// Says why a test cannot run here and lets it return; under CI (`CI` set) it fails
/// instead, as `cannot_run` of the CLI's integration tests does.
fn cannot_run(why: &str) {
    let ci = std::env::var("CI").is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false"));
    assert!(
        !ci,
        "{why}: CI must provide it (../shared beside the repository)"
    );
    eprintln!("SKIPPED: {why} (under CI this fails)");
}

/// A fixture's text, or `None` after [`cannot_run`].
fn fixture(name: &str) -> Option<String> {
    let path = Path::new(FIXTURES).join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) => {
            cannot_run(&format!(
                "fixture {} cannot be read ({e}); the shared fixtures live beside the repository",
                path.display()
            ));
            None
        }
    }
}

/// A fixture holding one server document.
fn server(name: &str) -> Option<ServerJson> {
    Some(parse_server(&fixture(name)?).unwrap().server)
}

/// Entry `i` of registry-seed.json (a JSON array of server documents).
fn seed(i: usize) -> Option<ServerJson> {
    let all: Vec<ServerJson> = serde_json::from_str(&fixture("registry-seed.json")?).unwrap();
    Some(all[i].clone())
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
