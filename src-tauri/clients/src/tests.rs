#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::detect::candidates;
use super::lock::{self, LockKind};
use super::write::{self, update_file_with};
use super::*;

const WARDEN: &str = "/opt/warden/bin/warden";

fn home() -> (tempfile::TempDir, ClientEnv) {
    let dir = tempfile::tempdir().unwrap();
    let env = ClientEnv::with_home(dir.path(), Os::Linux);
    (dir, env)
}

fn put(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn opts(filter: Filter) -> WrapOptions {
    WrapOptions {
        warden: PathBuf::from(WARDEN),
        filter,
        dry_run: false,
        move_secrets: false,
    }
}

const CURSOR: &str = r#"{
  "mcpServers": {
    "rg": { "command": "npx", "args": ["-y", "mcp-ripgrep"], "env": { "K": "v" } },
    "time": {
      "command": "mcp-server-time"
    }
  }
}
"#;

// ---------------------------------------------------------------- detection

#[test]
fn clients_detects_every_client_on_linux() {
    let (dir, mut env) = home();
    let h = dir.path();
    let project = h.join("work/app");
    env.projects.push(project.clone());
    let json = r#"{"mcpServers": {"a": {"command": "x"}}}"#;
    let files = [
        (".config/Claude/claude_desktop_config.json", json),
        (".claude.json", json),
        (".cursor/mcp.json", json),
        (
            ".config/Code/User/mcp.json",
            r#"{"servers": {"a": {"command": "x"}}}"#,
        ),
        (
            ".config/Code/User/profiles/-5b1c2d/mcp.json",
            r#"{"servers": {"a": {"command": "x"}}}"#,
        ),
        (".cline/data/settings/cline_mcp_settings.json", json),
        (
            ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
            json,
        ),
        (".codeium/windsurf/mcp_config.json", json),
        (".config/zed/settings.json", r#"{"context_servers": {}}"#),
        (".gemini/settings.json", json),
        (".codex/config.toml", "[mcp_servers.a]\ncommand = \"x\"\n"),
        (
            ".config/opencode/opencode.json",
            r#"{"mcp": {"a": {"type": "local", "command": ["x"]}}}"#,
        ),
        (".kiro/settings/mcp.json", json),
        (".lmstudio/mcp.json", json),
        (
            ".continue/config.yaml",
            "mcpServers:\n  - name: a\n    command: x\n",
        ),
        (
            ".continue/mcpServers/block.yaml",
            "mcpServers:\n  - name: b\n    command: x\n",
        ),
        (".continue/mcpServers/claude.json", json),
        (".config/goose/config.yaml", "extensions: {}\n"),
        ("work/app/.mcp.json", json),
        ("work/app/.cursor/mcp.json", json),
        ("work/app/.vscode/mcp.json", r#"{"servers": {}}"#),
        ("work/app/.codex/config.toml", ""),
    ];
    for (rel, text) in files {
        put(&h.join(rel), text);
    }
    let found = detect(&env);
    for c in ClientId::ALL {
        assert!(found.iter().any(|f| f.client == c), "{c} not detected");
    }
    assert_eq!(found.len(), files.len(), "{found:#?}");
    let legacy = found
        .iter()
        .find(|f| f.path.to_string_lossy().contains("saoudrizwan"))
        .unwrap();
    assert!(
        !legacy.active,
        "the legacy Cline file is inactive once the shared one exists"
    );
    let profile = found
        .iter()
        .find(|f| f.path.to_string_lossy().contains("profiles"))
        .unwrap();
    assert_eq!(profile.dialect, Dialect::Vscode);
    assert_eq!(profile.format, Format::Jsonc);
    let project_file = found
        .iter()
        .find(|f| f.path == project.join(".mcp.json"))
        .unwrap();
    assert_eq!(project_file.scope, Scope::Project(project.clone()));
    assert_eq!(
        found
            .iter()
            .find(|f| f.path.ends_with(".continue/mcpServers/claude.json"))
            .unwrap()
            .dialect,
        Dialect::McpServers
    );
    // Without the shared Cline file, the legacy one is what Cline reads.
    std::fs::remove_file(h.join(".cline/data/settings/cline_mcp_settings.json")).unwrap();
    let legacy = detect(&env)
        .into_iter()
        .find(|f| f.client == ClientId::Cline)
        .unwrap();
    assert!(legacy.active);
}

/// A sandboxed server reads none of the files Warden reads other servers' keys from: each
/// client's user file (and VS Code's profiles) lies in a path the sandbox hides.
#[test]
fn every_client_file_is_hidden_from_a_sandboxed_server() {
    let (_keep, env) = home();
    std::fs::create_dir_all(env.home.join(".config/Code/User/profiles/work")).unwrap();
    let places = warden_bridge::sandbox::Places {
        homes: vec![env.home.clone()],
        ..Default::default()
    };
    let hidden = places.listed_hidden(&Default::default());
    let shown: Vec<PathBuf> = candidates(&env)
        .into_iter()
        .filter(|f| f.scope == Scope::User && !hidden.iter().any(|h| f.path.starts_with(h)))
        .map(|f| f.path)
        .collect();
    assert!(shown.is_empty(), "not hidden: {shown:?}");
}

#[test]
fn clients_honours_xdg_and_overrides() {
    let (dir, mut env) = home();
    let h = dir.path();
    env.xdg_config_home = Some(h.join("xdg"));
    env.vars.insert(
        "CODEX_HOME".to_owned(),
        h.join("codex-home").display().to_string(),
    );
    env.vars.insert(
        "CLAUDE_CONFIG_DIR".to_owned(),
        h.join("claude-cfg").display().to_string(),
    );
    env.vars.insert(
        "CLINE_DIR".to_owned(),
        h.join("cline-dir").display().to_string(),
    );
    let paths: Vec<PathBuf> = candidates(&env).into_iter().map(|f| f.path).collect();
    for want in [
        "xdg/zed/settings.json",
        "xdg/goose/config.yaml",
        "xdg/opencode/opencode.json",
        "xdg/Claude/claude_desktop_config.json",
        "xdg/Code/User/mcp.json",
        "codex-home/config.toml",
        "claude-cfg/.claude.json",
        "cline-dir/data/settings/cline_mcp_settings.json",
    ] {
        assert!(paths.contains(&h.join(want)), "{want} missing");
    }
}

#[test]
fn clients_windows_and_macos_paths() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let mut env = ClientEnv::with_home(h, Os::Windows);
    env.appdata = Some(h.join("Roaming"));
    env.localappdata = Some(h.join("Local"));
    let json = r#"{"mcpServers": {"a": {"command": "cmd", "args": ["/c", "npx", "x"]}}}"#;
    let msix = h.join(
        "Local/Packages/Claude_pzs8sxrjxfjjc/LocalCache/Roaming/Claude/claude_desktop_config.json",
    );
    let legacy = h.join("Roaming/Claude/claude_desktop_config.json");
    put(&msix, json);
    put(&legacy, json);
    let found = detect(&env);
    let m = found.iter().find(|f| f.path == msix).unwrap();
    let l = found.iter().find(|f| f.path == legacy).unwrap();
    assert!(m.active);
    assert!(!l.active, "%APPDATA% is not read by the MSIX install");
    assert!(l.note.as_deref().unwrap().contains("MSIX"));
    let paths: Vec<PathBuf> = candidates(&env).into_iter().map(|f| f.path).collect();
    for want in [
        "Roaming/Zed/settings.json",
        "Roaming/Block/goose/config/config.yaml",
        "Roaming/Code/User/mcp.json",
        "Roaming/Cursor/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
        ".cursor/mcp.json",
        ".codeium/windsurf/mcp_config.json",
        ".config/opencode/opencode.json",
    ] {
        assert!(paths.contains(&h.join(want)), "windows: {want} missing");
    }
    let env = ClientEnv::with_home(h, Os::Macos);
    let paths: Vec<PathBuf> = candidates(&env).into_iter().map(|f| f.path).collect();
    for want in [
        "Library/Application Support/Claude/claude_desktop_config.json",
        "Library/Application Support/Code/User/mcp.json",
        ".config/zed/settings.json",
        ".config/goose/config.yaml",
    ] {
        assert!(paths.contains(&h.join(want)), "macos: {want} missing");
    }
}

#[test]
fn clients_infers_the_client_of_a_named_file() {
    let cases = [
        ("/x/.cursor/mcp.json", ClientId::Cursor, Dialect::McpServers),
        (
            "/h/.claude.json",
            ClientId::ClaudeCode,
            Dialect::ClaudeCodeUser,
        ),
        ("/p/.vscode/mcp.json", ClientId::Vscode, Dialect::Vscode),
        ("/h/.codex/config.toml", ClientId::Codex, Dialect::Codex),
        (
            "/h/.config/goose/config.yaml",
            ClientId::Goose,
            Dialect::Goose,
        ),
        (
            "/p/.continue/mcpServers/a.yaml",
            ClientId::Continue,
            Dialect::ContinueYaml,
        ),
        ("/h/.config/zed/settings.json", ClientId::Zed, Dialect::Zed),
    ];
    for (p, client, dialect) in cases {
        let f = ConfigFile::infer(Path::new(p), None).unwrap();
        assert_eq!((f.client, f.dialect), (client, dialect), "{p}");
    }
    assert!(ConfigFile::infer(Path::new("/tmp/whatever.json"), None).is_none());
}

// ---------------------------------------------------------------- file operations

#[test]
fn clients_wrap_then_unwrap_restores_bytes_and_lists_state() {
    let (dir, env) = home();
    let path = dir.path().join(".cursor/mcp.json");
    put(&path, CURSOR);
    let changes = wrap(&env, &opts(Filter::default())).unwrap();
    assert_eq!(changes.len(), 1);
    let c = &changes[0];
    assert!(c.error.is_none(), "{:?}", c.error);
    assert!(c.written);
    assert_eq!(c.changed.len(), 2);
    assert!(c.backup.is_some());
    assert!(
        c.diff
            .contains("+      \"command\": \"/opt/warden/bin/warden\","),
        "{}",
        c.diff
    );
    assert!(c.notices.iter().any(|n| n.kind == NoticeKind::Approval));
    let listing = list(&env);
    let servers = &listing[0].servers;
    assert!(matches!(
        &servers[0].state,
        EntryState::Wrapped { command, args, server, .. }
            if command == "npx" && args == &["-y", "mcp-ripgrep"] && server.as_deref() == Some("rg")
    ));
    assert_eq!(servers[0].env_keys, ["K"]);
    // Wrapping again writes nothing.
    let again = wrap(&env, &opts(Filter::default())).unwrap();
    assert!(!again[0].written && again[0].changed.is_empty());
    assert_eq!(again[0].skipped.len(), 2);
    // Unwrap: the entry without args loses the args Warden added.
    let back = unwrap(&env, &UnwrapOptions::default()).unwrap();
    assert!(back[0].written);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), CURSOR);
}

