//! `warden clients ...` end to end, with a temporary HOME holding several clients' configs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const CURSOR: &str = r#"{
  "mcpServers": {
    "ripgrep": {
      "command": "npx",
      "args": ["-y", "mcp-ripgrep"],
      "env": { "RG_TOKEN": "secret" }
    },
    "linear": { "url": "https://mcp.linear.app/sse" }
  }
}
"#;

const CLAUDE_DESKTOP: &str = "{\r\n  \"mcpServers\": {\r\n    \"fs\": {\r\n      \"command\": \"cmd\",\r\n      \"args\": [\"/c\", \"npx\", \"-y\", \"@modelcontextprotocol/server-filesystem\", \"C:\\\\Users\\\\me\"]\r\n    }\r\n  },\r\n  \"preferences\": { \"menuBarEnabled\": false }\r\n}\r\n";

const CODEX: &str = "# codex\nmodel = \"gpt-5\"\n\n[mcp_servers.time]\ncommand = \"uvx\"  # no args\n\n[mcp_servers.time.env]\nTZ = \"UTC\"\n";

const CONTINUE: &str = "name: assistant\nversion: 1.0.0\nschema: v1\nmcpServers:\n  - name: sqlite\n    command: npx\n    args:\n      - -y\n      - mcp-sqlite\n";

const VSCODE_PROJECT: &str = "{\n\t// project servers\n\t\"servers\": {\n\t\t\"docs\": {\n\t\t\t\"type\": \"stdio\",\n\t\t\t\"command\": \"node\",\n\t\t\t\"args\": [\"${workspaceFolder}/docs.js\", \"${input:token}\"],\n\t\t},\n\t},\n}\n";

