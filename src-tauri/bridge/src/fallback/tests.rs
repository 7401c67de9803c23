#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::*;
use warden_config::testing::require_tool;

/// A tree exercising what the tools can tell apart: ignore files, hidden files, binary files,
/// symlinks, types, a line without a terminator, UTF-16 with a BOM.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |path: &str, bytes: &[u8]| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    };
    write(
        "a.txt",
        b"alpha one\nbeta two\n-dash line\ngamma\nAlpha again\nalphabet\nx\ny\nz a.b\nalpha three",
    );
    write("sub/b.rs", b"fn alpha() {}\n// ALPHA\n");
    write("sub/c.py", b"alpha = 1\naxb = 2\n");
    write(".hidden/h.txt", b"alpha hidden\n");
    write("ignored.txt", b"alpha ignored\n");
    write(".ignore", b"ignored.txt\n");
    write("bin.dat", b"alpha bin\0zzz\nalpha after\n");
    let mut late_binary = b"alpha early\n".to_vec();
    late_binary.extend(std::iter::repeat_n(b"filler\n", 30_000).flatten());
    late_binary.extend_from_slice(b"\0alpha late\n");
    write("late.bin", &late_binary);
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend("alpha utf16\n".encode_utf16().flat_map(u16::to_le_bytes));
    write("wide.txt", &utf16);
    symlink(root.join("sub"), root.join("link")).unwrap();
    dir
}

fn search(root: &Path, engine: Engine) -> Search {
    Search::new(&[root.to_path_buf()], engine, DEFAULT_MAX_OUTPUT_BYTES).unwrap()
}

async fn call(search: &Search, tool: &str, args: Value) -> ToolResult {
    search.call(tool, &args).await.expect("known tool")
}

/// Files come out in any order (rg searches them in parallel): compare sorted lines when a
/// directory is searched.
fn normalised(args: &Value, root: &Path, text: &str) -> String {
    let path = args["path"].as_str().unwrap_or("");
    if root.join(path).is_file() {
        return text.to_owned();
    }
    let mut lines: Vec<_> = text.lines().collect();
    lines.sort_unstable();
    lines.join("\n")
}

