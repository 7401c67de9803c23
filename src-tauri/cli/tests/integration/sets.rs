//! `warden sets list | apply | remove` and `warden servers add --project` end to end: the
//! real binary, a temporary HOME with a Cursor file (`rg`) and a Codex one (`time`), a
//! config.toml with sets, and a project directory.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common::WARDEN;
use crate::servers::Home;

const CURSOR: &str = "{\n  \"mcpServers\": {\n    \"rg\": { \"command\": \"npx\", \"args\": [\"-y\", \"mcp-ripgrep@1.0.0\"] }\n  }\n}\n";
const CODEX: &str = "[mcp_servers.time]\ncommand = \"uvx\"\nargs = [\"mcp-server-time\"]\n";
const CONFIG: &str =
    "[sets.web]\nservers = [\"rg\", \"time\"]\n\n[sets.odd]\nservers = [\"rg\", \"nope\"]\n";

struct World {
    home: Home,
    project: PathBuf,
    /// A directory for PATH: empty, or with `warden` linked to the binary under test.
    bin: PathBuf,
}

impl World {
    fn new() -> World {
        let home = Home::with(CURSOR, CODEX);
        let root = home.home.parent().unwrap().to_owned();
        let project = std::fs::canonicalize(&root).unwrap().join("proj");
        let bin = root.join("bin");
        for d in [&project, &bin] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(root.join("config.toml"), CONFIG).unwrap();
        World { home, project, bin }
    }

    fn warden_on_path(&self) {
        std::os::unix::fs::symlink(WARDEN, self.bin.join("warden")).unwrap();
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut cmd = self.home.command(None);
        cmd.env(
            "WARDEN_CONFIG",
            self.home.home.parent().unwrap().join("config.toml"),
        )
        .env("PATH", &self.bin)
        .args(args);
        cmd.output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "warden {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn project(&self) -> &str {
        self.project.to_str().unwrap()
    }

