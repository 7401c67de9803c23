//! The side doors of the sandbox's file system, tried as a hostile server would, through the
//! real bridge in both modes (the real bubblewrap, and Landlock as `sandbox_mode =
//! "landlock"` forces it): what runs outside later, planted in a write grant; a hidden path
//! made, or replaced by a rename, while the server runs; the files that hold the keys Warden
//! knows of; a grant that is the home itself. The hostile server is the fake server's `echo`
//! (containment.rs's world: a home, a grant of `home/notes`).

use serde_json::json;

use crate::common::bridge;
use crate::containment::{World, echo, modes};

/// The answer to `initialize` of a sandboxed server that may write `grant`.
async fn initialize_with_grant(w: &World, grant: &str) -> serde_json::Value {
    let config = format!("[defaults]\nsandbox = \"on\"\nsandbox_write = [\"{grant}\"]\n");
    let mut s = bridge()
        .sdk_env()
        .config(&config)
        .env("HOME", &w.home())
        .spawn();
    s.initialize().await
}

/// A line that would run a command outside the sandbox at the IDE's next `git status`.
const PLANTED: &str = "[core]\n\tfsmonitor = \"sh -c 'id > /tmp/pwned'\"\n";

/// git's config and hooks, the editors' and agents' project files, direnv's: inside a write
/// grant the server can change none of them, nor add a hook.
#[tokio::test]
async fn a_write_grant_cannot_plant_what_runs_outside_later() {
    let w = World::new();
    let notes = w.path("home/notes");
    for d in [".git/hooks", ".vscode", ".cursor", ".claude"] {
        std::fs::create_dir_all(notes.join(d)).unwrap();
    }
    let files = [
        ".git/config",
        ".vscode/settings.json",
        ".vscode/tasks.json",
        ".mcp.json",
        ".cursor/mcp.json",
        ".claude/settings.json",
        ".envrc",
    ];
    for f in files {
        std::fs::write(notes.join(f), "ORIGINAL").unwrap();
    }
    let hook = notes.join(".git/hooks/pre-commit");
    for mode in modes() {
        let mut s = w.session(mode, "", |b| b).await;
        for f in files.iter().map(|f| notes.join(f)).chain([hook.clone()]) {
            echo(&mut s, json!({"write": f, "text": PLANTED})).await;
        }
        s.close().await;
        let changed: Vec<&str> = files
            .into_iter()
            .filter(|f| std::fs::read_to_string(notes.join(f)).unwrap() != "ORIGINAL")
            .chain(hook.exists().then_some(".git/hooks/pre-commit"))
            .collect();
        assert!(changed.is_empty(), "{mode}: the server changed {changed:?}");
    }
}

/// Nor can it move `.git` aside and make a new one with a config of its own.
#[tokio::test]
async fn a_write_grant_cannot_move_the_git_folder_aside() {
    let w = World::new();
    let notes = w.path("home/notes");
    std::fs::create_dir_all(notes.join(".git/objects")).unwrap();
    std::fs::write(notes.join(".git/config"), "ORIGINAL").unwrap();
    for mode in modes() {
        let mut s = w.session(mode, "", |b| b).await;
        let to = notes.join(format!(".git-{mode}"));
        let said = echo(&mut s, json!({"rename": notes.join(".git"), "to": to})).await;
        s.close().await;
        assert!(said.starts_with("error:"), "{mode}: {said}");
    }
}

/// A read-only name that is a link out of the grant (a cloned repository's, or one the server
/// planted for its next start) shows nothing hidden: `.idea -> ~/.ssh` stays unreadable.
#[tokio::test]
async fn a_read_only_name_linked_out_of_the_grant_shows_nothing_hidden() {
    let w = World::new();
    std::fs::create_dir_all(w.path("home/.ssh")).unwrap();
    std::fs::write(w.path("home/.ssh/id_ed25519"), "PRIVATE-KEY-41c").unwrap();
    std::os::unix::fs::symlink(w.path("home/.ssh"), w.path("home/notes/.idea")).unwrap();
    for mode in modes() {
        let mut s = w.session(mode, "", |b| b).await;
        let mut said = Vec::new();
        for p in ["home/notes/.idea/id_ed25519", "home/.ssh/id_ed25519"] {
            said.push(echo(&mut s, json!({"read": w.path(p)})).await);
        }
        s.close().await;
        assert!(
            said.iter().all(|s| s.starts_with("error:")),
            "{mode}: {said:?}"
        );
    }
}

/// A grant reached through a link in the home (`out -> ../.config`) is refused: it would
/// grant what the link points to.
#[tokio::test]
async fn a_grant_through_a_link_is_refused() {
    let w = World::new();
    std::fs::create_dir_all(w.path("home/.config")).unwrap();
    std::os::unix::fs::symlink(w.path("home/.config"), w.path("home/notes/out")).unwrap();
    let init = initialize_with_grant(&w, &w.path("home/notes/out").to_string_lossy()).await;
    assert_eq!(
        init.pointer("/error/data/code"),
        Some(&json!("W-SANDBOX-GRANT")),
        "{init}"
    );
}