/// A file as Windows editors leave it (a BOM, CRLF line ends) under `%APPDATA%`, wrapped with
/// a Windows `warden.exe` path: the BOM stays first, every line end stays CRLF, the path is
/// escaped, and unwrapping gives back the same bytes.
#[test]
fn clients_windows_files_keep_their_bom_and_crlf() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let mut env = ClientEnv::with_home(h, Os::Windows);
    env.appdata = Some(h.join("Roaming"));
    env.localappdata = Some(h.join("Local"));
    let path = h.join("Roaming/Claude/claude_desktop_config.json");
    let original = "\u{feff}{\r\n  \"mcpServers\": {\r\n    \"rg\": {\r\n      \"command\": \"npx\",\r\n      \"args\": [\"-y\", \"mcp-ripgrep\"]\r\n    }\r\n  }\r\n}\r\n";
    put(&path, original);
    let mut o = opts(Filter::default());
    o.warden = PathBuf::from(r"C:\Program Files\MCP Warden\warden.exe");
    let changes = wrap(&env, &o).unwrap();
    let c = changes.iter().find(|c| c.file.path == path).unwrap();
    assert!(c.error.is_none() && c.written, "{:?}", c.error);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with('\u{feff}'),
        "the BOM stays first: {text:?}"
    );
    assert_eq!(text.matches('\u{feff}').count(), 1, "{text:?}");
    assert!(
        text.match_indices('\n')
            .all(|(i, _)| i > 0 && &text[i - 1..i] == "\r"),
        "every line ends with CRLF: {text:?}"
    );
    assert!(
        text.contains(r#""command": "C:\\Program Files\\MCP Warden\\warden.exe""#),
        "{text}"
    );
    let back = unwrap(&env, &UnwrapOptions::default()).unwrap();
    assert!(back.iter().any(|c| c.file.path == path && c.written));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
}

#[test]
#[cfg_attr(windows, ignore = "POSIX paths in the test")]
fn clients_dry_run_writes_nothing() {
    let (dir, env) = home();
    let path = dir.path().join(".cursor/mcp.json");
    put(&path, CURSOR);
    let mut o = opts(Filter::default());
    o.dry_run = true;
    let changes = wrap(&env, &o).unwrap();
    assert!(!changes[0].written);
    assert!(changes[0].diff.starts_with("--- /"), "{}", changes[0].diff);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), CURSOR);
    assert!(backups(&env.state_dir).unwrap().is_empty());
}

#[test]
fn clients_filters_by_client_file_and_server() {
    let (dir, env) = home();
    let cursor = dir.path().join(".cursor/mcp.json");
    let kiro = dir.path().join(".kiro/settings/mcp.json");
    put(&cursor, CURSOR);
    put(&kiro, CURSOR);
    let mut f = Filter {
        client: Some(ClientId::Kiro),
        ..Filter::default()
    };
    f.server = Some("rg".to_owned());
    let changes = wrap(&env, &opts(f)).unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].file.client, ClientId::Kiro);
    assert_eq!(changes[0].changed.len(), 1);
    assert_eq!(std::fs::read_to_string(&cursor).unwrap(), CURSOR);
    let by_file = wrap(
        &env,
        &opts(Filter {
            file: Some(cursor.clone()),
            ..Filter::default()
        }),
    )
    .unwrap();
    assert_eq!(by_file.len(), 1);
    assert_eq!(by_file[0].file.path, cursor);
    // A file outside detection, with --client.
    let other = dir.path().join("elsewhere/servers.json");
    put(&other, CURSOR);
    let named = wrap(
        &env,
        &opts(Filter {
            client: Some(ClientId::Windsurf),
            file: Some(other.clone()),
            server: None,
        }),
    )
    .unwrap();
    assert!(named[0].written);
    let unknown = wrap(
        &env,
        &opts(Filter {
            file: Some(other),
            ..Filter::default()
        }),
    );
    assert!(matches!(unknown, Err(ClientError::UnknownFile { .. })));
}

#[test]
#[cfg_attr(
    windows,
    ignore = "the message's path has the file's own separators, the test's mixed ones"
)]
fn clients_malformed_file_is_refused_and_untouched() {
    let (dir, env) = home();
    let path = dir.path().join(".cursor/mcp.json");
    let bad =
        "{\n  \"mcpServers\": {\n    \"a\": { \"command\": \"npx\" }\n    \"b\": {}\n  }\n}\n";
    put(&path, bad);
    let changes = wrap(&env, &opts(Filter::default())).unwrap();
    let err = changes[0].error.as_ref().unwrap().to_string();
    assert!(err.contains(&format!("{}:4:5:", path.display())), "{err}");
    assert!(err.contains("not changed"), "{err}");
    assert!(err.contains("Fix:"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), bad);
    assert!(backups(&env.state_dir).unwrap().is_empty());
    let listing = list(&env);
    assert!(listing[0].error.is_some());
}

#[cfg(unix)]
#[test]
fn clients_follows_symlinks_and_keeps_the_mode() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, env) = home();
    let real = dir.path().join("dotfiles/cursor-mcp.json");
    put(&real, CURSOR);
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let changes = wrap(&env, &opts(Filter::default())).unwrap();
    assert!(changes[0].written, "{:?}", changes[0].error);
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(&real).unwrap().contains(WARDEN));
    assert_eq!(
        std::fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o640
    );
    // No temp files left behind.
    let left: Vec<_> = std::fs::read_dir(real.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
}

#[cfg(unix)]
#[test]
fn clients_read_only_file_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, env) = home();
    let path = dir.path().join(".cursor/mcp.json");
    put(&path, CURSOR);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let changes = wrap(&env, &opts(Filter::default())).unwrap();
    assert!(matches!(
        changes[0].error,
        Some(ClientError::ReadOnly { .. })
    ));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), CURSOR);
}

fn append_marker(path: &Path, n: u32) {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.replacen("{", &format!("{{\n  \"marker{n}\": {n},"), 1);
    std::fs::write(path, text).unwrap();
}

