//! Nothing lost, nothing forged: several `warden` processes changing the same client files
//! and Warden's ledger at once, a ledger that cannot be read, its mode, and a ledger record
//! that does not fit its file. Real processes on real files (servers.rs's temporary home).

use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};

use serde_json::{Value, json};

use crate::servers::Home;

const NAMES: [&str; 6] = ["s1", "s2", "s3", "s4", "s5", "s6"];

/// Cursor has no on/off switch (`disable` takes the entry out, into the ledger); Codex has
/// `enabled = false`. Both have six servers and `other`, which the rewriter wraps.
fn cursor_text() -> String {
    let mut t = String::from(
        "{\n  // mine\n  \"mcpServers\": {\n    \"other\": { \"command\": \"npx\", \"args\": [\"-y\", \"other-mcp@1.0.0\"] },\n",
    );
    for (i, n) in NAMES.iter().enumerate() {
        let sep = if i + 1 == NAMES.len() { "" } else { "," };
        t.push_str(&format!(
            "    \"{n}\": {{ \"command\": \"uvx\", \"args\": [\"{n}-mcp==1.0\"] }}{sep}\n"
        ));
    }
    t.push_str("  }\n}\n");
    t
}

fn codex_text() -> String {
    let mut t = String::from(
        "# codex\nmodel = \"gpt-5\"\n\n[mcp_servers.other]\ncommand = \"npx\"\nargs = [\"-y\", \"other-mcp@1.0.0\"]\n",
    );
    for n in NAMES {
        t.push_str(&format!(
            "\n[mcp_servers.{n}]  # {n}\ncommand = \"uvx\"\nargs = [\"{n}-mcp==1.0\"]\n"
        ));
    }
    t
}

fn spawn(h: &Home, args: &[&str]) -> Child {
    let mut cmd = h.command(None);
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.spawn().unwrap()
}

fn succeeded(what: &str, out: Output) {
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
}

/// `warden servers disable` of the six servers, all at once.
fn disable_all_at_once(h: &Home) {
    let children: Vec<(String, Child)> = NAMES
        .iter()
        .map(|n| (n.to_string(), spawn(h, &["servers", "disable", n])))
        .collect();
    for (n, c) in children {
        succeeded(&format!("disable {n}"), c.wait_with_output().unwrap());
    }
}

fn ledger_path(h: &Home) -> std::path::PathBuf {
    h.state().join("clients/ledger.json")
}

fn ledger(h: &Home) -> Value {
    serde_json::from_slice(&std::fs::read(ledger_path(h)).unwrap()).unwrap()
}

/// The servers `disable` took out of `file`, in the order it did.
fn stashed_in_order(h: &Home, file: &Path) -> Vec<String> {
    let real = std::fs::canonicalize(file).unwrap();
    let l = ledger(h);
    l["files"][real.to_str().unwrap()]["managed"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|r| r["kind"] == "stashed")
        .map(|r| r["entry"]["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Turns every server off at once, checks that each is off in both files, then on again,
/// the last turned off first (each undo then applies to the very text its edit left).
fn disable_then_enable(h: &Home) {
    disable_all_at_once(h);
    for n in NAMES {
        let mut places = h.places(n);
        places.sort();
        assert_eq!(
            places,
            vec![
                ("codex".to_owned(), false, false),
                ("cursor".to_owned(), false, false)
            ],
            "{n}"
        );
    }
    let order = stashed_in_order(h, &h.cursor);
    assert_eq!(order.len(), NAMES.len(), "every entry is kept: {order:?}");
    for n in order.iter().rev() {
        h.ok(&["enable", n]);
    }
}

#[test]
fn six_disables_at_once_then_enables_give_back_both_files_exactly() {
    let h = Home::with(&cursor_text(), &codex_text());
    let original = h.texts();
    disable_then_enable(&h);
    assert_eq!(h.texts(), original);
}

/// `warden clients wrap --server other` and `unwrap`, over and over, until stopped (after
/// an unwrap): another writer of the same files meanwhile.
struct Rewriter {
    stop: Arc<AtomicBool>,
    rounds: mpsc::Receiver<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Rewriter {
    fn start(h: &Home) -> Rewriter {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rounds) = mpsc::channel();
        let commands: Vec<_> = ["wrap", "unwrap"]
            .iter()
            .map(|op| {
                let mut cmd = h.command(None);
                cmd.args(["clients", op, "--server", "other"]);
                cmd
            })
            .collect();
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut commands = commands;
            while !flag.load(Ordering::SeqCst) {
                for cmd in &mut commands {
                    succeeded("the rewriter", cmd.output().unwrap());
                }
                let _ = tx.send(());
            }
        });
        let r = Rewriter {
            stop,
            rounds,
            thread,
        };
        r.round();
        r
    }

    /// Waits for a whole round (wrap and unwrap) from now on.
    fn round(&self) {
        while self.rounds.try_recv().is_ok() {}
        self.rounds.recv().unwrap();
    }

    fn stop(self) {
        self.round();
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().unwrap();
    }
}

/// The entries of a Cursor text, each as its exact line.
fn entry_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("\"s") || l.contains("\"other\""))
        .map(|l| l.trim_end_matches(',').to_owned())
        .collect();
    lines.sort();
    lines
}

