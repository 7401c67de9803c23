//! `warden rg-server` over real stdio: the MCP handshake, the tools of mcp-ripgrep on a temp
//! tree with both engines, the safety rules, the output cap, cancellation and EOF. With
//! `MCP_RIPGREP_BIN` set, also compared with the real mcp-ripgrep.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

use crate::common::{cannot_run, require_tool};

const WARDEN: &str = env!("CARGO_BIN_EXE_warden");
/// Generous bound for anything that should happen at once.
const SOON: Duration = Duration::from_secs(10);

/// An MCP client over a child's stdio.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::UnboundedReceiver<String>,
    next_id: i64,
}

impl Server {
    fn spawn(cmd: &mut Command) -> Server {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let (tx, lines) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok(Some(line)) = stdout.next_line().await {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Server {
            child,
            stdin,
            lines,
            next_id: 0,
        }
    }

    /// `warden rg-server --root ROOT ARGS…`, started from another directory.
    fn warden(root: &Path, args: &[&str]) -> Server {
        let mut cmd = Command::new(WARDEN);
        cmd.arg("rg-server")
            .arg("--root")
            .arg(root)
            .args(args)
            .current_dir("/");
        Server::spawn(&mut cmd)
    }

    async fn send(&mut self, msg: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(format!("{msg}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
    }

    async fn recv_line(&mut self) -> String {
        tokio::time::timeout(SOON, self.lines.recv())
            .await
            .expect("an answer in time")
            .expect("the server's stdout is open")
    }

    /// Sends a request and returns the next message, which must be its response.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start(method, params).await;
        let line = self.recv_line().await;
        let response: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(response["id"], id, "unexpected message: {line}");
        response
    }

    async fn start(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    async fn initialize(&mut self) -> Value {
        let params = json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "rg-server-tests", "version": "1"}});
        let r = self.request("initialize", params).await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        r
    }

    /// The text and `isError` of a tool call.
    async fn call(&mut self, tool: &str, args: Value) -> (String, bool) {
        let r = self
            .request("tools/call", json!({"name": tool, "arguments": args}))
            .await;
        let text = r["result"]["content"][0]["text"].as_str();
        let text = text.unwrap_or_else(|| panic!("no text in {r}")).to_owned();
        (text, r["result"]["isError"] == true)
    }

    /// Closes stdin; returns the exit status and every message written after.
    async fn close(mut self) -> (ExitStatus, Vec<String>) {
        self.stdin.take();
        let mut rest = Vec::new();
        while let Some(line) = tokio::time::timeout(SOON, self.lines.recv())
            .await
            .expect("stdout closes at exit")
        {
            rest.push(line);
        }
        let status = tokio::time::timeout(SOON, self.child.wait())
            .await
            .expect("the server exits")
            .unwrap();
        (status, rest)
    }
}

/// The engines to run: both when rg is installed.
fn engines() -> Vec<&'static str> {
    if require_tool("rg").is_some() {
        vec!["rg", "builtin"]
    } else {
        vec!["builtin"]
    }
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "a.txt",
        "alpha one\nbeta two\n-dash line\ngamma\nAlpha again\n",
    );
    write("sub/b.rs", "fn alpha() {}\n");
    write("sub/c.py", "alpha = 1\n");
    write(".hidden/h.txt", "alpha hidden\n");
    dir
}

fn sorted(text: &str) -> Vec<&str> {
    let mut lines: Vec<_> = text.lines().collect();
    lines.sort_unstable();
    lines
}

