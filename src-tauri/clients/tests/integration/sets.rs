//! `warden sets apply | remove` through the library: a temporary home whose Cursor user file
//! has the servers, a project directory, and each client's project file (written inline here).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use warden_clients::sets::{self, ApplyOptions, RemoveOptions};
use warden_clients::{ClientEnv, ClientError, ClientId, EntryState, Os, PROJECT_FILES};

const WARDEN: &str = "warden";

/// The user's Cursor file: `github` plain (a `${VAR}` token), `postgres` already wrapped.
const USER_CURSOR: &str = r#"{
  "mcpServers": {
    "github": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}" } },
    "postgres": { "command": "/opt/warden/bin/warden", "args": ["bridge", "--server", "postgres", "--", "uvx", "pg-mcp", "--ro"], "env": { "PGHOST": "db" } }
  }
}
"#;

struct World {
    _dir: tempfile::TempDir,
    env: ClientEnv,
    project: PathBuf,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let home = root.join("home");
        let cursor = home.join(".cursor/mcp.json");
        std::fs::create_dir_all(cursor.parent().unwrap()).unwrap();
        std::fs::write(&cursor, USER_CURSOR).unwrap();
        let project = root.join("proj");
        std::fs::create_dir_all(&project).unwrap();
        World {
            _dir: dir,
            env: ClientEnv::with_home(&home, Os::Linux),
            project,
        }
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.project.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    fn apply(&self, servers: &[&str], clients: &[ClientId], dry_run: bool) -> sets::SetOutcome {
        self.try_apply(servers, clients, dry_run).unwrap()
    }

    fn try_apply(
        &self,
        servers: &[&str],
        clients: &[ClientId],
        dry_run: bool,
    ) -> Result<sets::SetOutcome, ClientError> {
        sets::apply(
            &self.env,
            &ApplyOptions {
                set: "web".to_owned(),
                servers: servers.iter().map(|s| (*s).to_owned()).collect(),
                clients: clients.to_vec(),
                project: Some(self.project.clone()),
                warden: WARDEN.to_owned(),
                plan: None,
                dry_run,
            },
        )
    }

    fn remove(&self, clients: &[ClientId]) -> Result<sets::SetOutcome, ClientError> {
        sets::remove(
            &self.env,
            &RemoveOptions {
                set: "web".to_owned(),
                clients: clients.to_vec(),
                project: Some(self.project.clone()),
                plan: None,
                dry_run: false,
            },
        )
    }

