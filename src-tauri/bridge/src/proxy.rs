//! The proxy a sandboxed server with a `sandbox_network` list reaches the network through
//! (Linux and macOS). It runs only for such a server, on a thread of its own (its own current-thread
//! runtime: the relay's thread never carries its traffic), from the server's start to its end.
//!
//! It speaks HTTP/1.1 as a forward proxy: `CONNECT host:port` (a tunnel: TLS stays end to
//! end, the proxy sees only the name and port) and plain requests in absolute form
//! (`GET http://host/path`), forwarded with `Connection: close` so that one connection carries
//! one checked destination (and answered with `Connection: close`, so the client sends no
//! second request on it). Each destination is checked by name as the client asked
//! (`config::network::check`); a listed name is resolved here and its loopback, link-local
//! and metadata addresses are dropped (`forbidden`); a listed address is reached as it is.
//! A refusal is answered `403` with a body naming the destination and the key to change, and
//! is a `network_denied` event (host, port) once per destination per session, for the first
//! [`DENIED_KEPT`] destinations; past them a destination is still refused, but counted, and
//! the count is a `network_denied` event without a host at 1, 2, 4, 8, ... ([`Denied`]: a
//! server asking for destinations without end grows no set and no log). What follows
//! the checked head goes as bytes to that destination only; a head must end within
//! [`HEAD_TIMEOUT`] and [`MAX_HEAD`] bytes, and at most [`MAX_CONNECTIONS`] are served at once.
//!
//! Where it listens: under bubblewrap, on 127.0.0.1:[`super::sandbox::PORT_INSIDE`] *inside*
//! the server's network namespace, a listener the sandbox's helper made there and sent out
//! over an inherited socket (`sandbox/netns.rs`); under Landlock and Seatbelt (macOS), on the
//! host's loopback, the one TCP port the sandbox lets the server connect to.

use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

use super::sink::Sink;
use warden_config::network::{self, Verdict};
use warden_wire::events::Event;

/// The largest request head read (the request line and headers).
const MAX_HEAD: usize = 64 * 1024;
/// The buffer a plain request's answer is read into.
const COPY_BUF: usize = 64 * 1024;
/// How long a destination may take to resolve and accept the connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take to send its whole request head: a head that never ends (a
/// "slowloris") is cut then, and does not hold its connection and buffer for good.
const HEAD_TIMEOUT: Duration = if cfg!(test) {
    Duration::from_millis(500)
} else {
    Duration::from_secs(30)
};
/// The connections served at once; more wait in the listener's backlog until one ends, so a
/// server opening connections without end holds at most this many of the bridge's file
/// descriptors and buffers.
const MAX_CONNECTIONS: usize = if cfg!(test) { 4 } else { 256 };

/// The destinations remembered per session, each reported once; more are counted.
pub const DENIED_KEPT: usize = 1024;

/// The destinations the proxy refused in one session (every server process of it): the first
/// [`DENIED_KEPT`] by name (`host:port`), each reported once; past them only a count.
#[derive(Debug, Default)]
pub struct Denied {
    names: HashSet<String>,
    more: u64,
}

/// What to report of a refusal ([`Denied::note`]).
#[derive(Debug, PartialEq, Eq)]
enum Report {
    /// A destination refused for the first time: its event.
    First,
    /// Refused before: nothing.
    Again,
    /// Past [`DENIED_KEPT`]: the count of refusals not named, reported when it reaches a
    /// power of two.
    More(u64),
}

impl Denied {
    /// Notes a refusal of `dest` (`host:port`).
    fn note(&mut self, dest: &str) -> Report {
        if self.names.contains(dest) {
            return Report::Again;
        }
        if self.names.len() < DENIED_KEPT {
            self.names.insert(dest.to_owned());
            return Report::First;
        }
        self.more += 1;
        if self.more.is_power_of_two() {
            Report::More(self.more)
        } else {
            Report::Again
        }
    }

    /// The destinations kept, by name.
    pub fn names(&self) -> impl Iterator<Item = &String> {
        self.names.iter()
    }
}

