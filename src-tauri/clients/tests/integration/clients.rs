//! Client config rewriting: fixtures of real-world files for every client, generated
//! configs (proptest), and a writer racing Warden.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ops::Range;
use std::path::{Path, PathBuf};

use warden_clients::{
    Dialect, EditError, EntryRef, EntrySpans, TextEdit, entry_spans, unwrap_text, wrap_text,
};

const WARDEN: &str = "/opt/warden/bin/warden";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/clients")
}

fn dialect(name: &str) -> Dialect {
    serde_json::from_str(&format!("\"{name}\"")).expect("fixture dir names a dialect")
}

/// (dialect, path, text) of every well-formed fixture.
fn well_formed() -> Vec<(Dialect, PathBuf, String)> {
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let name = dir.file_name().unwrap().to_str().unwrap().to_owned();
        if name == "malformed" || name == "expected" || name == "switches" {
            continue;
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            out.push((dialect(&name), f, text));
        }
    }
    assert!(out.len() >= 17, "fixtures missing: {}", out.len());
    out
}

fn all(_: &EntryRef) -> bool {
    true
}

/// The byte ranges an edit of `changed` entries may touch in `text`.
fn regions(
    spans: &[EntrySpans],
    changed: &[EntryRef],
    inserted: &[EntryRef],
    wrapped: bool,
) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    for s in spans.iter().filter(|s| changed.contains(&s.entry)) {
        if let Some(r) = &s.remote {
            out.push(r.clone());
            continue;
        }
        if let Some(c) = &s.command {
            out.push(c.clone());
        }
        let ins = inserted.contains(&s.entry);
        match (&s.args, ins, wrapped) {
            (Some(a), true, true) => out.push(s.insert_at.unwrap()..a.end),
            (Some(a), _, _) => out.push(a.clone()),
            (None, _, _) => {
                let at = s.insert_at.unwrap();
                out.push(at..at);
            }
        }
    }
    out.sort_by_key(|r| (r.start, r.end));
    out
}

/// The text between the regions.
fn outside<'a>(text: &'a str, regions: &[Range<usize>]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut pos = 0;
    for r in regions {
        assert!(r.start >= pos, "regions overlap: {regions:?}");
        out.push(&text[pos..r.start]);
        pos = r.end;
    }
    out.push(&text[pos..]);
    out
}

/// Checks every invariant of wrap/unwrap on one text; returns the wrapped edit.
fn check_roundtrip(dialect: Dialect, text: &str, what: &str) -> TextEdit {
    let wrapped = wrap_text(dialect, text, WARDEN, &all)
        .unwrap_or_else(|e| panic!("{what}: wrap failed: {e}"));
    // Only the edited values differ.
    let inserted: Vec<EntryRef> = wrapped
        .records
        .iter()
        .filter(|r| r.inserted_args.is_some())
        .map(|r| r.entry.clone())
        .collect();
    let before = entry_spans(dialect, text).unwrap();
    let after = entry_spans(dialect, &wrapped.text).unwrap();
    assert_eq!(
        outside(text, &regions(&before, &wrapped.changed, &inserted, false)),
        outside(
            &wrapped.text,
            &regions(&after, &wrapped.changed, &inserted, true)
        ),
        "{what}: bytes outside the edited values changed"
    );
    // BOM and line endings kept.
    assert_eq!(
        text.starts_with('\u{feff}'),
        wrapped.text.starts_with('\u{feff}'),
        "{what}: BOM"
    );
    if text.contains("\r\n") {
        assert_eq!(
            wrapped.text.matches('\n').count(),
            wrapped.text.matches("\r\n").count(),
            "{what}: a bare LF in a CRLF file"
        );
    }
    // Wrapping twice changes nothing.
    let again = wrap_text(dialect, &wrapped.text, WARDEN, &all).unwrap();
    assert!(
        again.changed.is_empty(),
        "{what}: wrapped twice: {:?}",
        again.changed
    );
    assert_eq!(again.text, wrapped.text);
    // Unwrap gives back the original bytes.
    let unwrapped = unwrap_text(dialect, &wrapped.text, &all, &wrapped.records)
        .unwrap_or_else(|e| panic!("{what}: unwrap failed: {e}"));
    assert_eq!(unwrapped.changed, wrapped.changed, "{what}");
    assert_eq!(
        unwrapped.text, text,
        "{what}: unwrap did not restore the bytes"
    );
    // Without Warden's records, unwrap still restores every command and args.
    let bare = unwrap_text(dialect, &wrapped.text, &all, &[]).unwrap();
    let listed = |t: &str| warden_clients::entry_spans(dialect, t).unwrap().len();
    assert_eq!(listed(&bare.text), listed(text));
    let orig = wrap_text(dialect, text, WARDEN, &all).unwrap();
    let via_bare = wrap_text(dialect, &bare.text, WARDEN, &all).unwrap();
    assert_eq!(orig.changed, via_bare.changed, "{what}");
    wrapped
}

