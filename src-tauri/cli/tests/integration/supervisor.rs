//! The supervisor with real processes: `warden daemon`, real `warden bridge`s in front of the
//! fake server, and the command line (`warden status`, `probe`, `restart`, `fallback`,
//! `debug`, `orphans`, `history`), each test in its own socket, state dir and config.
//!
//! Waiting is done by polling `warden status --json` (or the history) with a deadline: the
//! supervisor's state has no event a separate process could await.

use std::path::PathBuf;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{FAKE, WARDEN, alive, cannot_run, require_tool, signal};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;
use warden_supervisor::api::op;

const DEADLINE: Duration = Duration::from_secs(15);

/// One test's world: a control socket, a state dir and a config file.
pub(crate) struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    pub(crate) fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn socket(&self) -> PathBuf {
        self.dir.path().join("run").join("control.sock")
    }
    pub(crate) fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }
    fn config(&self) -> PathBuf {
        self.dir.path().join("config.toml")
    }
    fn apply(&self, cmd: &mut Command) {
        cmd.env("WARDEN_SOCKET", self.socket())
            .env("WARDEN_STATE_DIR", self.state())
            .env("WARDEN_CONFIG", self.config())
            // The IDE configs it finds are the test's own.
            .env("HOME", self.dir.path().join("home"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("WARDEN_LOG");
    }

    /// `warden ARGS...`, to its end.
    pub(crate) async fn warden(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new(WARDEN);
        cmd.args(args).stdin(Stdio::null()).kill_on_drop(true);
        self.apply(&mut cmd);
        tokio::time::timeout(Duration::from_secs(60), cmd.output())
            .await
            .expect("warden command did not end")
            .unwrap()
    }

    pub(crate) async fn json(&self, args: &[&str]) -> Value {
        let out = self.warden(args).await;
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "warden {args:?}: not JSON ({e}): {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }

    async fn status(&self) -> Value {
        self.json(&["status", "--json"]).await
    }

    /// Polls `warden status --json` until `pred` holds; returns that status.
    async fn wait_status(&self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            let out = self.warden(&["status", "--json"]).await;
            if let Ok(v) = serde_json::from_slice::<Value>(&out.stdout) {
                if pred(&v) {
                    return v;
                }
                assert!(
                    start.elapsed() < DEADLINE,
                    "{what}: not within {DEADLINE:?}; last status:\n{v:#}"
                );
            } else {
                assert!(
                    start.elapsed() < DEADLINE,
                    "{what}: no status within {DEADLINE:?}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub(crate) async fn daemon(&self, args: &[&str]) -> Daemon {
        let mut cmd = Command::new(WARDEN);
        cmd.arg("daemon")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        self.apply(&mut cmd);
        let child = cmd.spawn().unwrap();
        let d = Daemon { child };
        self.wait_status("the daemon answers", |_| true).await;
        d
    }

    pub(crate) fn bridge(&self, server: &str, sets: &[&str], fake: &[&str]) -> Bridge {
        self.bridge_of(server, sets, FAKE.as_ref(), fake)
    }

    fn bridge_of(
        &self,
        server: &str,
        sets: &[&str],
        program: &std::path::Path,
        args: &[&str],
    ) -> Bridge {
        let mut cmd = Command::new(WARDEN);
        cmd.args(["bridge", "--server", server]);
        for s in sets {
            cmd.args(["--set", s]);
        }
        cmd.arg("--").arg(program).args(args);
        self.apply(&mut cmd);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take();
        let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
        let (tx, lines) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok(Some(line)) = out.next_line().await {
                if let Ok(v) = serde_json::from_str::<Value>(&line)
                    && tx.send(v).is_err()
                {
                    return;
                }
            }
        });
        Bridge {
            child,
            stdin,
            lines,
            next_id: 0,
        }
    }

    fn history_file(&self) -> PathBuf {
        self.state().join("history.jsonl")
    }
}

pub(crate) struct Daemon {
    child: Child,
}

impl Daemon {
    /// SIGTERM, and waits for a clean exit.
    pub(crate) async fn stop(mut self) {
        signal(self.child.id().unwrap(), "TERM");
        let status = tokio::time::timeout(DEADLINE, self.child.wait())
            .await
            .expect("daemon did not stop on SIGTERM")
            .unwrap();
        assert!(status.success(), "daemon exit: {status}");
    }
}

pub(crate) struct Bridge {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::UnboundedReceiver<Value>,
    next_id: i64,
}

impl Bridge {
    fn pid(&self) -> u32 {
        self.child.id().unwrap()
    }

    pub(crate) async fn send(&mut self, msg: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin
            .write_all(format!("{msg}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
    }

    pub(crate) async fn start(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    pub(crate) async fn answer(&mut self, id: i64) -> Value {
        loop {
            let v = tokio::time::timeout(DEADLINE, self.lines.recv())
                .await
                .expect("no answer from the bridge")
                .expect("bridge stdout closed");
            if v["id"] == json!(id) && v.get("method").is_none() {
                return v;
            }
        }
    }

    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start(method, params).await;
        self.answer(id).await
    }

    pub(crate) async fn initialize(&mut self) -> Value {
        let r = self
            .request(
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "warden-tests", "version": "1"}}),
            )
            .await;
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        r
    }

    pub(crate) async fn close(mut self) {
        self.stdin.take();
        tokio::time::timeout(DEADLINE, self.child.wait())
            .await
            .expect("bridge did not exit")
            .unwrap();
    }
}

fn session_of(status: &Value, pid: u32) -> Option<Value> {
    status["sessions"]
        .as_array()?
        .iter()
        .find(|s| s["pid"] == json!(pid))
        .cloned()
}

fn server_of(status: &Value, name: &str) -> Option<Value> {
    status["servers"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == name)
        .cloned()
}

pub(crate) fn kinds(history: &Value) -> Vec<String> {
    history
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"]["kind"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[tokio::test]
async fn a_session_appears_at_once_and_a_hung_request_shows_its_growing_age() {
    let env = Env::new();
    let daemon = env.daemon(&[]).await;
    let mut b = env.bridge("fake", &["idle_timeout_ms=60000"], &[]);
    b.initialize().await;
    let handshake = Instant::now();
    let pid = b.pid();
    env.wait_status("the session", |s| session_of(s, pid).is_some())
        .await;
    let took = handshake.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "session appeared after {took:?}"
    );
    eprintln!("session in status {took:?} after the handshake");
    // The client's name comes with the next heartbeat.
    let s = env
        .wait_status("the client's name", |s| {
            session_of(s, pid).is_some_and(|x| x["client"] == "warden-tests 1")
        })
        .await;
    let session = session_of(&s, pid).unwrap();
    assert_eq!(session["server"], "fake");
    assert_eq!(session["state"], "live");
    assert!(session["last_heartbeat_ms"].as_u64().unwrap() < 3000);
    assert_eq!(server_of(&s, "fake").unwrap()["health"], "healthy");

    let hang = b
        .start("tools/call", json!({"name": "hang", "arguments": {}}))
        .await;
    let inflight = |s: &Value| {
        session_of(s, pid)
            .and_then(|x| x["inflight"].as_array().cloned())
            .and_then(|a| a.into_iter().find(|r| r["id"] == json!(hang)))
    };
    let s = env
        .wait_status("the hung request", |s| inflight(s).is_some())
        .await;
    let first = inflight(&s).unwrap();
    assert_eq!(first["method"], "tools/call");
    assert_eq!(first["tool"], "hang");
    assert_eq!(server_of(&s, "fake").unwrap()["inflight"], 1);
    let age0 = first["age_ms"].as_u64().unwrap();
    let s = env
        .wait_status("the age grows by 2 s", |s| {
            inflight(s).is_some_and(|r| r["age_ms"].as_u64().unwrap() >= age0 + 2000)
        })
        .await;
    let later = inflight(&s).unwrap();
    assert!(later["idle_ms"].as_u64().unwrap() >= age0 + 2000, "{later}");
    // The readable table says the same.
    let table = String::from_utf8(env.warden(&["status"]).await.stdout).unwrap();
    assert!(table.contains("tools/call (hang)"), "{table}");
    assert!(table.contains("healthy"), "{table}");
    b.close().await;
    daemon.stop().await;
}

#[tokio::test]
async fn a_stopped_bridge_becomes_unresponsive_after_three_heartbeats_and_a_killed_one_is_reaped() {
    let env = Env::new();
    let daemon = env.daemon(&[]).await;
    let mut b = env.bridge("fake", &[], &[]);
    b.initialize().await;
    let pid = b.pid();
    env.wait_status("a heartbeat", |s| {
        session_of(s, pid).is_some_and(|x| x["client"] == "warden-tests 1")
    })
    .await;
    signal(pid, "STOP");
    let stopped = Instant::now();
    let s = env
        .wait_status("unresponsive", |s| {
            session_of(s, pid).is_some_and(|x| x["state"] == "unresponsive")
        })
        .await;
    let took = stopped.elapsed();
    eprintln!("SIGSTOPped bridge unresponsive after {took:?}");
    // The last heartbeat came at most 2 s before the stop; three periods are 6 s.
    assert!(
        took >= Duration::from_millis(4000) && took < Duration::from_millis(9000),
        "{took:?}"
    );
    let session = session_of(&s, pid).unwrap();
    assert!(
        session["last_heartbeat_ms"].as_u64().unwrap() >= 6000,
        "{session}"
    );
    let server = server_of(&s, "fake").unwrap();
    assert_eq!(server["health"], "down");
    assert!(
        server["reason"].as_str().unwrap().contains("no heartbeat"),
        "{server}"
    );
    signal(pid, "CONT");
    env.wait_status("live again", |s| {
        session_of(s, pid).is_some_and(|x| x["state"] == "live")
    })
    .await;

    signal(pid, "KILL");
    let killed = Instant::now();
    let s = env
        .wait_status("reaped", |s| session_of(s, pid).is_none())
        .await;
    eprintln!("killed bridge reaped after {:?}", killed.elapsed());
    assert_eq!(server_of(&s, "fake").unwrap()["health"], "idle");
    let history = env.json(&["history", "--json", "--server", "fake"]).await;
    let k = kinds(&history);
    for kind in [
        "session_open",
        "session_unresponsive",
        "session_responsive",
        "session_reaped",
    ] {
        assert!(k.iter().any(|x| x == kind), "{kind} missing: {k:?}");
    }
    let _ = b.child.wait().await;
    daemon.stop().await;
}

#[tokio::test]
async fn a_crash_loop_turns_the_server_down_with_the_reason() {
    let env = Env::new();
    let daemon = env.daemon(&[]).await;
    let count = env.dir.path().join("starts");
    let count = count.to_str().unwrap();
    let mut b = env.bridge(
        "crashy",
        &[
            "backoff_ms=50",
            "max_backoff_ms=200",
            "circuit_failures=4",
            "circuit_cooldown_ms=60000",
            "startup_timeout_ms=5000",
        ],
        &[
            "--start-count",
            count,
            "--crash-from",
            "2",
            "--crash-until",
            "1000",
        ],
    );
    // Start 1 answers the handshake (a server that never does is a start failure instead:
    // spawn.rs); then it crashes, and every restart crashes at once.
    let init = b
        .start(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "warden-tests", "version": "1"}}),
        )
        .await;
    let answer = b.answer(init).await;
    assert!(answer.get("result").is_some(), "{answer}");
    let crash = b
        .start(
            "tools/call",
            json!({"name": "crash", "arguments": {"code": 1}}),
        )
        .await;
    let answer = b.answer(crash).await;
    assert!(answer.get("error").is_some(), "{answer}");
    let s = env
        .wait_status("down", |s| {
            server_of(s, "crashy").is_some_and(|x| x["health"] == "down")
        })
        .await;
    let server = server_of(&s, "crashy").unwrap();
    let reason = server["reason"].as_str().unwrap();
    eprintln!("crash loop: {reason}");
    assert!(
        reason.contains("breaker open") || reason.contains("crash loop"),
        "{reason}"
    );
    let last_error = server["last_error"].as_str().unwrap_or("");
    assert!(!last_error.is_empty(), "{server}");
    assert!(server["restarts"].as_u64().unwrap() >= 2, "{server}");
    // The table shows the reason too.
    let table = String::from_utf8(env.warden(&["status"]).await.stdout).unwrap();
    assert!(table.contains("down") && table.contains(reason), "{table}");
    b.close().await;
    daemon.stop().await;
}