#[tokio::test]
async fn both_engines_print_the_same() {
    let Some(rg) = require_tool("rg") else {
        return;
    };
    let dir = tree();
    let root = dir.path();
    let (with_rg, builtin) = (search(root, Engine::Rg(rg)), search(root, Engine::Builtin));
    let cases = [
        ("search", json!({"pattern": "alpha", "path": "."})),
        ("search", json!({"pattern": "alpha", "path": "a.txt"})),
        (
            "search",
            json!({"pattern": "ALPHA", "path": ".", "caseSensitive": false}),
        ),
        (
            "search",
            json!({"pattern": "ALPHA", "path": ".", "caseSensitive": true}),
        ),
        (
            "search",
            json!({"pattern": "alpha", "path": ".", "filePattern": "*.rs"}),
        ),
        (
            "search",
            json!({"pattern": "alpha", "path": ".", "filePattern": "!*.rs"}),
        ),
        (
            "search",
            json!({"pattern": "alpha", "path": "sub/", "maxResults": 1}),
        ),
        (
            "search",
            json!({"pattern": "gamma|three", "path": "a.txt", "context": 1}),
        ),
        (
            "search",
            json!({"pattern": "alpha", "path": ".", "context": 1}),
        ),
        (
            "search",
            json!({"pattern": "beta", "path": "./a.txt", "context": 2, "maxResults": 1}),
        ),
        ("search", json!({"pattern": "-dash", "path": "."})),
        (
            "search",
            json!({"pattern": "nothing-like-this", "path": "."}),
        ),
        ("search", json!({"pattern": "alpha", "path": "bin.dat"})),
        ("search", json!({"pattern": "alpha", "path": "late.bin"})),
        ("search", json!({"pattern": "alpha", "path": "wide.txt"})),
        ("search", json!({"pattern": "alpha", "path": "link"})),
        (
            "advanced-search",
            json!({"pattern": "a.b", "path": ".", "fixedStrings": true}),
        ),
        ("advanced-search", json!({"pattern": "a.b", "path": "."})),
        (
            "advanced-search",
            json!({"pattern": "alpha", "path": ".", "fileType": "py"}),
        ),
        (
            "advanced-search",
            json!({"pattern": "alpha", "path": "a.txt", "invertMatch": true}),
        ),
        (
            "advanced-search",
            json!({"pattern": "alpha", "path": ".", "wordMatch": true}),
        ),
        (
            "advanced-search",
            json!({"pattern": "alpha", "path": ".", "includeHidden": true}),
        ),
        (
            "advanced-search",
            json!({"pattern": "alpha", "path": ".", "followSymlinks": true}),
        ),
        (
            "advanced-search",
            json!({"pattern": "alpha", "path": ".", "showFilenamesOnly": true}),
        ),
        (
            "advanced-search",
            json!({"pattern": "alpha", "path": "a.txt", "showFilenamesOnly": true}),
        ),
        (
            "advanced-search",
            json!({"pattern": "gamma", "path": "a.txt", "showLineNumbers": false, "context": 1}),
        ),
        (
            "advanced-search",
            json!({"pattern": "alpha", "path": ".", "showLineNumbers": false, "caseSensitive": false}),
        ),
        ("count-matches", json!({"pattern": "a", "path": "."})),
        (
            "count-matches",
            json!({"pattern": "a", "path": ".", "countLines": false}),
        ),
        ("count-matches", json!({"pattern": "a", "path": "a.txt"})),
        (
            "count-matches",
            json!({"pattern": "alpha", "path": ".", "filePattern": "*.py"}),
        ),
        ("list-files", json!({"path": "."})),
        ("list-files", json!({"path": "sub"})),
        ("list-files", json!({"path": "a.txt"})),
        ("list-files", json!({"path": ".", "filePattern": "*.txt"})),
        ("list-files", json!({"path": ".", "fileType": "rust"})),
        ("list-files", json!({"path": ".", "includeHidden": true})),
        (
            "list-files",
            json!({"path": ".", "fileType": "no-such-type-here"}),
        ),
    ];
    for (tool, args) in cases {
        let (a, b) = (
            call(&with_rg, tool, args.clone()).await,
            call(&builtin, tool, args.clone()).await,
        );
        assert_eq!(
            a.is_error, b.is_error,
            "{tool} {args}: rg {a:?}, builtin {b:?}"
        );
        if a.is_error {
            continue;
        }
        assert_eq!(
            normalised(&args, root, &a.text),
            normalised(&args, root, &b.text),
            "{tool} {args}"
        );
    }
    // The built-in type list is that of the `ignore` crate, which may be newer than rg's:
    // the same shape, and a type that never changed prints alike.
    let (a, b) = (
        call(&with_rg, "list-file-types", json!({})).await,
        call(&builtin, "list-file-types", json!({})).await,
    );
    for text in [&a.text, &b.text] {
        assert!(text.lines().any(|l| l == "rust: *.rs"), "{text}");
        assert!(text.lines().all(|l| l.split_once(": ").is_some()), "{text}");
    }
}

