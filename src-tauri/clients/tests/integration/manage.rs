//! `servers add | disable | enable | remove` as text edits, on the real-world fixtures of
//! every client format: each a byte-exact round trip (add then remove, off then on), and
//! every existing entry removable with every other entry unchanged.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use warden_clients::{
    ClientId, Dialect, EntryRef, ManageError, NewEntry, add_text, has_switch, remove_text,
    set_switch_text,
};

const WARDEN: &str = "/opt/warden/bin/warden";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/clients")
}

/// The client reading a fixture, from its directory and name.
fn client_of(dir: &str, file: &str) -> (ClientId, Dialect) {
    let d: Dialect = serde_json::from_str(&format!("\"{dir}\"")).unwrap();
    let c = match d {
        Dialect::ClaudeCodeUser => ClientId::ClaudeCode,
        Dialect::Vscode => ClientId::Vscode,
        Dialect::Zed => ClientId::Zed,
        Dialect::Opencode => ClientId::Opencode,
        Dialect::Codex => ClientId::Codex,
        Dialect::ContinueYaml => ClientId::Continue,
        Dialect::Goose => ClientId::Goose,
        Dialect::McpServers => match file.split(['_', '.']).next().unwrap() {
            "claude" if file.starts_with("claude_code") => ClientId::ClaudeCode,
            "claude" => ClientId::ClaudeDesktop,
            "cline" => ClientId::Cline,
            "cursor" => ClientId::Cursor,
            "gemini" => ClientId::GeminiCli,
            "kiro" => ClientId::Kiro,
            "lmstudio" => ClientId::LmStudio,
            "windsurf" => ClientId::Windsurf,
            other => panic!("no client for fixture {other}"),
        },
    };
    (c, d)
}

/// (client, dialect, path, text) of every well-formed fixture, and of the switch fixtures.
fn all_fixtures() -> Vec<(ClientId, Dialect, PathBuf, String)> {
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let name = dir.file_name().unwrap().to_str().unwrap().to_owned();
        if name == "malformed" || name == "expected" {
            continue;
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            let file = f.file_name().unwrap().to_str().unwrap().to_owned();
            let (client, dialect) = if name == "switches" {
                switch_client(&file)
            } else {
                client_of(&name, &file)
            };
            out.push((
                client,
                dialect,
                f.clone(),
                std::fs::read_to_string(&f).unwrap(),
            ));
        }
    }
    assert!(out.len() >= 27, "fixtures missing: {}", out.len());
    out
}

fn switch_client(file: &str) -> (ClientId, Dialect) {
    match file {
        "claude.json" => (ClientId::ClaudeCode, Dialect::ClaudeCodeUser),
        "claude_desktop.json" => (ClientId::ClaudeDesktop, Dialect::McpServers),
        "cline.json" => (ClientId::Cline, Dialect::McpServers),
        "codex.toml" => (ClientId::Codex, Dialect::Codex),
        "gemini.json" => (ClientId::GeminiCli, Dialect::McpServers),
        "goose.yaml" => (ClientId::Goose, Dialect::Goose),
        "kiro.json" => (ClientId::Kiro, Dialect::McpServers),
        "opencode.jsonc" => (ClientId::Opencode, Dialect::Opencode),
        "windsurf.json" => (ClientId::Windsurf, Dialect::McpServers),
        "zed.json" => (ClientId::Zed, Dialect::Zed),
        other => panic!("no client for switches/{other}"),
    }
}

fn new_entry(secret: bool) -> NewEntry {
    NewEntry {
        name: "warden-added".to_owned(),
        command: "npx".to_owned(),
        args: vec![
            "-y".to_owned(),
            "@scope/server@1.2.3".to_owned(),
            "C:\\dir with space".to_owned(),
        ],
        env: BTreeMap::from([("LOG_LEVEL".to_owned(), "debug".to_owned())]),
        secret_env: if secret {
            vec!["API_TOKEN".to_owned()]
        } else {
            Vec::new()
        },
        ..NewEntry::default()
    }
}

fn names(client: ClientId, dialect: Dialect, text: &str) -> Vec<EntryRef> {
    // Every entry, through a remove that is not applied: the listing is the reference.
    warden_clients::entry_spans(dialect, text)
        .unwrap()
        .into_iter()
        .map(|s| s.entry)
        .filter(|e| {
            let _ = client;
            !e.name.starts_with('#')
        })
        .collect()
}

