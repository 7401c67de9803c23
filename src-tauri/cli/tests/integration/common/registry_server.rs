//! A tiny MCP Registry for the tests of `warden registry`: an HTTP/1.1 server on 127.0.0.1 (never
//! another address) in a thread, answering each request with what a route function says, and
//! serving the project's own registry documents (warden-registry's tests/fixtures/registry) shaped
//! as the v0.1 API.

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::{Value, json};

/// The project's registry documents, shared with warden-registry's unit tests (its
/// tests/fixtures/registry/README.md says which case each one is).
pub const REGISTRY_FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../registry/tests/fixtures/registry"
);

/// A fixture's path, as `install --file` takes it.
pub fn registry_fixture_path(name: &str) -> String {
    format!("{REGISTRY_FIXTURES}/{name}")
}

/// A fixture's text.
pub fn registry_fixture(name: &str) -> String {
    let path = PathBuf::from(REGISTRY_FIXTURES).join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("registry fixture {} cannot be read: {e}", path.display()))
}

/// Real published registry documents, when a copy of them sits beside the repository (an
/// extra: never copied in, and the tests pass without them), or the folder that
/// `WARDEN_TEST_SHARED_REGISTRY` names.
pub fn real_registry_folder() -> PathBuf {
    std::env::var_os("WARDEN_TEST_SHARED_REGISTRY").map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../../shared/fixtures/registry"
            ))
        },
        Into::into,
    )
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

/// The cursor of the first page's `nextCursor` (list-response.json), as `warden` must send
/// it: URL-encoded.
pub const PAGE_2_CURSOR: &str = "cursor=io.example%2Flegacy-notes%3A0.1.0";

/// The fixtures as the v0.1 API: `GET /v0.1/servers` in two pages (list-response.json, then
/// notes-server, code-indexer and the remote-only ticket-desk), `versions` (one: 0.4.2),
/// `versions/latest` and `versions/0.4.2` of notes-server, and 404 for anything else.
pub fn fixture_registry() -> TestRegistry {
    let page1 = registry_fixture("list-response.json");
    let notes = wrapped(&registry_fixture("notes-server.server.json"));
    let indexer = wrapped(&registry_fixture("code-indexer.server.json"));
    let remote = wrapped(&registry_fixture("ticket-desk.server.json"));
    let page2 = json!({
        "servers": [notes, indexer, remote],
        "metadata": {"count": 3}
    })
    .to_string();
    let one = notes.to_string();
    let versions = json!({"servers": [notes], "metadata": {"count": 1}}).to_string();
    TestRegistry::start(move |path| {
        let (route, query) = path.split_once('?').unwrap_or((path, ""));
        match route {
            "/v0.1/servers" if query.contains(PAGE_2_CURSOR) => Reply::Json(200, page2.clone()),
            "/v0.1/servers" if !query.contains("cursor=") => Reply::Json(200, page1.clone()),
            "/v0.1/servers/io.example%2Fnotes-server/versions/latest"
            | "/v0.1/servers/io.example%2Fnotes-server/versions/0.4.2" => {
                Reply::Json(200, one.clone())
            }
            "/v0.1/servers/io.example%2Fnotes-server/versions" => {
                Reply::Json(200, versions.clone())
            }
            _ => Reply::Json(
                404,
                r#"{"title":"Not Found","status":404,"detail":"Server not found"}"#.to_owned(),
            ),
        }
    })
}