#[test]
fn fixtures_roundtrip_byte_for_byte() {
    for (dialect, path, text) in well_formed() {
        let what = path.display().to_string();
        let wrapped = check_roundtrip(dialect, &text, &what);
        assert!(!wrapped.changed.is_empty(), "{what}: nothing to wrap");
        // Golden files make the exact edits reviewable.
        let dir = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap();
        let expected = fixtures().join("expected").join(format!(
            "{dir}--{}.wrapped",
            path.file_name().unwrap().to_str().unwrap()
        ));
        if std::env::var_os("WARDEN_BLESS").is_some() {
            std::fs::write(&expected, &wrapped.text).unwrap();
        }
        let golden = std::fs::read_to_string(&expected)
            .unwrap_or_else(|_| panic!("{}: missing; run with WARDEN_BLESS=1", expected.display()));
        assert_eq!(
            wrapped.text,
            golden,
            "{what}: differs from {}",
            expected.display()
        );
    }
}

#[test]
fn fixtures_skip_remote_and_builtin_entries() {
    for (dialect, path, text) in well_formed() {
        let wrapped = wrap_text(dialect, &text, WARDEN, &all).unwrap();
        for (entry, reason) in &wrapped.skipped {
            assert!(
                reason.contains("remote")
                    || reason.contains("built-in")
                    || reason.contains("extension"),
                "{}: {entry} skipped: {reason}",
                path.display()
            );
        }
    }
    let (_, _, cline) = well_formed()
        .into_iter()
        .find(|(_, p, _)| p.ends_with("cline_mcp_settings.json"))
        .unwrap();
    let w = wrap_text(Dialect::McpServers, &cline, WARDEN, &all).unwrap();
    let skipped: Vec<&str> = w.skipped.iter().map(|(e, _)| e.name.as_str()).collect();
    assert_eq!(skipped, ["remote-tools"]);
}

#[test]
fn fixtures_wrap_one_server_only() {
    for (dialect, path, text) in well_formed() {
        let first = wrap_text(dialect, &text, WARDEN, &all).unwrap().changed[0].clone();
        let one = wrap_text(dialect, &text, WARDEN, &|e| *e == first).unwrap();
        assert_eq!(
            one.changed,
            std::slice::from_ref(&first),
            "{}",
            path.display()
        );
        let rest = wrap_text(dialect, &one.text, WARDEN, &all).unwrap();
        assert!(!rest.changed.contains(&first));
        let back = unwrap_text(dialect, &one.text, &all, &one.records).unwrap();
        assert_eq!(back.text, text, "{}", path.display());
    }
}

#[test]
fn fixtures_wrapped_entries_keep_the_original_argv() {
    let text = std::fs::read_to_string(
        fixtures().join("mcp-servers/claude_desktop_windows_bom_crlf.json"),
    )
    .unwrap();
    let w = wrap_text(
        Dialect::McpServers,
        &text,
        "C:\\Program Files\\Warden\\warden.exe",
        &all,
    )
    .unwrap();
    assert!(w.text.contains(
        "\"command\": \"C:\\\\Program Files\\\\Warden\\\\warden.exe\",\r\n      \"args\": [\"bridge\", \"--server\", \"ripgrep\", \"--pass-env\", \"LOCALAPPDATA\", \"--pass-env\", \"ProgramFiles\", \"--\", \"cmd\", \"/c\", \"npx\", \"-y\", \"mcp-ripgrep@latest\"]"
    ), "{}", w.text);
    let v: serde_json::Value = serde_json::from_str(w.text.trim_start_matches('\u{feff}')).unwrap();
    assert_eq!(
        v["mcpServers"]["sqlite"]["args"],
        serde_json::json!([
            "bridge",
            "--server",
            "sqlite",
            "--",
            "C:\\Program Files\\nodejs\\npx.cmd",
            "-y",
            "mcp-server-sqlite-npx",
            "C:\\Users\\Jürgen\\data\\test.db"
        ])
    );
}