/// Where the proxy gets its listener.
pub enum Listen {
    /// From the sandbox's helper, over this socket (bubblewrap).
    Inside(#[cfg_attr(not(target_os = "linux"), allow(dead_code))] OwnedFd),
    /// Bound already, on the host's loopback (Landlock, Seatbelt).
    Host(std::net::TcpListener),
}

/// What the proxy checks and whom it tells.
pub struct Context {
    /// The server's name, for the refusal's text.
    pub server: String,
    /// The list, presets expanded.
    pub list: Vec<network::Dest>,
    pub sink: Arc<Sink>,
    /// The destinations refused so far in this session.
    pub denied: Arc<Mutex<Denied>>,
}

/// The running proxy: it stops (its connections cut) when this is dropped.
pub struct Proxy {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Starts the proxy's thread.
pub fn start(listen: Listen, cx: Context) -> std::io::Result<Proxy> {
    let (stop, stopped) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("warden-proxy".into())
        .spawn(move || run(listen, cx, stopped))?;
    Ok(Proxy { stop: Some(stop) })
}

fn run(listen: Listen, cx: Context, stopped: tokio::sync::oneshot::Receiver<()>) {
    let listener = match listen {
        Listen::Host(l) => l,
        // Blocks until the helper sends it, or the sandbox ends (end of file).
        #[cfg(target_os = "linux")]
        Listen::Inside(channel) => match super::sandbox::receive_listener(&channel) {
            Ok(Some(fd)) => std::net::TcpListener::from(fd),
            Ok(None) => return,
            Err(e) => {
                tracing::warn!("the sandbox's proxy listener did not arrive: {e}");
                return;
            }
        },
        // Only bubblewrap's helper sends one.
        #[cfg(not(target_os = "linux"))]
        Listen::Inside(_) => return,
    };
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let cx = Arc::new(cx);
    runtime.block_on(async move {
        if listener.set_nonblocking(true).is_err() {
            return;
        }
        let Ok(listener) = TcpListener::from_std(listener) else {
            return;
        };
        let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        let accept = async {
            loop {
                // A slot first: past the limit, connections wait in the backlog.
                let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
                    return;
                };
                match listener.accept().await {
                    Ok((conn, _)) => {
                        let cx = Arc::clone(&cx);
                        tokio::spawn(async move {
                            serve(conn, cx).await;
                            drop(slot);
                        });
                    }
                    Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
                }
            }
        };
        tokio::select! {
            () = accept => {}
            _ = stopped => {}
        }
    });
}

/// A request head, parsed.
struct Head {
    connect: bool,
    host: String,
    port: u16,
    /// Plain requests: the head as sent on (origin form, `Connection: close`).
    forward: Vec<u8>,
    /// Bytes read after the head (a body's start, or early tunnel data).
    rest: Vec<u8>,
}

/// Why a connection gets an error instead of its destination.
enum Answer {
    BadRequest(String),
    Refused(String),
    BadGateway(String),
}

async fn serve(mut client: TcpStream, cx: Arc<Context>) {
    let _ = client.set_nodelay(true);
    let head = match tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client)).await {
        Ok(Ok(Some(head))) => head,
        Ok(Ok(None)) => return,
        Err(_) => {
            let why = format!(
                "the request head did not end within {} s",
                HEAD_TIMEOUT.as_secs_f32()
            );
            let _ = answer(&mut client, &Answer::BadRequest(why)).await;
            return;
        }
        Ok(Err(why)) => {
            let _ = answer(&mut client, &Answer::BadRequest(why)).await;
            return;
        }
    };
    let mut upstream = match open(&head, &cx).await {
        Ok(upstream) => upstream,
        Err(a) => {
            let _ = answer(&mut client, &a).await;
            return;
        }
    };
    let _ = upstream.set_nodelay(true);
    let sent = if head.connect {
        client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await
    } else {
        upstream.write_all(&head.forward).await
    };
    if sent.is_err() || upstream.write_all(&head.rest).await.is_err() {
        return;
    }
    if !head.connect {
        plain(client, upstream).await;
        return;
    }
    super::tunnel::relay(client, upstream).await;
}

/// A plain request's exchange, once its head is sent on: the request's body goes up while the
/// answer comes back with `Connection: close` in its head, and the client's connection ends
/// with the answer. One connection carries one checked destination, so the client must not
/// send a second request on it; without that header a keep-alive client (npm's agent) would,
/// whenever the destination does not say `close` itself (Python's `http.server` does not),
/// and get `ECONNRESET` (npm then waits 10 s before it tries again).
async fn plain(client: TcpStream, upstream: TcpStream) {
    let (mut client_in, mut client_out) = client.into_split();
    let (mut up_in, mut up_out) = upstream.into_split();
    let request = async {
        let _ = tokio::io::copy(&mut client_in, &mut up_out).await;
        let _ = up_out.shutdown().await;
        std::future::pending::<()>().await
    };
    let answer = async {
        if relay_answer(&mut up_in, &mut client_out).await.is_ok() {
            let _ = client_out.shutdown().await;
        }
    };
    tokio::select! {
        () = request => {}
        () = answer => {}
    }
}