#[tokio::test]
async fn a_restarted_supervisor_shows_the_earlier_history() {
    let env = Env::new();
    let daemon = env.daemon(&[]).await;
    let mut b = env.bridge("fake", &[], &[]);
    b.initialize().await;
    for i in 0..5 {
        let r = b
            .request(
                "tools/call",
                json!({"name": "echo", "arguments": {"text": format!("hi {i}")}}),
            )
            .await;
        assert!(r.get("result").is_some());
    }
    let pid = b.pid();
    env.wait_status("six requests", |s| {
        server_of(s, "fake").is_some_and(|x| x["requests"] == 6)
    })
    .await;
    b.close().await;
    env.wait_status("the session gone", |s| session_of(s, pid).is_none())
        .await;
    daemon.stop().await;

    let again = env.daemon(&[]).await;
    let s = env.status().await;
    let server = server_of(&s, "fake").expect("the server is known from the history");
    assert_eq!(server["requests"], 6, "{server}");
    assert_eq!(server["health"], "idle");
    assert_eq!(
        server["command"],
        json!([FAKE]),
        "the command is remembered for probes"
    );
    assert!(s["sessions"].as_array().unwrap().is_empty());
    let history = env.json(&["history", "--json", "--server", "fake"]).await;
    let k = kinds(&history);
    assert!(k.iter().filter(|x| *x == "request").count() == 6, "{k:?}");
    assert!(k.contains(&"session_open".to_owned()), "{k:?}");
    // Known from the history: it can be probed by name.
    let probe = env.json(&["probe", "--server", "fake", "--json"]).await;
    assert_eq!(probe["ok"], true, "{probe}");
    again.stop().await;
    // Without a supervisor, the history file still answers.
    let history = env.json(&["history", "--json", "--server", "fake"]).await;
    assert!(kinds(&history).contains(&"probe".to_owned()));
}

#[tokio::test]
async fn restart_is_acknowledged_and_fallback_and_debug_edit_config_keeping_comments() {
    let env = Env::new();
    let original = "# Warden settings, by hand\n[defaults]\nidle_timeout_ms = 50000 # under the client's 60 s\n\n[servers.fake] # the fake one\nretries = 2\n";
    std::fs::write(env.config(), original).unwrap();
    let daemon = env.daemon(&[]).await;
    let mut b = env.bridge(
        "fake",
        &[],
        &["--pid-file", env.dir.path().join("pids").to_str().unwrap()],
    );
    b.initialize().await;
    let pid = b.pid();
    env.wait_status("the session", |s| session_of(s, pid).is_some())
        .await;

    let start = Instant::now();
    let out = env.json(&["restart", "fake", "--json"]).await;
    eprintln!("restart acknowledged in {:?}", start.elapsed());
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(out["sessions"][0]["pid"], pid);
    assert_eq!(out["sessions"][0]["ok"], true);
    env.wait_status("the restart counted", |s| {
        server_of(s, "fake").is_some_and(|x| x["restarts"] == 1)
    })
    .await;
    let r = b
        .request(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "after"}}),
        )
        .await;
    assert!(r.get("result").is_some(), "{r}");

    let start = Instant::now();
    let out = env.json(&["debug", "fake", "on", "--json"]).await;
    eprintln!("debug on picked up in {:?}", start.elapsed());
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(out["sessions"][0]["ok"], true, "{out}");
    assert!(
        out["message"]
            .as_str()
            .unwrap()
            .contains("picked up by 1 of 1"),
        "{out}"
    );
    let text = std::fs::read_to_string(env.config()).unwrap();
    assert_eq!(text, format!("{original}debug = true\n"));
    env.wait_status("debug in the heartbeat", |s| {
        session_of(s, pid).is_some_and(|x| x["debug"] == true)
    })
    .await;

    let out = env.json(&["fallback", "fake", "on", "--json"]).await;
    assert_eq!(out["ok"], true, "{out}");
    let text = std::fs::read_to_string(env.config()).unwrap();
    assert_eq!(
        text,
        format!("{original}debug = true\nforce_fallback = true\n")
    );
    let s = env
        .wait_status("fallback health", |s| {
            server_of(s, "fake").is_some_and(|x| x["health"] == "fallback")
        })
        .await;
    assert!(session_of(&s, pid).unwrap()["fallback"] == true);
    // The fallback serves ripgrep's tools.
    let tools = b.request("tools/list", json!({})).await;
    assert!(tools.to_string().contains("advanced-search"), "{tools}");

    let out = env.json(&["fallback", "fake", "off", "--json"]).await;
    assert_eq!(out["ok"], true, "{out}");
    let out = env.json(&["debug", "fake", "off", "--json"]).await;
    assert_eq!(out["ok"], true, "{out}");
    let text = std::fs::read_to_string(env.config()).unwrap();
    assert_eq!(
        text,
        format!("{original}debug = false\nforce_fallback = false\n")
    );
    env.wait_status("back to the server", |s| {
        server_of(s, "fake").is_some_and(|x| x["health"] != "fallback")
    })
    .await;

    // A server with no session: the setting is written, and the outcome says so.
    let out = env.json(&["debug", "other", "on", "--json"]).await;
    assert!(
        out["message"].as_str().unwrap().contains("no live session"),
        "{out}"
    );
    let out = env.warden(&["restart", "other"]).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing to restart"));
    b.close().await;
    daemon.stop().await;
    // Without a supervisor the edit still happens, and says so.
    let out = env.warden(&["debug", "other", "off"]).await;
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("no supervisor is running"));
    assert!(
        std::fs::read_to_string(env.config())
            .unwrap()
            .ends_with("[servers.other]\ndebug = false\n")
    );
}