/// The rest of a grant stays the server's to write: the read-only names take nothing else.
#[tokio::test]
async fn the_rest_of_a_git_work_tree_grant_is_written() {
    let w = World::new();
    let notes = w.path("home/notes");
    std::fs::create_dir_all(notes.join(".git/objects")).unwrap();
    std::fs::create_dir_all(notes.join("src")).unwrap();
    std::fs::write(notes.join(".git/config"), "").unwrap();
    for mode in modes() {
        let mut s = w.session(mode, "", |b| b).await;
        let mut said = Vec::new();
        for f in ["src/main.rs", ".git/objects/ab", "README.md"] {
            let to = notes.join(format!("{f}-{mode}"));
            said.push(echo(&mut s, json!({"write": to, "text": "x"})).await);
        }
        s.close().await;
        // Landlock grants by folder: the top of a grant that holds a read-only name takes no
        // new entry there (docs/sandbox.md); bubblewrap's does.
        let expected = if mode == "bwrap" { 3 } else { 2 };
        let written = said.iter().filter(|s| *s == "written").count();
        assert_eq!(written, expected, "{mode}: {said:?}");
    }
}

/// A grant of the home is refused before anything runs: the server could rewrite the shell's
/// start-up files.
#[tokio::test]
async fn a_grant_of_the_home_is_refused() {
    let w = World::new();
    let init = initialize_with_grant(&w, &w.home()).await;
    assert_eq!(
        init.pointer("/error/data/code"),
        Some(&json!("W-SANDBOX-GRANT")),
        "{init}"
    );
}

/// Hidden means hidden for the whole session: a `~/.aws` made while the server runs, and a
/// `~/.netrc` replaced by a rename (as editors and git's credential store write files).
#[tokio::test]
async fn what_is_hidden_stays_hidden_while_the_server_runs() {
    let w = World::new();
    std::fs::write(w.path("home/.netrc"), "machine old password OLD").unwrap();
    for mode in modes() {
        let mut s = w.session(mode, "", |b| b).await;
        std::fs::create_dir_all(w.path("home/.aws")).unwrap();
        std::fs::write(w.path("home/.aws/credentials"), "AWS-SECRET").unwrap();
        std::fs::write(w.path("home/.netrc.new"), "machine new password NEW").unwrap();
        std::fs::rename(w.path("home/.netrc.new"), w.path("home/.netrc")).unwrap();
        let aws = echo(&mut s, json!({"read": w.path("home/.aws/credentials")})).await;
        let netrc = echo(&mut s, json!({"read": w.path("home/.netrc")})).await;
        s.close().await;
        std::fs::remove_dir_all(w.path("home/.aws")).unwrap();
        assert!(
            aws.starts_with("error:") && netrc.starts_with("error:"),
            "{mode}: ~/.aws: {aws}; ~/.netrc: {netrc}"
        );
    }
}

/// Other servers' keys in the clients' own files, and the usual tokens: none is readable.
#[tokio::test]
async fn the_secrets_warden_knows_of_are_hidden() {
    let w = World::new();
    let secrets = [
        ".cursor/mcp.json",
        ".claude.json",
        ".claude/.credentials.json",
        ".config/Claude/claude_desktop_config.json",
        ".config/Code/User/mcp.json",
        ".codeium/windsurf/mcp_config.json",
        ".gemini/settings.json",
        ".codex/config.toml",
        ".npmrc",
        ".git-credentials",
        ".config/gcloud/credentials.db",
        ".azure/msal_token_cache.json",
    ];
    for f in secrets {
        let p = w.path(&format!("home/{f}"));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "KEY-7f3a").unwrap();
    }
    for mode in modes() {
        let mut s = w.session(mode, "", |b| b).await;
        let mut read = Vec::new();
        for f in secrets {
            let said = echo(&mut s, json!({"read": w.path(&format!("home/{f}"))})).await;
            if !said.starts_with("error:") {
                read.push(f);
            }
        }
        s.close().await;
        assert!(read.is_empty(), "{mode}: the server read {read:?}");
    }
}

/// A working folder under /var/tmp stays reachable: the server starts there and reads it.
#[tokio::test]
async fn a_working_folder_under_var_tmp_is_reachable() {
    let w = World::new();
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    std::fs::write(dir.path().join("data.txt"), "here").unwrap();
    for mode in modes() {
        let mut s = w.session(mode, "", |b| b.cwd(dir.path())).await;
        let said = echo(&mut s, json!({"read": "data.txt"})).await;
        s.close().await;
        assert_eq!(said, "here", "{mode}");
    }
}

/// The kernel's keyrings are out of reach: a key the user added to the session keyring is
/// not read from inside.
#[tokio::test]
async fn the_kernel_keyring_is_out_of_reach() {
    let w = World::new();
    for mode in modes() {
        let mut s = w.session(mode, "", |b| b).await;
        let said = echo(&mut s, json!({"keyring": true})).await;
        s.close().await;
        assert!(said.starts_with("error:"), "{mode}: {said}");
    }
}