#[tokio::test]
async fn errors_are_results_with_is_error() {
    let dir = tree();
    for engine in [Engine::Builtin]
        .into_iter()
        .chain(require_tool("rg").map(Engine::Rg))
    {
        let s = search(dir.path(), engine);
        let r = call(&s, "search", json!({"pattern": "(", "path": "."})).await;
        assert!(r.is_error && r.text.contains("unclosed group"), "{r:?}");
        let r = call(&s, "list-files", json!({"path": ".", "fileType": "nope"})).await;
        assert!(
            r.is_error && r.text.contains("unrecognized file type: nope"),
            "{r:?}"
        );
        let r = call(&s, "search", json!({"path": "."})).await;
        assert_eq!(r, ToolResult::error("Error: Pattern is required"));
        let r = call(&s, "search", json!({"pattern": "", "path": "."})).await;
        assert_eq!(r.text, "Error: Pattern is required");
        let r = call(&s, "search", json!({"pattern": "x"})).await;
        assert!(r.is_error && r.text.contains("path is required"), "{r:?}");
        let r = call(
            &s,
            "search",
            json!({"pattern": "x", "path": ".", "maxResults": "5"}),
        )
        .await;
        assert!(
            r.is_error && r.text.contains("maxResults must be a whole number"),
            "{r:?}"
        );
        let r = call(
            &s,
            "search",
            json!({"pattern": "x", "path": ".", "context": 1.5}),
        )
        .await;
        assert!(
            r.is_error && r.text.contains("context must be a whole number"),
            "{r:?}"
        );
        let r = call(
            &s,
            "search",
            json!({"pattern": "x", "path": ".", "useColors": 1}),
        )
        .await;
        assert!(
            r.is_error && r.text.contains("useColors must be true or false"),
            "{r:?}"
        );
        let r = call(&s, "search", json!({"pattern": "x", "path": "no/such/dir"})).await;
        assert!(r.is_error && r.text.contains("No such file"), "{r:?}");
        let r = s.call("search", &json!(["x"])).await.unwrap();
        assert!(r.is_error, "{r:?}");
        assert!(s.call("no-such-tool", &json!({})).await.is_none());
        // Zero and negative limits are ignored, as mcp-ripgrep does.
        let r = call(
            &s,
            "search",
            json!({"pattern": "alpha", "path": "a.txt", "maxResults": 0, "context": -1}),
        )
        .await;
        assert_eq!(r.text, "1:alpha one\n6:alphabet\n10:alpha three\n");
    }
}

#[tokio::test]
async fn preprocessor_flags_are_refused_in_every_form_and_field() {
    let dir = tree();
    let s = search(dir.path(), Engine::Builtin);
    for value in [
        "--pre",
        "--pre=sh",
        "--pre-glob",
        "--pre-glob=*",
        "x --pre cat",
        " --pre=/bin/sh",
    ] {
        for (tool, args) in [
            ("search", json!({"pattern": value, "path": "."})),
            ("search", json!({"pattern": "x", "path": value})),
            (
                "search",
                json!({"pattern": "x", "path": ".", "filePattern": value}),
            ),
            (
                "advanced-search",
                json!({"pattern": "x", "path": ".", "fileType": value}),
            ),
            ("list-files", json!({"path": ".", "filePattern": value})),
        ] {
            let r = call(&s, tool, args.clone()).await;
            assert!(
                r.is_error && r.text.contains("never passes them"),
                "{args}: {r:?}"
            );
        }
    }
    // The suggested spelling finds the text; look-alikes are not refused.
    std::fs::write(dir.path().join("pre.txt"), "use --pre here\n").unwrap();
    let r = call(
        &s,
        "search",
        json!({"pattern": "[-]-pre", "path": "pre.txt"}),
    )
    .await;
    assert_eq!(r.text, "1:use --pre here\n");
    let r = call(
        &s,
        "search",
        json!({"pattern": "--pretty", "path": "pre.txt"}),
    )
    .await;
    assert!(!r.is_error, "{r:?}");
}

#[tokio::test]
async fn paths_must_resolve_inside_a_root() {
    let dir = tree();
    let root = dir.path();
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("o.txt"), "alpha other\n").unwrap();
    symlink(other.path(), root.join("escape")).unwrap();
    symlink(other.path().join("o.txt"), root.join("escape.txt")).unwrap();
    let s = search(root, Engine::Builtin);
    for path in [
        "..",
        "../",
        "sub/../..",
        "escape",
        "escape/",
        "escape.txt",
        "/",
        "/etc/passwd",
        // Missing paths outside are refused the same way (no hint of what exists there).
        "../no-such-dir",
        "escape/no-such-file",
        "/no/such/file",
    ] {
        let r = call(&s, "search", json!({"pattern": "alpha", "path": path})).await;
        assert!(r.is_error, "{path}: {r:?}");
        assert!(
            r.text.contains("outside the allowed roots"),
            "{path}: {r:?}"
        );
        let real_root = std::fs::canonicalize(root).unwrap();
        assert!(
            r.text.contains(&*real_root.to_string_lossy()),
            "lists the roots: {r:?}"
        );
        assert!(!r.text.contains(&*other.path().to_string_lossy()), "{r:?}");
    }
    let r = call(
        &s,
        "search",
        json!({"pattern": "x", "path": "sub/no/../such"}),
    )
    .await;
    assert!(r.is_error && r.text.contains("No such file"), "{r:?}");
    // Inside: relative, absolute, through a symlink that stays inside, `./`.
    let inside = root.join("sub").to_string_lossy().into_owned();
    for path in ["sub", "./sub", "link", "sub/../sub", &inside] {
        let r = call(&s, "list-files", json!({"path": path})).await;
        assert!(!r.is_error && r.text.contains("b.rs"), "{path}: {r:?}");
    }
    // A second root is allowed too, with absolute paths.
    let both = Search::new(
        &[root.to_path_buf(), other.path().to_path_buf()],
        Engine::Builtin,
        1000,
    )
    .unwrap();
    let r = call(
        &both,
        "search",
        json!({"pattern": "alpha", "path": "escape.txt"}),
    )
    .await;
    assert_eq!(r.text, "1:alpha other\n");
    assert_eq!(both.roots().len(), 2);
}

