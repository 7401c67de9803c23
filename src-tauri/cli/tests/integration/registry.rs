//! `warden registry` against a registry served in the test on 127.0.0.1 (the project's registry
//! fixture documents shaped as the v0.1 API; see common/registry_server.rs). Only loopback addresses:
//! the tests never reach the real registry.

use std::process::Command;

use crate::common::*;

struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// `warden registry ARGS` with `url` as the registry, and its own state dir (the cache) and
/// config file (none).
fn warden_registry(url: &str, state: &std::path::Path, args: &[&str]) -> Run {
    let out = Command::new(WARDEN)
        .arg("registry")
        .args(args)
        .env("WARDEN_REGISTRY_URL", url)
        .env("WARDEN_STATE_DIR", state)
        .env("WARDEN_CONFIG", state.join("config.toml"))
        .env_remove("WARDEN_REGISTRY_BIN")
        .output()
        .unwrap();
    Run {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn search_pages_through_to_a_server_on_the_second_page() {
    let registry = fixture_registry();
    let state = tempfile::tempdir().unwrap();
    let run = warden_registry(&registry.url, state.path(), &["search", "mcp"]);
    assert!(run.ok, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("io.example/archive-search  0.2.0  [no package]")
            && run.stdout.contains(
                "io.example/legacy-notes  0.1.0  [npm]  (deprecated: use io.example/notes-server)"
            )
            && run.stdout.contains("io.example/notes-server  0.4.2  [npm]")
            && run
                .stdout
                .contains("io.example/code-indexer  3.1.0  [pypi]")
            && run
                .stdout
                .contains("io.example/ticket-desk  5.0.1  [remote only]"),
        "{}",
        run.stdout
    );
    let requests = registry.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(
        requests[1].contains(PAGE_2_CURSOR) && requests[1].contains("search=mcp"),
        "{requests:?}"
    );
}

#[test]
fn search_json_is_the_registrys_own_objects() {
    let registry = fixture_registry();
    let state = tempfile::tempdir().unwrap();
    let run = warden_registry(&registry.url, state.path(), &["search", "--json"]);
    assert!(run.ok, "{}", run.stderr);
    let list: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["server"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 5, "{names:?}");
    assert_eq!(
        list[2]["server"]["packages"][0]["identifier"],
        "@example/notes-mcp"
    );
}

#[test]
fn show_prints_the_exact_command_for_notes_server() {
    let registry = fixture_registry();
    let state = tempfile::tempdir().unwrap();
    let run = warden_registry(
        &registry.url,
        state.path(),
        &["show", "io.example/notes-server"],
    );
    assert!(run.ok, "{}", run.stderr);
    assert!(
        run.stdout
            .lines()
            .any(|l| l == "  npx -y @example/notes-mcp@0.4.2"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("as `notes-server`"), "{}", run.stdout);
}

#[test]
fn an_unreachable_registry_is_w_registry_unreachable() {
    let state = tempfile::tempdir().unwrap();
    let url = closed_port_url();
    let run = warden_registry(&url, state.path(), &["search", "x"]);
    assert!(!run.ok);
    assert!(
        run.stderr.contains("[W-REGISTRY-UNREACHABLE]")
            && run.stderr.contains(&url)
            && run.stderr.contains("WARDEN_REGISTRY_URL"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_truncated_answer_is_w_registry_invalid() {
    let registry = TestRegistry::start(|_| {
        Reply::Truncated(r#"{"servers":[{"server":{"name":"io.x/y""#.to_owned())
    });
    let state = tempfile::tempdir().unwrap();
    let run = warden_registry(&registry.url, state.path(), &["search"]);
    assert!(!run.ok);
    assert!(
        run.stderr.contains("[W-REGISTRY-INVALID]"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_malformed_answer_is_w_registry_invalid_and_not_cached() {
    let registry = TestRegistry::start(|_| Reply::Json(200, "<html>proxy login</html>".into()));
    let state = tempfile::tempdir().unwrap();
    let name = "io.example/notes-server";
    for _ in 0..2 {
        let run = warden_registry(&registry.url, state.path(), &["show", name]);
        assert!(!run.ok);
        assert!(
            run.stderr.contains("[W-REGISTRY-INVALID]"),
            "{}",
            run.stderr
        );
    }
    assert_eq!(registry.requests().len(), 2);
}

#[test]
fn an_unknown_name_is_w_registry_not_found() {
    let registry = fixture_registry();
    let state = tempfile::tempdir().unwrap();
    let run = warden_registry(&registry.url, state.path(), &["show", "io.example/nothing"]);
    assert!(!run.ok);
    assert!(
        run.stderr.contains("[W-REGISTRY-NOT-FOUND]"),
        "{}",
        run.stderr
    );
    assert_eq!(
        registry.requests(),
        ["/v0.1/servers/io.example%2Fnothing/versions/latest"]
    );
}

#[test]
fn a_version_the_registry_lacks_is_not_found_naming_those_it_has() {
    let registry = fixture_registry();
    let state = tempfile::tempdir().unwrap();
    let run = warden_registry(
        &registry.url,
        state.path(),
        &["show", "io.example/notes-server", "--version", "9.9.9"],
    );
    assert!(!run.ok);
    assert!(
        run.stderr.contains("[W-REGISTRY-NOT-FOUND]")
            && run.stderr.contains("no version 9.9.9")
            && run.stderr.contains("it has 0.4.2"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_cache_answers_when_the_registry_is_gone_but_not_with_refresh() {
    let registry = fixture_registry();
    let state = tempfile::tempdir().unwrap();
    let url = registry.url.clone();
    let args = ["show", "io.example/notes-server"];
    let first = warden_registry(&url, state.path(), &args);
    assert!(first.ok, "{}", first.stderr);
    drop(registry);
    let cached = warden_registry(&url, state.path(), &args);
    assert!(cached.ok, "{}", cached.stderr);
    assert_eq!(cached.stdout, first.stdout);
    let mut refresh = args.to_vec();
    refresh.push("--refresh");
    let refreshed = warden_registry(&url, state.path(), &refresh);
    assert!(
        !refreshed.ok && refreshed.stderr.contains("[W-REGISTRY-UNREACHABLE]"),
        "{}",
        refreshed.stderr
    );
}

#[test]
fn the_config_files_registry_url_is_used_without_the_environment_variable() {
    let registry = fixture_registry();
    let state = tempfile::tempdir().unwrap();
    let config = state.path().join("config.toml");
    std::fs::write(
        &config,
        format!("[registry]\nurl = \"{}/\"\n", registry.url),
    )
    .unwrap();
    let out = Command::new(WARDEN)
        .args(["registry", "show", "io.example/notes-server"])
        .env_remove("WARDEN_REGISTRY_URL")
        .env("WARDEN_STATE_DIR", state.path())
        .env("WARDEN_CONFIG", &config)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        registry.requests()[0],
        "/v0.1/servers/io.example%2Fnotes-server/versions/latest"
    );
}