#[test]
fn clients_redoes_the_edit_when_the_client_wrote_meanwhile() {
    let (dir, env) = home();
    let state = env.state_dir.clone();
    let path = dir.path().join("mcp.json");
    put(&path, CURSOR);
    let mut edit = |bytes: &[u8]| {
        let text = std::str::from_utf8(bytes).unwrap();
        Ok(Some(
            wrap_text(Dialect::McpServers, text, WARDEN, &|_| true)
                .unwrap()
                .text
                .into_bytes(),
        ))
    };
    let written = update_file_with(
        &path,
        LockKind::None,
        (&state, ClientId::Cursor),
        &mut edit,
        &mut || Ok(()),
        &mut |p, attempt| {
            if attempt == 1 {
                append_marker(p, 1);
            }
        },
    )
    .unwrap();
    assert!(written.written);
    assert_eq!(written.attempts, 2);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("\"marker1\": 1"),
        "the client's write was lost"
    );
    assert!(text.contains(WARDEN));

    // A file that changes on every attempt: give up, keep the client's content.
    std::fs::write(&path, CURSOR).unwrap();
    let err = update_file_with(
        &path,
        LockKind::None,
        (&state, ClientId::Cursor),
        &mut edit,
        &mut || Ok(()),
        &mut |p, a| {
            append_marker(p, 100 + a);
        },
    )
    .unwrap_err();
    assert!(matches!(err, ClientError::Busy { .. }), "{err}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(&format!("marker{}", 100 + write::MAX_ATTEMPTS)));
}

#[test]
fn clients_waits_for_clines_lock() {
    let (dir, env) = home();
    let path = dir
        .path()
        .join(".cline/data/settings/cline_mcp_settings.json");
    put(&path, CURSOR);
    let held = lock::acquire(LockKind::ClineDir, &path, lock::TIMEOUT).unwrap();
    let (events_tx, dir_events) = mpsc::channel();
    let mut dir_watch = notify::recommended_watcher(move |e: notify::Result<notify::Event>| {
        if let Ok(e) = e {
            let _ = events_tx.send(e);
        }
    })
    .unwrap();
    notify::Watcher::watch(
        &mut dir_watch,
        path.parent().unwrap(),
        notify::RecursiveMode::NonRecursive,
    )
    .unwrap();
    let (tx, rx) = mpsc::channel();
    let env2 = env.clone();
    let t = std::thread::spawn(move || {
        let c = wrap(&env2, &opts(Filter::default())).unwrap();
        tx.send(Instant::now()).unwrap();
        c
    });
    // Each attempt to take the lock shows as a staging directory next to it: a second one
    // means the first found the lock held.
    let staging = format!(
        "{}.tmp.",
        lock::lock_dir(&path).file_name().unwrap().to_string_lossy()
    );
    let mut attempts = 0;
    while attempts < 2 {
        let event = dir_events.recv_timeout(Duration::from_secs(5)).unwrap();
        let is_attempt = matches!(event.kind, notify::EventKind::Create(_))
            && event.paths.iter().any(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(&staging))
            });
        attempts += usize::from(is_attempt);
    }
    assert!(rx.try_recv().is_err(), "wrote while Cline held its lock");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), CURSOR);
    let released = Instant::now();
    drop(held);
    let done = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(done >= released);
    let changes = t.join().unwrap();
    assert!(changes[0].written, "{:?}", changes[0].error);
    assert!(!lock::lock_dir(&path).exists(), "lock left behind");
}

#[test]
fn clients_backups_are_kept_per_file_and_restore() {
    let (dir, env) = home();
    let path = dir.path().join(".cursor/mcp.json");
    put(&path, CURSOR);
    for _ in 0..8 {
        assert!(wrap(&env, &opts(Filter::default())).unwrap()[0].written);
        assert!(unwrap(&env, &UnwrapOptions::default()).unwrap()[0].written);
    }
    let all = backups(&env.state_dir).unwrap();
    assert_eq!(all.len(), backup::KEEP_PER_FILE);
    assert!(all.windows(2).all(|w| w[0].id > w[1].id), "newest first");
    let canonical = std::fs::canonicalize(&path).unwrap();
    assert!(all.iter().all(|b| b.original == canonical));
    // The newest backup is the wrapped state (taken before the last unwrap).
    let newest = &all[0];
    let out = restore(&env, &newest.id, false).unwrap();
    assert!(out.written);
    assert!(out.previous.is_some());
    assert!(std::fs::read_to_string(&path).unwrap().contains(WARDEN));
    // A dry run shows the diff and writes nothing; restoring a deleted file recreates it.
    let plain = all
        .iter()
        .find(|b| std::fs::read(&b.file).unwrap() == CURSOR.as_bytes())
        .unwrap();
    let dry = restore(&env, &plain.id, true).unwrap();
    assert!(
        !dry.written
            && dry
                .diff
                .contains("-      \"command\": \"/opt/warden/bin/warden\"")
    );
    std::fs::remove_file(&path).unwrap();
    restore(&env, &plain.id, false).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), CURSOR);
    assert!(matches!(
        restore(&env, "no-such-backup", false),
        Err(ClientError::NoSuchBackup { .. })
    ));
}

#[test]
fn clients_every_client_gets_notices() {
    let (dir, env) = home();
    for c in ClientId::ALL {
        let f = ConfigFile::infer(&dir.path().join("x.json"), Some(c)).unwrap();
        assert!(!notices_for(&f, &env).is_empty(), "{c}");
    }
    let f = ConfigFile::infer(
        &dir.path().join("mcp_config.json"),
        Some(ClientId::Windsurf),
    )
    .unwrap();
    assert!(
        notices_for(&f, &env)
            .iter()
            .any(|n| n.kind == NoticeKind::Allowlist)
    );
    let f = ConfigFile::infer(&dir.path().join("c.json"), Some(ClientId::ClaudeDesktop)).unwrap();
    assert!(
        notices_for(&f, &env)
            .iter()
            .any(|n| n.kind == NoticeKind::Restart)
    );
}

// ---------------------------------------------------------------- watcher

fn rename_write(path: &Path, text: &str) {
    let tmp = path.with_extension("client-tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

type Reports = tokio::sync::mpsc::UnboundedReceiver<WatchReport>;

/// The auto-rewrite switch a test watcher starts with.
#[derive(Clone, Copy)]
enum Auto {
    Off,
    Ask,
    WithoutAsking,
}

/// Starts a watcher and waits until it is ready (armed, first snapshot taken).
async fn start_watch(env: ClientEnv, auto: Auto) -> (ClientWatcher, Reports) {
    let mut o = WatchOptions::new(PathBuf::from(WARDEN));
    o.auto_rewrite = !matches!(auto, Auto::Off);
    o.without_asking = matches!(auto, Auto::WithoutAsking);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let watcher = ClientWatcher::start(env, o, move |r| {
        let _ = tx.send(r);
    })
    .unwrap();
    tokio::time::timeout(Duration::from_secs(5), watcher.progress().ready())
        .await
        .expect("the watcher is ready in time")
        .expect("the watcher runs");
    (watcher, rx)
}

async fn next(rx: &mut Reports) -> WatchReport {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("a watcher report in time")
        .expect("the watcher runs")
}

/// Waits until the watcher processed a change of `path` made after `since` passes.
async fn processed(watcher: &ClientWatcher, path: &Path, since: u64) {
    tokio::time::timeout(
        Duration::from_secs(5),
        watcher.progress().processed(path, since),
    )
    .await
    .expect("the change is processed in time")
    .expect("the watcher runs");
}

/// A config file with no servers, changed to show that the watcher processed everything
/// before: it handles changes in order, and this one reports nothing.
const MARKER: &str = ".kiro/settings/mcp.json";
const NO_SERVERS: &str = "{\n  \"mcpServers\": {}\n}\n";

async fn change_marker_and_wait(watcher: &ClientWatcher, marker: &Path) {
    let since = watcher.progress().passes();
    let text = std::fs::read_to_string(marker).unwrap();
    rename_write(marker, &format!("{text}\n"));
    processed(watcher, marker, since).await;
}

const ONE: &str = "{\n  \"mcpServers\": {\n    \"rg\": { \"command\": \"npx\", \"args\": [\"mcp-ripgrep\"] }\n  }\n}\n";
const TWO: &str = "{\n  \"mcpServers\": {\n    \"rg\": { \"command\": \"npx\", \"args\": [\"mcp-ripgrep\"] },\n    \"new\": { \"command\": \"uvx\", \"args\": [\"mcp-new\"] }\n  }\n}\n";

#[tokio::test]
async fn clients_watcher_wraps_new_servers_quickly_and_ignores_its_own_writes() {
    let (dir, env) = home();
    let path = dir.path().join(".cursor/mcp.json");
    let marker = dir.path().join(MARKER);
    put(&path, ONE);
    put(&marker, NO_SERVERS);
    let (watcher, mut rx) = start_watch(env, Auto::WithoutAsking).await;
    // Existing servers are left as they are; only new ones are wrapped.
    let added = Instant::now();
    rename_write(&path, TWO);
    match next(&mut rx).await {
        WatchReport::Wrapped {
            servers, notices, ..
        } => {
            assert!(
                added.elapsed() < Duration::from_millis(1500),
                "{:?}",
                added.elapsed()
            );
            assert_eq!(servers.len(), 1);
            assert_eq!(servers[0].name, "new");
            assert!(notices.iter().any(|n| n.kind == NoticeKind::Approval));
        }
        other => panic!("{other:?}"),
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"--server\", \"new\""));
    assert!(
        text.contains("\"rg\": { \"command\": \"npx\""),
        "rg was not new"
    );
    // Its own write produces no further report.
    change_marker_and_wait(&watcher, &marker).await;
    assert!(rx.try_recv().is_err());
    watcher.stop();
}

#[tokio::test]
async fn clients_watcher_reports_only_when_auto_rewrite_is_off() {
    let (dir, env) = home();
    let path = dir.path().join(".kiro/settings/mcp.json");
    put(&path, ONE);
    let (watcher, mut rx) = start_watch(env, Auto::Off).await;
    assert!(!watcher.auto_rewrite());
    rename_write(&path, TWO);
    match next(&mut rx).await {
        WatchReport::NewServers { servers, .. } => assert_eq!(servers[0].name, "new"),
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), TWO);
}