#[tokio::test]
async fn without_a_supervisor_status_says_what_to_do() {
    let env = Env::new();
    let out = env.warden(&["status"]).await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no supervisor is running; start the tray app or `warden daemon`"),
        "{err}"
    );
    let out = env.warden(&["restart", "x"]).await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("no supervisor is running"));
    let out = env.warden(&["probe", "--server", "never-seen"]).await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is not known") && err.contains("warden probe --"),
        "{err}"
    );
}

/// A `warden` from before the typed API (it sent `status` and `command` lines) is told to
/// update, not left waiting; its command runs nothing.
#[tokio::test]
async fn a_line_of_the_retired_protocol_is_answered_with_what_to_do() {
    let env = Env::new();
    let daemon = env.daemon(&[]).await;
    let stream = tokio::net::UnixStream::connect(env.socket()).await.unwrap();
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    write
        .write_all(b"{\"type\":\"status\",\"id\":1}\n{\"type\":\"command\",\"id\":2,\"action\":\"fallback\",\"server\":\"x\",\"on\":true}\n")
        .await
        .unwrap();
    let mut answers = Vec::new();
    for _ in 0..2 {
        let line = tokio::time::timeout(DEADLINE, lines.next_line())
            .await
            .expect("no answer")
            .unwrap()
            .expect("the connection closed");
        answers.push(serde_json::from_str::<Value>(&line).unwrap());
    }
    assert_eq!(answers[0]["type"], "error", "{answers:?}");
    assert_eq!(answers[1]["type"], "ack", "{answers:?}");
    assert_eq!(answers[1]["ok"], false, "{answers:?}");
    for a in &answers {
        assert!(
            a["message"].as_str().unwrap().contains("update `warden`"),
            "{a}"
        );
    }
    assert!(
        !env.config().exists(),
        "the retired command changed config.toml"
    );
    daemon.stop().await;
}

/// `warden probe -- COMMAND` runs the server in the folder the command runs in, also when a
/// supervisor runs the probe (before, it ran in the supervisor's folder, so a relative
/// `python3 server.py` was not found).
#[tokio::test]
async fn a_probe_through_the_supervisor_runs_in_the_callers_folder() {
    let env = Env::new();
    let _daemon = env.daemon(&[]).await;
    let here = tempfile::tempdir().unwrap();
    let here = here.path().canonicalize().unwrap();
    let mut cmd = Command::new(WARDEN);
    cmd.args(["probe", "--json", "--", FAKE, "--require-cwd"])
        .arg(&here)
        .current_dir(&here)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    env.apply(&mut cmd);
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("warden probe did not end")
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], true, "{report}");
}

#[tokio::test]
async fn probe_reports_cold_start_and_tools_and_failures() {
    let env = Env::new();
    let start = Instant::now();
    let r = env
        .json(&["probe", "--json", "--", FAKE, "--slow-start-ms", "300"])
        .await;
    eprintln!("probe took {:?}: {r}", start.elapsed());
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["tools"], 13);
    assert!(r["cold_start_ms"].as_u64().unwrap() >= 300, "{r}");
    assert_eq!(r["server_info"]["name"], "mcp-fake-server");
    assert_eq!(r["shutdown"], "exited with status 0");
    let out = env
        .warden(&[
            "probe",
            "--",
            FAKE,
            "--crash-until",
            "1",
            "--start-count",
            env.dir.path().join("n").to_str().unwrap(),
        ])
        .await;
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("FAILED")
            && text.contains("exited with status 1 before answering server/discover"),
        "{text}"
    );
    assert!(
        text.contains("crashes on purpose"),
        "stderr tail shown: {text}"
    );
}

/// A probe of a server that hangs (it never reads its stdin, ignores SIGTERM and has a child in
/// its process group) ends at its timeout with the start-up code and leaves nothing behind.
#[tokio::test]
async fn a_probe_of_a_hanging_server_ends_at_its_timeout_and_leaves_no_process() {
    let env = Env::new();
    let pids = env.dir.path().join("pids");
    let r = env
        .json(&[
            "probe",
            "--json",
            "--timeout-ms",
            "500",
            "--",
            FAKE,
            "--slow-start-ms",
            "600000",
            "--ignore-sigterm",
            "--grandchild",
            "--pid-file",
            pids.to_str().unwrap(),
        ])
        .await;
    assert_eq!(
        (&r["ok"], &r["code"]),
        (&json!(false), &json!("W-SPAWN-STARTUP-TIMEOUT")),
        "{r}"
    );
    let started: Vec<u32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    assert_eq!(
        started.len(),
        2,
        "the server and its grandchild: {started:?}"
    );
    let left: Vec<u32> = started.into_iter().filter(|p| alive(*p)).collect();
    assert!(left.is_empty(), "still running after the probe: {left:?}");
}

#[tokio::test]
async fn known_servers_are_probed_on_schedule_and_npx_ones_prewarmed() {
    let env = Env::new();
    // An `npx` that is the fake server: a package runner as far as pre-warming can tell.
    let npx = env.dir.path().join("npx");
    std::os::unix::fs::symlink(FAKE, &npx).unwrap();
    let daemon = env.daemon(&[]).await;
    let mut b = env.bridge_of("pkg", &[], &npx, &[]);
    b.initialize().await;
    let mut plain = env.bridge("plain", &[], &[]);
    plain.initialize().await;
    env.wait_status("both sessions", |s| {
        s["sessions"].as_array().is_some_and(|a| a.len() == 2)
    })
    .await;
    b.close().await;
    plain.close().await;
    daemon.stop().await;

    // Pre-warm at start: only the npx server is probed.
    let daemon = env.daemon(&["--prewarm"]).await;
    let s = env
        .wait_status("the pre-warm probe", |s| {
            server_of(s, "pkg").is_some_and(|x| x["last_probe"]["ok"] == true)
        })
        .await;
    let pkg = server_of(&s, "pkg").unwrap();
    assert_eq!(pkg["last_probe"]["tools"], 13);
    assert_eq!(pkg["health"], "idle");
    assert!(
        pkg["reason"].as_str().unwrap().contains("last probe"),
        "{pkg}"
    );
    assert!(server_of(&s, "plain").unwrap()["last_probe"].is_null());
    daemon.stop().await;

    // On schedule: every known server.
    let daemon = env.daemon(&["--probe-interval-secs", "1"]).await;
    env.wait_status("scheduled probes", |s| {
        ["pkg", "plain"]
            .iter()
            .all(|n| server_of(s, n).is_some_and(|x| x["last_probe"]["ok"] == true))
    })
    .await;
    daemon.stop().await;
}

