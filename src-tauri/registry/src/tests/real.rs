//! An extra, beside the project's own fixtures: real published registry documents, read where
//! they are when a copy of them sits beside the repository (never copied into it). Each one
//! must parse and, for each of its packages, give a plan or a refusal that says why; none may
//! panic. Without the folder the test says so on stderr and passes, under CI too: the cases
//! themselves are covered by tests/fixtures/registry.
//!
//! `WARDEN_TEST_SHARED_REGISTRY` names another folder (or, set to a path that does not exist,
//! runs the suite as a clone on its own would).

use super::*;

/// The folder of real documents kept next to the repository's own folder, if any.
const BESIDE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/registry"
);

fn real_folder() -> std::path::PathBuf {
    std::env::var_os("WARDEN_TEST_SHARED_REGISTRY")
        .map_or_else(|| Path::new(BESIDE).to_path_buf(), Into::into)
}

/// The servers of one document: a server.json, a JSON array of them, or a list response.
fn servers_of(name: &str, text: &str) -> Vec<ServerJson> {
    let value: serde_json::Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{name} is not JSON: {e}"));
    if value.is_array() {
        serde_json::from_value(value).unwrap_or_else(|e| panic!("{name}: {e}"))
    } else if value.get("servers").is_some() {
        parse_list(text)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .servers
            .into_iter()
            .map(|s| s.server)
            .collect()
    } else {
        vec![
            parse_server(text)
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .server,
        ]
    }
}

/// A plan for `doc` with `package`, giving every value it asks for and a version for a
/// template, or the refusal that is left; a refusal must say something.
fn plan_or_refusal(doc: &ServerJson, package: Option<usize>) -> Result<InstallPlan, String> {
    let mut opts = PlanOptions {
        package,
        ..PlanOptions::default()
    };
    for _ in 0..3 {
        match plan(doc, &opts) {
            Ok(plan) => return Ok(plan),
            Err(RegistryError::MissingInputs { inputs, .. }) => {
                for i in inputs {
                    opts.inputs.insert(i.key, "value-1".to_owned());
                }
            }
            Err(RegistryError::Template { .. }) if opts.version.is_none() => {
                opts.version = Some("1.0.0".to_owned());
            }
            Err(e) => {
                let message = e.to_string();
                assert!(!message.trim().is_empty(), "{}: an empty refusal", doc.name);
                return Err(message);
            }
        }
    }
    panic!(
        "{}: still asking for values after they were given",
        doc.name
    )
}

#[test]
fn real_registry_documents_beside_the_repository_parse_and_plan() {
    let folder = real_folder();
    let Ok(entries) = std::fs::read_dir(&folder) else {
        eprintln!(
            "NOT RUN: no real registry documents at {} (an extra; the project's own fixtures cover each case)",
            folder.display()
        );
        return;
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "{} holds no .json", folder.display());
    for name in &names {
        let text = std::fs::read_to_string(folder.join(name)).unwrap();
        let servers = servers_of(name, &text);
        assert!(!servers.is_empty(), "{name}: no server in it");
        for doc in &servers {
            assert!(
                !entry_name(&doc.name, None).is_empty(),
                "{name}: {}",
                doc.name
            );
            let choices = std::iter::once(None).chain((0..doc.packages.len()).map(Some));
            for package in choices {
                match plan_or_refusal(doc, package) {
                    Ok(plan) => {
                        assert!(
                            ["npx", "uvx", "docker", "dnx"].contains(&plan.command.as_str()),
                            "{name}: {plan:?}"
                        );
                        eprintln!(
                            "{name}: {} {package:?}: {}",
                            doc.name,
                            plan.argv().join(" ")
                        );
                    }
                    Err(why) => eprintln!("{name}: {} {package:?}: refused: {why}", doc.name),
                }
            }
        }
    }
}
