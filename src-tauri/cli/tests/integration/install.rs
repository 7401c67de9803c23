//! `warden install` end to end: the real `warden` (handing over to `warden-registry`) against a
//! registry served in the test on 127.0.0.1 (common/registry_server.rs, the project's registry
//! fixture documents), with a temporary HOME holding a Cursor and a VS Code file. The keychain tests
//! run a private gnome-keyring (common `Keychain`); the probe tests run `mcp-fake-server`
//! behind an `npx` of the test's own on PATH, so nothing is fetched.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::common::*;

const CURSOR: &str = "{\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"other-server\",\n      \"args\": [\"--flag\"]\n    }\n  }\n}\n";
const VSCODE: &str = "{\n  \"servers\": {}\n}\n";
/// Where no keychain answers.
const NO_BUS: &str = "unix:path=/nonexistent/warden-test-bus";

struct Home {
    dir: tempfile::TempDir,
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn text(&self) -> String {
        format!("stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr)
    }
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let h = Home { dir };
        for (path, text) in [(h.cursor(), CURSOR), (h.vscode(), VSCODE)] {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        std::fs::create_dir_all(h.dir.path().join("bin")).unwrap();
        h
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn cursor(&self) -> PathBuf {
        self.home().join(".cursor/mcp.json")
    }

    fn vscode(&self) -> PathBuf {
        self.home().join(".config/Code/User/mcp.json")
    }

    fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// `warden ARGS` with this home, state and config, `registry` as the registry, `bus` as
    /// the keychain's D-Bus, and the test's `bin/` first on PATH.
    fn warden(&self, registry: &str, bus: &str, args: &[&str]) -> Run {
        self.warden_with_stdin(registry, bus, args, "")
    }

    /// As [`Home::warden`], with `stdin` as its standard input (a pipe, not a terminal).
    fn warden_with_stdin(&self, registry: &str, bus: &str, args: &[&str], stdin: &str) -> Run {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![self.dir.path().join("bin")];
        dirs.extend(std::env::split_paths(&path));
        let mut cmd = Command::new(WARDEN);
        cmd.args(args)
            .current_dir(self.home())
            .env("HOME", self.home())
            .env("WARDEN_STATE_DIR", self.state())
            .env("WARDEN_CONFIG", self.dir.path().join("config.toml"))
            .env("WARDEN_REGISTRY_URL", registry)
            .env("DBUS_SESSION_BUS_ADDRESS", bus)
            .env("PATH", std::env::join_paths(dirs).unwrap())
            .env("WARDEN_LOG", "warn");
        for var in [
            "XDG_CONFIG_HOME",
            "XDG_STATE_HOME",
            "APPDATA",
            "LOCALAPPDATA",
            "WARDEN_BIN",
            "WARDEN_REGISTRY_BIN",
            "WARDEN_SOCKET",
        ]
        .iter()
        .chain(warden_clients::OVERRIDE_VARS)
        {
            cmd.env_remove(var);
        }
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut pipe = child.stdin.take().unwrap();
        std::io::Write::write_all(&mut pipe, stdin.as_bytes()).unwrap();
        drop(pipe);
        let out = child.wait_with_output().unwrap();
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn install(&self, registry: &str, args: &[&str]) -> Run {
        let mut all = vec!["install"];
        all.extend(args);
        self.warden(registry, NO_BUS, &all)
    }

    /// Whether both files are as the test wrote them.
    fn untouched(&self) -> bool {
        read(&self.cursor()) == CURSOR && read(&self.vscode()) == VSCODE
    }

    /// A server.json of the test's own, for a package that its `npx` runs.
    fn server_json(&self, doc: &Value) -> String {
        let path = self.dir.path().join("server.json");
        std::fs::write(&path, doc.to_string()).unwrap();
        path.to_string_lossy().into_owned()
    }

    /// An `npx` first on PATH that runs `mcp-fake-server` with `flags`, whatever it is asked.
    #[cfg(unix)]
    fn fake_npx(&self, flags: &str) {
        use std::os::unix::fs::PermissionsExt as _;
        let npx = self.dir.path().join("bin/npx");
        std::fs::write(&npx, format!("#!/bin/sh\nexec '{FAKE}' {flags}\n")).unwrap();
        std::fs::set_permissions(&npx, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

fn json_of(p: &Path) -> Value {
    serde_json::from_str(&read(p)).unwrap()
}

/// The `warden` a wrapped entry runs: the one beside `warden-registry`, canonical.
fn warden_path() -> String {
    std::fs::canonicalize(WARDEN)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

const NOTES: &str = "io.example/notes-server";

fn fake_doc(env: Value) -> Value {
    json!({
        "name": "io.github.warden-test/fake",
        "description": "mcp-fake-server, run by the test's npx",
        "version": "1.2.3",
        "repository": {"url": "https://example.invalid/fake", "source": "github"},
        "packages": [{
            "registryType": "npm",
            "identifier": "fake-mcp",
            "version": "1.2.3",
            "transport": {"type": "stdio"},
            "environmentVariables": env
        }]
    })
}

#[test]
fn install_writes_the_pinned_wrapped_argv_into_two_clients() {
    let registry = fixture_registry();
    let h = Home::new();
    let run = h.install(
        &registry.url,
        &[
            NOTES,
            "--client",
            "cursor",
            "--client",
            "vscode",
            "--yes",
            "--no-probe",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.text());
    let argv = json!([
        "bridge",
        "--server",
        "notes-server",
        "--",
        "npx",
        "-y",
        "@example/notes-mcp@0.4.2"
    ]);
    let cursor = json_of(&h.cursor());
    assert_eq!(
        cursor["mcpServers"]["notes-server"],
        json!({"command": warden_path(), "args": argv}),
        "{cursor}"
    );
    assert_eq!(
        cursor["mcpServers"]["other"],
        json!({"command": "other-server", "args": ["--flag"]}),
        "the other entry is left alone"
    );
    let vscode = json_of(&h.vscode());
    assert_eq!(
        vscode["servers"]["notes-server"],
        json!({"type": "stdio", "command": warden_path(), "args": argv}),
        "{vscode}"
    );
    // The consent screen came first, with what the registry says.
    for shown in [
        "io.example/notes-server 0.4.2",
        "publisher:   io.example",
        "repository:  https://github.com/example/notes-server",
        "package:     npm @example/notes-mcp 0.4.2",
        "command:     npx -y @example/notes-mcp@0.4.2",
        "written as:",
        "environment: none",
    ] {
        assert!(run.stdout.contains(shown), "{shown}: {}", run.text());
    }
    assert!(run.stdout.contains("warden servers remove notes-server"));
    assert!(
        registry
            .requests()
            .iter()
            .any(|r| r.ends_with("notes-server/versions/latest")),
        "{:?}",
        registry.requests()
    );
}

#[test]
fn a_version_given_is_the_one_installed_and_latest_is_refused_unasked() {
    let registry = fixture_registry();
    let h = Home::new();
    let refused = h.install(
        &registry.url,
        &[&format!("{NOTES}@latest"), "--client", "cursor", "--yes"],
    );
    assert_eq!(refused.code, Some(2), "{}", refused.text());
    assert!(
        refused.stderr.contains("only exact versions")
            && refused.stderr.contains("Nothing was written"),
        "{}",
        refused.text()
    );
    assert!(registry.requests().is_empty(), "the registry was not asked");
    let run = h.install(
        &registry.url,
        &[
            &format!("{NOTES}@0.4.2"),
            "--client",
            "cursor",
            "--yes",
            "--no-probe",
            "--no-wrap",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.text());
    assert_eq!(
        json_of(&h.cursor())["mcpServers"]["notes-server"],
        json!({"command": "npx", "args": ["-y", "@example/notes-mcp@0.4.2"]})
    );
    assert!(
        registry
            .requests()
            .iter()
            .any(|r| r.ends_with("notes-server/versions/0.4.2"))
    );
}

#[test]
fn dry_run_shows_the_diffs_and_writes_nothing() {
    let registry = fixture_registry();
    let h = Home::new();
    let run = h.install(
        &registry.url,
        &[
            NOTES,
            "--client",
            "cursor",
            "--client",
            "vscode",
            "--dry-run",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.text());
    assert!(
        run.stdout.contains("+") && run.stdout.contains("@example/notes-mcp@0.4.2"),
        "{}",
        run.text()
    );
    assert!(run.stdout.contains("Dry run: nothing was written"));
    assert!(h.untouched());
    assert!(
        !h.state().join("backups").exists()
            || std::fs::read_dir(h.state().join("backups"))
                .unwrap()
                .next()
                .is_none()
    );
}

#[test]
fn without_a_terminal_and_without_yes_it_is_refused() {
    let registry = fixture_registry();
    let h = Home::new();
    let run = h.install(&registry.url, &[NOTES, "--client", "cursor"]);
    assert_eq!(run.code, Some(2), "{}", run.text());
    assert!(
        run.stderr.contains("no terminal") && run.stderr.contains("--yes"),
        "{}",
        run.text()
    );
    assert!(
        run.stdout.contains("npx -y @example/notes-mcp@0.4.2"),
        "the consent screen was shown: {}",
        run.text()
    );
    assert!(h.untouched());
}

#[test]
fn an_unreachable_registry_is_w_registry_unreachable_and_nothing_is_written() {
    let h = Home::new();
    let run = h.install(&closed_port_url(), &[NOTES, "--client", "cursor", "--yes"]);
    assert_eq!(run.code, Some(1), "{}", run.text());
    assert!(
        run.stderr.contains("[W-REGISTRY-UNREACHABLE]"),
        "{}",
        run.text()
    );
    assert!(h.untouched());
}

#[test]
fn an_unknown_server_is_w_registry_not_found() {
    let registry = fixture_registry();
    let h = Home::new();
    let run = h.install(
        &registry.url,
        &["io.example/nothing-here", "--client", "cursor", "--yes"],
    );
    assert_eq!(run.code, Some(1), "{}", run.text());
    assert!(
        run.stderr.contains("[W-REGISTRY-NOT-FOUND]"),
        "{}",
        run.text()
    );
    assert!(h.untouched());
}

#[test]
fn a_name_that_is_there_already_is_refused_and_nothing_is_written() {
    let registry = fixture_registry();
    let h = Home::new();
    let run = h.install(
        &registry.url,
        &[
            NOTES, "--as", "other", "--client", "vscode", "--client", "cursor", "--yes",
        ],
    );
    assert_eq!(run.code, Some(2), "{}", run.text());
    assert!(
        run.stderr.contains("other") && run.stderr.contains("Nothing was written"),
        "{}",
        run.text()
    );
    assert!(h.untouched(), "neither file changed");
}

/// `install --file` of a registry fixture into Cursor with `--yes` (no registry asked).
fn install_fixture(h: &Home, name: &str) -> Run {
    let file = registry_fixture_path(name);
    h.install(
        &closed_port_url(),
        &["--file", &file, "--client", "cursor", "--yes"],
    )
}

#[test]
fn a_required_variable_without_a_value_is_refused_naming_the_env_to_pass() {
    let h = Home::new();
    let run = install_fixture(&h, "calendar-sync.server.json");
    assert_eq!(run.code, Some(2), "{}", run.text());
    assert!(
        run.stderr.contains("--env CALENDAR_TOKEN=VALUE")
            && run.stderr.contains("--env calendar_dir=VALUE"),
        "{}",
        run.text()
    );
    assert!(h.untouched());
}

#[test]
fn a_server_json_on_disk_is_installed_under_its_own_name_or_as() {
    let h = Home::new();
    let file = registry_fixture_path("notes-server.server.json");
    let run = h.install(
        &closed_port_url(),
        &[
            "--file",
            &file,
            "--as",
            "browser",
            "--client",
            "cursor",
            "--yes",
            "--no-probe",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.text());
    let cursor = json_of(&h.cursor());
    assert_eq!(
        cursor["mcpServers"]["browser"]["args"],
        json!([
            "bridge",
            "--server",
            "browser",
            "--",
            "npx",
            "-y",
            "@example/notes-mcp@0.4.2"
        ])
    );
    assert!(
        run.stdout.contains(&format!("from {file}")),
        "{}",
        run.text()
    );
    // The undo the report names gives back the file as it was.
    assert!(run.stdout.contains("warden servers remove browser"));
    let undo = h.warden(
        &closed_port_url(),
        NO_BUS,
        &["servers", "remove", "browser", "--yes"],
    );
    assert_eq!(undo.code, Some(0), "{}", undo.text());
    assert!(h.untouched(), "{}", read(&h.cursor()));
}

#[test]
fn a_remote_only_server_without_its_required_header_is_refused_naming_the_env_to_pass() {
    let h = Home::new();
    let run = install_fixture(&h, "ticket-desk.server.json");
    assert_eq!(run.code, Some(2), "{}", run.text());
    assert!(
        run.stderr.contains("--env MCP_HEADER_AUTHORIZATION=VALUE"),
        "{}",
        run.text()
    );
    assert!(h.untouched());
}

#[test]
fn a_remote_only_dry_run_shows_the_bridge_with_its_secret_header_from_the_keychain() {
    let h = Home::new();
    let file = registry_fixture_path("ticket-desk.server.json");
    let run = h.install(
        &closed_port_url(),
        &[
            "--file",
            &file,
            "--client",
            "cursor",
            "--env",
            "MCP_HEADER_AUTHORIZATION=Bearer t-never-written",
            "--dry-run",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.text());
    let wanted = "\"--secret-env\", \"MCP_HEADER_AUTHORIZATION\", \"--remote\", \"https://eu.tickets.example.com/mcp\", \"--header\", \"Authorization=MCP_HEADER_AUTHORIZATION\"";
    assert!(
        run.stdout.contains(wanted) && !run.text().contains("t-never-written") && h.untouched(),
        "{}",
        run.text()
    );
}

fn hosted(remotes: Value) -> Value {
    json!({
        "name": "io.github.warden-test/hosted",
        "description": "a hosted server",
        "version": "2.0.0",
        "remotes": remotes
    })
}

#[test]
fn a_remote_only_server_installs_as_the_bridge_and_remove_gives_the_file_back() {
    let h = Home::new();
    let file = h.server_json(&hosted(json!([{
        "type": "streamable-http",
        "url": "https://h.example/mcp",
        "headers": [{"name": "X-Team", "isRequired": true}]
    }])));
    let run = h.install(
        &closed_port_url(),
        &[
            "--file",
            &file,
            "--client",
            "cursor",
            "--env",
            "MCP_HEADER_X_TEAM=blue",
            "--yes",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.text());
    assert_eq!(
        json_of(&h.cursor())["mcpServers"]["hosted"],
        json!({
            "command": warden_path(),
            "args": ["bridge", "--server", "hosted", "--remote", "https://h.example/mcp",
                     "--header", "X-Team=MCP_HEADER_X_TEAM"],
            "env": {"MCP_HEADER_X_TEAM": "blue"}
        })
    );
    let undo = h.warden(
        &closed_port_url(),
        NO_BUS,
        &["servers", "remove", "hosted", "--yes"],
    );
    assert_eq!(undo.code, Some(0), "{}", undo.text());
    assert!(h.untouched(), "{}", read(&h.cursor()));
}

#[test]
fn a_remote_only_server_over_sse_is_installed_at_its_url() {
    let h = Home::new();
    let file = h.server_json(&hosted(json!([
        {"type": "sse", "url": "https://h.example/sse"}
    ])));
    let run = h.install(
        &closed_port_url(),
        &["--file", &file, "--client", "cursor", "--yes"],
    );
    assert_eq!(run.code, Some(0), "{}", run.text());
    assert_eq!(
        json_of(&h.cursor())["mcpServers"]["hosted"]["args"],
        json!([
            "bridge",
            "--server",
            "hosted",
            "--remote",
            "https://h.example/sse"
        ])
    );
}

#[test]
fn a_secret_without_a_keychain_is_w_keychain_unavailable_and_nothing_is_written() {
    let h = Home::new();
    let file = h.server_json(&fake_doc(json!([
        {"name": "API_KEY", "isSecret": true, "isRequired": true}
    ])));
    let run = h.install(
        &closed_port_url(),
        &[
            "--file",
            &file,
            "--env",
            "API_KEY=sk-never-written",
            "--client",
            "cursor",
            "--yes",
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.text());
    assert!(
        run.stderr.contains("[W-KEYCHAIN-UNAVAILABLE]")
            && run.stderr.contains("Nothing was written"),
        "{}",
        run.text()
    );
    assert!(h.untouched());
}

/// A secret given with --env goes to the keychain, never into the file; the bridge reads it
/// back when the entry starts: the probe's server requires it and starts.
#[cfg(unix)]
#[test]
fn a_secret_goes_to_the_keychain_and_reaches_the_server() {
    let Some(keychain) = Keychain::start() else {
        return;
    };
    const SECRET: &str = "sk-test-7d1e0c";
    let h = Home::new();
    h.fake_npx("--require-env API_KEY");
    let file = h.server_json(&fake_doc(json!([
        {"name": "API_KEY", "isSecret": true, "isRequired": true},
        {"name": "LOG_LEVEL", "default": "info"}
    ])));
    let run = h.warden(
        &closed_port_url(),
        &keychain.bus,
        &[
            "install",
            "--file",
            &file,
            "--env",
            &format!("API_KEY={SECRET}"),
            "--client",
            "cursor",
            "--client",
            "vscode",
            "--yes",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.text());
    assert!(!run.stdout.contains(SECRET) && !run.stderr.contains(SECRET));
    assert_eq!(keychain.lookup("fake/API_KEY").as_deref(), Some(SECRET));
    for path in [h.cursor(), h.vscode()] {
        let text = read(&path);
        assert!(!text.contains(SECRET), "{text}");
    }
    let entry = &json_of(&h.cursor())["mcpServers"]["fake"];
    assert_eq!(
        entry["args"],
        json!([
            "bridge",
            "--server",
            "fake",
            "--secret-env",
            "API_KEY",
            "--pass-env",
            "LOG_LEVEL",
            "--",
            "npx",
            "-y",
            "fake-mcp@1.2.3"
        ]),
        "{entry}"
    );
    assert_eq!(entry["env"]["LOG_LEVEL"], "info", "{entry}");
    assert!(
        run.stdout.contains("Started in") && run.stdout.contains("Pinned"),
        "{}",
        run.text()
    );
}

/// The probe after writing: the server (mcp-fake-server behind the test's npx) starts through
/// the bridge, its tools are reported and pinned, and `warden tools list` shows them.
#[cfg(unix)]
#[test]
fn the_probe_reports_the_tools_and_the_bridge_pins_them() {
    let h = Home::new();
    h.fake_npx("");
    let file = h.server_json(&fake_doc(json!([])));
    let run = h.install(
        &closed_port_url(),
        &["--file", &file, "--client", "cursor", "--yes"],
    );
    assert_eq!(run.code, Some(0), "{}", run.text());
    assert!(
        run.stdout.contains("Started in") && run.stdout.contains(" tools: "),
        "{}",
        run.text()
    );
    assert!(
        run.stdout.contains("warden tools list fake"),
        "{}",
        run.text()
    );
    let list = h.warden(
        &closed_port_url(),
        NO_BUS,
        &["tools", "list", "fake", "--json"],
    );
    assert_eq!(list.code, Some(0), "{}", list.text());
    let tools: Value = serde_json::from_str(&list.stdout).unwrap();
    let tools = tools["tools"].as_array().unwrap();
    assert!(!tools.is_empty());
    assert!(tools.iter().all(|t| t["pin"] == "approved"), "{tools:?}");
    assert!(tools.iter().any(|t| t["name"] == "echo"), "{tools:?}");
}

/// A server that does not start yet (here: a variable it needs is not set) is reported with
/// its code and fix; the entry stays written.
#[cfg(unix)]
#[test]
fn a_server_that_does_not_start_is_reported_not_rolled_back() {
    let h = Home::new();
    h.fake_npx("--require-env WARDEN_TEST_NEVER_SET");
    let file = h.server_json(&fake_doc(json!([])));
    let run = h.install(
        &closed_port_url(),
        &["--file", &file, "--client", "cursor", "--yes"],
    );
    assert_eq!(run.code, Some(0), "{}", run.text());
    assert!(
        run.stdout.contains("did not start")
            && run.stdout.contains("[W-")
            && run.stdout.contains("Fix: "),
        "{}",
        run.text()
    );
    assert!(json_of(&h.cursor())["mcpServers"]["fake"].is_object());
}

/// A server.json of the test's own whose container runs privileged and whose document sets
/// `LD_PRELOAD` by default: the consent screen flags both, the variable as high risk.
#[test]
fn the_consent_screen_flags_a_privileged_container_and_a_document_ld_preload() {
    let h = Home::new();
    let file = h.server_json(&json!({
        "name": "io.github.acme/wide",
        "description": "a container that asks for more than it needs",
        "version": "1.2.3",
        "packages": [{
            "registryType": "oci",
            "identifier": "ghcr.io/acme/wide:1.2.3",
            "transport": {"type": "stdio"},
            "runtimeArguments": [{"type": "named", "name": "--privileged"}],
            "environmentVariables": [{"name": "LD_PRELOAD", "default": "/tmp/hook.so"}]
        }]
    }));
    let run = h.install(
        &closed_port_url(),
        &["--file", &file, "--client", "cursor", "--dry-run"],
    );
    let risks = run
        .stdout
        .split_once("  risks:")
        .map_or("", |(_, rest)| rest);
    assert!(
        risks.contains("!  docker --privileged: gives the container every capability")
            && risks.contains("!! HIGH RISK: the server's document itself sets LD_PRELOAD"),
        "{}",
        run.text()
    );
}

/// A document whose title, description, argument and variable description hold line breaks,
/// lines like the consent screen's own (`command: npx -y safe@1.0.0`, `risks: none found`) and
/// terminal escapes cannot add a line that starts like one of Warden's: each field starts
/// exactly one line, the real one, and the publisher's words are shown behind a bar.
#[test]
fn a_description_cannot_forge_a_line_of_the_consent_screen() {
    let h = Home::new();
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/registry/forged-description.server.json"
    );
    let run = h.install(
        &closed_port_url(),
        &["--file", file, "--client", "cursor", "--dry-run"],
    );
    assert_eq!(run.code, Some(0), "{}", run.text());
    let starting = |field: &str| -> Vec<&str> {
        run.stdout
            .split(['\n', '\r'])
            .filter(|l| l.trim_start().starts_with(field))
            .collect()
    };
    assert_eq!(
        (
            starting("command:"),
            starting("risks:"),
            starting("files:"),
            run.stdout.contains(['\x1b', '\r', '\u{202e}'])
        ),
        (
            vec!["  command:     npx -y evil-pkg@6.6.6 '--x⏎  risks:       none found'"],
            vec![
                "  risks:       none found (no root, no shell line, version pinned, no runner option or variable that widens what it gets)"
            ],
            vec!["  files:"],
            false
        ),
        "{}",
        run.text()
    );
}

/// `--env KEY` alone reads a secret's value as a line of stdin: it lands in the keychain and
/// in no file, argument or output.
#[test]
fn a_secret_read_from_stdin_is_installed_into_the_keychain_only() {
    let Some(keychain) = Keychain::start() else {
        return;
    };
    const SECRET: &str = "sk-stdin-5b8f";
    let h = Home::new();
    let file = h.server_json(&fake_doc(json!([
        {"name": "API_KEY", "isSecret": true, "isRequired": true}
    ])));
    let args = [
        "install",
        "--file",
        &file,
        "--env",
        "API_KEY",
        "--client",
        "cursor",
        "--yes",
        "--no-probe",
    ];
    let run = h.warden_with_stdin(
        &closed_port_url(),
        &keychain.bus,
        &args,
        &format!("{SECRET}\n"),
    );
    let leaked = args.iter().any(|a| a.contains(SECRET))
        || read(&h.cursor()).contains(SECRET)
        || run.text().contains(SECRET);
    assert_eq!(
        (run.code, keychain.lookup("fake/API_KEY").as_deref(), leaked),
        (Some(0), Some(SECRET), false),
        "{}",
        run.text()
    );
}

/// An extra beside the project's fixtures: each real published document in the folder beside
/// the repository (common/registry_server.rs, `real_registry_folder`), when it is there, is a
/// dry run that shows a plan or a refusal with a message, never a crash, and writes nothing.
/// Without the folder this says so on stderr and passes, under CI too.
#[test]
fn real_registry_documents_are_a_dry_run_or_a_clear_refusal() {
    let folder = real_registry_folder();
    let Ok(entries) = std::fs::read_dir(&folder) else {
        eprintln!(
            "NOT RUN: no real registry documents at {} (an extra; the project's own fixtures cover each case)",
            folder.display()
        );
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no .json", folder.display());
    for file in &files {
        let h = Home::new();
        let file = file.to_string_lossy();
        let run = h.install(
            &closed_port_url(),
            &["--file", &file, "--client", "cursor", "--dry-run"],
        );
        match run.code {
            Some(0) => assert!(run.stdout.contains("command:"), "{file}: {}", run.text()),
            Some(1 | 2) => assert!(!run.stderr.trim().is_empty(), "{file}: {}", run.text()),
            _ => panic!("{file}: {}", run.text()),
        }
        assert!(h.untouched(), "{file}: {}", run.text());
        eprintln!("{file}: exit {:?}", run.code);
    }
}