/// Auto-rewrite asks first (its default): a new server is reported and awaits approval, the
/// file stays as the client wrote it; one the user keeps unwrapped is no longer asked about,
/// and not wrapped even without asking.
#[tokio::test]
async fn clients_watcher_asks_before_wrapping_and_respects_keep_unwrapped() {
    let (dir, env) = home();
    let path = dir.path().join(".cursor/mcp.json");
    put(&path, ONE);
    let (watcher, mut rx) = start_watch(env.clone(), Auto::Ask).await;
    let since = watcher.progress().passes();
    rename_write(&path, TWO);
    match next(&mut rx).await {
        WatchReport::NewServers { servers, .. } => assert_eq!(servers[0].name, "new"),
        other => panic!("{other:?}"),
    }
    // The report comes from inside the pass: let it finish.
    processed(&watcher, &path, since).await;
    assert_eq!(std::fs::read_to_string(&path).unwrap(), TWO);
    let names = |env: &ClientEnv| -> Vec<String> {
        awaiting(env, &list(env))
            .into_iter()
            .map(|(_, s)| s.name)
            .collect()
    };
    assert_eq!(names(&env), ["rg", "new"]);
    let filter = Filter {
        server: Some("new".into()),
        ..Filter::default()
    };
    assert_eq!(keep_unwrapped(&env, &filter).unwrap(), ["new"]);
    assert_eq!(names(&env), ["rg"]);
    // Removed and added again while wrapping without asking: still kept as it is, and
    // nothing is reported about it.
    watcher.set_without_asking(true);
    let since = watcher.progress().passes();
    rename_write(&path, ONE);
    processed(&watcher, &path, since).await;
    let since = watcher.progress().passes();
    rename_write(&path, TWO);
    processed(&watcher, &path, since).await;
    assert!(rx.try_recv().is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), TWO);
}

#[tokio::test]
async fn clients_watcher_backs_off_from_a_client_that_keeps_reverting() {
    let (dir, env) = home();
    let path = dir.path().join(".cursor/mcp.json");
    let marker = dir.path().join(MARKER);
    put(&path, ONE);
    put(&marker, NO_SERVERS);
    let (watcher, mut rx) = start_watch(env.clone(), Auto::WithoutAsking).await;
    rename_write(&path, TWO);
    assert!(matches!(next(&mut rx).await, WatchReport::Wrapped { .. }));
    // The client puts the original back, again and again.
    for round in 1..=3 {
        rename_write(&path, TWO);
        match next(&mut rx).await {
            WatchReport::Reverted { count, servers, .. } if round < 3 => {
                assert_eq!(count, round);
                assert_eq!(servers[0].name, "new");
                assert!(matches!(next(&mut rx).await, WatchReport::Wrapped { .. }));
            }
            WatchReport::GaveUp {
                reverts, message, ..
            } if round == 3 => {
                assert_eq!(reverts, 3);
                assert!(message.contains("leaves"), "{message}");
            }
            other => panic!("round {round}: {other:?}"),
        }
    }
    // Left alone: no more rewrites.
    change_marker_and_wait(&watcher, &marker).await;
    assert!(rx.try_recv().is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), TWO);
    assert_eq!(watcher.given_up(), std::slice::from_ref(&path));
}

#[tokio::test]
async fn clients_watcher_respects_a_user_unwrap() {
    let (dir, env) = home();
    let path = dir.path().join(".cursor/mcp.json");
    put(&path, ONE);
    assert!(wrap(&env, &opts(Filter::default())).unwrap()[0].written);
    let (watcher, mut rx) = start_watch(env.clone(), Auto::WithoutAsking).await;
    let since = watcher.progress().passes();
    assert!(unwrap(&env, &UnwrapOptions::default()).unwrap()[0].written);
    processed(&watcher, &path, since).await;
    assert!(rx.try_recv().is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), ONE);
}

/// A wrap made outside the watcher (the app's Wrap button, through the supervisor) that the
/// client reverts at once, before the watcher's next pass: told of the wrap, the watcher
/// sees the revert (the two writes do not merge into one unchanged-looking pass).
#[tokio::test]
async fn clients_watcher_told_of_a_wrap_sees_an_immediate_revert() {
    let (dir, env) = home();
    let path = dir.path().join(".cursor/mcp.json");
    put(&path, ONE);
    let (watcher, mut rx) = start_watch(env.clone(), Auto::Off).await;
    let change = wrap(&env, &opts(Filter::default())).unwrap().remove(0);
    watcher.wrote(&path, change.new_text.as_deref().unwrap());
    rename_write(&path, ONE);
    match next(&mut rx).await {
        WatchReport::Reverted { servers, count, .. } => {
            assert_eq!((servers[0].name.as_str(), count), ("rg", 1));
        }
        other => panic!("{other:?}"),
    }
}

/// Secrets moved by wrap and written back by unwrap, in every syntax, with a map standing in
/// for the keychain (the real one is tested through the CLI).
#[test]
fn clients_secrets_round_trip_in_every_syntax() {
    use std::cell::RefCell;
    use std::collections::BTreeMap;
    let cases: &[(Dialect, &str)] = &[
        (
            Dialect::McpServers,
            "{\"mcpServers\": {\"gh\": {\"command\": \"npx\", \"args\": [\"-y\", \"gh-mcp\"],\n  \"env\": {\"GITHUB_TOKEN\": \"ghp_1\", \"NODE_ENV\": \"x\", \"API_KEY\": \"${env:K}\"}}}}\n",
        ),
        (
            Dialect::Codex,
            "[mcp_servers.gh]\ncommand = \"npx\"\nargs = [\"gh-mcp\"]\n\n[mcp_servers.gh.env]\nGITHUB_TOKEN = 'ghp_1'\nNODE_ENV = \"x\"\n",
        ),
        (
            Dialect::Goose,
            "extensions:\n  gh:\n    cmd: npx\n    args:\n      - gh-mcp\n    envs:\n      GITHUB_TOKEN: ghp_1\n      NODE_ENV: x\n",
        ),
    ];
    for (dialect, text) in cases {
        let stored: RefCell<BTreeMap<String, String>> = RefCell::default();
        let check = |_: &str, _: &str, _: &str| Ok(());
        let w = wrap_text_with(*dialect, text, WARDEN, &|_| true, Some(&check)).unwrap();
        assert_eq!(w.moved.len(), 1, "{dialect:?}: {w:?}");
        for m in &w.moved {
            stored
                .borrow_mut()
                .insert(format!("{}/{}", m.server, m.var), m.value.clone());
        }
        assert!(!w.text.contains("ghp_1"), "{}", w.text);
        assert!(w.text.contains(PLACEHOLDER) && w.text.contains("--secret-env"));
        let servers = edit::entries(ClientId::Cursor, *dialect, &w.text).unwrap();
        let EntryState::Wrapped { server, .. } = &servers[0].state else {
            panic!("{dialect:?}: not wrapped: {}", w.text);
        };
        assert_eq!(server.as_deref(), Some("gh"));

        // Without the keychain, unwrap leaves the entry alone and says why.
        let refused = unwrap_text(*dialect, &w.text, &|_| true, &w.records).unwrap();
        assert!(refused.changed.is_empty(), "{dialect:?}");

        let lookup = |server: &str, var: &str| {
            stored
                .borrow()
                .get(&format!("{server}/{var}"))
                .cloned()
                .ok_or_else(|| "missing".to_owned())
        };
        let u = unwrap_text_with(
            *dialect,
            &w.text,
            &|_| true,
            &w.records,
            &w.secret_records,
            &lookup,
        )
        .unwrap();
        assert_eq!(u.text, *text, "{dialect:?}: unwrap is exact");
    }
}

