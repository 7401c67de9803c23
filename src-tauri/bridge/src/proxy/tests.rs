#![allow(clippy::unwrap_used)]
use super::*;

fn head(text: &str) -> Result<Head, String> {
    let mut headers = [httparse::EMPTY_HEADER; 16];
    let mut req = httparse::Request::new(&mut headers);
    let n = match req.parse(text.as_bytes()).unwrap() {
        httparse::Status::Complete(n) => n,
        httparse::Status::Partial => panic!("partial"),
    };
    parse_head(&req, text.as_bytes()[n..].to_vec())
}

#[test]
fn requests_are_read_as_the_client_names_their_destination() {
    let h =
        head("CONNECT API.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n").unwrap();
    assert!(h.connect);
    assert_eq!((h.host.as_str(), h.port), ("api.github.com", 443));
    let h = head("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n").unwrap();
    assert_eq!((h.host.as_str(), h.port), ("::1", 8443));
    let h = head("GET http://user@Example.org:8080/a?b HTTP/1.1\r\nHost: example.org:8080\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\nbody").unwrap();
    assert!(!h.connect);
    assert_eq!((h.host.as_str(), h.port), ("example.org", 8080));
    assert_eq!(
        String::from_utf8(h.forward).unwrap(),
        "GET /a?b HTTP/1.1\r\nHost: example.org:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
    );
    assert_eq!(h.rest, b"body");
    let h = head("GET http://example.org HTTP/1.1\r\n\r\n").unwrap();
    assert_eq!(h.port, 80);
    assert!(
        String::from_utf8(h.forward)
            .unwrap()
            .starts_with("GET / HTTP/1.1\r\nHost: example.org\r\n")
    );
    assert!(head("GET /x HTTP/1.1\r\n\r\n").is_err());
    assert!(head("CONNECT example.org HTTP/1.1\r\n\r\n").is_err());
    assert!(head("CONNECT example.org:0 HTTP/1.1\r\n\r\n").is_err());
}

#[test]
fn the_host_header_is_the_targets_and_userinfo_is_not_the_host() {
    // The client's own Host (one or two) is replaced by the target's.
    let h = head("GET http://127.0.0.1:8080/a HTTP/1.1\r\nHost: evil.example\r\nHost: other.example\r\nX: y\r\n\r\n").unwrap();
    assert_eq!((h.host.as_str(), h.port), ("127.0.0.1", 8080));
    assert_eq!(
        String::from_utf8(h.forward).unwrap(),
        "GET /a HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX: y\r\nConnection: close\r\n\r\n"
    );
    // `listed@evil`: the destination is evil (and so it is what is checked).
    let h = head("GET http://127.0.0.1:8080@evil.example/ HTTP/1.1\r\n\r\n").unwrap();
    assert_eq!((h.host.as_str(), h.port), ("evil.example", 80));
    assert!(
        String::from_utf8(h.forward)
            .unwrap()
            .starts_with("GET / HTTP/1.1\r\nHost: evil.example\r\n")
    );
    let h = head("CONNECT 127.0.0.1:8080@evil.example:443 HTTP/1.1\r\n\r\n").unwrap();
    assert_eq!((h.host.as_str(), h.port), ("evil.example", 443));
    let h = head("GET http://[::ffff:127.0.0.1]:8080/ HTTP/1.1\r\n\r\n").unwrap();
    assert_eq!((h.host.as_str(), h.port), ("::ffff:127.0.0.1", 8080));
}

/// An HTTP server on 127.0.0.1 that answers each request head it reads with `BODY-<port>`
/// (keeping the connection), and records the connections and the heads it got.
struct Origin {
    port: u16,
    heads: Arc<Mutex<Vec<String>>>,
    accepted: Arc<std::sync::atomic::AtomicUsize>,
}

impl Origin {
    fn start() -> Origin {
        use std::io::{Read as _, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (h, a) = (Arc::clone(&heads), Arc::clone(&accepted));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                a.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let h = Arc::clone(&h);
                std::thread::spawn(move || {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    loop {
                        while let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head: Vec<u8> = buf.drain(..i + 4).collect();
                            h.lock()
                                .unwrap()
                                .push(String::from_utf8_lossy(&head).into_owned());
                            let body = format!("BODY-{port}");
                            let _ = write!(
                                conn,
                                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                                body.len()
                            );
                        }
                        match conn.read(&mut chunk) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                });
            }
        });
        Origin {
            port,
            heads,
            accepted,
        }
    }

    fn connections(&self) -> usize {
        self.accepted.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

/// A proxy on 127.0.0.1 for `entries`; its port.
fn proxy(entries: &[String]) -> (Proxy, u16) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let parsed: Vec<_> = entries.iter().map(|e| network::entry(e).unwrap()).collect();
    let p = start(
        Listen::Host(listener),
        Context {
            server: "hostile".into(),
            list: network::expand(&parsed, |_| None, &[]),
            sink: Arc::new(Sink::start("hostile", None)),
            denied: Arc::default(),
        },
    )
    .unwrap();
    (p, port)
}

