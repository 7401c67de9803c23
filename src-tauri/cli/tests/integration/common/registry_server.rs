//! A tiny MCP Registry for the tests of `warden registry`: an HTTP/1.1 server on 127.0.0.1 (never
//! another address) in a thread, answering each request with what a route function says, and
//! serving the fixture documents of /work/shared/fixtures/registry shaped as the v0.1 API.

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::{Value, json};

use super::cannot_run;

/// The shared fixtures, read where they are (tests never copy them into the repository).
pub const REGISTRY_FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/registry"
);

/// A fixture's text, or `None` after [`cannot_run`] when the fixtures are not there.
pub fn registry_fixture(name: &str) -> Option<String> {
    let path = PathBuf::from(REGISTRY_FIXTURES).join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) => {
            cannot_run(&format!("registry fixture {} ({e})", path.display()));
            None
        }
    }
}

/// What the test registry answers.
pub enum Reply {
    /// A complete answer with this status and JSON body.
    Json(u16, String),
    /// A 200 whose `Content-Length` promises twice the body it sends before it hangs up.
    Truncated(String),
}

type Route = dyn Fn(&str) -> Reply + Send + Sync;

pub struct TestRegistry {
    /// `http://127.0.0.1:PORT`, the base URL (`WARDEN_REGISTRY_URL`).
    pub url: String,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl TestRegistry {
    /// Serves `route(path_and_query)` for every request until dropped.
    pub fn start(route: impl Fn(&str) -> Reply + Send + Sync + 'static) -> TestRegistry {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let route: Box<Route> = Box::new(route);
        let thread = {
            let (requests, stop) = (requests.clone(), stop.clone());
            std::thread::spawn(move || {
                for conn in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(conn) = conn {
                        serve(conn, &*route, &requests);
                    }
                }
            })
        };
        TestRegistry {
            url,
            requests,
            stop,
            thread: Some(thread),
        }
    }

    /// The paths (with queries) asked for so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees `stop`; the port is closed when it returns.
        let _ = TcpStream::connect(self.url.trim_start_matches("http://"));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(conn: TcpStream, route: &Route, requests: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) | Err(_) => break,
            Ok(_) if header == "\r\n" || header == "\n" => break,
            Ok(_) => {}
        }
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_owned();
    requests.lock().unwrap().push(path.clone());
    let (status, body, length) = match route(&path) {
        Reply::Json(status, body) => (status, body.clone(), body.len()),
        Reply::Truncated(body) => (200, body.clone(), body.len() * 2),
    };
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Error",
    };
    let mut conn = conn;
    let _ = write!(
        conn,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n{body}"
    );
    let _ = conn.flush();
    let _ = conn.shutdown(Shutdown::Both);
}

/// A port on 127.0.0.1 where nothing listens (bound, then closed).
pub fn closed_port_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    url
}

/// `{server, _meta}` as the v0.1 API wraps a server.json.
pub fn wrapped(server_json: &str) -> Value {
    json!({
        "server": serde_json::from_str::<Value>(server_json).unwrap(),
        "_meta": {"io.modelcontextprotocol.registry/official": {
            "status": "active",
            "publishedAt": "2025-10-17T00:00:00Z",
            "isLatest": true
        }}
    })
}

/// The cursor of the first page's `nextCursor` (registry-list-response.example.json), as
/// `warden` must send it: URL-encoded.
pub const PAGE_2_CURSOR: &str = "cursor=com.example%2Fmy-server%3A1.0.0";

/// The fixtures as the v0.1 API: `GET /v0.1/servers` in two pages (the API's own example,
/// then playwright-mcp, serena and the remote-only example), `versions` (one: 0.0.79),
/// `versions/latest` and `versions/0.0.79` of playwright-mcp, and 404 for anything else. `None` (after
/// [`cannot_run`]) without the fixtures.
pub fn fixture_registry() -> Option<TestRegistry> {
    let page1 = registry_fixture("registry-list-response.example.json")?;
    let playwright = wrapped(&registry_fixture("playwright-mcp.server.json")?);
    let serena = wrapped(&registry_fixture("serena.server.json")?);
    let remote = wrapped(&registry_fixture("registry-example-with-remote.json")?);
    let page2 = json!({
        "servers": [playwright, serena, remote],
        "metadata": {"count": 3}
    })
    .to_string();
    let one = playwright.to_string();
    let versions = json!({"servers": [playwright], "metadata": {"count": 1}}).to_string();
    Some(TestRegistry::start(move |path| {
        let (route, query) = path.split_once('?').unwrap_or((path, ""));
        match route {
            "/v0.1/servers" if query.contains(PAGE_2_CURSOR) => Reply::Json(200, page2.clone()),
            "/v0.1/servers" if !query.contains("cursor=") => Reply::Json(200, page1.clone()),
            "/v0.1/servers/io.github.microsoft%2Fplaywright-mcp/versions/latest"
            | "/v0.1/servers/io.github.microsoft%2Fplaywright-mcp/versions/0.0.79" => {
                Reply::Json(200, one.clone())
            }
            "/v0.1/servers/io.github.microsoft%2Fplaywright-mcp/versions" => {
                Reply::Json(200, versions.clone())
            }
            _ => Reply::Json(
                404,
                r#"{"title":"Not Found","status":404,"detail":"Server not found"}"#.to_owned(),
            ),
        }
    }))
}
