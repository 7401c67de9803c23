//! `warden probe` and both protocol eras (issue 45): `server/discover` first, `initialize` when
//! the server does not answer it as a 2026-07-28 server; the report's `era` says which.
//! The modern server is `tests/e2e/modern_only_server.py` (stdlib Python, no SDK): it refuses
//! `initialize` and any request without the 2026-07-28 `_meta`, so listing its tools also
//! shows that `tools/list` carried it.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::common::{FAKE, WARDEN, require_tool};
use crate::supervisor::Env;

fn modern_only_server() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/e2e/modern_only_server.py")
        .to_string_lossy()
        .into_owned()
}

/// What the tests compare: whether it worked, the era, the tools.
fn outcome(r: &Value) -> (Value, Value, Value) {
    (r["ok"].clone(), r["era"].clone(), r["tool_names"].clone())
}

#[tokio::test]
async fn a_modern_only_server_is_probed_as_modern_with_its_tools() {
    let Some(python) = require_tool("python3") else {
        return;
    };
    let env = Env::new();
    let server = modern_only_server();
    let r = env
        .json(&["probe", "--json", "--", python.to_str().unwrap(), &server])
        .await;
    assert_eq!(
        outcome(&r),
        (
            json!(true),
            json!("modern"),
            json!(["echo", "confirm", "whoami"])
        ),
        "{r}"
    );
}

#[tokio::test]
async fn a_legacy_server_is_probed_as_legacy() {
    let env = Env::new();
    let r = env.json(&["probe", "--json", "--", FAKE]).await;
    assert_eq!(
        (&r["ok"], &r["era"], &r["protocol_version"]),
        (&json!(true), &json!("legacy"), &json!("2025-11-25")),
        "{r}"
    );
}

/// A running supervisor runs the probe (`op::Probe`): its report has the era too.
#[tokio::test]
async fn a_probe_through_the_supervisor_reports_the_era() {
    let Some(python) = require_tool("python3") else {
        return;
    };
    let env = Env::new();
    let daemon = env.daemon(&[]).await;
    let server = modern_only_server();
    let r = env
        .json(&["probe", "--json", "--", python.to_str().unwrap(), &server])
        .await;
    daemon.stop().await;
    assert_eq!(
        outcome(&r),
        (
            json!(true),
            json!("modern"),
            json!(["echo", "confirm", "whoami"])
        ),
        "{r}"
    );
}

/// The text output names the era beside the cold start.
#[tokio::test]
async fn the_text_output_names_the_era() {
    let Some(python) = require_tool("python3") else {
        return;
    };
    let env = Env::new();
    let server = modern_only_server();
    let out = env
        .warden(&["probe", "--", python.to_str().unwrap(), &server])
        .await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("(e2e-modern-only 1.0.0): ok, modern MCP (2026-07-28), cold start"),
        "{text}"
    );
}

/// `warden rg-server` answers `server/discover`: probed as modern, with mcp-ripgrep's tools.
#[tokio::test]
async fn the_ripgrep_fallback_server_is_probed_as_modern() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let r = env
        .json(&[
            "probe",
            "--json",
            "--",
            WARDEN,
            "rg-server",
            "--root",
            root.path().to_str().unwrap(),
        ])
        .await;
    assert_eq!(
        outcome(&r),
        (
            json!(true),
            json!("modern"),
            json!([
                "search",
                "advanced-search",
                "count-matches",
                "list-files",
                "list-file-types"
            ])
        ),
        "{r}"
    );
}