/// Sends `bytes` to the proxy at `port` and reads what comes back until the proxy or the
/// origin closes, or `wait` passes with nothing more.
fn send(port: u16, bytes: &[u8], wait: Duration) -> String {
    use std::io::{Read as _, Write as _};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(bytes).unwrap();
    s.set_read_timeout(Some(wait)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// After the checked request, the rest of the connection goes to the same origin, as bytes:
/// a second request naming another host (pipelined, smuggled behind a body, or a second
/// CONNECT in a tunnel) never makes the proxy connect anywhere else.
#[test]
fn what_follows_the_checked_head_reaches_only_its_destination() {
    let (listed, other) = (Origin::start(), Origin::start());
    let (a, b) = (listed.port, other.port);
    let (_p, port) = proxy(&[format!("127.0.0.1:{a}")]);
    let wait = Duration::from_millis(300);
    let second = format!("GET http://127.0.0.1:{b}/ HTTP/1.1\r\nHost: 127.0.0.1:{b}\r\n\r\n");
    // Pipelined after a plain request (keep-alive asked for, and a Host of the other).
    let got = send(
        port,
        format!("GET http://127.0.0.1:{a}/ HTTP/1.1\r\nHost: 127.0.0.1:{b}\r\nConnection: keep-alive\r\n\r\n{second}").as_bytes(),
        wait,
    );
    assert!(
        got.starts_with("HTTP/1.1 200") && got.contains(&format!("BODY-{a}")),
        "{got}"
    );
    assert!(!got.contains(&format!("BODY-{b}")), "{got}");
    // Smuggled: two Content-Lengths and a chunked body that holds the second request.
    let got = send(
        port,
        format!("POST http://127.0.0.1:{a}/ HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 60\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n{second}").as_bytes(),
        wait,
    );
    assert!(!got.contains(&format!("BODY-{b}")), "{got}");
    // A tunnel to the listed one, with early bytes and a second CONNECT inside.
    let got = send(
        port,
        format!(
            "CONNECT 127.0.0.1:{a} HTTP/1.1\r\n\r\nCONNECT 127.0.0.1:{b} HTTP/1.1\r\n\r\n{second}"
        )
        .as_bytes(),
        wait,
    );
    assert!(
        got.starts_with("HTTP/1.1 200 Connection Established"),
        "{got}"
    );
    assert!(!got.contains(&format!("BODY-{b}")), "{got}");
    assert_eq!(
        other.connections(),
        0,
        "the unlisted origin saw a connection"
    );
    assert_eq!(listed.connections(), 3);
    // The origin was asked for itself, not for the Host the client wrote.
    let heads = listed.heads();
    assert!(
        heads[0].starts_with(&format!("GET / HTTP/1.1\r\nHost: 127.0.0.1:{a}\r\n")),
        "{heads:?}"
    );
    assert!(heads[0].contains("Connection: close") && !heads[0].contains("keep-alive"));
}

/// Loopback by other spellings, and listed names that resolve to it, are refused: the
/// origin on 127.0.0.1 never sees a connection.
#[test]
fn loopback_is_reached_only_as_a_listed_address() {
    let origin = Origin::start();
    let o = origin.port;
    // Names the resolver reads as 127.0.0.1 (inet_aton's forms), listed as names.
    let (_p, port) = proxy(&[
        format!("localhost:{o}"),
        format!("2130706433:{o}"),
        format!("0x7f.1:{o}"),
        format!("127.1:{o}"),
    ]);
    let wait = Duration::from_secs(5);
    for host in ["localhost", "LOCALHOST.", "2130706433", "0x7f.1", "127.1"] {
        for req in [
            format!("GET http://{host}:{o}/ HTTP/1.1\r\n\r\n"),
            format!("CONNECT {host}:{o} HTTP/1.1\r\n\r\n"),
        ] {
            let got = send(port, req.as_bytes(), wait);
            assert!(
                got.starts_with("HTTP/1.1 403") && got.contains("loopback"),
                "{req:?}: {got}"
            );
        }
    }
    // Unlisted spellings of it, and the unspecified addresses (which Linux reaches as
    // loopback).
    for host in [
        "127.0.0.1",
        "[::ffff:127.0.0.1]",
        "017700000001",
        "0x7f000001",
        "0.0.0.0",
        "[::]",
        "[::1]",
        "127.0.0.1%2e",
        "x@127.0.0.1",
    ] {
        for req in [
            format!("GET http://{host}:{o}/ HTTP/1.1\r\n\r\n"),
            format!("CONNECT {host}:{o} HTTP/1.1\r\n\r\n"),
        ] {
            let got = send(port, req.as_bytes(), wait);
            assert!(got.starts_with("HTTP/1.1 403"), "{req:?}: {got}");
        }
    }
    assert_eq!(origin.connections(), 0);
}

/// A head too large is refused; one that never ends is cut after [`HEAD_TIMEOUT`]; past
/// [`MAX_CONNECTIONS`] at once, a connection waits for one of them to end.
#[test]
fn heads_too_large_or_too_slow_and_too_many_connections_are_bounded() {
    use std::io::{Read as _, Write as _};
    let origin = Origin::start();
    let o = origin.port;
    let (_p, port) = proxy(&[format!("127.0.0.1:{o}")]);
    let wait = Duration::from_secs(5);
    let huge = format!(
        "GET http://127.0.0.1:{o}/ HTTP/1.1\r\nX: {}\r\n\r\n",
        "a".repeat(MAX_HEAD + 1)
    );
    let got = send(port, huge.as_bytes(), wait);
    assert!(
        got.starts_with("HTTP/1.1 400") && got.contains("too large"),
        "{got}"
    );
    let many = format!(
        "GET http://127.0.0.1:{o}/ HTTP/1.1\r\n{}\r\n",
        "X: y\r\n".repeat(200)
    );
    assert!(send(port, many.as_bytes(), wait).starts_with("HTTP/1.1 400"));
    assert_eq!(origin.connections(), 0);

    // As many heads that never end as the proxy serves at once: the next request waits.
    let slow: Vec<std::net::TcpStream> = (0..MAX_CONNECTIONS)
        .map(|_| {
            let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.write_all(format!("GET http://127.0.0.1:{o}/ HTTP/1.1\r\nX: ").as_bytes())
                .unwrap();
            s
        })
        .collect();
    // No wait for them to be taken: the listener's backlog is first come, first served,
    // so those connected first get the slots and this one waits behind them.
    let started = std::time::Instant::now();
    let mut next = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    next.write_all(format!("GET http://127.0.0.1:{o}/ HTTP/1.1\r\n\r\n").as_bytes())
        .unwrap();
    next.set_read_timeout(Some(Duration::from_millis(150)))
        .unwrap();
    let mut byte = [0u8; 1];
    assert!(next.read(&mut byte).is_err(), "served past the limit");
    // The slow heads are cut (400), and then the waiting request is served.
    for mut s in slow {
        s.set_read_timeout(Some(wait)).unwrap();
        let mut got = String::new();
        let _ = s.read_to_string(&mut got);
        assert!(
            got.starts_with("HTTP/1.1 400") && got.contains("did not end"),
            "{got}"
        );
    }
    next.set_read_timeout(Some(wait)).unwrap();
    let mut got = vec![0u8; 64];
    let n = next.read(&mut got).unwrap();
    assert!(got[..n].starts_with(b"HTTP/1.1 200"));
    assert!(started.elapsed() >= HEAD_TIMEOUT.saturating_sub(Duration::from_millis(150)));
    assert_eq!(origin.connections(), 1);
}

/// A plain request's answer tells the client the connection ends with it, whatever the
/// destination said (here: nothing, then `keep-alive`), and the connection does end:
/// a keep-alive client (npm) would otherwise send its next request on it and get
/// `ECONNRESET`. An interim `100` head goes through as it is.
#[test]
fn a_plain_answer_says_connection_close_and_the_connection_ends() {
    use std::io::{Read as _, Write as _};
    let origin = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = origin.local_addr().unwrap().port();
    let answers = [
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 2\r\n\r\nok",
    ];
    std::thread::spawn(move || {
        for (conn, text) in origin.incoming().zip(answers) {
            let mut conn = conn.unwrap();
            let mut head = Vec::new();
            let mut b = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                conn.read_exact(&mut b).unwrap();
                head.push(b[0]);
            }
            conn.write_all(text.as_bytes()).unwrap();
        }
    });
    let (_proxy, proxy_port) = proxy(&[format!("127.0.0.1:{port}")]);
    for interim in [false, true] {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", proxy_port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            s,
            "GET http://127.0.0.1:{port}/x HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: keep-alive\r\n\r\n"
        )
        .unwrap();
        // To the end of the connection: a proxy that kept it open would time out here.
        let mut got = String::new();
        s.read_to_string(&mut got).unwrap();
        let want = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
        if interim {
            assert_eq!(got, format!("HTTP/1.1 100 Continue\r\n\r\n{want}"));
        } else {
            assert_eq!(got, want);
        }
    }
}

/// Past [`DENIED_KEPT`] destinations no more are kept: the set stays bounded.
#[test]
fn the_refused_destinations_kept_are_bounded() {
    let mut d = Denied::default();
    for i in 0..DENIED_KEPT + 500 {
        d.note(&format!("h{i}.example:443"));
    }
    assert_eq!(d.names().count(), DENIED_KEPT);
}

/// Each kept destination is reported once; past the cap, the count is reported at each
/// power of two and never a destination by name.
#[test]
fn refusals_past_the_cap_are_reported_as_a_count() {
    let mut d = Denied::default();
    for i in 0..DENIED_KEPT {
        d.note(&format!("h{i}.example:443"));
    }
    let reports: Vec<Report> = [
        "h0.example:443",
        "x1:443",
        "x2:443",
        "x3:443",
        "x4:443",
        "x1:443",
    ]
    .iter()
    .map(|dest| d.note(dest))
    .collect();
    assert_eq!(
        reports,
        [
            Report::Again,
            Report::More(1),
            Report::More(2),
            Report::Again,
            Report::More(4),
            Report::Again,
        ]
    );
}