#[tokio::test]
async fn handshake_ping_and_unknown_methods() {
    let dir = tree();
    let mut s = Server::warden(dir.path(), &[]);
    let init = s.initialize().await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(init["result"]["serverInfo"]["name"], "warden-rg");
    assert_eq!(init["result"]["capabilities"], json!({"tools": {}}));
    let params = json!({"protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}});
    let init = s.request("initialize", params).await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    let pong = s.request("ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));
    let r = s.request("prompts/list", json!({})).await;
    assert_eq!(r["error"]["code"], -32601);
    let r = s
        .request("tools/call", json!({"name": "nope", "arguments": {}}))
        .await;
    assert_eq!(r["error"]["code"], -32602);
    let (status, rest) = s.close().await;
    assert!(status.success() && rest.is_empty(), "{status} {rest:?}");
}

#[tokio::test]
async fn tools_list_has_mcp_ripgrep_s_names_and_required_arguments() {
    let dir = tree();
    let mut s = Server::warden(dir.path(), &[]);
    s.initialize().await;
    let r = s.request("tools/list", json!({})).await;
    let tools: Vec<(&str, &Value)> = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), &t["inputSchema"]["required"]))
        .collect();
    let (pattern_path, path) = (json!(["pattern", "path"]), json!(["path"]));
    assert_eq!(
        tools,
        [
            ("search", &pattern_path),
            ("advanced-search", &pattern_path),
            ("count-matches", &pattern_path),
            ("list-files", &path),
            ("list-file-types", &Value::Null),
        ]
    );
    let advanced = &r["result"]["tools"][1]["inputSchema"]["properties"];
    for arg in [
        "pattern",
        "path",
        "caseSensitive",
        "fixedStrings",
        "filePattern",
        "fileType",
        "maxResults",
        "context",
        "invertMatch",
        "wordMatch",
        "includeHidden",
        "followSymlinks",
        "showFilenamesOnly",
        "showLineNumbers",
        "useColors",
    ] {
        assert!(advanced.get(arg).is_some(), "{arg}");
    }
    s.close().await;
}

#[tokio::test]
async fn every_tool_works_on_a_tree_with_both_engines() {
    let dir = tree();
    for engine in engines() {
        let mut s = Server::warden(dir.path(), &["--engine", engine]);
        s.initialize().await;
        let (text, err) = s
            .call("search", json!({"pattern": "alpha", "path": "."}))
            .await;
        assert!(!err);
        assert_eq!(
            sorted(&text),
            [
                "./a.txt:1:alpha one",
                "./sub/b.rs:1:fn alpha() {}",
                "./sub/c.py:1:alpha = 1"
            ],
            "{engine}"
        );
        let (text, _) = s
            .call(
                "search",
                json!({"pattern": "gamma", "path": "a.txt", "context": 1}),
            )
            .await;
        assert_eq!(text, "3--dash line\n4:gamma\n5-Alpha again\n", "{engine}");
        let (text, _) = s
            .call(
                "advanced-search",
                json!({"pattern": "ALPHA", "path": "a.txt", "caseSensitive": false,
                    "showLineNumbers": false, "maxResults": 1}),
            )
            .await;
        assert_eq!(text, "alpha one\n", "{engine}");
        let (text, _) = s
            .call(
                "advanced-search",
                json!({"pattern": "alpha", "path": ".", "includeHidden": true,
                    "showFilenamesOnly": true, "fileType": "txt"}),
            )
            .await;
        assert_eq!(sorted(&text), ["./.hidden/h.txt", "./a.txt"], "{engine}");
        let (text, _) = s
            .call(
                "count-matches",
                json!({"pattern": "a", "path": "a.txt", "countLines": false}),
            )
            .await;
        assert_eq!(text, "9\n", "{engine}");
        let (text, _) = s
            .call("count-matches", json!({"pattern": "alpha", "path": "sub"}))
            .await;
        assert_eq!(sorted(&text), ["sub/b.rs:1", "sub/c.py:1"], "{engine}");
        let (text, _) = s
            .call("list-files", json!({"path": ".", "filePattern": "*.rs"}))
            .await;
        assert_eq!(text, "./sub/b.rs\n", "{engine}");
        let (text, _) = s.call("list-file-types", json!({})).await;
        assert!(text.lines().any(|l| l == "rust: *.rs"), "{engine}: {text}");
        let (text, err) = s
            .call("search", json!({"pattern": "zzz-nothing", "path": "."}))
            .await;
        assert_eq!(
            (text.as_str(), err),
            ("No matches found", false),
            "{engine}"
        );
        let (text, err) = s
            .call("list-files", json!({"path": ".", "filePattern": "*.none"}))
            .await;
        assert_eq!((text.as_str(), err), ("No files found", false), "{engine}");
        let (text, err) = s.call("search", json!({"pattern": "(", "path": "."})).await;
        assert!(err && text.contains("unclosed group"), "{engine}: {text}");
        let (text, err) = s.call("search", json!({"path": "."})).await;
        assert_eq!((text.as_str(), err), ("Error: Pattern is required", true));
        let (status, _) = s.close().await;
        assert!(status.success());
    }
}