#[test]
fn six_disables_and_enables_while_another_warden_rewrites_the_files_lose_nothing() {
    let h = Home::with(&cursor_text(), &codex_text());
    let (cursor, codex) = h.texts();
    let rewriter = Rewriter::start(&h);
    disable_all_at_once(&h);
    rewriter.round();
    let order = stashed_in_order(&h, &h.cursor);
    assert_eq!(order.len(), NAMES.len(), "every entry is kept: {order:?}");
    for n in order.iter().rev() {
        h.ok(&["enable", n]);
    }
    rewriter.stop();
    let (cursor_now, codex_now) = h.texts();
    // The switch is taken out exactly where it was put.
    assert_eq!(codex_now, codex);
    // An entry taken out of a file that changed meanwhile goes back, byte for byte, at the
    // end of the list (the undo of its exact place applies only to the text it left).
    assert_eq!(entry_lines(&cursor_now), entry_lines(&cursor));
    assert!(
        cursor_now.starts_with("{\n  // mine\n  \"mcpServers\": {\n    \"other\""),
        "{cursor_now}"
    );
    assert!(ledger(&h)["files"].as_object().unwrap().values().all(|f| {
        f["managed"]
            .as_array()
            .is_none_or(|m| m.iter().all(|r| r["kind"] != "stashed"))
    }));
}

#[test]
fn an_unreadable_ledger_is_refused_with_its_code_and_left_as_it_is() {
    let h = Home::with(&cursor_text(), &codex_text());
    let garbage: &[u8] = b"\x00\xff{\"files\": garbage";
    std::fs::create_dir_all(ledger_path(&h).parent().unwrap()).unwrap();
    std::fs::write(ledger_path(&h), garbage).unwrap();
    let before = h.texts();
    let out = h
        .command(None)
        .args(["servers", "disable", "s1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("[W-LEDGER-UNREADABLE]"), "{said}");
    assert!(
        said.contains("ledger.json.damaged"),
        "the fix says how: {said}"
    );
    assert_eq!(std::fs::read(ledger_path(&h)).unwrap(), garbage);
    assert_eq!(h.texts(), before);
}

#[cfg(unix)]
#[test]
fn the_ledger_is_private_after_a_disable() {
    use std::os::unix::fs::PermissionsExt;
    let h = Home::with(&cursor_text(), &codex_text());
    // One an earlier version wrote with the umask's mode.
    std::fs::create_dir_all(ledger_path(&h).parent().unwrap()).unwrap();
    std::fs::write(ledger_path(&h), "{\"files\": {}}").unwrap();
    std::fs::set_permissions(ledger_path(&h), std::fs::Permissions::from_mode(0o644)).unwrap();
    h.ok(&["disable", "s1"]);
    let mode = std::fs::metadata(ledger_path(&h))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

/// FNV-1a of a text and its length: the ledger's fingerprint of a file.
fn fingerprint(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}-{}", text.len())
}

#[test]
fn a_ledger_record_whose_range_cuts_a_character_is_an_error_not_a_panic() {
    let cursor = "{\n  \"mcpServers\": {\n    \"café\": { \"command\": \"uvx\", \"args\": [\"x\"] }\n  }\n}\n";
    let h = Home::with(cursor, "");
    let inside = cursor.find('é').unwrap() + 1;
    let real = std::fs::canonicalize(&h.cursor).unwrap();
    let record = json!({
        "entry": { "scope": [], "name": "ghost" },
        "kind": "stashed",
        "after": fingerprint(cursor),
        "undo": [[inside, inside, "    \"ghost\": { \"command\": \"x\" },\n"]],
        "raw": "\"ghost\": { \"command\": \"x\" }",
    });
    let ledger = json!({ "files": { real.to_str().unwrap(): { "managed": [record] } } });
    std::fs::create_dir_all(ledger_path(&h).parent().unwrap()).unwrap();
    std::fs::write(ledger_path(&h), ledger.to_string()).unwrap();
    let out = h
        .command(None)
        .args(["servers", "enable", "ghost"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("cuts a character"), "{said}");
    assert!(said.contains("[W-LEDGER-UNREADABLE]"), "{said}");
    assert_eq!(std::fs::read_to_string(&h.cursor).unwrap(), cursor);
}
