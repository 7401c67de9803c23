//! Secrets out of IDE config files, through a real Secret Service (a private gnome-keyring on
//! its own D-Bus bus): `warden clients wrap --move-secrets` moves them into the keychain, the
//! bridge puts them into the server's environment (`--secret-env`), nothing of Warden's
//! (logs, events, output) holds them, and unwrap restores the file byte for byte.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::common::*;

const TOKEN: &str = "ghp_test4f9a1c77e0d2";

fn cursor_config() -> String {
    format!(
        "{{\n  \"mcpServers\": {{\n    \"fake\": {{\n      \"command\": {},\n      \"args\": [],\n      \"env\": {{ \"GITHUB_TOKEN\": \"{TOKEN}\", \"LOG_LEVEL\": \"debug\" }}\n    }}\n  }}\n}}\n",
        json!(FAKE)
    )
}

struct Home {
    dir: tempfile::TempDir,
    file: PathBuf,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("home/.cursor/mcp.json");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, cursor_config()).unwrap();
        Home { dir, file }
    }

    fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    fn clients(&self, bus: &str, args: &[&str]) -> Output {
        let mut cmd = Command::new(WARDEN);
        cmd.arg("clients")
            .args(args)
            .env("HOME", self.dir.path().join("home"))
            .env("WARDEN_STATE_DIR", self.state())
            .env("DBUS_SESSION_BUS_ADDRESS", bus);
        for var in ["XDG_CONFIG_HOME"]
            .iter()
            .chain(warden_clients::OVERRIDE_VARS)
        {
            cmd.env_remove(var);
        }
        cmd.output().unwrap()
    }

    fn text(&self) -> String {
        std::fs::read_to_string(&self.file).unwrap()
    }
}

/// Every file under `dir` that holds `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            found.extend(files_holding(&path, needle));
        } else if std::fs::read(&path).is_ok_and(|b| String::from_utf8_lossy(&b).contains(needle)) {
            found.push(path);
        }
    }
    found
}

#[tokio::test]
async fn secrets_move_to_the_keychain_reach_the_server_and_come_back_on_unwrap() {
    let Some(keychain) = Keychain::start() else {
        return;
    };
    let home = Home::new();
    let original = home.text();

    let out = home.clients(&keychain.bus, &["wrap", "--move-secrets", "--json"]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !stdout.contains(TOKEN),
        "the diff shows the value: {stdout}"
    );
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["files"][0]["secrets"], json!(["fake/GITHUB_TOKEN"]));

    let wrapped = home.text();
    assert!(!wrapped.contains(TOKEN), "{wrapped}");
    assert_eq!(
        keychain.lookup("fake/GITHUB_TOKEN").as_deref(),
        Some(TOKEN),
        "stored in the keychain"
    );

    // The client starts the entry as it now reads, with its env: the placeholder.
    let entry: Value = serde_json::from_str(&wrapped).unwrap();
    let entry = &entry["mcpServers"]["fake"];
    let mut argv = vec![entry["command"].as_str().unwrap().to_owned()];
    argv.extend(
        entry["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_owned()),
    );
    assert!(argv.contains(&"--secret-env".to_owned()), "{argv:?}");
    let mut s = bridge()
        .exact(argv)
        .config("[defaults]\ndebug = true\n")
        .env("DBUS_SESSION_BUS_ADDRESS", &keychain.bus)
        .env(
            "GITHUB_TOKEN",
            entry["env"]["GITHUB_TOKEN"].as_str().unwrap(),
        )
        .spawn();
    s.initialize().await;
    let seen = s.call("echo", json!({"env": "GITHUB_TOKEN"})).await;
    assert_eq!(text_of(&seen), TOKEN, "the server got the value: {seen}");
    s.close().await;
    let debug =
        std::fs::read_to_string(s.state_dir().join("logs").join(own_name(".debug.jsonl"))).unwrap();
    assert!(
        debug.contains(r#""text":"[redacted]""#),
        "the answer is logged, its value masked: {debug}"
    );
    let leaks = files_holding(&s.state_dir(), TOKEN);
    assert!(leaks.is_empty(), "the value is in {leaks:?}");
    assert!(!s.stderr_text().contains(TOKEN));

    let out = home.clients(&keychain.bus, &["unwrap"]);
    assert!(out.status.success(), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(TOKEN));
    assert_eq!(home.text(), original, "unwrap restores the exact bytes");
}

#[test]
fn without_a_keychain_nothing_is_moved() {
    let home = Home::new();
    let original = home.text();
    let out = home.clients(
        "unix:path=/nonexistent/warden-test-bus",
        &["wrap", "--move-secrets"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stdout.contains("cannot move secrets") && stdout.contains("Nothing was moved"),
        "{stdout}"
    );
    assert_eq!(home.text(), original, "the file is left alone");
}

#[tokio::test]
async fn a_secret_missing_from_the_keychain_is_the_answer_to_initialize() {
    let Some(keychain) = Keychain::start() else {
        return;
    };
    let argv = [
        WARDEN,
        "bridge",
        "--server",
        "fake",
        "--secret-env",
        "API_KEY",
        "--",
        FAKE,
    ];
    let mut s = bridge()
        .exact(argv.iter().map(|a| a.to_string()).collect())
        .env("DBUS_SESSION_BUS_ADDRESS", &keychain.bus)
        .spawn();
    let id = s.next_id();
    s.send(
        &json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}}),
    )
    .await;
    let (answer, _) = s.response(&id).await;
    assert_eq!(
        answer["error"]["data"]["code"], "W-SECRET-MISSING",
        "{answer}"
    );
    assert_eq!(s.wait().await.code(), Some(2));
}