/// Relays the destination's answer: each head with its `Connection`, `Keep-Alive` and
/// `Proxy-Connection` headers replaced by `Connection: close` (interim `1xx` heads as they
/// are), then the body as it comes. What is not HTTP is relayed as it is.
async fn relay_answer(
    up: &mut tokio::net::tcp::OwnedReadHalf,
    client: &mut tokio::net::tcp::OwnedWriteHalf,
) -> std::io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut chunk = vec![0u8; COPY_BUF];
    // The heads, until the final one.
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 100];
        let mut res = httparse::Response::new(&mut headers);
        match res.parse(&buf) {
            Ok(httparse::Status::Complete(len)) => {
                let code = res.code.unwrap_or_default();
                if code < 200 {
                    client.write_all(&buf[..len]).await?;
                    buf.drain(..len);
                    // 101: the connection is the protocol's now.
                    if code == 101 {
                        break;
                    }
                    continue;
                }
                let head = closing_head(&res);
                client.write_all(&head).await?;
                buf.drain(..len);
                break;
            }
            Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => {
                let n = up.read(&mut chunk).await?;
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            Ok(httparse::Status::Partial) | Err(_) => break,
        }
    }
    client.write_all(&buf).await?;
    loop {
        let n = up.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        client.write_all(&chunk[..n]).await?;
    }
}

/// A final answer's head, its connection headers replaced by `Connection: close`.
fn closing_head(res: &httparse::Response<'_, '_>) -> Vec<u8> {
    let mut head = format!(
        "HTTP/1.{} {} {}\r\n",
        res.version.unwrap_or(1),
        res.code.unwrap_or_default(),
        res.reason.unwrap_or_default()
    )
    .into_bytes();
    for h in res.headers.iter() {
        if matches!(
            h.name.to_ascii_lowercase().as_str(),
            "connection" | "proxy-connection" | "keep-alive"
        ) {
            continue;
        }
        head.extend_from_slice(h.name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(h.value);
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"Connection: close\r\n\r\n");
    head
}

/// Reads and parses the request head; `None`: the client left first.
async fn read_head(client: &mut TcpStream) -> Result<Option<Head>, String> {
    let mut buf = Vec::with_capacity(4096);
    loop {
        let mut chunk = [0u8; 4096];
        let n = client
            .read(&mut chunk)
            .await
            .map_err(|e| format!("reading the request: {e}"))?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 100];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf) {
            Ok(httparse::Status::Complete(len)) => {
                return parse_head(&req, buf[len..].to_vec()).map(Some);
            }
            Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => {}
            Ok(httparse::Status::Partial) => return Err("the request head is too large".into()),
            Err(e) => return Err(format!("the request is not HTTP/1.1 ({e})")),
        }
    }
}

fn parse_head(req: &httparse::Request<'_, '_>, rest: Vec<u8>) -> Result<Head, String> {
    let method = req.method.unwrap_or_default();
    let target = req.path.unwrap_or_default();
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = authority(target, None)
            .ok_or_else(|| format!("CONNECT needs host:port, not {target:?}"))?;
        return Ok(Head {
            connect: true,
            host,
            port,
            forward: Vec::new(),
            rest,
        });
    }
    let Some(after) = strip_prefix_ignore_case(target, "http://") else {
        return Err(format!(
            "this is a proxy: ask for an absolute http:// URI, or CONNECT for https (not {target:?})"
        ));
    };
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (auth, path) = after.split_at(end);
    let (host, port) =
        authority(auth, Some(80)).ok_or_else(|| format!("bad host in {target:?}"))?;
    let path = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    };
    // The Host is the target's, whatever the client's own `Host` says (RFC 9112, 3.2.2: a
    // proxy replaces it): the origin is asked for the host the proxy checked.
    let mut shown = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.clone()
    };
    if port != 80 {
        shown = format!("{shown}:{port}");
    }
    let mut forward = format!("{method} {path} HTTP/1.1\r\nHost: {shown}\r\n").into_bytes();
    for h in req.headers.iter() {
        let name = h.name.to_ascii_lowercase();
        if matches!(
            name.as_str(),
            "host" | "connection" | "proxy-connection" | "proxy-authorization" | "keep-alive"
        ) {
            continue;
        }
        forward.extend_from_slice(h.name.as_bytes());
        forward.extend_from_slice(b": ");
        forward.extend_from_slice(h.value);
        forward.extend_from_slice(b"\r\n");
    }
    forward.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(Head {
        connect: false,
        host,
        port,
        forward,
        rest,
    })
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// `host:port`, `[v6]:port` (userinfo dropped); the port defaults to `default`.
fn authority(s: &str, default: Option<u16>) -> Option<(String, u16)> {
    let s = s.rsplit_once('@').map_or(s, |(_, a)| a);
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        (h, after.strip_prefix(':'))
    } else {
        match s.rsplit_once(':') {
            Some((h, p)) if !h.contains(':') => (h, Some(p)),
            _ => (s, None),
        }
    };
    let port = match port {
        Some(p) => p.parse().ok().filter(|p| *p != 0)?,
        None => default?,
    };
    (!host.is_empty()).then(|| (network::normalize(host), port))
}

