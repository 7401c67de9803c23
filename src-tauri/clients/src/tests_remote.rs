//! Remote entries (`url`, `serverUrl`, `httpUrl`, `type: "http"`): wrapped into
//! `warden bridge --remote URL` when asked, undone to the same bytes, and left alone with a
//! reason when the bridge cannot reach them as written.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use super::*;

const WARDEN: &str = "/opt/warden/bin/warden";

fn wrapped(dialect: Dialect, text: &str) -> TextEdit {
    wrap_text(dialect, text, WARDEN, &|_| true).unwrap()
}

fn skipped(w: &TextEdit) -> Vec<(&str, &str)> {
    w.skipped
        .iter()
        .map(|(e, why)| (e.name.as_str(), why.as_str()))
        .collect()
}

/// The args of the entry's bridge as a JSON value, read back from the text.
fn entry(text: &str, servers: &str, name: &str) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    v[servers][name].clone()
}

#[test]
fn a_url_entry_becomes_the_bridge_and_unwrap_gives_the_bytes_back() {
    let text = r#"{
  "mcpServers": {
    "docs": {
      "url": "https://mcp.example.com/mcp",
      "headers": { "Authorization": "${env:DOCS_AUTH}", "X-Team": "${TEAM}" },
      "disabled": false
    },
    "time": { "command": "mcp-server-time" }
  }
}
"#;
    let w = wrapped(Dialect::McpServers, text);
    assert_eq!(w.changed.len(), 2);
    let docs = entry(&w.text, "mcpServers", "docs");
    assert_eq!(
        docs,
        serde_json::json!({
            "command": WARDEN,
            "args": ["bridge", "--server", "docs", "--remote", "https://mcp.example.com/mcp",
                     "--header", "Authorization=DOCS_AUTH", "--header", "X-Team=TEAM"],
            "disabled": false
        })
    );
    let u = unwrap_text(Dialect::McpServers, &w.text, &|_| true, &w.records).unwrap();
    assert_eq!(u.text, text);
}

#[test]
fn every_json_dialect_wraps_its_remote_shape_and_gets_its_bytes_back() {
    let cases: &[(Dialect, &str, &str)] = &[
        (
            Dialect::Vscode,
            "servers",
            "{\"servers\": {\"r\": {\"type\": \"http\", \"url\": \"https://a.example/mcp\"}}}",
        ),
        (
            Dialect::McpServers,
            "mcpServers",
            "{\"mcpServers\": {\"r\": {\"httpUrl\": \"https://a.example/mcp\"}}}",
        ),
        (
            Dialect::McpServers,
            "mcpServers",
            "{\"mcpServers\": {\"r\": {\"serverUrl\": \"https://a.example/mcp\"}}}",
        ),
        (
            Dialect::ClaudeCodeUser,
            "mcpServers",
            "{\"mcpServers\": {\"r\": {\"type\": \"http\", \"url\": \"https://a.example/mcp\"}}}",
        ),
        (
            Dialect::Zed,
            "context_servers",
            "{\"context_servers\": {\"r\": {\"url\": \"https://a.example/mcp\"}}}",
        ),
        (
            Dialect::Opencode,
            "mcp",
            "{\"mcp\": {\"r\": {\"type\": \"remote\", \"url\": \"https://a.example/mcp\", \"enabled\": true}}}",
        ),
        (
            Dialect::McpServers,
            "mcpServers",
            "{\r\n  // a comment\r\n  \"mcpServers\": {\r\n    \"r\": {\r\n      \"type\": \"streamable-http\",\r\n      \"url\": \"http://127.0.0.1:8931/mcp\", // local\r\n    },\r\n  },\r\n}\r\n",
        ),
    ];
    for (dialect, key, text) in cases {
        let w = wrapped(*dialect, text);
        assert_eq!(w.changed.len(), 1, "{dialect:?} {text}");
        let listed = crate::edit::entries(ClientId::Cursor, *dialect, &w.text).unwrap();
        assert!(
            matches!(&listed[0].state, EntryState::Wrapped { command, .. } if command.ends_with("/mcp")),
            "{dialect:?}: {:?}",
            listed[0].state
        );
        if !text.contains("//") {
            let e = entry(&w.text, key, "r");
            let argv: Vec<&str> = match dialect {
                Dialect::Opencode => e["command"].as_array().unwrap()[1..]
                    .iter()
                    .map(|a| a.as_str().unwrap())
                    .collect(),
                _ => e["args"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap())
                    .collect(),
            };
            assert_eq!(
                argv,
                [
                    "bridge",
                    "--server",
                    "r",
                    "--remote",
                    "https://a.example/mcp"
                ],
                "{dialect:?}"
            );
        }
        let u = unwrap_text(*dialect, &w.text, &|_| true, &w.records).unwrap();
        assert_eq!(u.text, *text, "{dialect:?}");
    }
}