#[test]
fn fixtures_malformed_files_are_refused_with_a_position() {
    let dir = fixtures().join("malformed");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let d = dialect(name.split('.').next().unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        match wrap_text(d, &text, WARDEN, &all) {
            Err(EditError::Parse(err)) => {
                assert!(err.line >= 1 && err.col >= 1, "{name}: {err}");
            }
            other => panic!("{name}: expected a parse error, got {other:?}"),
        }
        assert!(unwrap_text(d, &text, &all, &[]).is_err(), "{name}");
        n += 1;
    }
    assert!(n >= 8);
}

// ------------------------------------------------------------ on/off switches

/// Each client's own switch, as `list` reads it (`ServerEntry::enabled`). The fixtures in
/// `switches/` are named by client; each has an entry turned off, one turned on explicitly
/// and one without the key (on).
mod switches {
    use warden_clients::{ClientEnv, ClientId, Os, list};

    use super::{check_roundtrip, fixtures};

    /// `(entry, enabled)` of every entry of `fixture` (under the fixtures dir) placed at
    /// `rel` in an empty home, as `list` finds it there; the entry is `name` or, inside a
    /// Claude Code project, `name@project`. The file wraps and unwraps losslessly, and
    /// wrapped it lists the same switches.
    fn listed(fixture: &str, rel: &str, client: ClientId) -> Vec<(String, bool)> {
        let text = std::fs::read_to_string(fixtures().join(fixture)).unwrap();
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        let read = || {
            let listing = list(&ClientEnv::with_home(home.path(), Os::Linux));
            let file = listing
                .into_iter()
                .find(|l| l.file.path == path)
                .unwrap_or_else(|| panic!("{fixture} not found at {rel}"));
            assert_eq!(file.file.client, client, "{fixture}");
            assert!(file.error.is_none(), "{fixture}: {:?}", file.error);
            let entries: Vec<(String, bool)> = file
                .servers
                .iter()
                .map(|s| {
                    let name = match s.scope.as_slice() {
                        [_, project] => format!("{}@{project}", s.name),
                        _ => s.name.clone(),
                    };
                    (name, s.enabled)
                })
                .collect();
            (file.file.dialect, entries)
        };
        let (dialect, entries) = read();
        let wrapped = check_roundtrip(dialect, &text, fixture);
        std::fs::write(&path, &wrapped.text).unwrap();
        assert_eq!(
            read().1,
            entries,
            "{fixture}: wrapped, the switches read differently"
        );
        entries
    }

    fn pairs(want: &[(&str, bool)]) -> Vec<(String, bool)> {
        want.iter().map(|(n, on)| ((*n).to_owned(), *on)).collect()
    }

    #[test]
    fn cline_disabled_true_is_off() {
        let got = listed(
            "switches/cline.json",
            ".cline/data/settings/cline_mcp_settings.json",
            ClientId::Cline,
        );
        let want = [
            ("github", false),
            ("filesystem", true),
            ("time", true),
            ("docs", false),
        ];
        assert_eq!(got, pairs(&want));
    }

    #[test]
    fn windsurf_disabled_true_is_off() {
        let got = listed(
            "switches/windsurf.json",
            ".codeium/windsurf/mcp_config.json",
            ClientId::Windsurf,
        );
        let want = [
            ("sequential-thinking", false),
            ("postgres", true),
            ("memory", true),
        ];
        assert_eq!(got, pairs(&want));
    }