#[test]
fn tilde_means_home() {
    let home =
        warden_config::paths::home_dir().expect("a home directory (HOME or the user database)");
    assert_eq!(expand_tilde("~"), home);
    assert_eq!(expand_tilde("~/src/x"), home.join("src/x"));
    assert_eq!(expand_tilde("~other/x"), PathBuf::from("~other/x"));
    assert_eq!(expand_tilde("a/~"), PathBuf::from("a/~"));
}

#[test]
fn setup_errors_explain_themselves() {
    let e = Search::new(&["/no/such/root".into()], Engine::Builtin, 10).unwrap_err();
    assert!(e.to_string().contains("/no/such/root"), "{e}");
    let file = tempfile::NamedTempFile::new().unwrap();
    let e = Search::new(&[file.path().into()], Engine::Builtin, 10).unwrap_err();
    assert!(e.to_string().contains("not a directory"), "{e}");
}

#[tokio::test]
async fn output_over_the_cap_is_cut_at_a_line_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..50 {
        let lines: String = (0..100).map(|n| format!("needle {i} {n}\n")).collect();
        std::fs::write(dir.path().join(format!("f{i}.txt")), lines).unwrap();
    }
    for engine in [Engine::Builtin]
        .into_iter()
        .chain(require_tool("rg").map(Engine::Rg))
    {
        let s = Search::new(&[dir.path().into()], engine.clone(), 5000).unwrap();
        let r = call(&s, "search", json!({"pattern": "needle", "path": "."})).await;
        let (body, note) = r.text.split_once("[warden: output cut").expect("a note");
        assert!(
            body.len() <= 5000 && body.len() > 4000,
            "{engine:?}: {}",
            body.len()
        );
        assert!(body.ends_with('\n') && body.lines().all(|l| l.contains(":needle ")));
        assert!(
            note.contains("maxResults") && note.contains("filePattern"),
            "{note}"
        );
        let r = call(&s, "list-files", json!({"path": "."})).await;
        assert!(
            !r.text.contains("[warden"),
            "small output is not cut: {r:?}"
        );
    }
}

#[test]
fn a_cancelled_builtin_search_stops() {
    let dir = tree();
    let q = Query {
        pattern: "alpha".into(),
        path: ".".into(),
        ..Query::default()
    };
    let cancelled = AtomicBool::new(true);
    let Outcome::Output { bytes, cut } = builtin::run(dir.path(), &q, 1000, &cancelled) else {
        panic!("no error expected");
    };
    assert!(bytes.is_empty() && !cut);
}