/// Wrapped already (say by auto-rewrite): `--move-secrets` still moves the values, and a
/// value the keychain holds differently stays, with the reason.
#[test]
fn clients_secrets_move_from_wrapped_entries_and_conflicts_stay() {
    let text = "{\"mcpServers\": {\"gh\": {\"command\": \"npx\", \"args\": [\"gh-mcp\"], \"env\": {\"GITHUB_TOKEN\": \"ghp_1\", \"OPENAI_API_KEY\": \"sk-2\"}}}}";
    let wrapped = wrap_text(Dialect::McpServers, text, WARDEN, &|_| true).unwrap();
    let check = |_: &str, var: &str, _: &str| {
        if var == "OPENAI_API_KEY" {
            Err("the keychain holds another value".to_owned())
        } else {
            Ok(())
        }
    };
    let w = wrap_text_with(
        Dialect::McpServers,
        &wrapped.text,
        WARDEN,
        &|_| true,
        Some(&check),
    )
    .unwrap();
    assert_eq!(w.changed.len(), 1);
    assert_eq!(
        w.moved.iter().map(|m| m.var.as_str()).collect::<Vec<_>>(),
        ["GITHUB_TOKEN"]
    );
    assert!(
        w.text
            .contains("\"bridge\", \"--secret-env\", \"GITHUB_TOKEN\", \"--server\""),
        "{}",
        w.text
    );
    assert!(w.text.contains("sk-2"), "{}", w.text);
    assert!(
        w.skipped
            .iter()
            .any(|(_, why)| why.starts_with("OPENAI_API_KEY stays in the file: the keychain holds")),
        "{:?}",
        w.skipped
    );
}

/// What the consent window flags, read from the argv alone.
#[test]
fn clients_risks_flag_sudo_shell_lines_and_unpinned_packages() {
    let kinds = |cmd: &str, args: &[&str]| -> Vec<RiskKind> {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        risks(cmd, &args).into_iter().map(|r| r.kind).collect()
    };
    use RiskKind::{RunnerOption, Shell, Sudo, Unpinned};
    // Package runners: an exact version is pinned, a tag, a range or nothing is not.
    assert_eq!(
        kinds(
            "npx",
            &["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
        ),
        [Unpinned]
    );
    assert_eq!(
        kinds("npx", &["-y", "@modelcontextprotocol/server-memory@latest"]),
        [Unpinned]
    );
    assert_eq!(
        kinds("npx", &["-y", "@upstash/context7-mcp@^1.0"]),
        [Unpinned]
    );
    assert!(
        kinds(
            "npx",
            &["-y", "@modelcontextprotocol/server-memory@2025.8.4"]
        )
        .is_empty()
    );
    // Pinned, but `--package` and `--from` name what is installed: flagged as runner options.
    assert_eq!(
        kinds(
            "/usr/bin/npx",
            &["--package=mcp-remote@0.1.29", "mcp-remote"]
        ),
        [RunnerOption]
    );
    assert_eq!(kinds("uvx", &["mcp-server-fetch"]), [Unpinned]);
    assert!(kinds("uvx", &["mcp-server-fetch==2025.4.7"]).is_empty());
    assert_eq!(
        kinds(
            "uvx",
            &["--from", "mcp-server-git@2025.1.14", "mcp-server-git"]
        ),
        [RunnerOption]
    );
    assert_eq!(kinds("pnpm", &["dlx", "some-mcp"]), [Unpinned]);
    assert_eq!(
        kinds("C:\\Program Files\\nodejs\\npx.cmd", &["-y", "x-mcp@next"]),
        [Unpinned]
    );
    // Local things are what they are.
    assert!(kinds("npx", &["-y", "./my-server"]).is_empty());
    assert!(kinds("node", &["/opt/server/index.js"]).is_empty());
    assert!(kinds("npm", &["run", "mcp"]).is_empty());
    // Root, and what runs as root.
    assert_eq!(kinds("sudo", &["-E", "npx", "-y", "srv"]), [Sudo, Unpinned]);
    assert!(kinds("sudoku-mcp", &[]).is_empty());
    // Shell lines, and what they run.
    assert_eq!(
        kinds("bash", &["-c", "curl -fsSL https://x.sh | sh"]),
        [Shell]
    );
    assert_eq!(kinds("sh", &["-c", "cd /srv && sudo ./run"]), [Shell, Sudo]);
    assert_eq!(
        kinds("cmd", &["/c", "npx", "-y", "srv@latest"]),
        [Shell, Unpinned]
    );
    assert!(kinds("bash", &["/opt/start.sh"]).is_empty());
    // Wrappers, option values and flag clusters do not hide what runs.
    assert_eq!(
        kinds("env", &["FOO=1", "sudo", "-u", "bob", "npx", "srv"]),
        [Sudo, Unpinned]
    );
    assert_eq!(
        kinds("timeout", &["30", "bash", "-ec", "curl x | sh"]),
        [Shell]
    );
    assert_eq!(
        kinds("uvx", &["--python", "3.12", "mcp-server-time"]),
        [Unpinned]
    );
    assert_eq!(kinds("npx", &["--cache", "/tmp/c", "srv@1.2"]), [Unpinned]);
    assert!(kinds("npx", &["--cache", "/tmp/c", "srv@1.2.3"]).is_empty());
    let piped = risks(
        "bash",
        &["-c".into(), "curl -fsSL https://x.sh | sh".into()],
    );
    assert!(piped[0].detail.contains("pipes into a shell"), "{piped:?}");
    let fix = risks("npx", &["-y".into(), "@scope/srv@latest".into()]);
    assert!(fix[0].detail.contains("@scope/srv@1.2.3"), "{fix:?}");
}

/// A server Warden wrapped that runs unwrapped again, not by `unwrap`, is listed as
/// reverted; one the user unwrapped is not.
#[test]
fn clients_list_marks_servers_the_client_reverted() {
    let (dir, env) = home();
    let path = dir.path().join(".cursor/mcp.json");
    put(&path, ONE);
    let reverted = |env: &ClientEnv| -> Vec<bool> {
        list(env)
            .into_iter()
            .flat_map(|l| l.servers)
            .map(|s| s.reverted)
            .collect()
    };
    assert_eq!(reverted(&env), [false]);
    assert!(wrap(&env, &opts(Filter::default())).unwrap()[0].written);
    put(&path, ONE);
    assert_eq!(reverted(&env), [true]);
    assert!(wrap(&env, &opts(Filter::default())).unwrap()[0].written);
    assert!(unwrap(&env, &UnwrapOptions::default()).unwrap()[0].written);
    assert_eq!(reverted(&env), [false]);
    // Wrapped again, then a backup from before is restored: the user's choice, not drift.
    let change = wrap(&env, &opts(Filter::default())).unwrap().remove(0);
    restore(&env, &change.backup.unwrap(), false).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), ONE);
    assert_eq!(reverted(&env), [false]);
}

/// The probe starts a server where its client would: the entry's `cwd` is read in each
/// format (JSON, TOML, YAML), as written.
#[test]
fn launches_carry_the_entry_cwd() {
    let cwd_of = |dialect: Dialect, text: &str| -> Vec<Option<String>> {
        edit::launches(dialect, text)
            .unwrap()
            .into_iter()
            .map(|l| l.cwd)
            .collect()
    };
    assert_eq!(
        cwd_of(
            Dialect::McpServers,
            r#"{"mcpServers": {"a": {"command": "srv", "cwd": "/w/a"}, "b": {"command": "srv"}}}"#
        ),
        [Some("/w/a".to_owned()), None]
    );
    assert_eq!(
        cwd_of(
            Dialect::Codex,
            "[mcp_servers.a]\ncommand = \"srv\"\ncwd = \"/w/a\"\n"
        ),
        [Some("/w/a".to_owned())]
    );
    assert_eq!(
        cwd_of(
            Dialect::ContinueYaml,
            "name: x\nversion: 0.0.1\nschema: v1\nmcpServers:\n  - name: a\n    command: srv\n    cwd: rel/dir\n"
        ),
        [Some("rel/dir".to_owned())]
    );
}