    #[test]
    fn kiro_disabled_true_is_off() {
        let got = listed(
            "switches/kiro.json",
            ".kiro/settings/mcp.json",
            ClientId::Kiro,
        );
        assert_eq!(
            got,
            pairs(&[("aws-docs", false), ("fetch", true), ("git", true)])
        );
    }

    #[test]
    fn codex_enabled_false_is_off_in_tables_and_inline_tables() {
        let got = listed("switches/codex.toml", ".codex/config.toml", ClientId::Codex);
        let want = [
            ("fetch", false),
            ("context7", false),
            ("time", true),
            ("sqlite", true),
        ];
        assert_eq!(got, pairs(&want));
    }

    #[test]
    fn zed_enabled_false_is_off_also_for_extension_servers() {
        let got = listed(
            "switches/zed.json",
            ".config/zed/settings.json",
            ClientId::Zed,
        );
        let want = [
            ("github", false),
            ("filesystem", true),
            ("sqlite", true),
            ("mcp-server-context7", false),
        ];
        assert_eq!(got, pairs(&want));
    }

    #[test]
    fn opencode_enabled_false_is_off() {
        let got = listed(
            "switches/opencode.jsonc",
            ".config/opencode/opencode.jsonc",
            ClientId::Opencode,
        );
        let want = [
            ("github", false),
            ("time", true),
            ("fetch", true),
            ("sentry", false),
        ];
        assert_eq!(got, pairs(&want));
    }

    #[test]
    fn goose_enabled_false_is_off_in_block_and_flow_mappings() {
        let got = listed(
            "switches/goose.yaml",
            ".config/goose/config.yaml",
            ClientId::Goose,
        );
        let want = [
            ("developer", true),
            ("github", false),
            ("fetch", true),
            ("memory", false),
        ];
        assert_eq!(got, pairs(&want));
    }

    /// `disabledMcpServers` turns off a project's own servers; a user server named there
    /// is off in that project only, and stays listed as on.
    #[test]
    fn claude_code_disabled_mcp_servers_turns_off_that_projects_servers() {
        let got = listed("switches/claude.json", ".claude.json", ClientId::ClaudeCode);
        let want = [
            ("context7", true),
            ("postgres@/home/dev/work/api", false),
            ("time@/home/dev/work/api", true),
            ("postgres@/home/dev/work/site", true),
        ];
        assert_eq!(got, pairs(&want));
    }

    #[test]
    fn gemini_excluded_is_off() {
        let got = listed(
            "switches/gemini.json",
            ".gemini/settings.json",
            ClientId::GeminiCli,
        );
        assert_eq!(got, pairs(&[("github", false), ("fetch", true)]));
    }

    /// A non-empty `mcp.allowed` turns off every server it does not name.
    #[test]
    fn gemini_allowed_turns_off_the_others() {
        let got = listed(
            "mcp-servers/gemini_settings.json",
            ".gemini/settings.json",
            ClientId::GeminiCli,
        );
        let want = [
            ("pythonTools", true),
            ("nodeServer", true),
            ("httpServer", false),
        ];
        assert_eq!(got, pairs(&want));
    }

    /// Claude Desktop, Cursor, VS Code, LM Studio and Continue have no switch in the file:
    /// every entry is on, even one with a `disabled` key the client does not read.
    #[test]
    fn clients_without_a_switch_list_every_entry_as_on() {
        let cases = [
            (
                "switches/claude_desktop.json",
                ".config/Claude/claude_desktop_config.json",
                ClientId::ClaudeDesktop,
            ),
            (
                "mcp-servers/cursor_mcp_tabs.json",
                ".cursor/mcp.json",
                ClientId::Cursor,
            ),
            (
                "vscode/mcp.json",
                ".config/Code/User/mcp.json",
                ClientId::Vscode,
            ),
            (
                "mcp-servers/lmstudio_mcp.json",
                ".lmstudio/mcp.json",
                ClientId::LmStudio,
            ),
            (
                "continue-yaml/config.yaml",
                ".continue/config.yaml",
                ClientId::Continue,
            ),
        ];
        for (fixture, rel, client) in cases {
            let got = listed(fixture, rel, client);
            assert!(!got.is_empty(), "{fixture}");
            assert!(got.iter().all(|(_, on)| *on), "{fixture}: {got:?}");
        }
    }
}

