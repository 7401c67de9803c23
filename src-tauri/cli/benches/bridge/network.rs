//! What a `sandbox_network` list costs: HTTP through the bridge's proxy from inside the
//! sandbox, against the same requests made directly, in one run.
//!
//! An origin on the host's loopback answers 4 KiB (an HTTPS-sized answer) or, for `/big`,
//! the large download. This benchmark's own program is the sandboxed "server": started by
//! `warden bridge` with `sandbox = "on"` and the origin's address as its only destination, it
//! makes its requests through the CONNECT tunnel named by `HTTPS_PROXY` (the way HTTPS goes)
//! and reports on stderr, which the bridge passes on. The same requests made directly, from
//! outside, are the baseline; the two take turns, round by round.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The flag that makes this program the sandboxed client: `--proxy-client PORT REQUESTS BYTES`.
pub const CLIENT_FLAG: &str = "--proxy-client";
/// What the client's report line starts with.
const REPORT: &str = "proxy-bench:";

/// One side's figures: p50 of the small requests (µs) and the large download's rate (MB/s).
#[derive(Clone, Copy, Default)]
pub struct Side {
    pub p50_us: f64,
    pub rate_mbs: f64,
}

/// Both sides' medians over the rounds.
pub struct Report {
    pub rounds: usize,
    pub requests: usize,
    pub big_bytes: u64,
    pub direct: Side,
    pub proxied: Side,
}

/// Starts the origin on the host's loopback: its port.
pub fn origin(big_bytes: u64) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the origin");
    let port = listener.local_addr().expect("origin address").port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            std::thread::spawn(move || {
                let _ = conn.set_nodelay(true);
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let len = if head.starts_with(b"GET /big") {
                    big_bytes
                } else {
                    4096
                };
                let _ = write!(conn, "HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n");
                let chunk = vec![b'x'; 1 << 16];
                let mut left = len;
                while left > 0 {
                    let n = left.min(chunk.len() as u64) as usize;
                    if conn.write_all(&chunk[..n]).is_err() {
                        return;
                    }
                    left -= n as u64;
                }
            });
        }
    });
    port
}

/// One GET on a new connection, through a CONNECT tunnel of the proxy at `proxy` if given:
/// the body's length.
fn get(origin: u16, proxy: Option<u16>, path: &str) -> u64 {
    let mut s = TcpStream::connect(("127.0.0.1", proxy.unwrap_or(origin))).expect("connect");
    s.set_nodelay(true).expect("nodelay");
    if proxy.is_some() {
        write!(s, "CONNECT 127.0.0.1:{origin} HTTP/1.1\r\n\r\n").expect("CONNECT");
        let mut head = Vec::new();
        let mut b = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            s.read_exact(&mut b).expect("the proxy's answer");
            head.push(b[0]);
        }
        assert!(
            head.starts_with(b"HTTP/1.1 200"),
            "the proxy refused: {}",
            String::from_utf8_lossy(&head)
        );
    }
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: origin\r\nConnection: close\r\n\r\n"
    )
    .expect("GET");
    // The head, then the body counted to the end (the origin closes after it).
    let mut buf = vec![0u8; 1 << 18];
    let mut head = Vec::new();
    let mut body: Option<u64> = None;
    loop {
        let n = s.read(&mut buf).expect("read the answer");
        if n == 0 {
            break;
        }
        match body.as_mut() {
            Some(body) => *body += n as u64,
            None => {
                head.extend_from_slice(&buf[..n]);
                if let Some(i) = head.windows(4).position(|w| w == b"\r\n\r\n") {
                    body = Some((head.len() - (i + 4)) as u64);
                }
            }
        }
    }
    body.expect("an answer head")
}

/// `requests` small GETs and one large download: one side's figures.
fn measure(origin: u16, proxy: Option<u16>, requests: usize, big_bytes: u64) -> Side {
    let mut times: Vec<f64> = (0..requests)
        .map(|_| {
            let t = Instant::now();
            assert_eq!(get(origin, proxy, "/"), 4096);
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let t = Instant::now();
    let got = get(origin, proxy, "/big");
    assert_eq!(got, big_bytes, "the download stopped early");
    Side {
        p50_us: times[times.len() / 2],
        rate_mbs: big_bytes as f64 / t.elapsed().as_secs_f64() / 1e6,
    }
}

/// The sandboxed side, run by the bridge: measures through the proxy `HTTPS_PROXY` names and
/// reports on stderr.
pub fn client(args: &[String]) {
    let [port, requests, big] = args else {
        panic!("{CLIENT_FLAG} PORT REQUESTS BYTES")
    };
    let proxy = std::env::var("HTTPS_PROXY").expect("HTTPS_PROXY is set by the bridge");
    let proxy_port: u16 = proxy
        .rsplit(':')
        .next()
        .and_then(|p| p.trim_end_matches('/').parse().ok())
        .expect("a port in HTTPS_PROXY");
    let side = measure(
        port.parse().expect("port"),
        Some(proxy_port),
        requests.parse().expect("requests"),
        big.parse().expect("bytes"),
    );
    eprintln!("{REPORT} {} {}", side.p50_us, side.rate_mbs);
}

/// The sandboxed side once: `warden bridge` with the origin listed, this program as its
/// server.
fn proxied(
    warden: &std::path::Path,
    env: &super::Env,
    origin: u16,
    requests: usize,
    big: u64,
) -> Side {
    let me = std::env::current_exe().expect("this benchmark");
    let mut child = Command::new(warden)
        .args([
            "bridge",
            "--server",
            "proxy-bench",
            "--set",
            "sandbox=\"on\"",
            "--set",
        ])
        .arg(format!("sandbox_network=[\"127.0.0.1:{origin}\"]"))
        .arg("--")
        .arg(me)
        .args([
            CLIENT_FLAG,
            &origin.to_string(),
            &requests.to_string(),
            &big.to_string(),
        ])
        .env("WARDEN_CONFIG", &env.config)
        .env("WARDEN_STATE_DIR", &env.state)
        .env("WARDEN_SOCKET", &env.socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the bridge");
    let mut stdin = child.stdin.take().expect("stdin");
    // The bridge starts its server for the client's first message.
    let _ = writeln!(
        stdin,
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}}",
        super::INIT_PARAMS
    );
    let mut found = None;
    let mut seen = Vec::new();
    for line in BufReader::new(child.stderr.take().expect("stderr")).lines() {
        let Ok(line) = line else { break };
        if let Some(rest) = line.strip_prefix(REPORT) {
            let v: Vec<f64> = rest
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            found = Some(Side {
                p50_us: v[0],
                rate_mbs: v[1],
            });
            break;
        }
        seen.push(line);
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    found.unwrap_or_else(|| {
        panic!(
            "no report from the sandboxed client; the bridge said:\n{}",
            seen.join("\n")
        )
    })
}

/// The whole comparison: `rounds` of direct then proxied, medians of each.
pub fn run(
    warden: &std::path::Path,
    env: &super::Env,
    rounds: usize,
    requests: usize,
    big: u64,
) -> Report {
    let origin = origin(big);
    let mut direct = Vec::new();
    let mut through = Vec::new();
    for _ in 0..rounds {
        direct.push(measure(origin, None, requests, big));
        through.push(proxied(warden, env, origin, requests, big));
    }
    let med = |v: &[Side]| Side {
        p50_us: super::median(v.iter().map(|s| s.p50_us).collect()),
        rate_mbs: super::median(v.iter().map(|s| s.rate_mbs).collect()),
    };
    Report {
        rounds,
        requests,
        big_bytes: big,
        direct: med(&direct),
        proxied: med(&through),
    }
}