#[test]
fn remote_entries_the_bridge_cannot_reach_as_written_stay_with_a_reason() {
    let text = r#"{"mcpServers": {
  "plain": {"url": "http://a.example/mcp"},
  "creds": {"url": "https://me:pw@a.example/mcp"},
  "literal": {"url": "https://a.example/mcp", "headers": {"Authorization": "Bearer sk-live-9"}},
  "mixed": {"url": "https://a.example/mcp", "headers": {"Authorization": "Bearer ${env:T}"}},
  "ws": {"type": "ws", "url": "wss://a.example/ws"}
}}"#;
    let w = wrapped(Dialect::McpServers, text);
    assert_eq!(w.text, text);
    let why = skipped(&w);
    let reason = |n: &str| why.iter().find(|(name, _)| *name == n).unwrap().1;
    assert!(reason("plain").contains("plain http"));
    assert!(reason("creds").contains("user name or password") && !reason("creds").contains("pw@"));
    assert!(
        reason("literal").contains("\"Authorization\"")
            && reason("literal").contains("--secret-env")
    );
    assert!(!why.iter().any(|(_, r)| r.contains("sk-live-9")));
    assert!(reason("mixed").contains("Fix:"));
    assert!(reason("ws").contains("WebSocket"));
}

#[test]
fn an_http_sse_entry_becomes_the_bridge_to_its_url() {
    let text = r#"{"mcpServers": {"old": {"type": "sse", "url": "https://a.example/sse"}}}"#;
    let w = wrapped(Dialect::McpServers, text);
    assert_eq!(
        entry(&w.text, "mcpServers", "old")["args"],
        serde_json::json!([
            "bridge",
            "--server",
            "old",
            "--remote",
            "https://a.example/sse"
        ])
    );
}

#[test]
fn an_http_sse_entry_unwraps_to_its_bytes() {
    let text = "{\"mcpServers\": {\"old\": {\"type\": \"sse\", \"url\": \"https://a.example/sse\"},\n  \"bare\": {\"url\": \"http://localhost:8931/sse\"}}}";
    let w = wrapped(Dialect::McpServers, text);
    let u = unwrap_text(Dialect::McpServers, &w.text, &|_| true, &w.records).unwrap();
    assert_eq!(u.text, text);
}

#[test]
fn a_websocket_entry_stays_with_a_reason() {
    let text = r#"{"mcpServers": {"ws": {"type": "websocket", "url": "wss://a.example/ws"}}}"#;
    let w = wrapped(Dialect::McpServers, text);
    assert!(skipped(&w)[0].1.contains("WebSocket"), "{:?}", skipped(&w));
}