// ------------------------------------------------------------ races

mod race {
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    use std::time::Duration;

    use warden_clients::{
        ClientEnv, ClientError, EntryState, Filter, Os, UnwrapOptions, WrapOptions, list, unwrap,
        wrap,
    };

    const START: &str = "{\n  \"counter\": 0,\n  \"mcpServers\": {\n    \"rg\": {\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"mcp-ripgrep\"],\n      \"disabled\": false\n    }\n  }\n}\n";

    fn counter(text: &str) -> u32 {
        let at = text.find("\"counter\": ").unwrap() + 11;
        let digits: String = text[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().unwrap()
    }

    fn set_counter(text: &str, n: u32) -> String {
        let old = counter(text);
        text.replacen(
            &format!("\"counter\": {old}"),
            &format!("\"counter\": {n}"),
            1,
        )
    }

    /// Cline's lock protocol, written independently of Warden's: a populated staging
    /// directory renamed to `<file>.lock`.
    fn cline_lock(path: &Path, id: u32) -> PathBuf {
        let lock = PathBuf::from(format!("{}.lock", path.display()));
        loop {
            let staging = PathBuf::from(format!("{}.tmp.test{id}", lock.display()));
            let _ = std::fs::remove_dir_all(&staging);
            std::fs::create_dir(&staging).unwrap();
            std::fs::write(staging.join(format!("owner.test{id}")), "x").unwrap();
            if std::fs::rename(&staging, &lock).is_ok() {
                return lock;
            }
            let _ = std::fs::remove_dir_all(&staging);
            std::thread::sleep(Duration::from_micros(300));
        }
    }

    /// Like Cline: delete our owner file, then the directory unless someone else's
    /// owner file is in it already.
    fn cline_unlock(lock: &Path, id: u32) {
        let _ = std::fs::remove_file(lock.join(format!("owner.test{id}")));
        let _ = std::fs::remove_dir(lock);
    }

    /// Sets the flag when dropped, so a panicking writer still ends the race.
    struct SetOnDrop(Arc<AtomicBool>);

    impl Drop for SetOnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    struct Outcome {
        client_writes: u32,
        warden_writes: u32,
        lost: u32,
        parse_failures: u32,
        errors: Vec<String>,
    }

    /// Warden writes each race must see before it may end: the client keeps writing
    /// past its rounds until then, so a loaded machine makes the race longer, not
    /// emptier.
    const MIN_WARDEN_WRITES: u32 = 10;

    /// A client rewrites `path` in a loop (read, bump the counter, write a temp file,
    /// rename) while Warden wraps and unwraps it; a reader parses it all along.
    fn race(env: &ClientEnv, path: &Path, locking: bool, rounds: u32) -> Outcome {
        let done = Arc::new(AtomicBool::new(false));
        let lost = Arc::new(AtomicU32::new(0));
        let parse_failures = Arc::new(AtomicU32::new(0));
        let client_writes = Arc::new(AtomicU32::new(0));
        let shared_warden_writes = Arc::new(AtomicU32::new(0));
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let writer = {
            let (path, lost, done) = (path.to_owned(), lost.clone(), done.clone());
            let (client_writes, warden_writes) =
                (client_writes.clone(), shared_warden_writes.clone());
            std::thread::spawn(move || {
                let _done = SetOnDrop(done);
                let mut last = 0;
                for i in 1.. {
                    if i > rounds
                        && (warden_writes.load(Ordering::SeqCst) >= MIN_WARDEN_WRITES
                            || std::time::Instant::now() > deadline)
                    {
                        break;
                    }
                    let lock = locking.then(|| cline_lock(&path, i));
                    let text = std::fs::read_to_string(&path).unwrap();
                    if counter(&text) != last {
                        lost.fetch_add(1, Ordering::SeqCst);
                    }
                    let tmp = path.with_extension(format!("client{i}"));
                    std::fs::write(&tmp, set_counter(&text, i)).unwrap();
                    std::fs::rename(&tmp, &path).unwrap();
                    last = i;
                    client_writes.store(i, Ordering::SeqCst);
                    if let Some(lock) = lock {
                        cline_unlock(&lock, i);
                    }
                    // Far more often than real clients write (Claude Code: every few
                    // seconds at most), yet with gaps in which Warden's write fits.
                    std::thread::sleep(Duration::from_millis(if locking { 3 } else { 8 }));
                }
            })
        };
        let reader = {
            let (path, parse_failures, done) =
                (path.to_owned(), parse_failures.clone(), done.clone());
            std::thread::spawn(move || {
                while !done.load(Ordering::SeqCst) {
                    let text = std::fs::read_to_string(&path).unwrap();
                    if serde_json::from_str::<serde_json::Value>(&text).is_err() {
                        parse_failures.fetch_add(1, Ordering::SeqCst);
                    }
                }
            })
        };
        let mut errors = Vec::new();
        let mut warden_writes = 0;
        let wrap_opts = WrapOptions {
            warden: PathBuf::from("/opt/warden/bin/warden"),
            filter: Filter::default(),
            dry_run: false,
            move_secrets: false,
        };
        while !done.load(Ordering::SeqCst) {
            assert!(
                std::time::Instant::now() < deadline + Duration::from_secs(30),
                "the race did not end"
            );
            for change in wrap(env, &wrap_opts)
                .unwrap()
                .into_iter()
                .chain(unwrap(env, &UnwrapOptions::default()).unwrap())
            {
                warden_writes += u32::from(change.written);
                shared_warden_writes.store(warden_writes, Ordering::SeqCst);
                if let Some(e) = change.error
                    && !matches!(e, ClientError::Busy { .. })
                {
                    errors.push(e.to_string());
                }
            }
        }
        writer.join().unwrap();
        reader.join().unwrap();
        Outcome {
            client_writes: client_writes.load(Ordering::SeqCst),
            warden_writes,
            lost: lost.load(Ordering::SeqCst),
            parse_failures: parse_failures.load(Ordering::SeqCst),
            errors,
        }
    }

    fn final_state(env: &ClientEnv, path: &Path, rounds: u32) {
        let wrap_opts = WrapOptions {
            warden: PathBuf::from("/opt/warden/bin/warden"),
            filter: Filter::default(),
            dry_run: false,
            move_secrets: false,
        };
        let changes = wrap(env, &wrap_opts).unwrap();
        assert!(changes.iter().all(|c| c.error.is_none()));
        let text = std::fs::read_to_string(path).unwrap();
        assert_eq!(counter(&text), rounds, "the client's last write was lost");
        let listing = list(env);
        assert!(matches!(
            listing[0].servers[0].state,
            EntryState::Wrapped { .. }
        ));
        let back = unwrap(env, &UnwrapOptions::default()).unwrap();
        assert!(back[0].written);
        assert_eq!(
            std::fs::read_to_string(path).unwrap(),
            set_counter(START, rounds),
            "unwrap after the race gives back the client's file"
        );
    }

    #[test]
    fn clients_race_with_a_client_that_takes_clines_lock_loses_nothing() {
        let home = tempfile::tempdir().unwrap();
        let env = ClientEnv::with_home(home.path(), Os::Linux);
        let path = home
            .path()
            .join(".cline/data/settings/cline_mcp_settings.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, START).unwrap();
        let out = race(&env, &path, true, 300);
        assert!(
            out.warden_writes >= MIN_WARDEN_WRITES,
            "only {} Warden writes in 60 s of client writes",
            out.warden_writes
        );
        assert_eq!(out.lost, 0, "a client write was overwritten");
        assert_eq!(out.parse_failures, 0);
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        final_state(&env, &path, out.client_writes);
    }

    #[test]
    fn clients_race_with_a_client_that_takes_no_lock_always_parses() {
        let home = tempfile::tempdir().unwrap();
        let env = ClientEnv::with_home(home.path(), Os::Linux);
        let path = home.path().join(".cursor/mcp.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, START).unwrap();
        let out = race(&env, &path, false, 300);
        assert!(
            out.warden_writes >= MIN_WARDEN_WRITES,
            "only {} Warden writes in 60 s of client writes",
            out.warden_writes
        );
        assert_eq!(out.parse_failures, 0);
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        // Without a lock, a client write landing between Warden's last check (one stat
        // call) and its rename can still be replaced: nothing but the client's own lock
        // can close that window. Rare, and bounded here.
        eprintln!(
            "client writes replaced: {} of {} ({} Warden writes)",
            out.lost, out.client_writes, out.warden_writes
        );
        assert!(
            out.lost <= 3 + out.warden_writes / 10,
            "{} client writes lost in {} Warden writes",
            out.lost,
            out.warden_writes
        );
        final_state(&env, &path, out.client_writes);
    }
}

// ------------------------------------------------------------ generated configs

mod generated {
    use super::*;
    use proptest::prelude::*;

    fn arg() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z@/._-]{1,12}",
            "\\$\\{[a-zA-Z:]{1,10}\\}",
            "[ -~]{0,8}",
            "[ä-ü😀 \\t\"\\\\]{0,5}",
            Just("--".to_owned()),
            Just("bridge".to_owned()),
        ]
    }