/// Health before the first call: with `--probe-ide`, each stdio server of the IDE configs is
/// probed at start with the env and in the `cwd` its client gives it (a relative `cwd` is the
/// workspace's, unknown here: not probed); one that cannot start is down with its code and
/// the command it tried, and fixing its entry probes it again at once.
#[tokio::test]
async fn ide_servers_are_probed_before_use_with_their_env_and_again_when_fixed() {
    let env = Env::new();
    let cursor = env.dir.path().join("home/.cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().unwrap()).unwrap();
    let root = env.dir.path().join("srv");
    std::fs::create_dir_all(&root).unwrap();
    let root = root.canonicalize().unwrap();
    let root = root.to_str().unwrap();
    let write = |typo: &str| {
        let config = json!({"mcpServers": {
            "keyed": {"command": FAKE, "args": ["--require-env", "API_KEY"], "env": {"API_KEY": "k-123"}},
            "typo": {"command": typo, "args": []},
            "rooted": {"command": FAKE, "args": ["--require-cwd", root], "cwd": root},
            "relative": {"command": FAKE, "args": [], "cwd": "srv"},
        }});
        let tmp = cursor.with_extension("tmp");
        std::fs::write(&tmp, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
        std::fs::rename(&tmp, &cursor).unwrap();
    };
    write("/nonexistent/mcp-srv");
    let daemon = env.daemon(&["--probe-ide", "--watch-clients"]).await;
    let s = env
        .wait_status("all three probed", |s| {
            ["keyed", "typo", "rooted"]
                .iter()
                .all(|n| server_of(s, n).is_some_and(|x| !x["last_probe"].is_null()))
        })
        .await;
    let keyed = server_of(&s, "keyed").unwrap();
    assert_eq!(
        keyed["last_probe"]["ok"], true,
        "the env reached it: {keyed}"
    );
    let rooted = server_of(&s, "rooted").unwrap();
    assert_eq!(
        rooted["last_probe"]["ok"], true,
        "it ran in its cwd: {rooted}"
    );
    assert!(
        server_of(&s, "relative").is_none_or(|x| x["last_probe"].is_null()),
        "a relative cwd is not probed: {s}"
    );
    assert_eq!(keyed["health"], "idle");
    let typo = server_of(&s, "typo").unwrap();
    assert_eq!(
        (&typo["health"], &typo["code"]),
        (&json!("down"), &json!("W-SPAWN-NOT-FOUND")),
        "{typo}"
    );
    assert!(
        typo["reason"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/mcp-srv"),
        "{typo}"
    );
    write(FAKE);
    env.wait_status("the fixed entry is probed again", |s| {
        server_of(s, "typo").is_some_and(|x| x["last_probe"]["ok"] == true)
    })
    .await;
    daemon.stop().await;
}

#[tokio::test]
async fn events_stream_live() {
    let env = Env::new();
    let daemon = env.daemon(&[]).await;
    let mut b = env.bridge("fake", &[], &[]);
    b.initialize().await;
    let mut cmd = Command::new(WARDEN);
    cmd.args(["events", "--json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    env.apply(&mut cmd);
    let mut events = cmd.spawn().unwrap();
    let mut lines = BufReader::new(events.stdout.take().unwrap()).lines();
    let mut next = async || -> Value {
        let line = tokio::time::timeout(DEADLINE, lines.next_line())
            .await
            .expect("no event")
            .unwrap()
            .expect("events ended");
        serde_json::from_str(&line).unwrap()
    };
    // Heartbeats recur: the first one seen proves the stream is subscribed.
    while next().await["kind"] != "session_updated" {}
    b.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x"}}),
    )
    .await;
    loop {
        let v = next().await;
        if v["kind"] == "event" && v["entry"]["event"]["method"] == "tools/call" {
            assert_eq!(v["entry"]["event"]["outcome"], "ok", "{v}");
            assert_eq!(v["entry"]["server"], "fake");
            break;
        }
    }
    b.close().await;
    let _ = events.kill().await;
    daemon.stop().await;
}

/// A process that looks like a server left behind by a bridge that is gone.
fn fake_orphan(dead_bridge: u32) -> Child {
    Command::new(FAKE)
        .arg("--sleeper")
        .env("WARDEN_SESSION", format!("{dead_bridge}-1"))
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

async fn dead_pid() -> u32 {
    let mut c = Command::new("true").spawn().unwrap();
    let pid = c.id().unwrap();
    c.wait().await.unwrap();
    pid
}

#[tokio::test]
async fn orphans_are_found_and_stopped_when_asked_or_by_policy() {
    let env = Env::new();
    let dead = dead_pid().await;
    let mut orphan = fake_orphan(dead);
    let pid = orphan.id().unwrap();
    let pid_s = pid.to_string();
    let list = env.json(&["orphans", "--json"]).await;
    let found = list
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["pid"] == pid)
        .unwrap_or_else(|| panic!("{pid} not found in {list:#}"))
        .clone();
    assert_eq!(found["bridge_pid"], dead);
    assert!(
        found["reason"].as_str().unwrap().contains("is gone"),
        "{found}"
    );
    // Stopping asks first; without a terminal it needs --yes.
    let out = env.warden(&["orphans", "--stop", "--pid", &pid_s]).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
    assert!(alive(pid));
    // The sleeper ignores SIGTERM: it takes the 2 s grace, then SIGKILL.
    let out = env
        .json(&["orphans", "--stop", "--yes", "--pid", &pid_s, "--json"])
        .await;
    assert_eq!(out[0]["ok"], true, "{out}");
    tokio::time::timeout(DEADLINE, orphan.wait())
        .await
        .unwrap()
        .unwrap();

    // By policy, the daemon stops them itself.
    let daemon = env
        .daemon(&["--orphans", "stop", "--orphan-interval-secs", "1"])
        .await;
    let mut orphan = fake_orphan(dead);
    let start = Instant::now();
    tokio::time::timeout(DEADLINE, orphan.wait())
        .await
        .unwrap()
        .unwrap();
    eprintln!("orphan stopped by policy after {:?}", start.elapsed());
    // The daemon notes the stop once it has seen the process gone.
    let start = Instant::now();
    loop {
        let k = kinds(&env.json(&["history", "--json"]).await);
        if k.contains(&"orphan".to_owned()) && k.contains(&"orphan_stopped".to_owned()) {
            break;
        }
        assert!(start.elapsed() < DEADLINE, "{k:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    daemon.stop().await;
}

#[tokio::test]
async fn a_socket_directory_open_to_others_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let run = env.dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = Command::new(WARDEN);
    cmd.arg("daemon").stdin(Stdio::null());
    env.apply(&mut cmd);
    let out = tokio::time::timeout(DEADLINE, cmd.output())
        .await
        .unwrap()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("chmod 700"), "{err}");
    assert!(!env.socket().exists());
}

/// Another user's connection is refused. Needs root (to run the daemon as `nobody`) and
/// `setpriv`; without them it fails under CI and says why it did not run elsewhere.
#[tokio::test]
async fn another_users_connection_is_refused() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let root = std::fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false);
    if !root {
        return cannot_run("not root (needed to run the daemon as another user)");
    }
    let Some(setpriv) = require_tool("setpriv") else {
        return;
    };
    let env = Env::new();
    let nobody = 65534u32;
    let base = env.dir.path();
    std::fs::set_permissions(base, std::fs::Permissions::from_mode(0o755)).unwrap();
    let as_nobody = ["--reuid", "65534", "--regid", "65534", "--clear-groups"];
    let runs = |exe: &std::path::Path| {
        std::process::Command::new(&setpriv)
            .args(as_nobody)
            .arg(exe)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let mut warden = PathBuf::from(WARDEN);
    if !runs(&warden) {
        // uid 65534 cannot reach the build (under a private home, say): a copy it can reach.
        warden = base.join("warden");
        std::fs::copy(WARDEN, &warden).unwrap();
        if !runs(&warden) {
            return cannot_run(&format!("uid 65534 cannot run {}", warden.display()));
        }
    }
    // The daemon (as nobody) owns its dirs; the test (root) connects anyway, which the file
    // permissions would not stop: the peer-uid check must.
    for d in ["run", "state"] {
        std::fs::create_dir(base.join(d)).unwrap();
        std::os::unix::fs::chown(base.join(d), Some(nobody), Some(nobody)).unwrap();
        std::fs::set_permissions(base.join(d), std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let mut cmd = Command::new(&setpriv);
    cmd.args(as_nobody)
        .arg(&warden)
        .arg("daemon")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    env.apply(&mut cmd);
    let mut daemon = cmd.spawn().unwrap();
    let start = Instant::now();
    while !env.socket().exists() {
        assert!(
            start.elapsed() < DEADLINE,
            "the daemon as nobody did not bind"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(std::fs::metadata(env.socket()).unwrap().uid(), nobody);
    // A raw connection: accepted by the kernel, dropped by the supervisor without an answer.
    let mut stream = tokio::net::UnixStream::connect(env.socket()).await.unwrap();
    let _ = stream
        .write_all(b"{\"type\":\"api_request\",\"id\":1,\"request\":{\"op\":\"status\"}}\n")
        .await;
    let mut buf = Vec::new();
    let n = tokio::time::timeout(
        DEADLINE,
        tokio::io::AsyncReadExt::read_to_end(&mut stream, &mut buf),
    )
    .await
    .expect("the connection was neither answered nor closed");
    assert!(
        n.is_err() || buf.is_empty(),
        "got an answer: {:?}",
        String::from_utf8_lossy(&buf)
    );
    // `warden status` refuses a socket that is not ours, and says so.
    let out = env.warden(&["status"]).await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a private socket of this user"), "{err}");
    signal(daemon.id().unwrap(), "TERM");
    let status = tokio::time::timeout(DEADLINE, daemon.wait())
        .await
        .unwrap()
        .unwrap();
    let mut stderr = String::new();
    if let Some(mut e) = daemon.stderr.take() {
        let _ = tokio::io::AsyncReadExt::read_to_string(&mut e, &mut stderr).await;
    }
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("refused a connection from uid 0"),
        "{stderr}"
    );
}

/// `warden ARGS...` run as a sandboxed server runs: in its own user and pid namespaces
/// (bubblewrap), seeing the whole file system read-only, so the control socket is reachable.
/// `None` (after [`cannot_run`]) without bwrap, or where it may not create namespaces.
async fn warden_in_namespaces(env: &Env, args: &[&str]) -> Option<Output> {
    let bwrap = require_tool("bwrap")?;
    let mut cmd = Command::new(bwrap);
    cmd.args(["--unshare-user", "--unshare-pid", "--die-with-parent"])
        .args([
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--",
        ])
        .arg(WARDEN)
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    env.apply(&mut cmd);
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("warden in bwrap did not end")
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if err.starts_with("bwrap:") {
        cannot_run(&format!("bwrap cannot create namespaces here: {err}"));
        return None;
    }
    Some(out)
}

/// A probe that leaves `marker` behind if it runs: the shell creates it, then becomes the
/// fake server, which answers the probe.
fn probe_creating(marker: &std::path::Path) -> Vec<String> {
    let script = format!("touch '{}' && exec '{FAKE}'", marker.display());
    ["probe", "--", "/bin/sh", "-c", &script]
        .map(str::to_owned)
        .to_vec()
}

/// A program in other namespaces than the supervisor's (a sandboxed server that reaches the
/// socket) may not have it run a command: the probe is refused with its code, nothing runs.
#[tokio::test]
async fn a_probe_from_another_user_and_pid_namespace_is_refused_and_runs_nothing() {
    let env = Env::new();
    let _daemon = env.daemon(&[]).await;
    let marker = env.dir.path().join("probed");
    let args = probe_creating(&marker);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let Some(out) = warden_in_namespaces(&env, &args).await else {
        return;
    };
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("W-CONTROL-FOREIGN") && !marker.exists(),
        "exit {}, probe ran: {}; stderr: {err}",
        out.status,
        marker.exists()
    );
}

/// The same probe from the user's own namespaces runs.
#[tokio::test]
async fn the_same_probe_from_our_own_namespaces_runs() {
    let env = Env::new();
    let _daemon = env.daemon(&[]).await;
    let marker = env.dir.path().join("probed");
    let args = probe_creating(&marker);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = env.warden(&args).await;
    assert!(
        out.status.success() && marker.exists(),
        "exit {}, probe ran: {}; stderr: {}",
        out.status,
        marker.exists(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Watching stays allowed from other namespaces: `warden status` is answered.
#[tokio::test]
async fn status_from_another_namespace_is_answered() {
    let env = Env::new();
    let _daemon = env.daemon(&[]).await;
    let Some(out) = warden_in_namespaces(&env, &["status", "--json"]).await else {
        return;
    };
    let status: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    assert!(status["servers"].is_array(), "{status}");
}

/// Load: `SUPERVISOR_LOAD_SESSIONS` bridges (default 50), each sending a request every
/// `SUPERVISOR_LOAD_INTERVAL_MS` (default 100) for `SUPERVISOR_LOAD_SECS` (default 30); the
/// daemon's CPU time and memory are read from /proc. Run by scripts/bench-supervisor.sh,
/// which writes docs/SUPERVISOR_LOAD.md.
#[tokio::test]
#[ignore = "load test: run scripts/bench-supervisor.sh"]
async fn load_many_sessions_with_steady_traffic() {
    let var = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let sessions = var("SUPERVISOR_LOAD_SESSIONS", 50) as usize;
    let interval = Duration::from_millis(var("SUPERVISOR_LOAD_INTERVAL_MS", 100));
    let secs = var("SUPERVISOR_LOAD_SECS", 30);
    let env = Env::new();
    let daemon = env.daemon(&[]).await;
    let dpid = daemon.child.id().unwrap();
    let mut bridges = Vec::new();
    for _ in 0..sessions {
        let mut b = env.bridge("load", &[], &[]);
        b.initialize().await;
        bridges.push(b);
    }
    env.wait_status("all sessions", |s| {
        server_of(s, "load").is_some_and(|x| x["sessions"] == sessions)
    })
    .await;
    // Heartbeats only, no traffic.
    let idle_secs = var("SUPERVISOR_LOAD_IDLE_SECS", 10);
    let cpu_idle0 = cpu_ticks(dpid);
    let t_idle = Instant::now();
    tokio::time::sleep(Duration::from_secs(idle_secs)).await;
    let idle_cpu = (cpu_ticks(dpid) - cpu_idle0) as f64 / 100.0;
    let idle_wall = t_idle.elapsed().as_secs_f64();
    let rss_idle = rss_kib(dpid);

    let cpu0 = cpu_ticks(dpid);
    let t0 = Instant::now();
    let mut rss_peak = 0;
    let mut rss_samples = Vec::new();
    let mut rss_timeline = Vec::new();
    let mut tasks = Vec::new();
    for mut b in bridges {
        tasks.push(tokio::spawn(async move {
            let mut timer = tokio::time::interval(interval);
            let end = Instant::now() + Duration::from_secs(secs);
            let mut n = 0u64;
            while Instant::now() < end {
                timer.tick().await;
                let r = b
                    .request(
                        "tools/call",
                        json!({"name": "echo", "arguments": {"text": "x"}}),
                    )
                    .await;
                assert!(r.get("result").is_some());
                n += 1;
            }
            (b, n)
        }));
    }
    let mut status_ms = Vec::new();
    while t0.elapsed() < Duration::from_secs(secs) {
        let rss = rss_kib(dpid);
        rss_peak = rss_peak.max(rss);
        rss_samples.push(rss);
        if rss_samples.len() % 10 == 1 {
            rss_timeline.push(json!([t0.elapsed().as_secs(), rss]));
        }
        let t = Instant::now();
        let _ = env.status().await;
        status_ms.push(t.elapsed().as_millis() as u64);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let mut total = 0;
    let mut done = Vec::new();
    for t in tasks {
        let (b, n) = t.await.unwrap();
        total += n;
        done.push(b);
    }
    let wall = t0.elapsed().as_secs_f64();
    let cpu = (cpu_ticks(dpid) - cpu0) as f64 / 100.0;
    rss_peak = rss_peak.max(rss_kib(dpid));
    let s = env.status().await;
    let server = server_of(&s, "load").unwrap();
    status_ms.sort_unstable();
    let result = json!({
        "sessions": sessions,
        "interval_ms": interval.as_millis() as u64,
        "seconds": wall,
        "requests": total,
        "requests_per_s": total as f64 / wall,
        "supervisor_cpu_s": cpu,
        "supervisor_cpu_percent": 100.0 * cpu / wall,
        "supervisor_rss_peak_kib": rss_peak,
        "supervisor_rss_end_kib": rss_kib(dpid),
        "supervisor_rss_idle_kib": rss_idle,
        "supervisor_rss_first_traffic_kib": rss_samples.first().copied().unwrap_or(0),
        "idle_seconds": idle_wall,
        "rss_timeline": rss_timeline,
        "idle_cpu_percent": 100.0 * idle_cpu / idle_wall,
        "status_ms_median": status_ms.get(status_ms.len() / 2).copied().unwrap_or(0),
        "status_ms_max": status_ms.last().copied().unwrap_or(0),
        "counted_requests": server["requests"],
        "health": server["health"],
        "history_events": s["supervisor"]["history_events"],
        "history_bytes": std::fs::metadata(env.history_file()).map(|m| m.len()).unwrap_or(0),
    });
    eprintln!("{result:#}");
    if let Ok(out) = std::env::var("SUPERVISOR_LOAD_OUT") {
        std::fs::write(out, result.to_string()).unwrap();
    }
    // Every request reached the supervisor's metrics (the initializes too).
    assert!(server["requests"].as_u64().unwrap() >= total, "{server}");
    for b in done {
        b.close().await;
    }
    daemon.stop().await;
}

fn proc_stat(pid: u32) -> Vec<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    stat.rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// utime + stime, in clock ticks (100 per second on Linux).
fn cpu_ticks(pid: u32) -> u64 {
    let f = proc_stat(pid);
    // After the name: state(0) ppid(1) … utime(11) stime(12).
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn servers_of_detected_ide_configs_are_known_and_can_be_probed_by_name() {
    let env = Env::new();
    let cursor = env.dir.path().join("home/.cursor");
    std::fs::create_dir_all(&cursor).unwrap();
    let config = serde_json::json!({"mcpServers": {"from-cursor": {"command": FAKE, "args": ["--slow-start-ms", "10"]}}});
    std::fs::write(cursor.join("mcp.json"), config.to_string()).unwrap();
    let _daemon = env.daemon(&[]).await;
    let probe = env
        .json(&["probe", "--server", "from-cursor", "--json"])
        .await;
    assert_eq!(probe["ok"], true, "{probe}");
    assert_eq!(probe["tools"], 13, "{probe}");
}

/// A program that is on no PATH.
const NOSUCH: &str = "warden-test-nosuch-server";

/// Waits until `server` is down; returns its row.
async fn wait_down(env: &Env, server: &str) -> Value {
    let status = env
        .wait_status(&format!("{server} is down"), |s| {
            server_of(s, server).is_some_and(|g| g["health"] == "down")
        })
        .await;
    server_of(&status, server).unwrap()
}

/// A start failure a bridge logged while no supervisor ran (the line as `warden bridge`
/// writes it: the `spawn_failed` event of docs/behaviour.md): the supervisor takes it in when it
/// starts and lists the server down with the command, the cause and the code, in
/// `warden status --json` and in `warden status`, though it never had a session.
#[tokio::test]
async fn a_start_failure_logged_while_no_supervisor_ran_is_listed_when_one_starts() {
    let env = Env::new();
    let line = json!({
        "server": "gh", "session": 4242, "ts_ms": warden_wire::events::now_ms() - 60_000,
        "kind": "spawn_failed", "code": "W-SPAWN-NOT-FOUND",
        "command": format!("{NOSUCH} --stdio"),
        "cause": format!("`{NOSUCH}` was not found on PATH"),
        "stderr_tail": "", "fix": "install it, or give its absolute path",
    });
    let logs = env.state().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(logs.join("gh.jsonl"), format!("not an event\n{line}\n")).unwrap();

    let daemon = env.daemon(&[]).await;
    let gh = wait_down(&env, "gh").await;
    let summary = format!("{NOSUCH} --stdio: `{NOSUCH}` was not found on PATH");
    assert_eq!(gh["last_error"], summary.as_str(), "{gh:#}");
    assert_eq!(gh["code"], "W-SPAWN-NOT-FOUND", "{gh:#}");
    assert_eq!(gh["sessions"], 0, "{gh:#}");
    let reason = gh["reason"].as_str().unwrap();
    assert!(
        reason.contains(&summary) && reason.contains("give its absolute path"),
        "{reason}"
    );
    let text = env.warden(&["status"]).await;
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(&format!("gh last error [W-SPAWN-NOT-FOUND]: {summary}")),
        "{text}"
    );
    daemon.stop().await;

    // Taken in once: the next supervisor has it from its history, not twice.
    let daemon = env.daemon(&[]).await;
    wait_down(&env, "gh").await;
    let history = env.json(&["history", "--server", "gh", "--json"]).await;
    let failed = kinds(&history)
        .iter()
        .filter(|k| *k == "spawn_failed")
        .count();
    assert_eq!(failed, 1, "{history:#}");
    daemon.stop().await;
}

/// A wrapped server whose command does not exist, while the supervisor runs: the bridge tells
/// it before exiting, and `warden status` lists the server down with the command.
#[tokio::test]
async fn a_server_that_cannot_start_is_listed_down_with_its_command() {
    let env = Env::new();
    let daemon = env.daemon(&[]).await;
    let mut b = env.bridge_of("ghost", &[], NOSUCH.as_ref(), &["--stdio"]);
    let answer = b
        .request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "warden-tests", "version": "1"}}),
        )
        .await;
    assert!(answer.get("error").is_some(), "{answer}");
    b.close().await;
    let ghost = wait_down(&env, "ghost").await;
    let last_error = ghost["last_error"].as_str().unwrap();
    assert!(
        last_error.starts_with(&format!("{NOSUCH} --stdio: ")),
        "{ghost:#}"
    );
    assert_eq!(ghost["code"], "W-SPAWN-NOT-FOUND", "{ghost:#}");
    daemon.stop().await;
}

/// The same without a supervisor: the bridge logs the failure, and the supervisor started
/// afterwards lists the server down from the log.
#[tokio::test]
async fn a_server_that_could_not_start_before_the_supervisor_ran_is_listed_down() {
    let env = Env::new();
    let mut b = env.bridge_of("ghost", &[], NOSUCH.as_ref(), &["--stdio"]);
    let answer = b
        .request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "warden-tests", "version": "1"}}),
        )
        .await;
    assert!(answer.get("error").is_some(), "{answer}");
    b.close().await;
    let daemon = env.daemon(&[]).await;
    let ghost = wait_down(&env, "ghost").await;
    let last_error = ghost["last_error"].as_str().unwrap();
    assert!(
        last_error.starts_with(&format!("{NOSUCH} --stdio: ")),
        "{ghost:#}"
    );
    assert_eq!(ghost["code"], "W-SPAWN-NOT-FOUND", "{ghost:#}");
    assert_eq!(ghost["sessions"], 0, "{ghost:#}");
    daemon.stop().await;
}

/// The add workflow (`ServerAdd`, as `warden install` and the window's Add flow run it) starts
/// the new server the first time exactly as its client will: the argv written in the file,
/// with the entry's environment, through the bridge and its sandbox. The server refuses to
/// start without the entry's variable, which only `--pass-env` carries into the sandbox.
#[tokio::test]
#[cfg(target_os = "linux")]
async fn the_first_start_runs_the_written_entry_sandbox_and_environment_included() {
    use std::collections::BTreeMap;
    use warden_clients::ClientId;
    use warden_supervisor::api::{AddAnswer, AddSandbox, Request, Response};
    use warden_supervisor::connection::Connection;

    if require_tool("bwrap").is_none() {
        return;
    }
    let env = Env::new();
    let dir = env.dir.path().join("home/.cursor");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mcp.json");
    std::fs::write(&file, "{ \"mcpServers\": {} }\n").unwrap();
    let _daemon = env.daemon(&[]).await;
    let mut api = Connection::connect(&env.socket()).await.unwrap();
    let request = Request::ServerAdd(op::ServerAdd {
        name: "checked".into(),
        clients: vec![ClientId::Cursor],
        command: FAKE.into(),
        args: vec!["--require-env".into(), "ADDED_VAR".into()],
        url: None,
        headers: Vec::new(),
        env: BTreeMap::from([("ADDED_VAR".to_owned(), "yes".to_owned())]),
        secrets: BTreeMap::new(),
        wrap: true,
        sandbox: Some(AddSandbox {
            registry: true,
            first_start: false,
            keep: false,
        }),
        ask_destructive: false,
        start: true,
        dry_run: false,
    });
    let Response::ServerAdd(AddAnswer { probe, .. }) = api.request(request).await.unwrap() else {
        panic!("not a server_add answer")
    };
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let entry = &doc["mcpServers"]["checked"];
    let written: Vec<String> = std::iter::once(&entry["command"])
        .chain(entry["args"].as_array().unwrap())
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    let probe = probe.expect("the first start ran");
    assert_eq!(
        (probe.ok, probe.command, probe.error),
        (true, written, None),
        "config.toml: {}",
        std::fs::read_to_string(env.config()).unwrap_or_default()
    );
}

/// The window's Manage page through the API: add (previewed, then written through the bridge),
/// off and on by the client's own switch, and remove, each leaving the file byte-exact.
#[tokio::test]
async fn servers_are_added_switched_and_removed_through_the_api() {
    use std::collections::BTreeMap;
    use warden_clients::ClientId;
    use warden_supervisor::api::{AddAnswer, Request, Response};
    use warden_supervisor::connection::Connection;

    let env = Env::new();
    // Cursor has no switch of its own: off keeps the entry aside in Warden's ledger.
    let dir = env.dir.path().join("home/.cursor");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mcp.json");
    let original = "{\n  // mine\n  \"mcpServers\": {\n    \"kept\": { \"command\": \"kept-server\" }\n  }\n}\n";
    std::fs::write(&file, original).unwrap();
    let _daemon = env.daemon(&[]).await;
    let mut api = Connection::connect(&env.socket()).await.unwrap();
    let add = |dry_run| {
        Request::ServerAdd(op::ServerAdd {
            name: "added".into(),
            clients: vec![ClientId::Cursor],
            command: FAKE.into(),
            args: vec!["--banner".into()],
            url: None,
            headers: Vec::new(),
            env: BTreeMap::from([("MODE".to_owned(), "quiet".to_owned())]),
            secrets: BTreeMap::new(),
            wrap: true,
            sandbox: None,
            ask_destructive: false,
            start: false,
            dry_run,
        })
    };
    let Response::ServerAdd(AddAnswer { changes, risks, .. }) =
        api.request(add(true)).await.unwrap()
    else {
        panic!("not a server_add answer")
    };
    assert!(risks.is_empty(), "{risks:?}");
    assert!(changes[0].diff.contains("\"added\"") && !changes[0].written);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        original,
        "a preview writes nothing"
    );

    let Response::ServerAdd(AddAnswer { changes, .. }) = api.request(add(false)).await.unwrap()
    else {
        panic!("not a server_add answer")
    };
    assert!(
        changes[0].written && changes[0].backup.is_some(),
        "{changes:?}"
    );
    let added = std::fs::read_to_string(&file).unwrap();
    let doc: Value = serde_json::from_str(
        &added
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<String>(),
    )
    .unwrap();
    let args: Vec<&str> = doc["mcpServers"]["added"]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        args,
        [
            "bridge",
            "--server",
            "added",
            "--pass-env",
            "MODE",
            "--",
            FAKE,
            "--banner"
        ]
    );
    assert!(matches!(
        api.request(add(false)).await.unwrap(),
        Response::Error(e) if e.message.contains("added")
    ));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        added,
        "a name taken is refused"
    );

    let switch = |enabled| {
        Request::ServerSwitch(op::ServerSwitch {
            server: "added".into(),
            clients: Vec::new(),
            file: None,
            scope: None,
            enabled,
            dry_run: false,
        })
    };
    assert!(matches!(
        api.request(switch(false)).await.unwrap(),
        Response::ClientEdit { .. }
    ));
    assert!(
        !std::fs::read_to_string(&file)
            .unwrap()
            .contains("\"added\"")
    );
    let listed = env.json(&["servers", "list", "--json"]).await;
    let off = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "added")
        .expect("a server kept aside is still listed");
    assert_eq!(off["clients"][0]["enabled"], false);
    let Response::Clients(report) = api.request(Request::Clients).await.unwrap() else {
        panic!("not a clients report")
    };
    let kept: Vec<&str> = report
        .files
        .iter()
        .flat_map(|f| &f.kept_aside)
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(kept, ["added"], "the window lists it, off");
    assert!(matches!(
        api.request(switch(true)).await.unwrap(),
        Response::ClientEdit { .. }
    ));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), added);

    // Remove: the preview's plan, sent back, is applied.
    let remove = |plan, dry_run| {
        Request::ServerRemove(op::ServerRemove {
            server: "added".into(),
            clients: Vec::new(),
            plan,
            dry_run,
        })
    };
    let Response::ServerRemove { plan, .. } = api.request(remove(None, true)).await.unwrap() else {
        panic!("not a removal")
    };
    assert!(matches!(
        api.request(remove(Some(plan), false)).await.unwrap(),
        Response::ServerRemove { .. }
    ));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
}