#[tokio::test]
async fn paths_outside_the_roots_are_refused() {
    let dir = tree();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "alpha secret\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("door")).unwrap();
    for engine in engines() {
        let mut s = Server::warden(dir.path(), &["--engine", engine]);
        s.initialize().await;
        let secret = outside.path().join("secret.txt");
        for path in [
            "../",
            "..",
            "door",
            "door/secret.txt",
            &*secret.to_string_lossy(),
        ] {
            for (tool, args) in [
                ("search", json!({"pattern": "alpha", "path": path})),
                ("list-files", json!({"path": path})),
            ] {
                let (text, err) = s.call(tool, args).await;
                assert!(err, "{engine} {tool} {path}: {text}");
                let out_there = outside.path().to_string_lossy();
                // Where a symlink leads is not told.
                assert!(
                    path.contains(&*out_there) || !text.contains(&*out_there),
                    "{text}"
                );
                assert!(
                    text.contains("outside the allowed roots")
                        && text.contains(&*dir.path().canonicalize().unwrap().to_string_lossy()),
                    "{text}"
                );
            }
        }
        s.close().await;
    }
    // Once the other directory is a root too, the same path is fine.
    let mut s = Server::warden(dir.path(), &["--root", &outside.path().to_string_lossy()]);
    s.initialize().await;
    let (text, err) = s
        .call(
            "search",
            json!({"pattern": "alpha", "path": "door/secret.txt"}),
        )
        .await;
    assert_eq!((text.as_str(), err), ("1:alpha secret\n", false));
    s.close().await;
}

#[tokio::test]
async fn preprocessors_are_refused_and_nothing_reaches_a_shell() {
    let dir = tree();
    for engine in engines() {
        let mut s = Server::warden(dir.path(), &["--engine", engine]);
        s.initialize().await;
        for (tool, args) in [
            (
                "search",
                json!({"pattern": "alpha", "path": ".", "filePattern": "--pre=sh"}),
            ),
            (
                "advanced-search",
                json!({"pattern": "--pre-glob", "path": "."}),
            ),
            (
                "list-files",
                json!({"path": ".", "fileType": "x --pre /bin/sh"}),
            ),
        ] {
            let (text, err) = s.call(tool, args.clone()).await;
            assert!(err && text.contains("--pre"), "{engine} {args}: {text}");
        }
        for pattern in ["$(touch pwned)", "`touch pwned`", "x' ; touch pwned ; '"] {
            let (_, err) = s
                .call("search", json!({"pattern": pattern, "path": "."}))
                .await;
            assert!(!err, "{pattern}");
            let (_, err) = s
                .call("list-files", json!({"path": ".", "filePattern": pattern}))
                .await;
            assert!(!err, "{pattern}");
        }
        assert!(!dir.path().join("pwned").exists() && !Path::new("/pwned").exists());
        s.close().await;
    }
}

#[tokio::test]
async fn a_pattern_starting_with_a_dash_is_a_pattern() {
    let dir = tree();
    for engine in engines() {
        let mut s = Server::warden(dir.path(), &["--engine", engine]);
        s.initialize().await;
        for (pattern, want) in [("-dash", "3:-dash line\n"), ("--files", "No matches found")] {
            let (text, err) = s
                .call("search", json!({"pattern": pattern, "path": "a.txt"}))
                .await;
            assert_eq!((text.as_str(), err), (want, false), "{engine} {pattern}");
        }
        s.close().await;
    }
}

#[tokio::test]
async fn ripgrep_config_files_are_ignored() {
    let dir = tree();
    let config = dir.path().join("rgrc");
    std::fs::write(&config, "--ignore-case\n--max-count=0\n").unwrap();
    if require_tool("rg").is_none() {
        return;
    }
    let mut cmd = Command::new(WARDEN);
    cmd.args(["rg-server", "--engine", "rg", "--root"])
        .arg(dir.path())
        .env("RIPGREP_CONFIG_PATH", &config);
    let mut s = Server::spawn(&mut cmd);
    s.initialize().await;
    let (text, _) = s
        .call("search", json!({"pattern": "Alpha", "path": "a.txt"}))
        .await;
    assert_eq!(text, "5:Alpha again\n");
    s.close().await;
}