    #[derive(Debug, Clone)]
    struct Server {
        name: String,
        command: String,
        args: Option<Vec<String>>,
        env: Vec<(String, String)>,
        remote: bool,
    }

    fn server() -> impl Strategy<Value = Server> {
        (
            "[a-zA-Z][a-zA-Z0-9 _-]{0,10}",
            prop_oneof![
                "[a-z]{1,8}",
                Just("cmd".to_owned()),
                "[A-Z]:\\\\[a-z ]{1,8}\\.cmd"
            ],
            proptest::option::of(proptest::collection::vec(arg(), 0..5)),
            proptest::collection::vec(("[A-Z_]{1,6}", "[ -~]{0,6}"), 0..3),
            proptest::bool::weighted(0.15),
        )
            .prop_map(|(name, command, args, env, remote)| Server {
                name,
                command,
                args,
                env,
                remote,
            })
    }

    #[derive(Debug, Clone)]
    struct Style {
        indent: String,
        eol: &'static str,
        bom: bool,
        comments: bool,
        trailing_commas: bool,
        multiline_args: bool,
    }

    fn style() -> impl Strategy<Value = Style> {
        (
            prop_oneof![
                Just("  ".to_owned()),
                Just("\t".to_owned()),
                Just("    ".to_owned()),
                Just(String::new())
            ],
            prop_oneof![Just("\n"), Just("\r\n")],
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(
                |(indent, eol, bom, comments, trailing_commas, multiline_args)| Style {
                    indent,
                    eol,
                    bom,
                    comments,
                    trailing_commas,
                    multiline_args,
                },
            )
    }

    fn js(s: &str) -> String {
        serde_json::to_string(s).unwrap()
    }

    fn json_doc(servers: &[Server], st: &Style, jsonc: bool) -> String {
        let (i, nl) = (&st.indent, st.eol);
        let comments = jsonc && st.comments;
        let tc = if jsonc && st.trailing_commas { "," } else { "" };
        let mut out = String::new();
        if st.bom {
            out.push('\u{feff}');
        }
        if comments {
            out.push_str(&format!("// generated{nl}"));
        }
        out.push_str(&format!(
            "{{{nl}{i}\"other\": [1, true, null],{nl}{i}\"mcpServers\": {{{nl}"
        ));
        for (k, s) in servers.iter().enumerate() {
            let mut members = Vec::new();
            if s.remote {
                members.push(format!("\"url\": {}", js("https://example.com/mcp")));
            } else {
                members.push(format!("\"command\": {}", js(&s.command)));
                if let Some(args) = &s.args {
                    let items: Vec<String> = args.iter().map(|a| js(a)).collect();
                    if st.multiline_args && !items.is_empty() {
                        let inner = format!("{nl}{i}{i}{i}{i}");
                        let c = if comments { " /* a */" } else { "" };
                        members.push(format!(
                            "\"args\": [{inner}{}{tc}{c}{nl}{i}{i}{i}]",
                            items.join(&format!(",{inner}"))
                        ));
                    } else {
                        members.push(format!("\"args\": [{}]", items.join(", ")));
                    }
                }
            }
            if !s.env.is_empty() {
                let env: Vec<String> = s
                    .env
                    .iter()
                    .map(|(k, v)| format!("{}: {}", js(k), js(v)))
                    .collect();
                members.push(format!("\"env\": {{ {} }}", env.join(", ")));
            }
            let sep = format!(",{nl}{i}{i}{i}");
            out.push_str(&format!(
                "{i}{i}{}: {{{nl}{i}{i}{i}{}{tc}{nl}{i}{i}}}",
                js(&format!("{}{k}", s.name)),
                members.join(&sep)
            ));
            if k + 1 < servers.len() {
                out.push(',');
            } else {
                out.push_str(tc);
            }
            if comments {
                out.push_str(" // server");
            }
            out.push_str(nl);
        }
        out.push_str(&format!("{i}}}{tc}{nl}}}{nl}"));
        out
    }

    fn toml_str(s: &str) -> String {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\t' => out.push_str("\\t"),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    fn toml_doc(servers: &[Server], st: &Style) -> String {
        let nl = st.eol;
        let mut out = String::new();
        if st.bom {
            out.push('\u{feff}');
        }
        out.push_str(&format!("# generated{nl}model = \"x\"{nl}{nl}"));
        for (k, s) in servers.iter().enumerate() {
            let name = format!("{}{k}", s.name);
            out.push_str(&format!("[mcp_servers.{}]{nl}", toml_str(&name)));
            if s.remote {
                out.push_str(&format!("url = \"https://example.com\"{nl}"));
            } else {
                let c = if st.comments { " # the command" } else { "" };
                out.push_str(&format!("command = {}{c}{nl}", toml_str(&s.command)));
                if let Some(args) = &s.args {
                    let items: Vec<String> = args.iter().map(|a| toml_str(a)).collect();
                    if st.multiline_args && !items.is_empty() {
                        let tc = if st.trailing_commas { "," } else { "" };
                        out.push_str(&format!(
                            "args = [{nl}{}{}{tc}{nl}]{nl}",
                            st.indent,
                            items.join(&format!(",{nl}{}", st.indent))
                        ));
                    } else {
                        out.push_str(&format!("args = [{}]{nl}", items.join(", ")));
                    }
                }
            }
            if !s.env.is_empty() {
                out.push_str(&format!("{nl}[mcp_servers.{}.env]{nl}", toml_str(&name)));
                for (j, (key, v)) in s.env.iter().enumerate() {
                    out.push_str(&format!("{key}_{j} = {}{nl}", toml_str(v)));
                }
            }
            out.push_str(nl);
        }
        out
    }

    fn dedup(mut servers: Vec<Server>) -> Vec<Server> {
        // Names get an index suffix in the generators, so they are unique.
        servers.truncate(6);
        servers
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn clients_generated_json_roundtrips(servers in proptest::collection::vec(server(), 1..6), st in style()) {
            let text = json_doc(&dedup(servers), &st, false);
            check_roundtrip(Dialect::McpServers, &text, &text);
        }

        #[test]
        fn clients_generated_jsonc_roundtrips(servers in proptest::collection::vec(server(), 1..6), st in style()) {
            let text = json_doc(&dedup(servers), &st, true);
            check_roundtrip(Dialect::McpServers, &text, &text);
        }

        #[test]
        fn clients_generated_toml_roundtrips(servers in proptest::collection::vec(server(), 1..6), st in style()) {
            let text = toml_doc(&dedup(servers), &st);
            check_roundtrip(Dialect::Codex, &text, &text);
        }

        #[test]
        fn clients_arbitrary_text_never_panics(text in "[\\[\\]{}\":,a-z0-9 \\n/*#=-]{0,80}") {
            for d in [Dialect::McpServers, Dialect::Codex, Dialect::Goose, Dialect::ContinueYaml, Dialect::Opencode] {
                if let Ok(w) = wrap_text(d, &text, WARDEN, &all) {
                    let u = unwrap_text(d, &w.text, &all, &w.records).unwrap();
                    prop_assert_eq!(&u.text, &text);
                }
            }
        }
    }
}