/// `warden status` says which servers run sandboxed (contract: `sandbox: "off"|"bwrap"`).
#[tokio::test]
async fn status_shows_each_servers_sandbox() {
    if require_tool("bwrap").is_none() {
        return;
    }
    let env = Env::new();
    let _daemon = env.daemon(&[]).await;
    let mut boxed = env.bridge("boxed", &["sandbox=\"on\""], &[]);
    boxed.initialize().await;
    let mut open = env.bridge("open", &[], &[]);
    open.initialize().await;
    let status = env
        .wait_status("both sessions with their sandbox", |s| {
            server_of(s, "boxed").is_some_and(|v| v["sandbox"] == "bwrap")
                && server_of(s, "open").is_some_and(|v| v["sandbox"] == "off")
        })
        .await;
    let session = status["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["server"] == "boxed")
        .unwrap();
    assert_eq!(session["sandbox"], "bwrap");
    boxed.close().await;
    open.close().await;
}

/// `warden status` (and `--json`) shows the destinations each server's `sandbox_network`
/// proxy refused lately, each once, the latest first. Loopback only: the proxy refuses them
/// before any connection.
#[tokio::test]
async fn status_shows_the_destinations_a_servers_proxy_refused() {
    if require_tool("bwrap").is_none() {
        return;
    }
    let env = Env::new();
    let _daemon = env.daemon(&[]).await;
    let mut b = env.bridge("boxed", &["sandbox=\"on\"", "sandbox_network=[]"], &[]);
    let init = b.initialize().await;
    assert!(init.get("result").is_some(), "{init}");
    // Two ports nothing else takes while the test runs; nothing may connect to them.
    let first = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let second = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ports = [
        first.local_addr().unwrap().port(),
        second.local_addr().unwrap().port(),
    ];
    for port in [ports[0], ports[1], ports[0]] {
        let r = b
            .request(
                "tools/call",
                json!({"name": "echo", "arguments": {"fetch": format!("http://127.0.0.1:{port}/")}}),
            )
            .await;
        let got = r["result"]["content"][0]["text"].as_str().unwrap_or("");
        assert!(got.starts_with("HTTP/1.1 403"), "{r}");
    }
    let status = env
        .wait_status("the refusals", |s| {
            server_of(s, "boxed")
                .is_some_and(|v| v["network_denied"].as_array().is_some_and(|d| d.len() == 2))
        })
        .await;
    let denied = server_of(&status, "boxed").unwrap()["network_denied"].clone();
    // Once per destination per session: the third request logged nothing new.
    assert_eq!(denied[0]["host"], "127.0.0.1", "{denied}");
    assert_eq!(denied[0]["port"], ports[1], "{denied}");
    assert_eq!(denied[1]["port"], ports[0], "{denied}");
    assert!(denied[0]["ts_ms"].as_u64().unwrap() >= denied[1]["ts_ms"].as_u64().unwrap());
    let table = String::from_utf8(env.warden(&["status"]).await.stdout).unwrap();
    let line = format!(
        "  boxed network refused (not in sandbox_network), latest first: 127.0.0.1:{}, 127.0.0.1:{}",
        ports[1], ports[0]
    );
    assert!(table.contains(&line), "{table}");
    first.set_nonblocking(true).unwrap();
    assert!(
        first.accept().is_err(),
        "a refused destination saw a connection"
    );
    b.close().await;
}

/// Issue 29: what `warden status` shows follows the bridge within one refresh (1 s here; the
/// heartbeat period is 2 s): nothing in flight right after an answer, a restart as soon as
/// the bridge has made it.
#[tokio::test]
async fn status_follows_the_bridge_within_a_refresh() {
    const REFRESH: Duration = Duration::from_secs(1);
    let env = Env::new();
    let daemon = env.daemon(&[]).await;
    let mut b = env.bridge("prompt", &["backoff_ms=50"], &[]);
    b.initialize().await;
    let pid = b.pid();
    env.wait_status("the session", |s| session_of(s, pid).is_some())
        .await;
    b.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x"}}),
    )
    .await;
    let answered = Instant::now();
    let idle = |s: &Value| {
        session_of(s, pid).is_some_and(|x| x["inflight"].as_array().is_some_and(Vec::is_empty))
            && server_of(s, "prompt").is_some_and(|x| x["inflight"] == 0 && x["requests"] == 2)
    };
    env.wait_status("nothing in flight after the answers", idle)
        .await;
    let took = answered.elapsed();
    assert!(took < REFRESH, "in flight for {took:?} after the answer");

    let server = env
        .wait_status("the server's pid", |s| {
            session_of(s, pid).is_some_and(|x| x["server_pid"].as_u64().is_some())
        })
        .await;
    let server_pid = session_of(&server, pid).unwrap()["server_pid"]
        .as_u64()
        .unwrap();
    signal(u32::try_from(server_pid).unwrap(), "KILL");
    let killed = Instant::now();
    env.wait_status("the restart", |s| {
        server_of(s, "prompt").is_some_and(|x| x["restarts"] == 1)
            && session_of(s, pid).is_some_and(|x| x["server_pid"].as_u64() != Some(server_pid))
    })
    .await;
    let took = killed.elapsed();
    assert!(took < REFRESH, "the restart showed {took:?} after the kill");
    b.close().await;
    daemon.stop().await;
}