    /// Every file under the project, with its bytes.
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

/// The entries of a file as Warden lists them (name, the bridge's argv after `--`).
fn wrapped_entries(env: &ClientEnv, path: &Path) -> Vec<(String, Vec<String>)> {
    let mut env = env.clone();
    env.projects = vec![
        path.ancestors()
            .find(|d| d.ends_with("proj"))
            .unwrap()
            .into(),
    ];
    let l = warden_clients::list(&env)
        .into_iter()
        .find(|l| l.file.path == path)
        .expect("the file is listed");
    assert!(l.error.is_none(), "{:?}", l.error);
    l.servers
        .into_iter()
        .map(|s| match s.state {
            EntryState::Wrapped {
                bridge,
                server,
                command,
                args,
            } => {
                assert_eq!(
                    (bridge.as_str(), server.as_deref()),
                    (WARDEN, Some(&*s.name))
                );
                (s.name, std::iter::once(command).chain(args).collect())
            }
            other => (s.name, vec![format!("{other:?}")]),
        })
        .collect()
}

#[test]
fn apply_writes_each_server_bridged_into_a_new_project_file() {
    let w = World::new();
    w.apply(&["github", "postgres"], &[ClientId::Cursor], false);
    let got = wrapped_entries(&w.env, &w.project.join(".cursor/mcp.json"));
    assert_eq!(
        got,
        vec![
            (
                "github".to_owned(),
                vec!["npx", "-y", "@modelcontextprotocol/server-github"]
                    .into_iter()
                    .map(String::from)
                    .collect()
            ),
            (
                "postgres".to_owned(),
                vec!["uvx", "pg-mcp", "--ro"]
                    .into_iter()
                    .map(String::from)
                    .collect()
            ),
        ]
    );
}

#[test]
fn apply_passes_the_entrys_env_to_the_bridge_as_servers_add_does() {
    let w = World::new();
    w.apply(&["postgres"], &[ClientId::Cursor], false);
    let text = std::fs::read_to_string(w.project.join(".cursor/mcp.json")).unwrap();
    assert!(
        text.contains(
            r#"["bridge", "--server", "postgres", "--pass-env", "PGHOST", "--", "uvx", "pg-mcp", "--ro"]"#
        ) && text.contains(r#""PGHOST": "db""#),
        "{text}"
    );
}

#[test]
fn a_dry_run_shows_the_new_file_and_writes_nothing() {
    let w = World::new();
    let o = w.apply(&["github"], &[ClientId::Cursor], true);
    assert!(
        w.tree().is_empty()
            && o.files[0].change.diff.contains("+    \"github\": {")
            && o.files[0].whole_file,
        "{:?}",
        o.files[0].change.diff
    );
}

#[test]
fn servers_already_in_the_file_are_left_as_they_are_and_named() {
    let w = World::new();
    let mine = "{\n  // ours\n  \"servers\": {\n    \"github\": { \"type\": \"http\", \"url\": \"https://api.example/mcp\" }\n  }\n}\n";
    let p = w.write(".vscode/mcp.json", mine);
    let o = w.apply(&["github", "postgres"], &[ClientId::Vscode], false);
    let text = std::fs::read_to_string(&p).unwrap();
    assert_eq!(
        (
            o.files[0].kept.clone(),
            o.files[0].done.clone(),
            text.starts_with(
                "{\n  // ours\n  \"servers\": {\n    \"github\": { \"type\": \"http\", \"url\": \"https://api.example/mcp\" },"
            )
        ),
        (vec!["github".to_owned()], vec!["postgres".to_owned()], true),
        "{text}"
    );
}

#[test]
fn remove_gives_an_existing_file_back_byte_for_byte() {
    let w = World::new();
    let mine = "{\n\t\"mcpServers\": {\n\t\t\"local\": { \"command\": \"./run.sh\" }\n\t},\n\t\"other\": 1\n}\n";
    w.write(".mcp.json", mine);
    let before = w.tree();
    w.apply(&["github", "postgres"], &[ClientId::ClaudeCode], false);
    w.remove(&[]).unwrap();
    assert_eq!(w.tree(), before);
}

#[test]
fn remove_deletes_the_file_and_folder_apply_created() {
    let w = World::new();
    w.write("README", "hi\n");
    let before = w.tree();
    w.apply(&["github"], &[ClientId::Cursor, ClientId::Kiro], false);
    w.remove(&[]).unwrap();
    assert_eq!(w.tree(), before);
}

#[test]
fn remove_keeps_a_created_folder_that_holds_other_files() {
    let w = World::new();
    w.apply(&["github"], &[ClientId::Cursor], false);
    let other = w.write(".cursor/rules.md", "mine\n");
    w.remove(&[]).unwrap();
    assert!(other.is_file() && !w.project.join(".cursor/mcp.json").exists());
}

#[test]
fn remove_takes_out_only_what_the_set_added_after_the_client_wrote_the_file() {
    let w = World::new();
    let p = w.write(
        ".cursor/mcp.json",
        "{\n  \"mcpServers\": {\n    \"github\": { \"command\": \"gh-mcp\" }\n  }\n}\n",
    );
    w.apply(&["github", "postgres"], &[ClientId::Cursor], false);
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(
        &p,
        text.replace("\"mcpServers\"", "\"x\": 1,\n  \"mcpServers\""),
    )
    .unwrap();
    w.remove(&[]).unwrap();
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        "{\n  \"x\": 1,\n  \"mcpServers\": {\n    \"github\": { \"command\": \"gh-mcp\" }\n  }\n}\n"
    );
}

#[test]
fn an_unknown_server_is_refused_and_nothing_is_written() {
    let w = World::new();
    let e = w
        .try_apply(&["github", "nope"], &[ClientId::Cursor], false)
        .unwrap_err();
    assert!(
        matches!(&e, ClientError::SetServersMissing { missing, .. } if missing == &["nope"])
            && w.tree().is_empty(),
        "{e}"
    );
}

#[test]
fn a_secret_written_out_is_not_copied_into_a_project_file() {
    let w = World::new();
    let user = w.env.home.join(".cursor/mcp.json");
    std::fs::write(&user, USER_CURSOR.replace("${GITHUB_TOKEN}", "ghp_live")).unwrap();
    let e = w
        .try_apply(&["github"], &[ClientId::Cursor], false)
        .unwrap_err();
    assert!(
        matches!(&e, ClientError::SecretInProject { var, .. } if var == "GITHUB_PERSONAL_ACCESS_TOKEN")
            && w.tree().is_empty(),
        "{e}"
    );
}

#[test]
fn a_client_without_a_project_file_is_skipped_and_named() {
    let w = World::new();
    let o = w.apply(
        &["github"],
        &[
            ClientId::ClaudeDesktop,
            ClientId::Cursor,
            ClientId::Windsurf,
        ],
        false,
    );
    assert_eq!(
        (o.skipped, o.files.len()),
        (vec![ClientId::ClaudeDesktop, ClientId::Windsurf], 1)
    );
}

#[test]
fn remove_of_a_set_not_applied_is_refused() {
    let w = World::new();
    assert!(matches!(
        w.remove(&[]),
        Err(ClientError::SetNotApplied { .. })
    ));
}

/// Each client's project file, existing (with an entry of its own) or created: apply writes
/// the set bridged in that client's format, and remove gives back the project as it was.
#[test]
fn every_project_file_format_takes_the_set_and_gives_it_back() {
    let own: &[(ClientId, &str)] = &[
        (
            ClientId::ClaudeCode,
            "{\n  \"mcpServers\": {\n    \"own\": { \"command\": \"own\" }\n  }\n}\n",
        ),
        (
            ClientId::Vscode,
            "{\n  // c\n  \"inputs\": [],\n  \"servers\": {\n    \"own\": { \"type\": \"stdio\", \"command\": \"own\" }\n  }\n}\n",
        ),
        (
            ClientId::Zed,
            "// Zed\n{\n  \"theme\": \"One\",\n  \"context_servers\": {\n    \"own\": { \"command\": \"own\", \"args\": [] }\n  }\n}\n",
        ),
        (
            ClientId::GeminiCli,
            "{\n  \"mcpServers\": {\n    \"own\": { \"command\": \"own\" }\n  }\n}\n",
        ),
        (
            ClientId::Codex,
            "# trusted\n[mcp_servers.own]\ncommand = \"own\"\n",
        ),
        (
            ClientId::Opencode,
            "{\n  \"mcp\": {\n    \"own\": { \"type\": \"local\", \"command\": [\"own\"] }\n  }\n}\n",
        ),
    ];
    for (client, rel) in PROJECT_FILES {
        for existing in [true, false] {
            let w = World::new();
            let text = own.iter().find(|(c, _)| *c == client).map(|(_, t)| *t);
            let path = w.project.join(rel);
            if existing && let Some(t) = text {
                w.write(rel, t);
            }
            let before = w.tree();
            w.apply(&["github", "postgres"], &[client], false);
            let names: Vec<String> = wrapped_entries(&w.env, &path)
                .into_iter()
                .map(|(n, _)| n)
                .filter(|n| n != "own")
                .collect();
            assert_eq!(names, ["github", "postgres"], "{client} {rel}");
            w.remove(&[client]).unwrap();
            assert_eq!(w.tree(), before, "{client} {rel} existing: {existing}");
        }
    }
}

impl World {
    /// A Codex user file that has `github` already.
    fn codex_user_file(&self) -> PathBuf {
        let codex = self.env.home.join(".codex/config.toml");
        std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
        std::fs::write(
            &codex,
            "# mine\nmodel = \"x\"\n\n[mcp_servers.github]\ncommand = \"gh-mcp\"\n",
        )
        .unwrap();
        codex
    }