#[tokio::test]
async fn a_bad_warden_rg_is_a_clear_startup_error() {
    let out = std::process::Command::new(WARDEN)
        .args(["rg-server", "--engine", "rg"])
        .env("WARDEN_RG", "/no/such/rg")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("WARDEN_RG=/no/such/rg"), "{stderr}");
    let out = std::process::Command::new(WARDEN)
        .args(["rg-server", "--root", "/no/such/dir"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/dir"));
}

#[tokio::test]
async fn long_output_is_cut_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..2000).map(|n| format!("needle {n}\n")).collect();
    std::fs::write(dir.path().join("many.txt"), lines).unwrap();
    for engine in engines() {
        let mut s = Server::warden(
            dir.path(),
            &["--engine", engine, "--max-output-bytes", "300"],
        );
        s.initialize().await;
        let (text, err) = s
            .call("search", json!({"pattern": "needle", "path": "many.txt"}))
            .await;
        assert!(!err);
        let (body, note) = text.split_once("[warden: output cut").expect("a note");
        assert!(
            body.len() <= 300 && body.starts_with("1:needle 0\n2:needle 1\n"),
            "{body}"
        );
        assert!(body.ends_with('\n'), "cut at a line end: {body:?}");
        for hint in ["pattern", "filePattern", "smaller path", "maxResults"] {
            assert!(note.contains(hint), "{note}");
        }
        let (text, _) = s
            .call(
                "search",
                json!({"pattern": "needle", "path": "many.txt", "maxResults": 3}),
            )
            .await;
        assert_eq!(text, "1:needle 0\n2:needle 1\n3:needle 2\n");
        s.close().await;
    }
}

fn make_fifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Opens the FIFO for writing, which returns once the search has opened it for reading.
async fn writer_once_searching(fifo: &Path) -> File {
    let path = fifo.to_path_buf();
    let opening = tokio::task::spawn_blocking(move || OpenOptions::new().write(true).open(path));
    match tokio::time::timeout(SOON, opening).await {
        Ok(file) => file.unwrap().unwrap(),
        Err(_) => {
            // Become the reader ourselves so the blocked open returns, then fail.
            let _unblock = OpenOptions::new().read(true).write(true).open(fifo);
            panic!("the search never opened the FIFO");
        }
    }
}

/// Feeds the FIFO until its reader is gone (EPIPE): proof that the search stopped.
async fn feed_until_reader_gone(mut fifo: File) {
    let gone = tokio::task::spawn_blocking(move || {
        let chunk = "no match on this line\n".repeat(200);
        let deadline = Instant::now() + SOON;
        while Instant::now() < deadline {
            match fifo.write_all(chunk.as_bytes()) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return true,
                Err(e) => panic!("{e}"),
            }
        }
        false
    });
    assert!(
        gone.await.unwrap(),
        "the search kept reading after it was stopped"
    );
}

#[tokio::test]
async fn a_cancelled_search_is_stopped_and_not_answered() {
    let dir = tempfile::tempdir().unwrap();
    let fifo: PathBuf = dir.path().join("slow");
    make_fifo(&fifo);
    for engine in engines() {
        let mut s = Server::warden(dir.path(), &["--engine", engine]);
        s.initialize().await;
        let id = s
            .start(
                "tools/call",
                json!({"name": "search", "arguments": {"pattern": "needle", "path": "slow"}}),
            )
            .await;
        let writer = writer_once_searching(&fifo).await;
        // The search is running (blocked on the FIFO); other requests are still answered.
        let pong = s.request("ping", json!({})).await;
        assert_eq!(pong["result"], json!({}), "{engine}");
        s.send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "test"}}),
        )
        .await;
        feed_until_reader_gone(writer).await;
        let pong = s.request("ping", json!({})).await;
        assert_eq!(pong["result"], json!({}), "{engine}");
        let (status, rest) = s.close().await;
        assert!(status.success(), "{engine}");
        assert!(
            rest.is_empty(),
            "{engine}: no answer for a cancelled call: {rest:?}"
        );
    }
}

