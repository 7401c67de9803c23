//! The clients' config files on macOS, tested here through the macOS table (`Os::Macos`):
//! the editors and Claude Desktop under `~/Library/Application Support`, the rest where each
//! keeps them on every Unix.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use super::*;

const LIB: &str = "Library/Application Support";

/// Every client's user-level files on macOS, relative to the home, with the client and the
/// dialect each is read in.
fn table() -> Vec<(String, ClientId, Dialect)> {
    let at = |rel: &str| format!("{LIB}/{rel}");
    vec![
        (
            at("Claude/claude_desktop_config.json"),
            ClientId::ClaudeDesktop,
            Dialect::McpServers,
        ),
        (
            ".claude.json".into(),
            ClientId::ClaudeCode,
            Dialect::ClaudeCodeUser,
        ),
        (
            ".cursor/mcp.json".into(),
            ClientId::Cursor,
            Dialect::McpServers,
        ),
        (at("Code/User/mcp.json"), ClientId::Vscode, Dialect::Vscode),
        (
            at("Code - Insiders/User/mcp.json"),
            ClientId::Vscode,
            Dialect::Vscode,
        ),
        (
            at("VSCodium/User/mcp.json"),
            ClientId::Vscode,
            Dialect::Vscode,
        ),
        (
            at("Code/User/profiles/p1/mcp.json"),
            ClientId::Vscode,
            Dialect::Vscode,
        ),
        (
            ".cline/data/settings/cline_mcp_settings.json".into(),
            ClientId::Cline,
            Dialect::McpServers,
        ),
        (
            at("Cursor/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"),
            ClientId::Cline,
            Dialect::McpServers,
        ),
        (
            at(
                "Windsurf/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
            ),
            ClientId::Cline,
            Dialect::McpServers,
        ),
        (
            ".codeium/windsurf/mcp_config.json".into(),
            ClientId::Windsurf,
            Dialect::McpServers,
        ),
        (
            ".config/zed/settings.json".into(),
            ClientId::Zed,
            Dialect::Zed,
        ),
        (
            ".gemini/settings.json".into(),
            ClientId::GeminiCli,
            Dialect::McpServers,
        ),
        (".codex/config.toml".into(), ClientId::Codex, Dialect::Codex),
        (
            ".config/opencode/opencode.json".into(),
            ClientId::Opencode,
            Dialect::Opencode,
        ),
        (
            ".kiro/settings/mcp.json".into(),
            ClientId::Kiro,
            Dialect::McpServers,
        ),
        (
            ".lmstudio/mcp.json".into(),
            ClientId::LmStudio,
            Dialect::McpServers,
        ),
        (
            ".continue/config.yaml".into(),
            ClientId::Continue,
            Dialect::ContinueYaml,
        ),
        (
            ".config/goose/config.yaml".into(),
            ClientId::Goose,
            Dialect::Goose,
        ),
    ]
}

/// A minimal file of `dialect` with one stdio server.
fn body(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Vscode => {
            r#"{"servers": {"a": {"type": "stdio", "command": "npx", "args": ["-y", "x"]}}}"#
        }
        Dialect::Zed => r#"{"context_servers": {"a": {"command": "npx", "args": ["-y", "x"]}}}"#,
        Dialect::Opencode => r#"{"mcp": {"a": {"type": "local", "command": ["npx", "-y", "x"]}}}"#,
        Dialect::Codex => "[mcp_servers.a]\ncommand = \"npx\"\nargs = [\"-y\", \"x\"]\n",
        Dialect::ContinueYaml => {
            "mcpServers:\n  - name: a\n    command: npx\n    args: [\"-y\", \"x\"]\n"
        }
        Dialect::Goose => {
            "extensions:\n  a:\n    type: stdio\n    cmd: npx\n    args: [\"-y\", \"x\"]\n"
        }
        _ => r#"{"mcpServers": {"a": {"command": "npx", "args": ["-y", "x"]}}}"#,
    }
}

fn put(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn every_clients_file_is_where_macos_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    // A VS Code profile is listed only when its folder exists.
    std::fs::create_dir_all(h.join(LIB).join("Code/User/profiles/p1")).unwrap();
    let env = ClientEnv::with_home(h, Os::Macos);
    let found = candidates(&env);
    for (rel, client, dialect) in table() {
        let path = h.join(&rel);
        let f = found
            .iter()
            .find(|f| f.path == path)
            .unwrap_or_else(|| panic!("{rel} is not a macOS candidate"));
        assert_eq!((f.client, f.dialect), (client, dialect), "{rel}");
    }
    // Every client has a file on macOS.
    for client in ClientId::ALL {
        assert!(
            table().iter().any(|(_, c, _)| *c == client),
            "{client:?} has no macOS file in the table"
        );
    }
    // Nothing of the Linux or Windows layouts: no `~/.config/Code`, no Claude Desktop in
    // `~/.config/Claude`, no AppData.
    for f in &found {
        let rel = f
            .path
            .strip_prefix(h)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(
            !rel.starts_with(".config/Code")
                && !rel.starts_with(".config/Cursor")
                && !rel.starts_with(".config/Claude")
                && !rel.contains("AppData"),
            "{rel}"
        );
    }
}

#[test]
fn macos_files_are_detected_and_the_legacy_cline_ones_marked_unread() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    for (rel, _, dialect) in table() {
        put(&h.join(rel), body(dialect));
    }
    let env = ClientEnv::with_home(h, Os::Macos);
    let found = detect(&env);
    for (rel, client, _) in table() {
        let path = h.join(&rel);
        let f = found
            .iter()
            .find(|f| f.path == path)
            .unwrap_or_else(|| panic!("{rel} not detected"));
        assert_eq!(f.client, client, "{rel}");
        let legacy = rel.contains("globalStorage");
        assert_eq!(f.active, !legacy, "{rel}: {:?}", f.note);
    }
}

/// Wrapping Claude Desktop's file (its folder's name holds a space) and undoing it gives the
/// same bytes back.
#[test]
fn claude_desktops_file_under_application_support_wraps_and_unwraps() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let path: PathBuf = h.join(LIB).join("Claude/claude_desktop_config.json");
    let text = "{\n  \"mcpServers\": {\n    \"a\": { \"command\": \"npx\", \"args\": [\"-y\", \"x\"] }\n  }\n}\n";
    put(&path, text);
    let env = ClientEnv::with_home(h, Os::Macos);
    let opts = WrapOptions {
        warden: PathBuf::from("/Applications/MCP Warden.app/Contents/MacOS/warden"),
        filter: Filter::default(),
        dry_run: false,
        move_secrets: false,
    };
    let changes = wrap(&env, &opts).unwrap();
    let c = changes.iter().find(|c| c.file.path == path).unwrap();
    assert!(c.error.is_none() && c.written, "{:?}", c.error);
    let wrapped = std::fs::read_to_string(&path).unwrap();
    assert!(
        wrapped.contains("/Applications/MCP Warden.app/Contents/MacOS/warden"),
        "{wrapped}"
    );
    unwrap(&env, &UnwrapOptions::default()).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}