#[test]
fn result_text_rules() {
    let q = Query::default();
    let out = |bytes: &[u8], cut| Outcome::Output {
        bytes: bytes.to_vec(),
        cut,
    };
    assert_eq!(finish(&q, out(b"", false), 10).text, "No matches found");
    let files = Query {
        mode: Mode::Files,
        ..Query::default()
    };
    assert_eq!(finish(&files, out(b"", false), 10).text, "No files found");
    let r = finish(&q, out(b"a:1\nb:22\nc:333\n", true), 10);
    assert!(
        r.text
            .starts_with("a:1\nb:22\n[warden: output cut at 9 bytes (limit 10)"),
        "{r:?}"
    );
    // One long line is cut inside the line.
    let r = finish(&q, out(b"0123456789abc", true), 5);
    assert!(r.text.starts_with("01234\n[warden"), "{r:?}");
    let colored = b"\x1b[0m\x1b[35ma.txt\x1b[0m:\x1b[1;31malpha\x1b[0m\n";
    assert_eq!(finish(&q, out(colored, false), 100).text, "a.txt:alpha\n");
    let with_colors = Query {
        colors: true,
        ..Query::default()
    };
    assert_eq!(
        finish(&with_colors, out(colored, false), 100)
            .text
            .as_bytes(),
        colored
    );
    assert_eq!(strip_ansi("a\x1b[b\x1bc\x1b[12"), "a\x1bc\x1b[12");
    let failed = finish(&q, Outcome::Failed("Error: x".into()), 10);
    assert_eq!(failed, ToolResult::error("Error: x"));
    assert_eq!(
        failed.to_json_string(),
        r#"{"content":[{"type":"text","text":"Error: x"}],"isError":true}"#
    );
}

#[test]
fn tools_are_mcp_ripgrep_s() {
    let line = tools_json();
    assert!(!line.contains('\n'));
    let tools: Value = serde_json::from_str(line).unwrap();
    let pretty: Value = serde_json::from_str(include_str!("tools.json")).unwrap();
    assert_eq!(tools, pretty);
    let summary: Vec<(&str, Value)> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let required = t["inputSchema"]["required"].clone();
            (t["name"].as_str().unwrap(), required)
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("search", json!(["pattern", "path"])),
            ("advanced-search", json!(["pattern", "path"])),
            ("count-matches", json!(["pattern", "path"])),
            ("list-files", json!(["path"])),
            ("list-file-types", Value::Null),
        ]
    );
    assert!(line.starts_with(r#"[{"name":"search","description":"Search files for patterns using ripgrep (rg)","inputSchema":{"type":"object","properties":{"pattern":{"type":"string","#));
}

/// The server loop over in-memory pipes: handshake, version negotiation, errors.
#[tokio::test]
async fn serves_the_handshake_and_protocol_errors() {
    let dir = tree();
    let s = Arc::new(search(dir.path(), Engine::Builtin));
    let (client, server) = tokio::io::duplex(1 << 16);
    let (server_in, server_out) = tokio::io::split(server);
    let serving = tokio::spawn(serve(s, server_in, server_out));
    let (client_in, mut client_out) = tokio::io::split(client);
    let mut lines = BufReader::new(client_in).lines();
    let mut roundtrip = async |msg: &str| -> Value {
        client_out
            .write_all(format!("{msg}\n").as_bytes())
            .await
            .unwrap();
        serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap()
    };
    for (asked, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
    ] {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        let r = roundtrip(&init.to_string()).await;
        assert_eq!(r["result"]["protocolVersion"], answered);
        assert_eq!(r["result"]["serverInfo"]["name"], "warden-rg");
        assert_eq!(r["result"]["capabilities"], json!({"tools": {}}));
    }
    // Notifications get no answer: the next line is the ping's.
    let r = roundtrip(
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}",
    )
    .await;
    assert_eq!(r, json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
    let r = roundtrip(r#"{"jsonrpc":"2.0","id":2,"method":"resources/list"}"#).await;
    assert_eq!(r["error"]["code"], -32601);
    let r = roundtrip("{not json").await;
    assert_eq!(r["error"]["code"], -32700);
    assert!(r["id"].is_null());
    let r = roundtrip(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"grep"}}"#)
        .await;
    assert_eq!(r["error"]["code"], -32602);
    let r = roundtrip(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"pattern":"fn","path":"sub/b.rs"}}}"#).await;
    assert_eq!(r["result"]["content"][0]["text"], "1:fn alpha() {}\n");
    // End of input ends the server.
    client_out.shutdown().await.unwrap();
    serving.await.unwrap().unwrap();
}

