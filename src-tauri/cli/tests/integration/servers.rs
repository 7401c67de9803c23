//! `warden servers add | disable | enable | remove` end to end: the real binary with a
//! temporary HOME holding two clients' files, and (where gnome-keyring is installed) a
//! private keychain for `--secret-env`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::common::*;

const CURSOR: &str = "{\n  // mine\n  \"mcpServers\": {\n    \"rg\": { \"command\": \"npx\", \"args\": [\"-y\", \"mcp-ripgrep@1.0.0\"] }\n  }\n}\n";
const CODEX: &str = "# codex\nmodel = \"gpt-5\"\n\n[mcp_servers.time]\ncommand = \"uvx\"\n";

/// A temporary HOME with a Cursor file (no on/off switch: `disable` takes entries out) and a
/// Codex one (`enabled = false`), and a state dir.
pub(crate) struct Home {
    _dir: tempfile::TempDir,
    pub(crate) home: PathBuf,
    pub(crate) cursor: PathBuf,
    pub(crate) codex: PathBuf,
}

impl Home {
    fn new() -> Home {
        Home::with(CURSOR, CODEX)
    }

    pub(crate) fn with(cursor_text: &str, codex_text: &str) -> Home {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let cursor = home.join(".cursor/mcp.json");
        let codex = home.join(".codex/config.toml");
        for (p, t) in [(&cursor, cursor_text), (&codex, codex_text)] {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, t).unwrap();
        }
        Home {
            _dir: dir,
            home,
            cursor,
            codex,
        }
    }

    pub(crate) fn state(&self) -> PathBuf {
        self.home.join("state")
    }

    fn run(&self, args: &[&str], bus: Option<&str>) -> Output {
        self.run_with_stdin(args, bus, None)
    }

    /// `warden servers ARGS` with `stdin` as its standard input (a pipe, not a terminal), or
    /// none.
    fn run_with_stdin(&self, args: &[&str], bus: Option<&str>, stdin: Option<&str>) -> Output {
        let mut cmd = self.command(bus);
        cmd.arg("servers").args(args);
        if stdin.is_some() {
            cmd.stdin(Stdio::piped());
        }
        let mut child = cmd.spawn().unwrap();
        if let Some(text) = stdin {
            use std::io::Write as _;
            let mut pipe = child.stdin.take().unwrap();
            pipe.write_all(text.as_bytes()).unwrap();
        }
        child.wait_with_output().unwrap()
    }

    /// `warden` in this home (stdin none, stdout and stderr piped), its arguments to be added.
    pub(crate) fn command(&self, bus: Option<&str>) -> Command {
        let mut cmd = Command::new(WARDEN);
        cmd.current_dir(&self.home)
            .env("HOME", &self.home)
            .env("WARDEN_STATE_DIR", self.home.join("state"))
            .env("WARDEN_LOG", "warn")
            .env(
                "DBUS_SESSION_BUS_ADDRESS",
                bus.unwrap_or("unix:path=/nonexistent/warden-test-bus"),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let homes = ["XDG_CONFIG_HOME", "APPDATA", "LOCALAPPDATA", "USERPROFILE"];
        for var in homes.iter().chain(warden_clients::OVERRIDE_VARS) {
            cmd.env_remove(var);
        }
        cmd
    }

    pub(crate) fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args, None);
        assert!(
            out.status.success(),
            "warden servers {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    pub(crate) fn texts(&self) -> (String, String) {
        (read(&self.cursor), read(&self.codex))
    }

    /// `list --json`'s places of `name`: (client, wrapped, enabled).
    pub(crate) fn places(&self, name: &str) -> Vec<(String, bool, bool)> {
        let list: Value = serde_json::from_str(&self.ok(&["list", "--json"])).unwrap();
        list.as_array()
            .unwrap()
            .iter()
            .filter(|s| s["name"] == name)
            .flat_map(|s| s["clients"].as_array().unwrap().clone())
            .map(|c| {
                (
                    c["client"].as_str().unwrap().to_owned(),
                    c["wrapped"].as_bool().unwrap(),
                    c["enabled"].as_bool().unwrap(),
                )
            })
            .collect()
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

const ADD: &[&str] = &[
    "add",
    "fetch",
    "--client",
    "cursor",
    "--client",
    "codex",
    "--env",
    "LOG=debug",
    "--",
    "uvx",
    "mcp-server-fetch==2025.4.7",
];

#[test]
fn servers_add_disable_enable_remove_round_trip() {
    let h = Home::new();
    let original = h.texts();

    // A dry run prints the diffs and writes nothing.
    let mut dry = ADD.to_vec();
    dry.insert(2, "--dry-run");
    let out = h.ok(&dry);
    assert!(
        out.contains("+    \"fetch\": {") && out.contains("+[mcp_servers.fetch]"),
        "{out}"
    );
    assert_eq!(h.texts(), original, "--dry-run wrote");

    let out = h.ok(ADD);
    assert!(
        out.contains("added: fetch") && out.contains("backup: "),
        "{out}"
    );
    let added = h.texts();
    assert!(
        added.0.contains(
            "\"bridge\", \"--server\", \"fetch\", \"--pass-env\", \"LOG\", \"--\", \"uvx\""
        ),
        "{}",
        added.0
    );
    assert!(added.1.contains("[mcp_servers.fetch]"), "{}", added.1);
    let mut places = h.places("fetch");
    places.sort();
    assert_eq!(
        places,
        vec![("codex".into(), true, true), ("cursor".into(), true, true)]
    );

    // Adding it again is refused (exit 2), the entry shown, nothing written.
    let again = h.run(ADD, None);
    assert_eq!(again.status.code(), Some(2), "{again:?}");
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(
        said.contains("already there") && said.contains("[W-CLIENT-EXISTS]"),
        "{said}"
    );
    assert_eq!(h.texts(), added);

    // Off: Codex by its `enabled` key, Cursor (no switch) kept by Warden; still listed.
    h.ok(&["disable", "fetch"]);
    let off = h.texts();
    assert!(!off.0.contains("fetch"), "{}", off.0);
    assert!(off.1.contains("enabled = false"), "{}", off.1);
    let mut places = h.places("fetch");
    places.sort();
    assert_eq!(
        places,
        vec![
            ("codex".into(), true, false),
            ("cursor".into(), true, false)
        ]
    );
    h.ok(&["enable", "fetch"]);
    assert_eq!(h.texts(), added, "disable then enable is byte-exact");

    // Only one client.
    h.ok(&["disable", "fetch", "--client", "codex"]);
    assert_eq!(read(&h.cursor), added.0);
    h.ok(&["enable", "fetch", "--client", "codex"]);
    assert_eq!(h.texts(), added);

    // Only one file.
    let cursor = h.cursor.to_string_lossy().into_owned();
    h.ok(&["disable", "fetch", "--file", &cursor]);
    assert_eq!(read(&h.codex), added.1);
    h.ok(&["enable", "fetch", "--file", &cursor]);
    assert_eq!(h.texts(), added);

    // Remove without --yes and without a terminal: refused.
    let out = h.run(&["remove", "fetch"], None);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
    assert_eq!(h.texts(), added);
    let out = h.ok(&["remove", "fetch", "--dry-run"]);
    assert!(out.contains("would remove: fetch"), "{out}");
    assert_eq!(h.texts(), added);
    h.ok(&["remove", "fetch", "--yes"]);
    assert_eq!(h.texts(), original, "add then remove is byte-exact");
    assert!(h.places("fetch").is_empty());

    // A name that is nowhere.
    let out = h.run(&["disable", "nope"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no server named"));
}

#[test]
fn servers_add_refuses_secrets_without_the_bridge_or_a_keychain() {
    let h = Home::new();
    let original = h.texts();
    let out = h.run(
        &[
            "add",
            "gh",
            "--client",
            "cursor",
            "--secret-env",
            "GITHUB_TOKEN=ghp_x",
            "--no-wrap",
            "--",
            "npx",
            "gh",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--secret-env needs the bridge"));
    let out = h.run(
        &[
            "add",
            "gh",
            "--client",
            "cursor",
            "--secret-env",
            "GITHUB_TOKEN=ghp_x",
            "--",
            "npx",
            "gh",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Nothing was written"),
        "{out:?}"
    );
    let out = h.run(&["add", "x", "--client", "lm-studio", "--", "x"], None);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not look installed"));
    assert_eq!(h.texts(), original);
}

#[test]
fn servers_add_puts_secrets_into_the_keychain_only() {
    let Some(keychain) = Keychain::start() else {
        return;
    };
    let h = Home::new();
    let token = "ghp_servers_add_7f3a";
    let secret = format!("GITHUB_TOKEN={token}");
    let args = [
        "add",
        "gh",
        "--client",
        "cursor",
        "--secret-env",
        &secret,
        "--",
        "npx",
        "-y",
        "gh-mcp@1.0.0",
    ];
    let out = h.run(&args, Some(&keychain.bus));
    assert!(out.status.success(), "{out:?}");
    assert_eq!(keychain.lookup("gh/GITHUB_TOKEN").as_deref(), Some(token));
    let text = read(&h.cursor);
    assert!(
        text.contains("\"--secret-env\", \"GITHUB_TOKEN\""),
        "{text}"
    );
    assert!(!text.contains(token), "the value is in the file");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(token));
    let out = h.run(&["remove", "gh", "--yes"], Some(&keychain.bus));
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("still in the OS keychain"),
        "{out:?}"
    );
    assert_eq!(read(&h.cursor), CURSOR);
}

/// `--secret-env KEY` alone reads the value as a line of stdin (not a terminal): it lands in
/// the keychain, and neither in the command line, the file, nor the output.
#[test]
fn a_secret_read_from_stdin_lands_in_the_keychain_only() {
    let Some(keychain) = Keychain::start() else {
        return;
    };
    let h = Home::new();
    let token = "ghp_from_stdin_9c2e";
    let args = [
        "add",
        "gh",
        "--client",
        "cursor",
        "--secret-env",
        "GITHUB_TOKEN",
        "--",
        "npx",
        "-y",
        "gh-mcp@1.0.0",
    ];
    let out = h.run_with_stdin(&args, Some(&keychain.bus), Some(&format!("{token}\n")));
    assert!(out.status.success(), "{out:?}");
    let shown = format!(
        "{}{}{}",
        read(&h.cursor),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        (
            keychain.lookup("gh/GITHUB_TOKEN").as_deref(),
            args.iter().any(|a| a.contains(token)) || shown.contains(token)
        ),
        (Some(token), false),
        "{shown}"
    );
}

/// A keychain item another client's entry still reads (Cursor's `gh`, `--secret-env
/// GITHUB_TOKEN`) is not overwritten with another value by an add of the same server name to
/// another client: refused with W-SECRET-IN-USE naming the file, until --replace-secret.
#[test]
fn a_keychain_item_in_use_is_not_overwritten_without_the_flag() {
    let Some(keychain) = Keychain::start() else {
        return;
    };
    let h = Home::new();
    let add = |client: &str, token: &str, more: &[&str]| {
        let mut args = vec![
            "add",
            "gh",
            "--client",
            client,
            "--secret-env",
            "GITHUB_TOKEN",
        ];
        args.extend(more);
        args.extend(["--", "npx", "-y", "gh-mcp@1.0.0"]);
        h.run_with_stdin(&args, Some(&keychain.bus), Some(&format!("{token}\n")))
    };
    let first = add("cursor", "ghp_first_1111", &[]);
    assert!(first.status.success(), "{first:?}");
    let codex = read(&h.codex);
    let second = add("codex", "ghp_second_2222", &[]);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(
        (
            second.status.code(),
            stderr.contains("[W-SECRET-IN-USE]") && stderr.contains(".cursor/mcp.json"),
            keychain.lookup("gh/GITHUB_TOKEN").as_deref(),
            read(&h.codex) == codex
        ),
        (Some(2), true, Some("ghp_first_1111"), true),
        "{second:?}"
    );
}

#[test]
fn a_file_that_does_not_parse_stops_the_add_with_its_code_and_nothing_is_written() {
    let h = Home::new();
    std::fs::write(&h.cursor, "{ \"mcpServers\": { \"a\": ").unwrap();
    let before = h.texts();
    let out = h.run(
        &[
            "add", "x", "--client", "codex", "--client", "cursor", "--", "x",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("[W-CLIENT-PARSE]"), "{said}");
    assert_eq!(h.texts(), before, "not even the file that parses");
}