    /// Every file and folder under the project, with the files' bytes.
    fn tree(&self) -> Vec<(PathBuf, Vec<u8>)> {
        fn walk(d: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
            for e in std::fs::read_dir(d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    out.push((p.clone(), Vec::new()));
                    walk(&p, out);
                } else {
                    out.push((p.clone(), std::fs::read(&p).unwrap()));
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.project, &mut out);
        out.sort();
        out
    }
}

#[test]
fn sets_an_unknown_set_is_refused_with_what_to_do_and_nothing_written() {
    let w = World::new();
    let p = w.project();
    let out = w.run(&[
        "sets",
        "apply",
        "nope",
        "--project",
        p,
        "--client",
        "cursor",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(2)
            && err.contains("no set named \"nope\"")
            && err.contains("sets there: odd, web")
            && err.contains("[W-CLIENT-USAGE]")
            && w.tree().is_empty(),
        "{err}"
    );
}

#[test]
fn sets_a_server_no_client_has_is_refused_and_nothing_written() {
    let w = World::new();
    let p = w.project();
    let out = w.run(&["sets", "apply", "odd", "--project", p, "--client", "cursor"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(2)
            && err.contains("names nope that no client's file has")
            && err.contains("[W-CLIENT-NO-SUCH-SERVER]")
            && w.tree().is_empty(),
        "{err}"
    );
}

#[test]
fn sets_a_dry_run_prints_the_diff_and_writes_nothing() {
    let w = World::new();
    let p = w.project();
    let out = w.ok(&[
        "sets",
        "apply",
        "web",
        "--project",
        p,
        "--client",
        "claude-code",
        "--dry-run",
    ]);
    assert!(
        out.contains("+++ ") && out.contains("+    \"time\": {") && w.tree().is_empty(),
        "{out}"
    );
}

#[test]
fn sets_apply_then_remove_gives_the_project_back_as_it_was() {
    let w = World::new();
    std::fs::write(w.project.join(".mcp.json"), "{\"mcpServers\":{}}").unwrap();
    let before = w.tree();
    let p = w.project();
    w.ok(&[
        "sets",
        "apply",
        "web",
        "--project",
        p,
        "--client",
        "claude-code",
        "--client",
        "cursor",
        "--client",
        "zed",
    ]);
    w.ok(&["sets", "remove", "web", "--project", p]);
    assert_eq!(w.tree(), before);
}

#[test]
fn sets_a_project_entry_runs_plain_warden_when_warden_on_path_is_this_one() {
    let w = World::new();
    w.warden_on_path();
    let p = w.project();
    let out = w.ok(&["sets", "apply", "web", "--project", p, "--client", "cursor"]);
    let text = std::fs::read_to_string(w.project.join(".cursor/mcp.json")).unwrap();
    assert!(
        text.contains("\"command\": \"warden\",") && !out.contains("warning"),
        "{text}\n{out}"
    );
}

#[test]
fn sets_without_warden_on_path_the_entry_names_this_warden_and_a_warning_says_so() {
    let w = World::new();
    let p = w.project();
    let out = w.ok(&["sets", "apply", "web", "--project", p, "--client", "cursor"]);
    let this = std::fs::canonicalize(WARDEN).unwrap();
    let this = this.to_str().unwrap();
    let text = std::fs::read_to_string(w.project.join(".cursor/mcp.json")).unwrap();
    assert!(
        text.contains(&format!("\"command\": \"{this}\","))
            && out.contains("warning: `warden` is not on PATH")
            && out.contains("fail to start"),
        "{text}\n{out}"
    );
}

#[test]
fn sets_without_project_the_user_files_get_the_missing_servers_only() {
    let w = World::new();
    let out = w.ok(&["sets", "apply", "web", "--client", "cursor"]);
    let text = std::fs::read_to_string(&w.home.cursor).unwrap();
    assert!(
        text.starts_with(CURSOR.trim_end_matches("\n  }\n}\n"))
            && text.contains("\"time\": {")
            && out.contains("already there, left as they are: rg"),
        "{text}\n{out}"
    );
}

#[test]
fn sets_list_json_shows_where_a_set_is_applied_and_the_projects() {
    let w = World::new();
    let claude = format!("{{\"projects\": {{\"{}\": {{}}}}}}", w.project());
    std::fs::write(w.home.home.join(".claude.json"), claude).unwrap();
    let p = w.project();
    w.ok(&["sets", "apply", "web", "--project", p, "--client", "cursor"]);
    let v: Value = serde_json::from_str(&w.ok(&["sets", "list", "--json"])).unwrap();
    let web = v["sets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "web")
        .unwrap();
    let project = &v["projects"][0];
    let cursor = project["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["client"] == "cursor")
        .unwrap();
    let starts: Vec<(&str, &str)> = cursor["starts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["from"].as_str().unwrap()))
        .collect();
    assert_eq!(
        (
            web["applied"][0]["project"].as_str(),
            web["applied"][0]["by_warden"].as_bool(),
            project["found_in"].clone(),
            project["sets"].clone(),
            starts,
        ),
        (
            Some(p),
            Some(true),
            serde_json::json!(["claude-code", "warden"]),
            serde_json::json!(["web"]),
            vec![("rg", "user"), ("rg", "project"), ("time", "project")],
        )
    );
}

#[test]
fn servers_add_with_project_writes_the_projects_file() {
    let w = World::new();
    let p = w.project();
    w.ok(&[
        "servers",
        "add",
        "docs",
        "--project",
        p,
        "--client",
        "gemini-cli",
        "--",
        "uvx",
        "docs-mcp",
    ]);
    let text = std::fs::read_to_string(w.project.join(".gemini/settings.json")).unwrap();
    assert!(
        text.contains("\"docs\": {") && text.contains("\"--server\", \"docs\""),
        "{text}"
    );
}

#[test]
fn servers_remove_of_a_project_server_deletes_the_file_add_created() {
    let w = World::new();
    let p = w.project();
    w.ok(&[
        "servers",
        "add",
        "docs",
        "--project",
        p,
        "--client",
        "gemini-cli",
        "--",
        "uvx",
        "docs-mcp",
    ]);
    let file = w.project.join(".gemini/settings.json");
    w.ok(&[
        "servers",
        "remove",
        "docs",
        "--file",
        file.to_str().unwrap(),
        "--yes",
    ]);
    assert!(w.tree().is_empty());
}

#[test]
fn servers_add_with_project_refuses_a_client_without_a_project_file() {
    let w = World::new();
    let p = w.project();
    let out = w.run(&[
        "servers",
        "add",
        "docs",
        "--project",
        p,
        "--client",
        "cursor",
        "--client",
        "windsurf",
        "--",
        "uvx",
        "docs-mcp",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(2)
            && err.contains("Windsurf has no project file")
            && w.tree().is_empty(),
        "{err}"
    );
}

#[test]
fn sets_remove_needs_no_config_toml_that_loads() {
    let w = World::new();
    let p = w.project();
    w.ok(&["sets", "apply", "web", "--project", p, "--client", "cursor"]);
    std::fs::write(
        w.home.home.parent().unwrap().join("config.toml"),
        "[sets.web\n",
    )
    .unwrap();
    w.ok(&["sets", "remove", "web", "--project", p]);
    assert!(w.tree().is_empty());
}