#[test]
fn a_remote_entry_is_listed_as_skipped_so_nothing_wraps_it_unasked() {
    let text = "{\"mcpServers\": {\"r\": {\"url\": \"https://a.example/mcp?key=abc\"}}}";
    let listed = crate::edit::entries(ClientId::ClaudeDesktop, Dialect::McpServers, text).unwrap();
    match &listed[0].state {
        EntryState::Skipped { reason } => {
            assert!(
                reason.contains("clients wrap") && !reason.contains("abc"),
                "{reason}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(
        crate::edit::launches(Dialect::McpServers, text)
            .unwrap()
            .is_empty()
    );
}

/// Without Warden's record (the entry was wrapped elsewhere, or changed since), unwrap writes
/// the client's plain remote entry: the URL, the headers from the same variables, and the
/// other members as they are.
#[test]
fn unwrap_without_the_record_writes_the_plain_remote_entry() {
    let text = "{\"servers\": {\"r\": {\n  \"type\": \"http\",\n  \"url\": \"https://a.example/mcp\",\n  \"headers\": {\"Authorization\": \"${input:tok}\"}\n}}}";
    assert!(wrapped(Dialect::Vscode, text).changed.is_empty());
    let text = text.replace("${input:tok}", "${env:TOK}");
    let w = wrapped(Dialect::Vscode, &text);
    let edited = w.text.replace("\"args\": [", "\"args\": [ ");
    let u = unwrap_text(Dialect::Vscode, &edited, &|_| true, &w.records).unwrap();
    assert_eq!(
        u.text,
        "{\"servers\": {\"r\": {\n  \"type\": \"http\",\n  \"url\": \"https://a.example/mcp\",\n  \"headers\": { \"Authorization\": \"${env:TOK}\" }\n}}}"
    );
}

#[test]
fn unwrap_without_the_record_of_an_sse_entry_writes_type_sse() {
    let text =
        "{\"servers\": {\"r\": {\n  \"type\": \"sse\",\n  \"url\": \"https://a.example/sse\"\n}}}";
    let w = wrapped(Dialect::Vscode, text);
    let edited = w.text.replace("\"args\": [", "\"args\": [ ");
    let u = unwrap_text(Dialect::Vscode, &edited, &|_| true, &w.records).unwrap();
    assert_eq!(u.text, text);
}

#[test]
fn wrap_and_unwrap_of_a_remote_entry_in_a_claude_desktop_file_round_trip_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let env = ClientEnv::with_home(dir.path(), Os::Linux);
    let path = dir.path().join(".config/Claude/claude_desktop_config.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let text = "{\n  \"mcpServers\": {\n    \"docs\": { \"url\": \"https://mcp.example.com/mcp\" }\n  }\n}\n";
    std::fs::write(&path, text).unwrap();
    let filter = Filter {
        file: Some(path.clone()),
        ..Filter::default()
    };
    let opts = WrapOptions {
        warden: PathBuf::from(WARDEN),
        filter: filter.clone(),
        dry_run: false,
        move_secrets: false,
    };
    let changes = wrap(&env, &opts).unwrap();
    assert_eq!(changes[0].changed.len(), 1, "{changes:?}");
    assert!(std::fs::read_to_string(&path).unwrap().contains("--remote"));
    let undo = UnwrapOptions {
        filter,
        dry_run: false,
    };
    unwrap(&env, &undo).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

fn remote_entry(url: &str) -> NewEntry {
    NewEntry {
        name: "docs".to_owned(),
        url: Some(url.to_owned()),
        headers: vec!["Authorization=DOCS_AUTH".to_owned()],
        ..NewEntry::default()
    }
}

/// `servers add --url` writes the bridged remote entry in every syntax (a TOML or YAML file
/// takes it too: it is a command), it lists as wrapped with its URL, and remove gives the
/// bytes back.
#[test]
fn add_with_a_url_writes_the_bridge_in_every_syntax_and_remove_undoes_it() {
    let cases = [
        (
            ClientId::ClaudeDesktop,
            Dialect::McpServers,
            "{\n  \"mcpServers\": {\n    \"t\": { \"command\": \"t\" }\n  }\n}\n",
        ),
        (
            ClientId::Codex,
            Dialect::Codex,
            "model = \"o3\"\n\n[mcp_servers.t]\ncommand = \"t\"\n",
        ),
        (
            ClientId::Continue,
            Dialect::ContinueYaml,
            "name: cfg\nmcpServers:\n  - name: t\n    command: t\n",
        ),
        (
            ClientId::Opencode,
            Dialect::Opencode,
            "{\n  \"mcp\": {\n    \"t\": { \"type\": \"local\", \"command\": [\"t\"] }\n  }\n}\n",
        ),
    ];
    let entry = remote_entry("https://mcp.example.com/mcp");
    for (client, dialect, text) in cases {
        let added = add_text(client, dialect, text, &entry, Some(WARDEN)).unwrap();
        let listed = crate::edit::entries(client, dialect, &added.text).unwrap();
        assert_eq!(
            listed[1].state,
            EntryState::Wrapped {
                bridge: WARDEN.to_owned(),
                server: Some("docs".to_owned()),
                command: "https://mcp.example.com/mcp".to_owned(),
                args: Vec::new(),
            },
            "{dialect:?}"
        );
        assert!(
            added.text.contains("Authorization=DOCS_AUTH"),
            "{}",
            added.text
        );
        let removed = remove_text(client, dialect, &added.text, "docs").unwrap();
        assert_eq!(removed.text, text, "{dialect:?}");
    }
}

#[test]
fn add_refuses_a_url_off_this_machine_over_plain_http_as_insecure() {
    let dir = tempfile::tempdir().unwrap();
    let env = ClientEnv::with_home(dir.path(), Os::Linux);
    let opts = AddOptions {
        clients: vec![ClientId::Cursor],
        entry: remote_entry("http://mcp.example.com/mcp"),
        warden: Some(PathBuf::from(WARDEN)),
        dry_run: true,
    };
    let err = add(&env, &opts).unwrap_err();
    assert!(
        err.coded().ends_with("[W-AUTH-INSECURE]"),
        "{}",
        err.coded()
    );
}

#[test]
fn add_refuses_a_header_that_is_not_name_and_variable() {
    let dir = tempfile::tempdir().unwrap();
    let env = ClientEnv::with_home(dir.path(), Os::Linux);
    let mut entry = remote_entry("https://mcp.example.com/mcp");
    entry.headers = vec!["Authorization=Bearer xyz".to_owned()];
    let opts = AddOptions {
        clients: vec![ClientId::Cursor],
        entry,
        warden: Some(PathBuf::from(WARDEN)),
        dry_run: true,
    };
    let err = add(&env, &opts).unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::BadUrl {
                insecure: false,
                ..
            }
        ) && err.to_string().contains("NAME=ENVVAR"),
        "{err}"
    );
}