#[test]
fn manage_add_then_remove_gives_back_every_fixture_byte_for_byte() {
    for (client, dialect, path, text) in all_fixtures() {
        for (warden, secret) in [(Some(WARDEN), true), (Some(WARDEN), false), (None, false)] {
            let entry = new_entry(secret);
            let added = add_text(client, dialect, &text, &entry, warden)
                .unwrap_or_else(|e| panic!("{}: add: {e}", path.display()));
            assert!(added.text.contains("warden-added"), "{}", path.display());
            if let Some(w) = warden {
                assert!(added.text.contains(w), "{}: wrapped", path.display());
                assert_eq!(added.text.contains("API_TOKEN"), secret);
            }
            // Only insertions: every byte of the original is still there, in order.
            let mut rest = added.text.as_str();
            for c in text.chars() {
                let at = rest.find(c).unwrap_or_else(|| {
                    panic!("{}: a byte of the original went missing", path.display())
                });
                rest = &rest[at + c.len_utf8()..];
            }
            let removed = remove_text(client, dialect, &added.text, "warden-added")
                .unwrap_or_else(|e| panic!("{}: remove: {e}\n{}", path.display(), added.text));
            assert_eq!(
                removed.text,
                text,
                "{}: add then remove is not byte-exact; added:\n{}",
                path.display(),
                added.text
            );
        }
    }
}

#[test]
fn manage_add_refuses_a_name_that_is_there() {
    for (client, dialect, path, text) in all_fixtures() {
        let Some(first) = names(client, dialect, &text).into_iter().next() else {
            continue;
        };
        if !first.scope.is_empty() {
            continue;
        }
        let entry = NewEntry {
            name: first.name.clone(),
            command: "x".to_owned(),
            ..NewEntry::default()
        };
        match add_text(client, dialect, &text, &entry, None) {
            Err(ManageError::Exists(shown)) => {
                assert!(shown.contains(&first.name), "{}: {shown}", path.display());
            }
            other => panic!("{}: {other:?}", path.display()),
        }
    }
}

#[test]
fn manage_every_entry_can_be_removed_and_the_rest_stays() {
    for (client, dialect, path, text) in all_fixtures() {
        for id in names(client, dialect, &text) {
            let out = remove_text(client, dialect, &text, &id.name);
            match out {
                Ok(e) => {
                    assert!(e.text.len() < text.len(), "{}: {id}", path.display());
                    assert!(!e.removed.is_empty());
                }
                // Duplicates and dotted/inline layouts are refused with a reason.
                Err(ManageError::Layout(why)) => {
                    assert!(!why.is_empty(), "{}: {id}", path.display());
                }
                Err(e) => panic!("{}: remove {id}: {e}", path.display()),
            }
        }
    }
}

#[test]
fn manage_switch_off_then_on_gives_back_every_fixture_byte_for_byte() {
    let mut switched = 0;
    for (client, dialect, path, text) in all_fixtures() {
        let all = names(client, dialect, &text);
        for id in all.clone() {
            // A name in several Claude Code projects: enable turns on all of them (the
            // file-level `set_enabled` undoes exactly through the ledger).
            let twins = all.iter().filter(|e| e.name == id.name).count();
            if !has_switch(client, dialect, &id) || twins > 1 {
                continue;
            }
            let off = match set_switch_text(client, dialect, &text, &id.name, false, false) {
                Ok(e) => e,
                Err(ManageError::Layout(_)) => continue,
                Err(e) => panic!("{}: off {id}: {e}", path.display()),
            };
            if off.changed.is_empty() {
                continue; // already off
            }
            let on = set_switch_text(client, dialect, &off.text, &id.name, true, off.key_added)
                .unwrap_or_else(|e| panic!("{}: on {id}: {e}\n{}", path.display(), off.text));
            assert_eq!(
                on.text,
                text,
                "{}: {id} off then on is not byte-exact; off:\n{}",
                path.display(),
                off.text
            );
            switched += 1;
        }
    }
    assert!(switched >= 20, "only {switched} entries switched");
}