// ---------------------------------------------------------------- servers add/disable/enable/remove

/// Each client's user file (Linux paths under the temp home), with one server in it.
fn manage_files(h: &Path) -> Vec<(ClientId, PathBuf, &'static str)> {
    let json = "{\n  // mine\n  \"mcpServers\": {\n    \"a\": { \"command\": \"x\" }\n  },\n  \"other\": true\n}\n";
    vec![
        (
            ClientId::ClaudeDesktop,
            h.join(".config/Claude/claude_desktop_config.json"),
            json,
        ),
        (
            ClientId::ClaudeCode,
            h.join(".claude.json"),
            "{\n  \"mcpServers\": {\n    \"a\": {\"type\": \"stdio\", \"command\": \"x\", \"args\": [], \"env\": {}}\n  },\n  \"projects\": {}\n}\n",
        ),
        (
            ClientId::Cursor,
            h.join(".cursor/mcp.json"),
            "{\n\t\"mcpServers\": {\n\t\t\"a\": {\n\t\t\t\"command\": \"x\"\n\t\t}\n\t}\n}",
        ),
        (
            ClientId::Vscode,
            h.join(".config/Code/User/mcp.json"),
            "{\r\n   \"servers\": {\r\n      \"a\": {\"type\": \"stdio\", \"command\": \"x\"},\r\n   },\r\n}\r\n",
        ),
        (
            ClientId::Cline,
            h.join(".cline/data/settings/cline_mcp_settings.json"),
            json,
        ),
        (
            ClientId::Windsurf,
            h.join(".codeium/windsurf/mcp_config.json"),
            r#"{"mcpServers":{"a":{"command":"x"}}}"#,
        ),
        (
            ClientId::Zed,
            h.join(".config/zed/settings.json"),
            "// Zed\n{\n  \"theme\": \"One\",\n  \"context_servers\": {\n    \"a\": { \"command\": \"x\", \"args\": [] },\n  },\n}\n",
        ),
        (ClientId::GeminiCli, h.join(".gemini/settings.json"), json),
        (
            ClientId::Codex,
            h.join(".codex/config.toml"),
            "# codex\nmodel = \"o3\"\n\n[mcp_servers.a]\ncommand = \"x\"\n",
        ),
        (
            ClientId::Opencode,
            h.join(".config/opencode/opencode.json"),
            "{\n  \"mcp\": {\n    \"a\": { \"type\": \"local\", \"command\": [\"x\"] }\n  }\n}\n",
        ),
        (ClientId::Kiro, h.join(".kiro/settings/mcp.json"), json),
        (ClientId::LmStudio, h.join(".lmstudio/mcp.json"), json),
        (
            ClientId::Continue,
            h.join(".continue/config.yaml"),
            "name: c\nversion: 1.0.0\nschema: v1\nmcpServers:\n  - name: a  # first\n    command: x\n",
        ),
        (
            ClientId::Goose,
            h.join(".config/goose/config.yaml"),
            "GOOSE_MODEL: m\nextensions:\n    a:\n        cmd: x\n        enabled: true\n        type: stdio\n",
        ),
    ]
}

fn new_server(name: &str) -> NewEntry {
    NewEntry {
        name: name.to_owned(),
        command: "uvx".to_owned(),
        args: vec!["mcp-server-time==1.0.0".to_owned()],
        env: [("TZ".to_owned(), "UTC".to_owned())].into(),
        secret_env: vec!["API_KEY".to_owned()],
        ..Default::default()
    }
}

fn listed(env: &ClientEnv, path: &Path, name: &str) -> Option<ServerEntry> {
    let in_file = list(env)
        .into_iter()
        .find(|l| l.file.path == path)?
        .servers
        .into_iter()
        .find(|s| s.name == name);
    in_file.or_else(|| {
        stashed(env)
            .into_iter()
            .find(|(f, s)| f.path == path && s.name == name)
            .map(|(_, s)| s)
    })
}

#[test]
fn manage_every_client_add_remove_disable_enable_byte_exact() {
    let (dir, env) = home();
    let files = manage_files(dir.path());
    for (_, path, text) in &files {
        put(path, text);
    }
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    for (client, path, text) in &files {
        let opts = AddOptions {
            clients: vec![*client],
            entry: new_server("time"),
            warden: Some(PathBuf::from(WARDEN)),
            dry_run: false,
        };
        let changes = add(&env, &opts).unwrap();
        assert_eq!(changes.len(), 1, "{client}");
        let c = &changes[0];
        assert!(c.error.is_none(), "{client}: {:?}", c.error);
        assert!(c.written && c.backup.is_some(), "{client}");
        assert_eq!(c.file.path, *path);
        let added = read(path);
        assert!(added.contains("--secret-env"), "{client}:\n{added}");
        let entry = listed(&env, path, "time").unwrap_or_else(|| panic!("{client}: not listed"));
        assert!(entry.enabled, "{client}");
        assert!(
            matches!(entry.state, EntryState::Wrapped { .. }),
            "{client}"
        );

        // Off then on: the exact bytes of after the add.
        let off = set_enabled(&env, "time", &Selection::clients(&[*client]), false, false).unwrap();
        assert!(off[0].written, "{client}");
        let e = listed(&env, path, "time").unwrap_or_else(|| panic!("{client}: gone"));
        assert!(!e.enabled, "{client}: still on:\n{}", read(path));
        set_enabled(&env, "time", &Selection::clients(&[*client]), true, false).unwrap();
        assert_eq!(read(path), added, "{client}: disable then enable");
        assert!(listed(&env, path, "time").unwrap().enabled);

        // The server already there: off and on again, byte-exact.
        set_enabled(&env, "a", &Selection::clients(&[*client]), false, false).unwrap();
        assert!(!listed(&env, path, "a").unwrap().enabled, "{client}");
        set_enabled(&env, "a", &Selection::clients(&[*client]), true, false).unwrap();
        assert_eq!(read(path), added, "{client}: a off then on");

        let gone = remove(&env, "time", &Selection::clients(&[*client]), None, false).unwrap();
        assert_eq!(gone[0].secrets, vec!["time/API_KEY".to_owned()], "{client}");
        assert_eq!(read(path), *text, "{client}: add then remove");
        assert!(listed(&env, path, "time").is_none());
    }
}

#[test]
fn manage_enable_puts_a_kept_entry_back_when_the_file_changed() {
    let (dir, env) = home();
    let path = dir.path().join(".cursor/mcp.json");
    let text = "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"x\",\n      \"args\": [\"1\"]\n    },\n    \"b\": { \"command\": \"y\" }\n  }\n}\n";
    put(&path, text);
    set_enabled(
        &env,
        "a",
        &Selection::clients(&[ClientId::Cursor]),
        false,
        false,
    )
    .unwrap();
    let off = std::fs::read_to_string(&path).unwrap();
    assert!(!off.contains("\"a\""), "{off}");
    // Meanwhile the user edits the file.
    std::fs::write(&path, off.replace("\"y\"", "\"z\"")).unwrap();
    // Listed as off, kept by Warden; adding the name again is refused.
    assert!(!listed(&env, &path, "a").unwrap().enabled);
    let again = add(
        &env,
        &AddOptions {
            clients: vec![ClientId::Cursor],
            entry: new_server("a"),
            warden: Some(PathBuf::from(WARDEN)),
            dry_run: false,
        },
    );
    assert!(
        matches!(again, Err(ClientError::Exists { .. })),
        "{again:?}"
    );
    set_enabled(&env, "a", &Selection::default(), true, false).unwrap();
    let back = std::fs::read_to_string(&path).unwrap();
    assert!(
        back.contains("\"a\": {\n      \"command\": \"x\",\n      \"args\": [\"1\"]\n    }"),
        "the entry's own bytes:\n{back}"
    );
    assert!(back.contains("\"z\""));
    assert!(listed(&env, &path, "a").unwrap().enabled);
}