struct Home {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    files: Vec<(PathBuf, &'static str)>,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = home.join("src/app");
        let files = vec![
            (home.join(".cursor/mcp.json"), CURSOR),
            (
                home.join(".config/Claude/claude_desktop_config.json"),
                CLAUDE_DESKTOP,
            ),
            (home.join(".codex/config.toml"), CODEX),
            (home.join(".continue/config.yaml"), CONTINUE),
            (project.join(".vscode/mcp.json"), VSCODE_PROJECT),
        ];
        for (path, text) in &files {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        std::fs::create_dir_all(project.join(".git")).unwrap();
        Home {
            _dir: dir,
            home,
            project,
            files,
        }
    }

    fn state(&self) -> PathBuf {
        self.home.join("state")
    }

    fn warden(&self, args: &[&str]) -> Output {
        let args: Vec<&str> = std::iter::once("clients")
            .chain(args.iter().copied())
            .collect();
        warden(&self.home, &self.project, &args)
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.warden(args);
        assert!(
            out.status.success(),
            "warden clients {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args)).unwrap()
    }

    fn unchanged(&self) -> bool {
        self.files
            .iter()
            .all(|(p, text)| std::fs::read_to_string(p).unwrap() == *text)
    }
}

/// Runs `warden ARGS` with only `home` as the user's home (no XDG/APPDATA/override
/// variables) and `cwd` as the current directory (and so the project).
fn warden(home: &Path, cwd: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warden"));
    cmd.args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env("WARDEN_STATE_DIR", home.join("state"))
        .env("WARDEN_LOG", "warn");
    let homes = ["XDG_CONFIG_HOME", "APPDATA", "LOCALAPPDATA", "USERPROFILE"];
    for var in homes.iter().chain(warden_clients::OVERRIDE_VARS) {
        cmd.env_remove(var);
    }
    cmd.output().unwrap()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

fn servers<'a>(list: &'a Value, client: &str) -> &'a Vec<Value> {
    list["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["client"] == client)
        .unwrap_or_else(|| panic!("{client} not listed: {list}"))["servers"]
        .as_array()
        .unwrap()
}

#[test]
fn list_shows_every_file_and_server() {
    let h = Home::new();
    let list = h.json(&["list", "--json"]);
    let files = list["files"].as_array().unwrap();
    assert_eq!(files.len(), 5, "{list:#}");
    let cursor = servers(&list, "cursor");
    assert_eq!(cursor[0]["name"], "ripgrep");
    assert_eq!(cursor[0]["state"], "unwrapped");
    assert_eq!(cursor[0]["command"], "npx");
    assert_eq!(cursor[0]["env_keys"], serde_json::json!(["RG_TOKEN"]));
    assert!(!list.to_string().contains("secret"), "env values leaked");
    assert_eq!(cursor[1]["state"], "skipped");
    let vscode = files.iter().find(|f| f["client"] == "vscode").unwrap();
    assert_eq!(vscode["scope"], "project");
    assert_eq!(vscode["format"], "jsonc");
    let human = h.ok(&["list"]);
    assert!(human.contains("not wrapped  npx -y mcp-ripgrep"), "{human}");
    assert!(
        human.contains("5 file(s); 0 stdio server(s) wrapped, 5 not wrapped."),
        "{human}"
    );
}

#[test]
fn dry_run_prints_a_diff_and_writes_nothing() {
    let h = Home::new();
    let out = h.ok(&["wrap", "--dry-run"]);
    assert!(out.contains("-      \"command\": \"npx\","), "{out}");
    assert!(out.contains("+      \"args\": [\"bridge\", \"--server\", \"ripgrep\", \"--pass-env\", \"RG_TOKEN\", \"--\", \"npx\", \"-y\", \"mcp-ripgrep\"],"), "{out}");
    assert!(
        out.contains(
            "+args = [\"bridge\", \"--server\", \"time\", \"--pass-env\", \"TZ\", \"--\", \"uvx\"]"
        ),
        "{out}"
    );
    assert!(out.contains("Dry run: nothing was written."), "{out}");
    assert!(h.unchanged());
    assert!(!h.state().join("backups").exists());
    let json = h.json(&["wrap", "--dry-run", "--json"]);
    assert_eq!(json["dry_run"], true);
    assert!(
        json["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["written"] == false)
    );
    assert!(h.unchanged());
}

#[test]
fn wrap_unwrap_gives_back_the_original_bytes() {
    let h = Home::new();
    let out = h.json(&["wrap", "--json"]);
    let files = out["files"].as_array().unwrap();
    assert!(
        files
            .iter()
            .all(|f| f["written"] == true && f["error"].is_null()),
        "{out:#}"
    );
    let desktop = files
        .iter()
        .find(|f| f["client"] == "claude-desktop")
        .unwrap();
    assert!(
        desktop["notices"][0]["message"]
            .as_str()
            .unwrap()
            .contains("Quit Claude Desktop"),
        "{desktop}"
    );
    let warden = std::fs::canonicalize(env!("CARGO_BIN_EXE_warden")).unwrap();
    let list = h.json(&["list", "--json"]);
    let fs = &servers(&list, "claude-desktop")[0];
    assert_eq!(fs["state"], "wrapped");
    assert_eq!(fs["bridge"], warden.to_str().unwrap());
    assert_eq!(fs["command"], "cmd");
    assert_eq!(fs["args"][0], "/c");
    let cd = read(&h.files[1].0);
    assert!(cd.contains("\"--\", \"cmd\", \"/c\", \"npx\""), "{cd}");
    assert!(!cd.replace("\r\n", "").contains('\n'), "CRLF kept");
    // Wrapping again changes nothing.
    let wrapped: Vec<String> = h.files.iter().map(|(p, _)| read(p)).collect();
    let again = h.ok(&["wrap"]);
    assert!(
        again.contains("Wrapped 0 server(s) in 0 file(s)."),
        "{again}"
    );
    assert_eq!(
        wrapped,
        h.files.iter().map(|(p, _)| read(p)).collect::<Vec<_>>()
    );
    // Unwrap restores every byte, including Codex's entry that had no args.
    h.ok(&["unwrap"]);
    for (p, text) in &h.files {
        assert_eq!(read(p), *text, "{}", p.display());
    }
}

#[test]
fn filters_pick_clients_files_and_servers() {
    let h = Home::new();
    h.ok(&["wrap", "--client", "codex"]);
    assert_ne!(read(&h.files[2].0), CODEX);
    assert_eq!(read(&h.files[0].0), CURSOR);
    let out = h.json(&["wrap", "--server", "sqlite", "--json"]);
    let changed: Vec<&Value> = out["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| !f["changed"].as_array().unwrap().is_empty())
        .collect();
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0]["client"], "continue");
    let file = h.files[4].0.to_str().unwrap().to_owned();
    h.ok(&["wrap", "--file", &file]);
    assert!(read(&h.files[4].0).contains("\"--server\", \"docs\""));
    assert_eq!(read(&h.files[0].0), CURSOR, "cursor untouched so far");
    // A name that matches nothing is an error.
    let none = h.warden(&["unwrap", "--server", "no-such-server"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&none.stderr).contains("no server named"));
    // An unknown client id is a usage error.
    let bad = h.warden(&["wrap", "--client", "notepad"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("known clients"));
}

#[test]
fn a_file_outside_detection_needs_its_client() {
    let h = Home::new();
    let other = h.home.join("elsewhere/servers.json");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    std::fs::write(&other, CURSOR).unwrap();
    let p = other.to_str().unwrap();
    let out = h.warden(&["wrap", "--file", p]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--client"));
    h.ok(&["wrap", "--file", p, "--client", "lm-studio"]);
    assert!(read(&other).contains("bridge"));
}

#[test]
fn malformed_file_is_refused_with_its_position() {
    let h = Home::new();
    // Comments and trailing commas are read (never written) even in strict-JSON files;
    // a missing comma is an error.
    let broken =
        "{\n  \"mcpServers\": {\n    \"a\": { \"command\": \"npx\" }\n    \"b\": {}\n  }\n}\n";
    std::fs::write(&h.files[0].0, broken).unwrap();
    let out = h.warden(&["wrap", "--client", "cursor"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let want = format!("{}:4:5: not valid JSON", h.files[0].0.display());
    assert!(stdout.contains(&want), "{stdout}");
    assert!(stdout.contains("The file was not changed"), "{stdout}");
    assert_eq!(read(&h.files[0].0), broken);
}

#[test]
fn backups_and_restore() {
    let h = Home::new();
    assert!(h.ok(&["backups"]).contains("No backups yet"));
    h.ok(&["wrap", "--client", "cursor"]);
    let wrapped = read(&h.files[0].0);
    h.ok(&["unwrap", "--client", "cursor"]);
    assert_eq!(read(&h.files[0].0), CURSOR);
    let list = h.json(&["backups", "--json"]);
    let all = list["backups"].as_array().unwrap();
    assert_eq!(all.len(), 2, "{list:#}");
    assert_eq!(all[0]["client"], "cursor");
    let newest = all[0]["id"].as_str().unwrap();
    // The newest backup was taken before unwrap: it holds the wrapped file.
    let dry = h.ok(&["restore", newest, "--dry-run"]);
    assert!(dry.contains("+      \"command\": \""), "{dry}");
    assert_eq!(read(&h.files[0].0), CURSOR);
    let out = h.ok(&["restore", newest]);
    assert!(out.contains("Restored"), "{out}");
    assert_eq!(read(&h.files[0].0), wrapped);
    let oldest = all[1]["id"].as_str().unwrap();
    h.ok(&["restore", oldest]);
    assert_eq!(read(&h.files[0].0), CURSOR);
    let missing = h.warden(&["restore", "20990101T000000.000Z-nothing"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("warden clients backups"));
}

/// `warden servers list`: one server in two clients' files, off in one of them by that
/// client's own switch, and a wrapped one; the files are only read.
#[test]
fn servers_list_groups_entries_by_name_with_wrapped_and_enabled() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let cursor = home.join(".cursor/mcp.json");
    let cursor_text = r#"{
  "mcpServers": {
    "rg": {
      "command": "/opt/warden/bin/warden",
      "args": ["bridge", "--server", "rg", "--", "npx", "-y", "mcp-ripgrep"]
    },
    "github": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"] }
  }
}
"#;
    let cline = home.join(".cline/data/settings/cline_mcp_settings.json");
    let cline_text = r#"{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "disabled": true,
      "autoApprove": []
    }
  }
}
"#;
    for (path, text) in [(&cursor, cursor_text), (&cline, cline_text)] {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    let out = warden(&home, &work, &["servers", "list", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        list,
        serde_json::json!([
            {
                "name": "github",
                "clients": [
                    { "client": "cursor", "file": cursor, "wrapped": false, "enabled": true },
                    { "client": "cline", "file": cline, "wrapped": false, "enabled": false },
                ],
            },
            {
                "name": "rg",
                "clients": [
                    { "client": "cursor", "file": cursor, "wrapped": true, "enabled": true },
                ],
            },
        ]),
        "{list:#}"
    );

    let out = warden(&home, &work, &["servers", "list"]);
    assert!(out.status.success());
    let human = String::from_utf8(out.stdout).unwrap();
    let line = |client: &str, state: &str, on: &str, path: &Path| {
        format!("  {client:<6}  {state:<11}  {on:<3}  {}\n", path.display())
    };
    let want = format!(
        "github\n{}{}rg\n{}",
        line("cursor", "not wrapped", "on", &cursor),
        line("cline", "not wrapped", "off", &cline),
        line("cursor", "wrapped", "on", &cursor),
    );
    assert!(human.starts_with(&want), "{human}");
    assert!(
        human.contains("2 server(s), 3 entries in the clients' files; 1 turned off"),
        "{human}"
    );

    // Listing is read-only.
    assert_eq!(read(&cursor), cursor_text);
    assert_eq!(read(&cline), cline_text);
    assert!(!home.join("state/backups").exists());
}

/// An argument that holds a line break or a space is shown quoted, on its line, and a name's
/// escape sequence escaped: an entry cannot add a line to `clients list` or `servers list`.
#[test]
fn an_argument_with_a_newline_is_shown_quoted() {
    let h = Home::new();
    std::fs::write(
        &h.files[0].0,
        r#"{"mcpServers": {"odd\u001b[2J": {"command": "node", "args": ["a\nnot wrapped  npx -y safe", "two words"]}}}"#,
    )
    .unwrap();
    let shown = h.ok(&["list"])
        + &String::from_utf8_lossy(&warden(&h.home, &h.project, &["servers", "list"]).stdout);
    let line = "odd\\x1b[2J  not wrapped  node 'a⏎not wrapped  npx -y safe' 'two words'";
    assert!(
        shown.contains(line) && shown.contains("odd\\x1b[2J\n") && !shown.contains('\x1b'),
        "{shown}"
    );
}