/// The server over in-memory pipes, one request line in, one answer line out.
struct Pipe {
    _dir: tempfile::TempDir,
    to_server: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl Pipe {
    fn start() -> Pipe {
        let dir = tree();
        let s = Arc::new(search(dir.path(), Engine::Builtin));
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_in, server_out) = tokio::io::split(server);
        tokio::spawn(serve(s, server_in, server_out));
        let (client_in, to_server) = tokio::io::split(client);
        Pipe {
            _dir: dir,
            to_server,
            lines: BufReader::new(client_in).lines(),
        }
    }

    async fn raw(&mut self, msg: &str) -> String {
        let line = format!("{msg}\n");
        self.to_server.write_all(line.as_bytes()).await.unwrap();
        self.lines.next_line().await.unwrap().unwrap()
    }

    async fn ask(&mut self, msg: Value) -> Value {
        serde_json::from_str(&self.raw(&msg.to_string()).await).unwrap()
    }
}

/// A 2026-07-28 request: `_meta` with the protocol version, the client's info and capabilities.
fn modern(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test]
async fn discover_names_2026_07_28_without_an_initialize() {
    let mut pipe = Pipe::start();
    let r = pipe.ask(modern(1, "server/discover", json!({}))).await;
    assert_eq!(
        r["result"],
        json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "warden-rg", "version": env!("CARGO_PKG_VERSION")},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "warden-rg", "version": env!("CARGO_PKG_VERSION")}},
        })
    );
}

#[tokio::test]
async fn a_modern_tools_list_is_complete_with_its_cache_hints_and_the_same_tools() {
    let mut pipe = Pipe::start();
    let r = pipe.ask(modern(1, "tools/list", json!({}))).await;
    let tools: Value = serde_json::from_str(tools_json()).unwrap();
    assert_eq!(
        (
            &r["result"]["resultType"],
            &r["result"]["ttlMs"],
            &r["result"]["cacheScope"],
            &r["result"]["tools"]
        ),
        (&json!("complete"), &json!(0), &json!("private"), &tools)
    );
}

#[tokio::test]
async fn a_modern_tools_call_is_complete() {
    let mut pipe = Pipe::start();
    let args = json!({"name": "search", "arguments": {"pattern": "fn", "path": "sub/b.rs"}});
    let r = pipe.ask(modern(1, "tools/call", args)).await;
    assert_eq!(
        (&r["result"]["resultType"], &r["result"]["content"]),
        (
            &json!("complete"),
            &json!([{"type": "text", "text": "1:fn alpha() {}\n"}])
        )
    );
}

#[tokio::test]
async fn another_version_in_meta_is_refused_naming_2026_07_28() {
    let mut pipe = Pipe::start();
    let mut req = modern(1, "tools/list", json!({}));
    req["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let r = pipe.ask(req).await;
    assert_eq!(
        (&r["error"]["code"], &r["error"]["data"]),
        (
            &json!(-32022),
            &json!({"supported": ["2026-07-28"], "requested": "2099-01-01"})
        )
    );
}

/// MCP 2026-07-28 has no `ping`.
#[tokio::test]
async fn a_modern_ping_is_not_a_method() {
    let mut pipe = Pipe::start();
    let r = pipe.ask(modern(1, "ping", json!({}))).await;
    assert_eq!(r["error"]["code"], -32601);
}

/// Legacy answers are byte for byte what they were before the modern era was served.
#[tokio::test]
async fn legacy_answers_are_unchanged_bytes() {
    let mut pipe = Pipe::start();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"pattern":"fn","path":"sub/b.rs"}}}"#;
    let got = [
        pipe.raw(init).await,
        pipe.raw(list).await,
        pipe.raw(call).await,
    ];
    assert_eq!(
        got,
        [
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"capabilities":{{"tools":{{}}}},"protocolVersion":"2025-11-25","serverInfo":{{"name":"warden-rg","version":"{}"}}}}}}"#,
                env!("CARGO_PKG_VERSION")
            ),
            format!(
                r#"{{"jsonrpc":"2.0","id":2,"result":{{"tools":{}}}}}"#,
                tools_json()
            ),
            r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"1:fn alpha() {}\n"}]}}"#.to_owned(),
        ]
    );
}