#[test]
fn manage_refusals_write_nothing() {
    let (dir, env) = home();
    let files = manage_files(dir.path());
    for (_, path, text) in &files {
        put(path, text);
    }
    let snapshot = || -> Vec<String> {
        files
            .iter()
            .map(|(_, p, _)| std::fs::read_to_string(p).unwrap())
            .collect()
    };
    let before = snapshot();
    let mut opts = AddOptions {
        clients: vec![ClientId::Cursor, ClientId::Codex],
        entry: new_server("a"),
        warden: Some(PathBuf::from(WARDEN)),
        dry_run: false,
    };
    // Already in the first file: refused, the second untouched too.
    let err = add(&env, &opts).unwrap_err();
    assert!(
        matches!(&err, ClientError::Exists { entry, .. } if entry.contains("\"command\"")),
        "{err}"
    );
    // Secrets without the bridge.
    opts.entry.name = "new".to_owned();
    opts.warden = None;
    assert!(matches!(
        add(&env, &opts),
        Err(ClientError::SecretsNeedBridge)
    ));
    // A client that is not installed.
    opts.warden = Some(PathBuf::from(WARDEN));
    opts.clients = vec![ClientId::Cursor, ClientId::LmStudio];
    std::fs::remove_file(dir.path().join(".lmstudio/mcp.json")).unwrap();
    std::fs::remove_dir(dir.path().join(".lmstudio")).unwrap();
    let err = add(&env, &opts).unwrap_err();
    assert!(
        err.to_string()
            .contains("LM Studio does not look installed"),
        "{err}"
    );
    put(&dir.path().join(".lmstudio/mcp.json"), files[11].2);
    // A malformed file among them.
    let codex = dir.path().join(".codex/config.toml");
    std::fs::write(&codex, "[mcp_servers.a\n").unwrap();
    opts.clients = vec![ClientId::Cursor, ClientId::Codex];
    assert!(matches!(add(&env, &opts), Err(ClientError::Parse { .. })));
    assert!(matches!(
        set_enabled(&env, "a", &Selection::default(), false, false),
        Err(ClientError::Parse { .. })
    ));
    assert!(matches!(
        remove(&env, "a", &Selection::default(), None, false),
        Err(ClientError::Parse { .. })
    ));
    std::fs::write(&codex, files[8].2).unwrap();
    // A missing name.
    assert!(matches!(
        remove(&env, "nope", &Selection::default(), None, false),
        Err(ClientError::NoSuchServer { .. })
    ));
    // Dry runs: diffs, nothing written.
    opts.dry_run = true;
    let dry = add(&env, &opts).unwrap();
    assert!(dry.iter().all(|c| !c.written && c.diff.contains("+")));
    assert!(
        set_enabled(&env, "a", &Selection::default(), false, true)
            .unwrap()
            .iter()
            .all(|c| !c.written)
    );
    assert!(
        remove(&env, "a", &Selection::default(), None, true)
            .unwrap()
            .iter()
            .all(|c| !c.written && !c.diff.is_empty())
    );
    // A read-only file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let cursor = dir.path().join(".cursor/mcp.json");
        std::fs::set_permissions(&cursor, std::fs::Permissions::from_mode(0o444)).unwrap();
        opts.dry_run = false;
        let err = add(&env, &opts).unwrap_err();
        assert!(matches!(err, ClientError::ReadOnly { .. }), "{err}");
        std::fs::set_permissions(&cursor, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    assert_eq!(snapshot(), before);
    assert!(
        backups(&env.state_dir).unwrap().is_empty(),
        "no backup either"
    );
}

#[test]
fn manage_add_creates_the_file_of_an_installed_client() {
    let (dir, env) = home();
    std::fs::create_dir_all(dir.path().join(".config/zed")).unwrap();
    std::fs::create_dir_all(dir.path().join(".codex")).unwrap();
    let opts = AddOptions {
        clients: vec![ClientId::Zed, ClientId::Codex],
        entry: new_server("time"),
        warden: None,
        dry_run: false,
    };
    let mut opts = opts;
    opts.entry.secret_env.clear();
    let changes = add(&env, &opts).unwrap();
    assert!(changes.iter().all(|c| c.written && c.error.is_none()));
    let zed = std::fs::read_to_string(dir.path().join(".config/zed/settings.json")).unwrap();
    assert!(zed.contains("\"context_servers\""), "{zed}");
    let codex = std::fs::read_to_string(dir.path().join(".codex/config.toml")).unwrap();
    assert_eq!(
        codex,
        "[mcp_servers.time]\ncommand = \"uvx\"\nargs = [\"mcp-server-time==1.0.0\"]\nenv = { TZ = \"UTC\" }\n"
    );
    // Back as before the add: the files it created are gone, the folders that were there stay.
    remove(&env, "time", &Selection::default(), None, false).unwrap();
    assert_eq!(
        [
            ".codex/config.toml",
            ".config/zed/settings.json",
            ".codex",
            ".config/zed"
        ]
        .map(|p| dir.path().join(p).exists()),
        [false, false, true, true]
    );
}

/// `add` planned to create a file that did not exist; the client created it between the
/// plan and the write: it is not replaced, but edited like any file (read again, backed up).
#[test]
fn manage_add_never_replaces_a_file_created_after_its_plan() {
    let (dir, env) = home();
    let path = dir.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let theirs = "{\n  \"mcpServers\": {\n    \"theirs\": { \"command\": \"uvx\", \"args\": [\"x\"] }\n  }\n}\n";
    write::BEFORE_CREATE.with(|h| {
        *h.borrow_mut() = Some(Box::new(move |p: &Path| std::fs::write(p, theirs).unwrap()));
    });
    let mut entry = new_server("time");
    entry.secret_env.clear();
    let opts = AddOptions {
        clients: vec![ClientId::Cursor],
        entry,
        warden: None,
        dry_run: false,
    };
    let changes = add(&env, &opts);
    write::BEFORE_CREATE.with(|h| h.borrow_mut().take());
    let changes = changes.unwrap();
    let c = &changes[0];
    assert!(c.error.is_none() && c.written, "{:?}", c.error);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("{\n  \"mcpServers\": {\n    \"theirs\""),
        "{text}"
    );
    assert!(text.contains("\"time\""), "{text}");
    let backup = c
        .backup
        .as_ref()
        .expect("the file created meanwhile is backed up");
    let kept = backups(&env.state_dir).unwrap();
    let kept = kept.iter().find(|b| &b.id == backup).unwrap();
    assert_eq!(std::fs::read_to_string(&kept.file).unwrap(), theirs);
    let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "mcp.json")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Wrap names each variable of the entry's `env` with `--pass-env`, in the file's order,
/// but those moved to the keychain, which `--secret-env` already gives the server.
#[test]
fn clients_wrap_passes_env_variables_in_file_order_but_moved_secrets() {
    let text = "{\"mcpServers\": {\"gh\": {\"command\": \"npx\", \"args\": [\"gh-mcp\"], \"env\": {\"NODE_ENV\": \"x\", \"GITHUB_TOKEN\": \"ghp_1\", \"API_URL\": \"https://a.test\"}}}}";
    let check = |_: &str, _: &str, _: &str| Ok(());
    let w = wrap_text_with(Dialect::McpServers, text, WARDEN, &|_| true, Some(&check)).unwrap();
    let v: serde_json::Value = serde_json::from_str(&w.text).unwrap();
    assert_eq!(
        v["mcpServers"]["gh"]["args"],
        serde_json::json!([
            "bridge",
            "--server",
            "gh",
            "--secret-env",
            "GITHUB_TOKEN",
            "--pass-env",
            "NODE_ENV",
            "--pass-env",
            "API_URL",
            "--",
            "npx",
            "gh-mcp"
        ])
    );
}

/// An entry wrapped with `--pass-env` reads as the server it wraps: the flags before `--`
/// are the bridge's.
#[test]
fn clients_pass_env_flags_before_dashes_are_the_bridges() {
    let text = "{\"mcpServers\": {\"gh\": {\"command\": \"/opt/warden/bin/warden\", \"args\": [\"bridge\", \"--server\", \"gh\", \"--pass-env\", \"A\", \"--pass-env=B\", \"--\", \"npx\", \"gh-mcp\"], \"env\": {\"A\": \"1\", \"B\": \"2\"}}}}";
    let servers = edit::entries(ClientId::Cursor, Dialect::McpServers, text).unwrap();
    assert_eq!(
        servers[0].state,
        EntryState::Wrapped {
            bridge: WARDEN.to_owned(),
            server: Some("gh".to_owned()),
            command: "npx".to_owned(),
            args: vec!["gh-mcp".to_owned()],
        }
    );
}

/// An entry an earlier version wrapped (no `--pass-env`) still reads as wrapped, and wrap
/// leaves it alone.
#[test]
fn clients_entry_wrapped_without_pass_env_is_still_wrapped() {
    let text = "{\"mcpServers\": {\"gh\": {\"command\": \"/opt/warden/bin/warden\", \"args\": [\"bridge\", \"--server\", \"gh\", \"--\", \"npx\", \"gh-mcp\"], \"env\": {\"A\": \"1\"}}}}";
    let w = wrap_text(Dialect::McpServers, text, WARDEN, &|_| true).unwrap();
    assert_eq!(
        w.skipped
            .iter()
            .map(|(e, why)| (e.name.as_str(), why.as_str()))
            .collect::<Vec<_>>(),
        [("gh", "already wrapped")]
    );
}