/// Issue 36: a call shows in flight within half a second of its start, not a heartbeat period
/// (2 s) later: a request that begins brings a heartbeat, as an answer does. (A call held for
/// an approval is in flight too, and must be seen to be answered.)
#[tokio::test]
async fn a_call_that_begins_shows_in_flight_at_once() {
    const SOON: Duration = Duration::from_millis(500);
    let env = Env::new();
    let daemon = env.daemon(&[]).await;
    let mut b = env.bridge("begins", &[], &[]);
    b.initialize().await;
    let pid = b.pid();
    env.wait_status("the session", |s| session_of(s, pid).is_some())
        .await;
    b.start("tools/call", json!({"name": "hang", "arguments": {}}))
        .await;
    let sent = Instant::now();
    env.wait_status("the call in flight", |s| {
        session_of(s, pid).is_some_and(|x| {
            x["inflight"]
                .as_array()
                .is_some_and(|a| a.iter().any(|r| r["tool"] == "hang"))
        })
    })
    .await;
    let took = sent.elapsed();
    assert!(took < SOON, "the call showed {took:?} after it began");
    b.close().await;
    daemon.stop().await;
}

/// Eight config edits at once through the supervisor (`warden debug sN on`: `set_key`, the
/// path every `SetLimit` takes) all land in config.toml, and what was there stays.
#[tokio::test]
async fn config_edits_sent_at_once_all_land() {
    let env = Env::new();
    let mine = "# mine\n[defaults]\nretries = 1 # keep\n";
    std::fs::write(env.config(), mine).unwrap();
    let daemon = env.daemon(&[]).await;
    let names: Vec<String> = (1..=8).map(|i| format!("s{i}")).collect();
    let children: Vec<Child> = names
        .iter()
        .map(|n| {
            let mut cmd = Command::new(WARDEN);
            cmd.args(["debug", n, "on", "--json"])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .kill_on_drop(true);
            env.apply(&mut cmd);
            cmd.spawn().unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().await.unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    let text = std::fs::read_to_string(env.config()).unwrap();
    assert!(text.starts_with(mine), "{text}");
    for n in &names {
        assert_eq!(
            text.matches(&format!("[servers.{n}]\ndebug = true\n"))
                .count(),
            1,
            "{n}:\n{text}"
        );
    }
    daemon.stop().await;
}

/// Two grants sent at once from two windows (`SetLimit` with `add`): both land in the list,
/// with the grant that was there, where each sending the whole list it saw would lose one.
#[tokio::test]
async fn list_additions_sent_at_once_both_land() {
    use warden_supervisor::api::{Request, Response};
    use warden_supervisor::connection::Connection;

    let env = Env::new();
    std::fs::write(
        env.config(),
        "[servers.s]\nsandbox_write = [\"/srv/kept\"]\n",
    )
    .unwrap();
    let daemon = env.daemon(&[]).await;
    let grant = |dir: &str| {
        let socket = env.socket();
        let dir = dir.to_owned();
        async move {
            let mut api = Connection::connect(&socket).await.unwrap();
            api.request(Request::SetLimit(op::SetLimit {
                server: "s".into(),
                key: "sandbox_write".into(),
                value: None,
                add: vec![dir],
                remove: Vec::new(),
            }))
            .await
            .unwrap()
        }
    };
    let (a, b) = tokio::join!(grant("/srv/a"), grant("/srv/b"));
    for r in [a, b] {
        assert!(matches!(r, Response::Command(_)), "{r:?}");
    }
    let config = warden_config::Config::load(&env.config()).unwrap();
    let (list, ..) = config.raw_value("s", "sandbox_write").unwrap();
    let mut list: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    list.sort_unstable();
    assert_eq!(list, ["/srv/a", "/srv/b", "/srv/kept"]);
    daemon.stop().await;
}

/// What servers write reaches `warden history` and `warden events` escaped: a server's stdout
/// noise (`stdout_noise`) and the last line of its stderr (`spawn_failed`'s cause) hold ESC
/// and BEL, and neither command prints either byte to the terminal.
#[tokio::test]
async fn history_and_events_never_print_a_servers_escape_or_bell() {
    const NOISE: &str = "\x1b]0;owned\x07noise\x1b[2J";
    const STDERR: &str = "\x1b[31mboom\x07";
    let env = Env::new();
    let daemon = env.daemon(&[]).await;
    let mut cmd = Command::new(WARDEN);
    cmd.arg("events")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    env.apply(&mut cmd);
    let mut events = cmd.spawn().unwrap();
    let mut said = BufReader::new(events.stderr.take().unwrap()).lines();
    let subscribed = tokio::time::timeout(DEADLINE, said.next_line()).await;
    assert!(
        subscribed.is_ok_and(|l| l.unwrap().is_some_and(|l| l.contains("following"))),
        "warden events did not subscribe"
    );

    let mut noisy = env.bridge("noisy", &[], &[]);
    noisy.initialize().await;
    let said = noisy
        .request(
            "tools/call",
            json!({"name": "noise", "arguments": {"lines": 1, "text": NOISE}}),
        )
        .await;
    assert!(said.get("result").is_some(), "{said}");
    let mut dying = env.bridge(
        "dying",
        &["retries=0", "backoff_ms=20"],
        &["--exit-with-stderr", STDERR],
    );
    let init = dying
        .request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "warden-tests", "version": "1"}}),
        )
        .await;
    assert!(init.get("error").is_some(), "{init}");

    // `warden events`, up to the lines of both.
    let mut out = BufReader::new(events.stdout.take().unwrap());
    let mut shown = Vec::new();
    while !(contains(&shown, b"noise line 0") && contains(&shown, b"last stderr line")) {
        let mut line = Vec::new();
        let n = tokio::time::timeout(DEADLINE, out.read_until(b'\n', &mut line))
            .await
            .unwrap_or_else(|_| panic!("events so far:\n{}", String::from_utf8_lossy(&shown)))
            .unwrap();
        assert!(n > 0, "warden events ended");
        shown.extend(line);
    }
    let _ = events.kill().await;
    // `warden history`, once the supervisor has both.
    let start = Instant::now();
    loop {
        let out = env.warden(&["history"]).await.stdout;
        if contains(&out, b"noise line 0") && contains(&out, b"last stderr line") {
            shown.extend(out);
            break;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "{}",
            String::from_utf8_lossy(&out)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        !shown.iter().any(|b| *b == 0x1b || *b == 0x07),
        "{}",
        String::from_utf8_lossy(&shown)
    );
    noisy.close().await;
    dying.close().await;
    daemon.stop().await;
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