/// At the end of input, a search still running is answered (as mcp-ripgrep does), then the
/// server exits.
#[tokio::test]
async fn end_of_input_answers_running_searches_then_exits() {
    let dir = tempfile::tempdir().unwrap();
    let fifo: PathBuf = dir.path().join("slow");
    make_fifo(&fifo);
    for engine in engines() {
        let mut s = Server::warden(dir.path(), &["--engine", engine]);
        s.initialize().await;
        s.start(
            "tools/call",
            json!({"name": "count-matches", "arguments": {"pattern": "needle", "path": "slow"}}),
        )
        .await;
        let mut writer = writer_once_searching(&fifo).await;
        s.stdin.take();
        tokio::task::spawn_blocking(move || writer.write_all(b"a needle\n"))
            .await
            .unwrap()
            .unwrap();
        let (status, rest) = s.close().await;
        assert!(status.success(), "{engine}: {status}");
        assert_eq!(rest.len(), 1, "{engine}: {rest:?}");
        assert!(rest[0].contains('1'), "{engine}: {rest:?}");
    }
}

/// The real mcp-ripgrep and `warden rg-server` on the same tree: same tools, same texts.
#[tokio::test]
async fn same_tools_and_texts_as_mcp_ripgrep() {
    let Some(bin) = std::env::var_os("MCP_RIPGREP_BIN") else {
        return cannot_run("MCP_RIPGREP_BIN (mcp-ripgrep's bin, to compare with) is not set");
    };
    let dir = tree();
    let root = dir.path();
    let mut theirs = Server::spawn(Command::new(&bin).current_dir(root));
    let mut ours = Server::warden(root, &["--engine", "rg"]);
    theirs.initialize().await;
    ours.initialize().await;

    // tools/list: the same bytes, names and schemas in the same order.
    let mut tools = Vec::new();
    for server in [&mut theirs, &mut ours] {
        server.start("tools/list", json!({})).await;
        tools.push(tools_text(&server.recv_line().await));
    }
    assert_eq!(tools[0], tools[1]);

    let cases = [
        ("search", json!({"pattern": "alpha", "path": "."})),
        (
            "search",
            json!({"pattern": "ALPHA", "path": ".", "caseSensitive": false}),
        ),
        (
            "search",
            json!({"pattern": "gamma", "path": "a.txt", "context": 1}),
        ),
        (
            "search",
            json!({"pattern": "alpha", "path": "sub", "maxResults": 1, "filePattern": "*.py"}),
        ),
        ("search", json!({"pattern": "nothing here", "path": "."})),
        ("search", json!({"pattern": "(", "path": "."})),
        (
            "advanced-search",
            json!({"pattern": "alpha", "path": ".", "includeHidden": true, "wordMatch": true}),
        ),
        (
            "advanced-search",
            json!({"pattern": "a", "path": "a.txt", "invertMatch": true, "showLineNumbers": false}),
        ),
        (
            "advanced-search",
            json!({"pattern": "alpha", "path": ".", "showFilenamesOnly": true, "fileType": "rust"}),
        ),
        (
            "advanced-search",
            json!({"pattern": "a.p", "path": ".", "fixedStrings": true}),
        ),
        ("count-matches", json!({"pattern": "a", "path": "."})),
        (
            "count-matches",
            json!({"pattern": "a", "path": "a.txt", "countLines": false}),
        ),
        ("list-files", json!({"path": "."})),
        (
            "list-files",
            json!({"path": ".", "includeHidden": true, "filePattern": "*.txt"}),
        ),
        ("list-files", json!({"path": "sub", "fileType": "py"})),
        ("list-file-types", json!({})),
    ];
    for (tool, args) in cases {
        let (a, b) = (
            theirs.call(tool, args.clone()).await,
            ours.call(tool, args.clone()).await,
        );
        assert_eq!(a.1, b.1, "{tool} {args}: isError differs: {a:?} vs {b:?}");
        // Their order of files varies from run to run, as ours does.
        assert_eq!(sorted(&a.0), sorted(&b.0), "{tool} {args}");
        if tool == "search" && args["pattern"] == "alpha" && args["path"] == "." {
            assert!(
                a.0.contains("./a.txt:1:alpha one"),
                "mcp-ripgrep answered: {a:?}"
            );
        }
        if args["path"] == "a.txt" {
            assert_eq!(a.0, b.0, "{tool} {args}");
        }
    }
    theirs.close().await;
    ours.close().await;
}

/// The raw text of `result.tools` in a tools/list response line.
fn tools_text(line: &str) -> String {
    let field = |json: &str, key: &str| -> String {
        let map: HashMap<String, Box<RawValue>> = serde_json::from_str(json).unwrap();
        map[key].get().to_owned()
    };
    field(&field(line, "result"), "tools")
}