/// Unwrap takes the `--pass-env` flags out with the rest of the bridge's arguments: the
/// original bytes come back.
#[test]
fn clients_unwrap_of_an_entry_with_pass_env_gives_the_original_bytes() {
    let text = "{\"mcpServers\": {\"gh\": {\"command\": \"npx\", \"args\": [\"gh-mcp\"], \"env\": {\"A\": \"1\", \"B\": \"2\"}}}}\n";
    let w = wrap_text(Dialect::McpServers, text, WARDEN, &|_| true).unwrap();
    let u = unwrap_text(Dialect::McpServers, &w.text, &|_| true, &w.records).unwrap();
    assert_eq!(u.text, text);
}

/// `servers add` and `install` write a `--pass-env` for each `env` key the keychain does not
/// give, after the `--secret-env`s.
#[test]
fn clients_new_entry_argv_passes_env_keys_but_secrets() {
    let entry = NewEntry {
        name: "srv".to_owned(),
        command: "npx".to_owned(),
        args: vec!["-y".to_owned(), "srv@1.2.3".to_owned()],
        env: std::collections::BTreeMap::from([
            ("LOG_LEVEL".to_owned(), "debug".to_owned()),
            ("API_URL".to_owned(), "https://a.test".to_owned()),
        ]),
        secret_env: vec!["API_TOKEN".to_owned()],
        ..Default::default()
    };
    assert_eq!(
        entry.argv(Some(WARDEN)),
        [
            WARDEN,
            "bridge",
            "--server",
            "srv",
            "--secret-env",
            "API_TOKEN",
            "--pass-env",
            "API_URL",
            "--pass-env",
            "LOG_LEVEL",
            "--",
            "npx",
            "-y",
            "srv@1.2.3"
        ]
    );
}

/// Without the bridge nothing changes: the plain command.
#[test]
fn clients_new_entry_argv_unwrapped_is_the_plain_command() {
    let entry = NewEntry {
        name: "srv".to_owned(),
        command: "npx".to_owned(),
        args: vec!["srv@1.2.3".to_owned()],
        env: std::collections::BTreeMap::from([("A".to_owned(), "1".to_owned())]),
        secret_env: Vec::new(),
        ..Default::default()
    };
    assert_eq!(entry.argv(None), ["npx", "srv@1.2.3"]);
}

/// `clients` lists an entry whose `env` steers loading or paths with that risk.
#[test]
fn clients_entry_with_a_loader_variable_in_its_env_is_flagged() {
    let text = "{\"mcpServers\": {\"srv\": {\"command\": \"node\", \"args\": [\"s.js\"], \"env\": {\"LD_PRELOAD\": \"/tmp/x.so\"}}}}";
    let servers = edit::entries(ClientId::Cursor, Dialect::McpServers, text).unwrap();
    let kinds: Vec<RiskKind> = servers[0].risks.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [RiskKind::LoaderEnv]);
}

// ------------------------------------------------- manage: one row, exact plans, backups

/// Every entry named `name` of `path`, each with its scope and whether it is on (those
/// `disable` kept aside included).
fn entries_named(env: &ClientEnv, path: &Path, name: &str) -> Vec<(Vec<String>, bool)> {
    let listing = list(env);
    let in_file = listing
        .iter()
        .filter(|l| l.file.path == path)
        .flat_map(|l| l.servers.iter().cloned());
    let kept = stashed(env)
        .into_iter()
        .filter(|(f, _)| f.path == path)
        .map(|(_, s)| s);
    let mut out: Vec<(Vec<String>, bool)> = in_file
        .chain(kept)
        .filter(|s| s.name == name)
        .map(|s| (s.scope, s.enabled))
        .collect();
    out.sort();
    out
}

const CLAUDE_TWO_SCOPES: &str = "{\n  \"mcpServers\": {\n    \"github\": { \"command\": \"gh-user\" }\n  },\n  \"projects\": {\n    \"/work/app\": {\n      \"mcpServers\": {\n        \"github\": { \"command\": \"gh-app\" }\n      }\n    }\n  }\n}\n";

#[test]
fn manage_switch_of_one_scope_leaves_the_same_name_in_the_other_scope_on() {
    let (dir, env) = home();
    let path = dir.path().join(".claude.json");
    put(&path, CLAUDE_TWO_SCOPES);
    let project = vec!["projects".to_owned(), "/work/app".to_owned()];
    let row = Selection {
        clients: Vec::new(),
        file: Some(path.clone()),
        scope: Some(project.clone()),
    };
    set_enabled(&env, "github", &row, false, false).unwrap();
    assert_eq!(
        entries_named(&env, &path, "github"),
        vec![(Vec::new(), true), (project, false)]
    );
}

#[test]
fn manage_switch_of_the_user_scope_leaves_the_projects_entry_on() {
    let (dir, env) = home();
    let path = dir.path().join(".claude.json");
    put(&path, CLAUDE_TWO_SCOPES);
    let project = vec!["projects".to_owned(), "/work/app".to_owned()];
    let row = Selection {
        clients: vec![ClientId::ClaudeCode],
        file: Some(path.clone()),
        scope: Some(Vec::new()),
    };
    // The user-level entry has no switch in the file: kept aside by Warden.
    set_enabled(&env, "github", &row, false, false).unwrap();
    assert_eq!(
        entries_named(&env, &path, "github"),
        vec![(Vec::new(), false), (project, true)]
    );
}

#[test]
fn manage_remove_refuses_a_plan_whose_file_changed_since_and_writes_nothing() {
    let (dir, env) = home();
    let path = dir.path().join(".cursor/mcp.json");
    put(&path, CURSOR);
    let preview = remove(&env, "time", &Selection::default(), None, true).unwrap();
    let plan = plan_of(&preview);
    // Meanwhile the user edits the file.
    let edited = CURSOR.replace("mcp-ripgrep", "mcp-ripgrep@1.2.0");
    std::fs::write(&path, &edited).unwrap();
    let err = remove(&env, "time", &Selection::default(), Some(&plan), false).unwrap_err();
    assert!(
        matches!(&err, ClientError::Changed { paths } if *paths == [path.clone()])
            && std::fs::read_to_string(&path).unwrap() == edited,
        "{err}"
    );
}

#[test]
fn manage_remove_applies_an_unchanged_plan() {
    let (dir, env) = home();
    let path = dir.path().join(".cursor/mcp.json");
    put(&path, CURSOR);
    let plan = plan_of(&remove(&env, "time", &Selection::default(), None, true).unwrap());
    remove(&env, "time", &Selection::default(), Some(&plan), false).unwrap();
    assert!(listed(&env, &path, "time").is_none());
}

#[test]
fn manage_remove_refuses_a_plan_when_a_kept_entry_went_meanwhile() {
    let (dir, env) = home();
    let path = dir.path().join(".claude.json");
    put(&path, CLAUDE_TWO_SCOPES);
    let user = Selection {
        scope: Some(Vec::new()),
        ..Selection::default()
    };
    set_enabled(&env, "github", &user, false, false).unwrap();
    let plan = plan_of(&remove(&env, "github", &Selection::default(), None, true).unwrap());
    // Another window removes the kept one: the file reads the same, the plan does not hold.
    remove(&env, "github", &user, None, false).unwrap();
    let err = remove(&env, "github", &Selection::default(), Some(&plan), false).unwrap_err();
    assert!(matches!(err, ClientError::Changed { .. }), "{err}");
}

#[test]
fn manage_remove_of_a_kept_entry_backs_its_bytes_up_first() {
    let (dir, env) = home();
    let path = dir.path().join(".cursor/mcp.json");
    put(&path, CURSOR);
    set_enabled(&env, "time", &Selection::default(), false, false).unwrap();
    // Only the ledger has the entry now (the disable's own backup is gone, say pruned).
    std::fs::remove_dir_all(backup::dir(&env.state_dir)).unwrap();
    remove(&env, "time", &Selection::default(), None, false).unwrap();
    let kept = "\"time\": {\n      \"command\": \"mcp-server-time\"\n    }";
    let held: Vec<String> = backups(&env.state_dir)
        .unwrap()
        .iter()
        .map(|b| std::fs::read_to_string(&b.file).unwrap())
        .collect();
    assert!(held.iter().any(|t| t.contains(kept)), "{held:?}");
}