/// Checks the destination and connects to it.
async fn open(head: &Head, cx: &Context) -> Result<TcpStream, Answer> {
    let (host, port) = (&head.host, head.port);
    let addrs: Vec<SocketAddr> = match network::check(&cx.list, host, port) {
        Verdict::Unlisted => return Err(refuse(cx, host, port, None)),
        Verdict::Addr(ip) => vec![SocketAddr::new(ip, port)],
        Verdict::Name(name) => {
            let found = tokio::time::timeout(
                CONNECT_TIMEOUT,
                tokio::net::lookup_host((name.as_str(), port)),
            )
            .await
            .map_err(|_| Answer::BadGateway(format!("{host} did not resolve in time")))?
            .map_err(|e| Answer::BadGateway(format!("{host} does not resolve: {e}")))?
            .collect::<Vec<_>>();
            let allowed: Vec<SocketAddr> = found
                .iter()
                .filter(|a| network::forbidden(a.ip()).is_none())
                .copied()
                .collect();
            if allowed.is_empty() {
                let why = found
                    .first()
                    .and_then(|a| network::forbidden(a.ip()).map(|w| (a.ip(), w)));
                return Err(refuse(cx, host, port, why));
            }
            allowed
        }
    };
    let mut last = String::new();
    for addr in addrs {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => last = format!("{host}:{port} ({addr}) refused the connection: {e}"),
            Err(_) => last = format!("{host}:{port} ({addr}) did not answer in time"),
        }
    }
    Err(Answer::BadGateway(last))
}

/// The refusal's answer, and its event once per destination per session.
fn refuse(cx: &Context, host: &str, port: u16, resolved: Option<(IpAddr, &str)>) -> Answer {
    let shown = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let entry = if port == 80 || port == 443 {
        if host.contains(':') {
            format!("[{host}]")
        } else {
            host.to_owned()
        }
    } else {
        shown.clone()
    };
    let (detail, text) = match resolved {
        None => (
            "not in the sandbox_network list".to_owned(),
            format!(
                "Warden refused {shown}: it is not in the `sandbox_network` list of server {:?}. To allow it, add \"{entry}\" to `sandbox_network` in [servers.{}] of config.toml (it applies from the server's next start).\n",
                cx.server, cx.server
            ),
        ),
        Some((ip, why)) => (
            format!("resolves to {ip}, {why}"),
            format!(
                "Warden refused {shown}: it resolves to {ip}, {why}, which a listed name may not reach. To allow it, list the address itself (\"{ip}:{port}\") in `sandbox_network` in [servers.{}] of config.toml.\n",
                cx.server
            ),
        ),
    };
    let report = cx
        .denied
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .note(&shown);
    match report {
        Report::First => {
            let mut event = Event::new("network_denied").detail(detail);
            event.host = Some(host.to_owned());
            event.port = Some(port);
            cx.sink.event(event);
        }
        Report::More(n) => cx.sink.event(Event::new("network_denied").detail(format!(
            "{n} more refusal(s) of destinations past the first {DENIED_KEPT} of this session, not named each"
        ))),
        Report::Again => {}
    }
    Answer::Refused(text)
}

async fn answer(client: &mut TcpStream, a: &Answer) -> std::io::Result<()> {
    let (status, body) = match a {
        Answer::BadRequest(b) => ("400 Bad Request", format!("Warden's proxy: {b}\n")),
        Answer::Refused(b) => ("403 Forbidden", b.clone()),
        Answer::BadGateway(b) => ("502 Bad Gateway", format!("Warden's proxy: {b}\n")),
    };
    let text = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(text.as_bytes()).await?;
    client.shutdown().await
}

#[cfg(test)]
mod tests;