#[test]
fn manage_malformed_files_are_refused_with_a_position() {
    let dir = fixtures().join("malformed");
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let d: Dialect =
            serde_json::from_str(&format!("\"{}\"", name.split('.').next().unwrap())).unwrap();
        let (client, _) = client_of(name.split('.').next().unwrap(), "cursor");
        let text = std::fs::read_to_string(&path).unwrap();
        for r in [
            add_text(client, d, &text, &new_entry(false), Some(WARDEN)).map(|_| ()),
            remove_text(client, d, &text, "anything").map(|_| ()),
        ] {
            assert!(matches!(r, Err(ManageError::Parse(_))), "{name}: {r:?}");
        }
    }
}

#[test]
fn manage_add_writes_each_clients_own_shape() {
    let e = new_entry(false);
    let cases: [(ClientId, Dialect, &str, &str); 7] = [
        (
            ClientId::Vscode,
            Dialect::Vscode,
            "{\n  \"servers\": {}\n}\n",
            "\"type\": \"stdio\"",
        ),
        (ClientId::Zed, Dialect::Zed, "{}\n", "\"context_servers\""),
        (
            ClientId::Opencode,
            Dialect::Opencode,
            "{}\n",
            "\"type\": \"local\"",
        ),
        (
            ClientId::Codex,
            Dialect::Codex,
            "model = \"o3\"\n",
            "[mcp_servers.warden-added]",
        ),
        (
            ClientId::Goose,
            Dialect::Goose,
            "GOOSE_MODEL: x\n",
            "extensions:\n  warden-added:\n    name: warden-added\n    type: stdio\n    cmd: npx",
        ),
        (
            ClientId::Continue,
            Dialect::ContinueYaml,
            "name: a\n",
            "mcpServers:\n  - name: warden-added\n    command: npx",
        ),
        (ClientId::Cursor, Dialect::McpServers, "", "\"mcpServers\""),
    ];
    for (client, dialect, text, want) in cases {
        let out = add_text(client, dialect, text, &e, None).unwrap();
        assert!(out.text.contains(want), "{client}:\n{}", out.text);
    }
    // opencode: the command and its arguments in one list, env as `environment`.
    let oc = add_text(
        ClientId::Opencode,
        Dialect::Opencode,
        "{}\n",
        &e,
        Some(WARDEN),
    )
    .unwrap();
    assert!(
        oc.text.contains("\"command\": [\"/opt/warden/bin/warden\", \"bridge\", \"--server\", \"warden-added\", \"--pass-env\", \"LOG_LEVEL\", \"--\", \"npx\""),
        "{}",
        oc.text
    );
    assert!(oc.text.contains("\"environment\""), "{}", oc.text);
}

#[test]
fn manage_add_follows_the_files_indentation_and_comments() {
    let tabs = "{\n\t// mine\n\t\"mcpServers\": {\n\t\t\"a\": { \"command\": \"x\" }, // trailing\n\t}\n}\n";
    let out = add_text(
        ClientId::Cursor,
        Dialect::McpServers,
        tabs,
        &new_entry(false),
        None,
    )
    .unwrap();
    assert!(
        out.text
            .contains("// trailing\n\t\t\"warden-added\": {\n\t\t\t\"command\": \"npx\","),
        "{}",
        out.text
    );
    assert_eq!(
        remove_text(
            ClientId::Cursor,
            Dialect::McpServers,
            &out.text,
            "warden-added"
        )
        .unwrap()
        .text,
        tabs
    );
    let one_line = r#"{"mcpServers":{"a":{"command":"x"}}}"#;
    let out = add_text(
        ClientId::Cursor,
        Dialect::McpServers,
        one_line,
        &new_entry(false),
        None,
    )
    .unwrap();
    assert!(!out.text.contains('\n'), "{}", out.text);
    assert_eq!(
        remove_text(
            ClientId::Cursor,
            Dialect::McpServers,
            &out.text,
            "warden-added"
        )
        .unwrap()
        .text,
        one_line
    );
    // Comment lines of its own above an entry go with it; others stay.
    let jsonc = "{\n  \"servers\": {\n    // first\n    \"a\": {\"command\": \"x\"},\n    // about b\n    \"b\": {\"command\": \"y\"}, // b's line\n    \"c\": {\"command\": \"z\"}\n  }\n}\n";
    let out = remove_text(ClientId::Vscode, Dialect::Vscode, jsonc, "b").unwrap();
    assert_eq!(
        out.text,
        "{\n  \"servers\": {\n    // first\n    \"a\": {\"command\": \"x\"},\n    \"c\": {\"command\": \"z\"}\n  }\n}\n"
    );
}