    fn apply_to_user_files(&self) -> sets::SetOutcome {
        sets::apply(
            &self.env,
            &ApplyOptions {
                set: "web".to_owned(),
                servers: vec!["github".to_owned(), "postgres".to_owned()],
                clients: vec![ClientId::Codex],
                project: None,
                warden: "/opt/warden".to_owned(),
                plan: None,
                dry_run: false,
            },
        )
        .unwrap()
    }
}

#[test]
fn without_a_project_the_user_file_gets_only_the_missing_servers() {
    let w = World::new();
    w.codex_user_file();
    let o = w.apply_to_user_files();
    assert_eq!(
        (o.files[0].done.clone(), o.files[0].kept.clone()),
        (vec!["postgres".to_owned()], vec!["github".to_owned()])
    );
}

#[test]
fn without_a_project_remove_gives_the_user_file_back_byte_for_byte() {
    let w = World::new();
    let codex = w.codex_user_file();
    let before = std::fs::read(&codex).unwrap();
    w.apply_to_user_files();
    let opts = RemoveOptions {
        set: "web".to_owned(),
        clients: Vec::new(),
        project: None,
        plan: None,
        dry_run: false,
    };
    sets::remove(&w.env, &opts).unwrap();
    assert_eq!(std::fs::read(&codex).unwrap(), before);
}

/// The window's Apply: the preview's plan, sent back, writes exactly what was shown.
#[test]
fn apply_with_the_previews_plan_writes_what_was_shown() {
    let w = World::new();
    let p = w.write(".mcp.json", "{\n  \"mcpServers\": {}\n}\n");
    let preview = w.apply(&["github"], &[ClientId::ClaudeCode], true);
    let opts = ApplyOptions {
        set: "web".to_owned(),
        servers: vec!["github".to_owned()],
        clients: vec![ClientId::ClaudeCode],
        project: Some(w.project.clone()),
        warden: WARDEN.to_owned(),
        plan: Some(preview.plan()),
        dry_run: false,
    };
    sets::apply(&w.env, &opts).unwrap();
    assert_eq!(
        wrapped_entries(&w.env, &p),
        vec![(
            "github".to_owned(),
            vec![
                "npx".to_owned(),
                "-y".to_owned(),
                "@modelcontextprotocol/server-github".to_owned()
            ]
        )]
    );
}

/// A file that changed after the preview: nothing is written, and the error asks for a new
/// preview (`W-CLIENT-CHANGED`).
#[test]
fn apply_with_a_plan_refuses_a_file_changed_since_the_preview() {
    let w = World::new();
    let preview = w.apply(&["github"], &[ClientId::ClaudeCode], true);
    let mine = "{\n  \"mcpServers\": { \"local\": { \"command\": \"./run.sh\" } }\n}\n";
    w.write(".mcp.json", mine);
    let opts = ApplyOptions {
        set: "web".to_owned(),
        servers: vec!["github".to_owned()],
        clients: vec![ClientId::ClaudeCode],
        project: Some(w.project.clone()),
        warden: WARDEN.to_owned(),
        plan: Some(preview.plan()),
        dry_run: false,
    };
    let refused = sets::apply(&w.env, &opts).unwrap_err();
    assert_eq!(
        (
            refused.code().as_str(),
            std::fs::read_to_string(w.project.join(".mcp.json")).unwrap()
        ),
        ("W-CLIENT-CHANGED", mine.to_owned())
    );
}

/// Remove with its preview's plan: the file apply created goes; with a stale plan, it stays.
#[test]
fn remove_with_a_stale_plan_writes_nothing() {
    let w = World::new();
    w.apply(&["github"], &[ClientId::Cursor], false);
    let mut opts = RemoveOptions {
        set: "web".to_owned(),
        clients: Vec::new(),
        project: Some(w.project.clone()),
        plan: None,
        dry_run: true,
    };
    let preview = sets::remove(&w.env, &opts).unwrap();
    let file = w.project.join(".cursor/mcp.json");
    let edited = std::fs::read_to_string(&file)
        .unwrap()
        .replace("{\n", "{ \n");
    std::fs::write(&file, &edited).unwrap();
    opts.plan = Some(preview.plan());
    opts.dry_run = false;
    let refused = sets::remove(&w.env, &opts).unwrap_err();
    assert_eq!(
        (
            refused.code().as_str(),
            std::fs::read_to_string(&file).unwrap()
        ),
        ("W-CLIENT-CHANGED", edited)
    );
}

/// VS Code's recently opened folders (its state database) are projects: `file:` folders only,
/// their `%20`s decoded; files, remote folders and workspaces are not.
#[test]
fn vscodes_recently_opened_folders_are_projects() {
    let w = World::new();
    let storage = w.env.home.join(".config/Code/User/globalStorage");
    std::fs::create_dir_all(&storage).unwrap();
    let db = rusqlite::Connection::open(storage.join("state.vscdb")).unwrap();
    db.execute_batch("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        .unwrap();
    let dir = w.project.join("my app");
    let list = serde_json::json!({ "entries": [
        { "folderUri": format!("file://{}", w.project.join("my%20app").display()) },
        { "fileUri": "file:///etc/hosts" },
        { "folderUri": "vscode-remote://ssh-remote%2Bbox/srv/app" },
        { "workspace": { "id": "1", "configPath": "file:///w/a.code-workspace" } },
    ]});
    db.execute(
        "INSERT INTO ItemTable VALUES ('history.recentlyOpenedPathsList', ?1)",
        [list.to_string()],
    )
    .unwrap();
    drop(db);
    assert_eq!(
        sets::recent_projects(&w.env),
        vec![(dir, vec!["vscode".to_owned()])]
    );
}

/// A remote server in a set: its URL and headers go into the project's file through the
/// bridge, as `clients wrap` would write them; remove takes them out again.
#[test]
fn a_remote_server_of_a_set_is_written_through_the_bridge() {
    let w = World::new();
    let claude = w.env.home.join(".claude.json");
    std::fs::write(
        &claude,
        r#"{"mcpServers": {"linear": {"type": "http", "url": "https://mcp.linear.app/mcp", "headers": {"Authorization": "${LINEAR_AUTH}"}}}}"#,
    )
    .unwrap();
    w.apply(&["linear"], &[ClientId::Cursor], false);
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(w.project.join(".cursor/mcp.json")).unwrap())
            .unwrap();
    w.remove(&[ClientId::Cursor]).unwrap();
    assert_eq!(
        (&file["mcpServers"]["linear"]["args"], w.tree()),
        (
            &serde_json::json!([
                "bridge",
                "--server",
                "linear",
                "--remote",
                "https://mcp.linear.app/mcp",
                "--header",
                "Authorization=LINEAR_AUTH"
            ]),
            Vec::new()
        )
    );
}
