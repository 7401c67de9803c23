//! Peers: the same fake server reached directly, through `warden bridge`, through a reference
//! asyncio relay (`tests/bench/asyncio_relay.py`, the way the Python bridges in the field are
//! written) and through the SDK-based proxies `fastmcp` and `mcp-proxy` from PyPI, on the same
//! workloads in one run.
//!
//! Every workload takes turns between the peers, so all see the same machine state. A peer
//! that fails a workload (its stdout closes, or it does not answer in time) is a result, not
//! a benchmark error: the report says what happened, and that peer sits out the rest.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Env, FAKE, INIT_PARAMS, Stats, stats, status_kb, warden};

/// Sizes of the peer comparison.
pub struct PeerPlan {
    warmup: usize,
    rounds: usize,
    per_round: usize,
    /// A peer stops adding latency samples once its round trips add up to this.
    budget: Duration,
    pub burst: usize,
    burst_runs: usize,
    pub big_bytes: u64,
    big_runs: usize,
    /// A run slower than this is not repeated (the slow peers would take minutes).
    slow: Duration,
    /// A workload that takes longer than this fails (the relay is killed).
    timeout: Duration,
}

pub const FULL: PeerPlan = PeerPlan {
    warmup: 500,
    rounds: 20,
    per_round: 250,
    budget: Duration::from_secs(15),
    burst: 1_000,
    burst_runs: 3,
    big_bytes: 100_000_000,
    big_runs: 3,
    slow: Duration::from_secs(5),
    timeout: Duration::from_secs(300),
};

/// The smoke pass (`cargo test --bench bridge`): small, but its large response is over the
/// 16 MiB limit, so the failure path is exercised and checked too.
pub const SMOKE: PeerPlan = PeerPlan {
    warmup: 10,
    rounds: 2,
    per_round: 50,
    budget: Duration::from_secs(5),
    burst: 200,
    burst_runs: 1,
    big_bytes: 20_000_000,
    big_runs: 1,
    slow: Duration::from_secs(1),
    timeout: Duration::from_secs(60),
};

/// The asyncio relay's default limit, as in the field (see `tests/bench/asyncio_relay.py`).
const FIELD_LIMIT: u64 = 16 * 1024 * 1024;
/// A limit no test line reaches: what the asyncio design costs when it does not fail.
const HIGH_LIMIT: u64 = 1 << 30;

#[derive(Clone)]
enum Kind {
    Direct,
    Warden,
    Asyncio {
        python: PathBuf,
        limit: u64,
    },
    /// `mcp-proxy` has no stdio→stdio mode: its stdio client in front of its own HTTP server
    /// in front of the stdio server (two processes, loopback streamable HTTP).
    McpProxy {
        bin: PathBuf,
    },
    /// `fastmcp run mcp.json --transport stdio`: FastMCP's proxy for the servers of an
    /// MCPConfig file, stdio→stdio in one process (what `mcpm run` builds on).
    FastMcp {
        bin: PathBuf,
    },
}

pub struct Peer {
    pub name: String,
    /// What it is, for the report.
    pub what: String,
    kind: Option<Kind>,
    /// Why it is not measured (not installed), if it is not.
    pub missing: Option<String>,
}

fn script(repo: &Path) -> PathBuf {
    repo.join("tests/bench/asyncio_relay.py")
}

fn version(bin: &Path, arg: &str) -> Option<String> {
    let out = Command::new(bin).arg(arg).output().ok()?;
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    out.status
        .success()
        .then(|| text.lines().next().unwrap_or("").trim().to_owned())
}

/// `$BENCH_VENV/bin/NAME`, default the venv `scripts/bench.sh` installs in `tests/bench/.venv`.
fn venv_bin(repo: &Path, name: &str) -> PathBuf {
    std::env::var_os("BENCH_VENV")
        .map_or_else(|| repo.join("tests/bench/.venv"), PathBuf::from)
        .join("bin")
        .join(name)
}

fn not_installed(bin: &Path) -> String {
    format!(
        "not installed at `{}`: `scripts/bench.sh` installs it (or set `BENCH_VENV`)",
        bin.display()
    )
}

/// The peers of this run, direct first; those that cannot run here say why.
pub fn peers(repo: &Path) -> Vec<Peer> {
    let mut list = vec![
        Peer {
            name: "direct".into(),
            what: "the client spawns the server: one pipe each way, the physical limit".into(),
            kind: Some(Kind::Direct),
            missing: None,
        },
        Peer {
            name: "warden bridge".into(),
            what: "`warden bridge --server fake -- mcp-fake-server` (this build)".into(),
            kind: Some(Kind::Warden),
            missing: None,
        },
    ];
    let python = PathBuf::from("python3");
    let py_version = version(&python, "--version");
    for (limit, label) in [(FIELD_LIMIT, "16 MiB"), (HIGH_LIMIT, "1 GiB")] {
        let what = if limit == FIELD_LIMIT {
            format!(
                "`tests/bench/asyncio_relay.py` on {}: asyncio streams, `readline()`, StreamReader limit raised to 16 MiB as IBM ContextForge's `mcpgateway.translate` (PR #2616) and opensquilla (PR #953) did",
                py_version.as_deref().unwrap_or("python3")
            )
        } else {
            "the same relay with `--limit` 1 GiB, so no line here reaches it: what the design costs when it does not fail".into()
        };
        list.push(Peer {
            name: format!("asyncio relay, limit {label}"),
            what,
            kind: py_version.as_ref().map(|_| Kind::Asyncio {
                python: python.clone(),
                limit,
            }),
            missing: py_version
                .is_none()
                .then(|| "`python3` not found".to_owned()),
        });
    }
    let bin = venv_bin(repo, "fastmcp");
    // `fastmcp version` prints a table; the line that names FastMCP's.
    let fm_version = Command::new(&bin)
        .arg("version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .find(|l| l.starts_with("FastMCP version"))
                .and_then(|l| l.split_whitespace().last().map(str::to_owned))
        });
    list.push(Peer {
        name: "fastmcp proxy".into(),
        what: format!(
            "{} (PyPI, pinned in `tests/bench/requirements.txt`): `fastmcp run mcp.json --transport stdio`, FastMCP's proxy for the server of an MCPConfig file, stdio→stdio in one process (the proxy `mcpm run` builds on). It re-issues each request through its own MCP client and starts the server at the first call",
            fm_version
                .as_deref()
                .map_or("fastmcp".to_owned(), |v| format!("`fastmcp` {v}"))
        ),
        kind: fm_version.as_ref().map(|_| Kind::FastMcp { bin: bin.clone() }),
        missing: fm_version.is_none().then(|| not_installed(&bin)),
    });
    let bin = venv_bin(repo, "mcp-proxy");
    let mp_version = version(&bin, "--version");
    list.push(Peer {
        name: "mcp-proxy, chained".into(),
        what: format!(
            "{} (PyPI, sparfenyuk/mcp-proxy, pinned in `tests/bench/requirements.txt`). It has no stdio→stdio mode, so two of it are chained as MetaMCP's docs tell stdio-only clients to: `mcp-proxy --transport streamablehttp URL` (stdio side) → loopback HTTP → `mcp-proxy --port P -- mcp-fake-server` (server side). Both processes count as the relay; they re-issue each request through the Python MCP SDK",
            mp_version
                .as_deref()
                .map_or("mcp-proxy".to_owned(), |v| {
                    format!("`mcp-proxy` {}", v.trim_start_matches("mcp-proxy").trim())
                })
        ),
        kind: mp_version.as_ref().map(|_| Kind::McpProxy { bin: bin.clone() }),
        missing: mp_version.is_none().then(|| not_installed(&bin)),
    });
    list
}

// ---- one session through one peer ---------------------------------------------------------

struct Session {
    child: Child,
    /// mcp-proxy's server side (the HTTP server in front of the stdio server).
    upstream: Option<Child>,
    stdin: Option<ChildStdin>,
    out: BufReader<ChildStdout>,
    line: Vec<u8>,
    next_id: u64,
    stderr: PathBuf,
    relay: bool,
}

fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| e.to_string())?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

fn stderr_file(path: &Path) -> Result<Stdio, String> {
    std::fs::File::create(path)
        .map(Stdio::from)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// SIGTERM, then SIGKILL after `grace`.
fn stop(child: &mut Child, grace: Duration) {
    if matches!(child.try_wait(), Ok(Some(_))) {
        return;
    }
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
}

impl Session {
    fn spawn(kind: &Kind, env: &Env, repo: &Path, stderr: PathBuf) -> Result<Session, String> {
        let mut upstream = None;
        let mut cmd = match kind {
            Kind::Direct => Command::new(FAKE),
            Kind::Warden => {
                let mut c = Command::new(warden());
                c.args(["bridge", "--server", "fake", "--", FAKE]);
                c
            }
            Kind::Asyncio { python, limit } => {
                let mut c = Command::new(python);
                c.arg(script(repo))
                    .args(["--limit", &limit.to_string(), "--", FAKE]);
                c
            }
            Kind::FastMcp { bin } => {
                let config = stderr.with_extension("mcp.json");
                let json =
                    serde_json::json!({"mcpServers": {"fake": {"command": FAKE, "args": []}}});
                std::fs::write(&config, json.to_string()).map_err(|e| e.to_string())?;
                let mut c = Command::new(bin);
                c.arg("run")
                    .arg(&config)
                    .args([
                        "--transport",
                        "stdio",
                        "--no-banner",
                        "--log-level",
                        "WARNING",
                    ])
                    .env("FASTMCP_CHECK_FOR_UPDATES", "off");
                c
            }
            Kind::McpProxy { bin } => {
                let port = free_port()?;
                let mut server = Command::new(bin)
                    .args(["--host", "127.0.0.1", "--port", &port.to_string()])
                    .args(["--log-level", "WARNING", "--", FAKE])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(stderr_file(&stderr.with_extension("upstream.log"))?)
                    .spawn()
                    .map_err(|e| format!("spawn {}: {e}", bin.display()))?;
                // Ready when it accepts connections (or failed when it exits first).
                let deadline = Instant::now() + Duration::from_secs(30);
                loop {
                    if TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_ok() {
                        break;
                    }
                    if let Ok(Some(status)) = server.try_wait() {
                        return Err(format!("mcp-proxy server side exited with {status}"));
                    }
                    if Instant::now() > deadline {
                        stop(&mut server, Duration::from_secs(1));
                        return Err("mcp-proxy server side not listening after 30 s".into());
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                upstream = Some(server);
                let mut c = Command::new(bin);
                c.args(["--transport", "streamablehttp", "--log-level", "WARNING"])
                    .arg(format!("http://127.0.0.1:{port}/mcp"));
                c
            }
        };
        cmd.env("WARDEN_CONFIG", &env.config)
            .env("WARDEN_STATE_DIR", &env.state)
            .env("WARDEN_SOCKET", &env.socket)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr_file(&stderr)?);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                if let Some(mut u) = upstream {
                    stop(&mut u, Duration::from_secs(1));
                }
                return Err(format!("spawn: {e}"));
            }
        };
        let stdin = child.stdin.take();
        let out = child.stdout.take().ok_or("no stdout")?;
        Ok(Session {
            child,
            upstream,
            stdin,
            out: BufReader::with_capacity(super::READ_BUF, out),
            line: Vec::with_capacity(4096),
            next_id: 1,
            stderr,
            relay: !matches!(kind, Kind::Direct),
        })
    }

    /// The relay's processes (none direct): whose memory counts, and who a watchdog kills.
    fn relay_pids(&self) -> Vec<u32> {
        if !self.relay {
            return Vec::new();
        }
        let mut v = vec![self.child.id()];
        v.extend(self.upstream.as_ref().map(Child::id));
        v
    }

    fn pids(&self) -> Vec<u32> {
        let mut v = vec![self.child.id()];
        v.extend(self.upstream.as_ref().map(Child::id));
        v
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// The last thing the relay (or its server) said on stderr, for a failure's report.
    fn stderr_tail(&self) -> String {
        let mut text = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        if let Ok(up) = std::fs::read_to_string(self.stderr.with_extension("upstream.log")) {
            text.push_str(&up);
        }
        let last = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        let mut s: String = last.chars().take(160).collect();
        if s.len() < last.len() {
            s.push('…');
        }
        s
    }

    /// Why the stream ended: the exit status if it exited, and the stderr tail.
    fn ended(&mut self, what: &str) -> String {
        std::thread::sleep(Duration::from_millis(50));
        let status = match self.child.try_wait() {
            Ok(Some(s)) => format!("exited ({s})"),
            _ => "closed its stdout".into(),
        };
        let tail = self.stderr_tail();
        if tail.is_empty() {
            format!("{what}: {status}")
        } else {
            format!("{what}: {status}; stderr: \"{tail}\"")
        }
    }

    fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        stdin.write_all(bytes).map_err(|e| format!("write: {e}"))
    }

    fn recv(&mut self) -> Result<&[u8], String> {
        self.line.clear();
        match self.out.read_until(b'\n', &mut self.line) {
            Ok(0) => Err(self.ended("stdout closed")),
            Ok(_) => Ok(&self.line),
            Err(e) => Err(format!("read: {e}")),
        }
    }

    fn handshake(&mut self) -> Result<(), String> {
        let msg = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{INIT_PARAMS}}}\n"
        );
        self.send(msg.as_bytes())?;
        let v: Value = serde_json::from_slice(self.recv()?).map_err(|e| e.to_string())?;
        // SDK-based proxies answer `initialize` themselves, under their own name.
        if v["id"] != 1 || !v["result"]["protocolVersion"].is_string() {
            return Err(format!("unexpected initialize answer {v}"));
        }
        self.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
    }

    /// One `tools/call echo` round trip, in seconds; the answer checked after the clock stops.
    fn echo(&mut self) -> Result<f64, String> {
        let id = self.id();
        let req = echo_request(id);
        let t = Instant::now();
        self.send(req.as_bytes())?;
        self.recv()?;
        let dt = t.elapsed().as_secs_f64();
        check_echo(&self.line, id)?;
        Ok(dt)
    }

    fn close(mut self) {
        self.stdin.take();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        // Drop does the rest: SIGTERM the server side, kill what is left.
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stdin.take();
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        if let Some(u) = &mut self.upstream {
            stop(u, Duration::from_secs(5));
        }
    }
}

fn echo_request(id: u64) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"hello\"}}}}}}\n"
    )
}

fn check_echo(line: &[u8], id: u64) -> Result<(), String> {
    let v: Value = serde_json::from_slice(line).map_err(|e| format!("not JSON: {e}"))?;
    if v["id"] == id && v["result"]["content"][0]["text"] == "hello" {
        Ok(())
    } else {
        Err(format!("unexpected answer to echo {id}: {v}"))
    }
}

/// Kills `pids` unless dropped within `after`: a hung relay fails its workload instead of
/// hanging the benchmark.
struct Watchdog {
    cancel: Option<mpsc::Sender<()>>,
    fired: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    fn arm(pids: Vec<u32>, after: Duration) -> Watchdog {
        let (tx, rx) = mpsc::channel::<()>();
        let fired = Arc::new(AtomicBool::new(false));
        let flag = fired.clone();
        let thread = std::thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(after) {
                flag.store(true, Ordering::SeqCst);
                for pid in pids {
                    let _ = Command::new("kill")
                        .args(["-KILL", &pid.to_string()])
                        .status();
                }
            }
        });
        Watchdog {
            cancel: Some(tx),
            fired,
            thread: Some(thread),
        }
    }

    fn fired(&self) -> bool {
        self.fired.load(Ordering::SeqCst)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if let Some(tx) = self.cancel.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Polls the peak RSS (`VmHWM`) of `pids` every 10 ms until stopped: the peak of a relay that
/// dies is otherwise lost with it.
struct RssSampler {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<u64>,
}

impl RssSampler {
    fn start(pids: Vec<u32>) -> RssSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut peak = vec![0u64; pids.len()];
            loop {
                for (i, pid) in pids.iter().enumerate() {
                    if let Some(kb) = status_kb(*pid, "VmHWM:") {
                        peak[i] = peak[i].max(kb);
                    }
                }
                if flag.load(Ordering::SeqCst) {
                    return peak.iter().sum();
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        RssSampler { stop, thread }
    }

    fn finish(self) -> u64 {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().unwrap_or(0)
    }
}

// ---- the workloads ------------------------------------------------------------------------

/// What happened to one peer in one workload.
#[derive(Clone, Debug)]
pub enum Outcome<T> {
    Ok(T),
    Failed(String),
    /// Not run: the peer is not installed, or failed an earlier workload.
    Skipped(String),
}

impl<T> Outcome<T> {
    pub fn ok(&self) -> Option<&T> {
        match self {
            Outcome::Ok(v) => Some(v),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct BigRun {
    /// Seconds from the request's write to the answer's `\n`, best run.
    pub total: f64,
    pub first_byte: f64,
    pub bytes: usize,
    pub runs: usize,
}

pub struct PeerResult {
    pub name: String,
    pub what: String,
    pub missing: Option<String>,
    pub echo: Outcome<Stats>,
    /// Best time (s) to the last of the burst's answers, and how many runs.
    pub burst: Outcome<(f64, usize)>,
    pub big: Outcome<BigRun>,
    /// Relay RSS after the handshake (kB), peak over the whole run (kB); summed over the
    /// relay's processes; `None` direct.
    pub idle_rss_kb: Option<u64>,
    pub peak_rss_kb: Option<u64>,
    /// The peak was taken from samples because the relay died.
    pub peak_sampled: bool,
}

pub struct Report {
    pub plan: &'static PeerPlan,
    pub results: Vec<PeerResult>,
    pub elapsed: Duration,
}

struct Live {
    session: Option<Session>,
    /// Why it is out, once it is.
    out: Option<String>,
    relay_pids: Vec<u32>,
    peak_sampled_kb: u64,
}

impl Live {
    fn fail(&mut self, workload: &str, why: String) -> String {
        let pids = self.relay_pids.clone();
        for pid in pids {
            if let Some(kb) = status_kb(pid, "VmHWM:") {
                self.peak_sampled_kb = self.peak_sampled_kb.max(kb);
            }
        }
        self.session = None;
        self.out = Some(format!("failed the {workload} test"));
        why
    }

    fn skipped<T>(&self) -> Outcome<T> {
        Outcome::Skipped(self.out.clone().unwrap_or_default())
    }
}

/// Runs every workload through every peer, taking turns.
pub fn run(
    peers: &[Peer],
    plan: &'static PeerPlan,
    env: &Env,
    repo: &Path,
    say: &dyn Fn(&str),
) -> Report {
    let started = Instant::now();
    let tmp = tempfile::tempdir().expect("tempdir");
    let n = peers.len();
    let mut live: Vec<Live> = Vec::new();
    let mut results: Vec<PeerResult> = peers
        .iter()
        .map(|p| PeerResult {
            name: p.name.clone(),
            what: p.what.clone(),
            missing: p.missing.clone(),
            echo: Outcome::Skipped("not installed".into()),
            burst: Outcome::Skipped("not installed".into()),
            big: Outcome::Skipped("not installed".into()),
            idle_rss_kb: None,
            peak_rss_kb: None,
            peak_sampled: false,
        })
        .collect();

    say("peers: start and handshake");
    for (i, p) in peers.iter().enumerate() {
        let mut l = Live {
            session: None,
            out: p.missing.clone(),
            relay_pids: Vec::new(),
            peak_sampled_kb: 0,
        };
        if let Some(kind) = &p.kind {
            let log = tmp.path().join(format!("peer{i}.log"));
            match Session::spawn(kind, env, repo, log) {
                Ok(mut s) => {
                    let dog = Watchdog::arm(s.pids(), plan.timeout);
                    let hs = s.handshake();
                    drop(dog);
                    l.relay_pids = s.relay_pids();
                    match hs {
                        Ok(()) => l.session = Some(s),
                        Err(e) => {
                            l.out = Some(format!("did not start: {e}"));
                        }
                    }
                }
                Err(e) => l.out = Some(format!("did not start: {e}")),
            }
        }
        live.push(l);
    }
    std::thread::sleep(Duration::from_millis(300));
    for (l, r) in live.iter().zip(results.iter_mut()) {
        if l.session.is_some() && !l.relay_pids.is_empty() {
            r.idle_rss_kb = Some(
                l.relay_pids
                    .iter()
                    .filter_map(|p| status_kb(*p, "VmRSS:"))
                    .sum(),
            );
        }
    }

    say("peers: small requests (tools/call echo)");
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut spent = vec![0f64; n];
    for round in 0..=plan.rounds {
        for k in 0..n {
            // Rotate who goes first, so nobody always follows the same neighbour.
            let i = (k + round) % n;
            let l = &mut live[i];
            let Some(s) = l.session.as_mut() else {
                continue;
            };
            if round > 0 && spent[i] > plan.budget.as_secs_f64() {
                continue;
            }
            let count = if round == 0 {
                plan.warmup
            } else {
                plan.per_round
            };
            let dog = Watchdog::arm(s.pids(), plan.timeout);
            let mut err = None;
            for _ in 0..count {
                match s.echo() {
                    Ok(dt) => {
                        spent[i] += dt;
                        if round > 0 {
                            samples[i].push(dt * 1e6);
                        }
                    }
                    Err(e) => {
                        err = Some(e);
                        break;
                    }
                }
            }
            let fired = dog.fired();
            drop(dog);
            if let Some(e) = err {
                let why = if fired {
                    format!("no answer within {:?}", plan.timeout)
                } else {
                    e
                };
                results[i].echo = Outcome::Failed(l.fail("small request", why));
            }
        }
    }
    for (i, r) in results.iter_mut().enumerate() {
        if matches!(r.echo, Outcome::Failed(_)) {
            continue;
        }
        r.echo = if samples[i].is_empty() {
            live[i].skipped()
        } else {
            Outcome::Ok(stats(std::mem::take(&mut samples[i])))
        };
    }

    say(&format!(
        "peers: burst of {} requests written at once",
        plan.burst
    ));
    let mut best = vec![(f64::INFINITY, 0usize); n];
    for run in 0..plan.burst_runs {
        for k in 0..n {
            let i = (k + run) % n;
            if best[i].0.is_finite() && best[i].0 > plan.slow.as_secs_f64() {
                continue;
            }
            let l = &mut live[i];
            let Some(s) = l.session.as_mut() else {
                continue;
            };
            match burst(s, plan) {
                Ok(dt) => {
                    best[i] = (best[i].0.min(dt), best[i].1 + 1);
                }
                Err(e) => results[i].burst = Outcome::Failed(l.fail("burst", e)),
            }
        }
    }
    for (i, r) in results.iter_mut().enumerate() {
        if matches!(r.burst, Outcome::Failed(_)) {
            continue;
        }
        r.burst = if best[i].1 > 0 {
            Outcome::Ok(best[i])
        } else {
            live[i].skipped()
        };
    }

    say(&format!(
        "peers: {} MB response",
        plan.big_bytes / 1_000_000
    ));
    let mut best_big: Vec<Option<BigRun>> = vec![None; n];
    for run in 0..plan.big_runs {
        for k in 0..n {
            let i = (k + run) % n;
            if best_big[i].is_some_and(|b| b.total > plan.slow.as_secs_f64()) {
                continue;
            }
            let l = &mut live[i];
            let Some(s) = l.session.as_mut() else {
                continue;
            };
            let sampler = RssSampler::start(l.relay_pids.clone());
            let res = big(s, plan);
            l.peak_sampled_kb = l.peak_sampled_kb.max(sampler.finish());
            match res {
                Ok(b) => {
                    let runs = best_big[i].map_or(0, |x| x.runs) + 1;
                    let keep = best_big[i].filter(|x| x.total <= b.total).unwrap_or(b);
                    best_big[i] = Some(BigRun { runs, ..keep });
                }
                Err(e) => results[i].big = Outcome::Failed(l.fail("large response", e)),
            }
        }
    }
    for (i, r) in results.iter_mut().enumerate() {
        if matches!(r.big, Outcome::Failed(_)) {
            continue;
        }
        r.big = best_big[i].map_or_else(|| live[i].skipped(), Outcome::Ok);
    }

    say("peers: peak memory, close");
    for (l, r) in live.iter_mut().zip(results.iter_mut()) {
        if l.relay_pids.is_empty() {
            continue;
        }
        if let Some(s) = l.session.take() {
            let hwm: u64 = l
                .relay_pids
                .iter()
                .filter_map(|p| status_kb(*p, "VmHWM:"))
                .sum();
            r.peak_rss_kb = Some(hwm.max(l.peak_sampled_kb));
            s.close();
        } else if l.peak_sampled_kb > 0 {
            r.peak_rss_kb = Some(l.peak_sampled_kb);
            r.peak_sampled = true;
        }
    }
    for l in &mut live {
        if let Some(s) = l.session.take() {
            s.close();
        }
    }
    Report {
        plan,
        results,
        elapsed: started.elapsed(),
    }
}

/// `plan.burst` echo requests written in one go by a writer thread while this thread reads;
/// seconds until the last answer. Every id must come back once, in any order.
fn burst(s: &mut Session, plan: &PeerPlan) -> Result<f64, String> {
    let first = s.next_id + 1;
    let mut batch = Vec::with_capacity(plan.burst * 110);
    for _ in 0..plan.burst {
        let id = s.id();
        batch.extend_from_slice(echo_request(id).as_bytes());
    }
    let mut stdin = s.stdin.take().ok_or("stdin closed")?;
    let dog = Watchdog::arm(s.pids(), plan.timeout);
    let mut answers = Vec::with_capacity(plan.burst * 120);
    let t = Instant::now();
    let writer = std::thread::spawn(move || stdin.write_all(&batch).map(|()| stdin));
    let mut lines = 0;
    let mut err = None;
    while lines < plan.burst {
        match s.out.read_until(b'\n', &mut answers) {
            Ok(0) => {
                err = Some(s.ended("stdout closed"));
                break;
            }
            Ok(_) => lines += 1,
            Err(e) => {
                err = Some(format!("read: {e}"));
                break;
            }
        }
    }
    let dt = t.elapsed().as_secs_f64();
    let fired = dog.fired();
    drop(dog);
    match writer.join() {
        Ok(Ok(stdin)) => s.stdin = Some(stdin),
        Ok(Err(e)) => return Err(err.unwrap_or(format!("write: {e}"))),
        Err(_) => return Err("writer thread panicked".into()),
    }
    if let Some(e) = err {
        return Err(if fired {
            format!("not all answers within {:?}", plan.timeout)
        } else {
            e
        });
    }
    let mut seen = vec![false; plan.burst];
    for line in answers.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let v: Value = serde_json::from_slice(line).map_err(|e| format!("not JSON: {e}"))?;
        let id = v["id"].as_u64().ok_or_else(|| format!("no id: {v}"))?;
        let slot = id
            .checked_sub(first)
            .and_then(|k| usize::try_from(k).ok())
            .and_then(|k| seen.get_mut(k))
            .ok_or_else(|| format!("unexpected id {id}"))?;
        if std::mem::replace(slot, true) || v["result"]["content"][0]["text"] != "hello" {
            return Err(format!("duplicate or wrong answer: {v}"));
        }
    }
    Ok(dt)
}

/// `tools/call big`: one line of at least `plan.big_bytes` bytes, counted, not parsed; then
/// an echo to check the stream is still in step.
fn big(s: &mut Session, plan: &PeerPlan) -> Result<BigRun, String> {
    let id = s.id();
    let req = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"big\",\"arguments\":{{\"bytes\":{}}}}}}}\n",
        plan.big_bytes
    );
    let dog = Watchdog::arm(s.pids(), plan.timeout);
    let t = Instant::now();
    s.send(req.as_bytes())?;
    let first = s.out.fill_buf().map(<[u8]>::len);
    let first_byte = t.elapsed().as_secs_f64();
    let n = match first {
        Ok(0) => Err(s.ended("stdout closed")),
        Ok(_) => s.out.skip_until(b'\n').map_err(|e| format!("read: {e}")),
        Err(e) => Err(format!("read: {e}")),
    };
    let total = t.elapsed().as_secs_f64();
    let fired = dog.fired();
    drop(dog);
    let n = match n {
        Ok(0) => Err(s.ended("stdout closed")),
        other => other,
    }
    .map_err(|e| {
        if fired {
            format!("no whole answer within {:?}", plan.timeout)
        } else {
            e
        }
    })?;
    let want = usize::try_from(plan.big_bytes).unwrap_or(usize::MAX);
    // Framing differs between peers (mcp-proxy re-serialises the answer); the text alone is
    // `want` bytes.
    if n < want || n > want + 400 {
        return Err(format!("answer of {n} bytes for a {want}-byte text"));
    }
    let dog = Watchdog::arm(s.pids(), plan.timeout);
    let step = s.echo();
    drop(dog);
    step.map_err(|e| format!("after the large answer: {e}"))?;
    Ok(BigRun {
        total,
        first_byte,
        bytes: n,
        runs: 1,
    })
}

/// In the smoke pass: the checks that make it a test. Direct, the bridge and the asyncio relay
/// without a reachable limit pass everything; the relay with the field's 16 MiB limit fails
/// the larger response and the report says so.
pub fn check_smoke(r: &Report) {
    for p in &r.results {
        if p.missing.is_some() {
            eprintln!("peer {} not measured: {:?}", p.name, p.missing);
            continue;
        }
        let all_ok = p.echo.ok().is_some() && p.burst.ok().is_some() && p.big.ok().is_some();
        if p.name.contains("16 MiB") {
            assert!(
                p.echo.ok().is_some() && p.burst.ok().is_some(),
                "{}: {:?} {:?}",
                p.name,
                p.echo.ok().map(|s| s.n),
                p.burst
            );
            match &p.big {
                Outcome::Failed(why) => assert!(
                    why.contains("limit"),
                    "{}: failed, but not for its limit: {why}",
                    p.name
                ),
                other => panic!(
                    "{}: a line over its 16 MiB limit should fail: {other:?}",
                    p.name
                ),
            }
        } else {
            assert!(
                all_ok,
                "{}: {:?} / {:?} / {:?}",
                p.name,
                p.echo.ok().map(|s| s.n),
                p.burst,
                p.big
            );
        }
    }
    // The picture draws every relay measured, a failed one as such.
    let svg = chart(r).expect("a chart of the smoke pass");
    let measured = r.results.iter().filter(|p| p.missing.is_none());
    for p in measured {
        assert!(
            svg.contains(&escape(&p.name)),
            "{} is not in the chart",
            p.name
        );
    }
}

// ---- the report ---------------------------------------------------------------------------

/// Milliseconds, or seconds from one second up.
fn fmt_ms(secs: f64) -> String {
    if secs >= 1.0 {
        format!("{secs:.2} s")
    } else if secs >= 0.1 {
        format!("{:.0} ms", secs * 1e3)
    } else if secs >= 0.001 {
        format!("{:.1} ms", secs * 1e3)
    } else {
        format!("{:.2} ms", secs * 1e3)
    }
}

fn fmt_us(v: f64) -> String {
    if v >= 1_000.0 {
        format!("{:.2} ms", v / 1e3)
    } else {
        format!("{v:.1} µs")
    }
}

fn mb(kb: u64) -> String {
    format!("{:.1} MB", kb as f64 / 1024.0)
}

/// "×2.31" (peer ÷ direct).
fn ratio_of(v: f64, direct: Option<f64>) -> String {
    direct.filter(|d| *d > 0.0).map_or(String::new(), |d| {
        let r = v / d;
        // Two or three significant digits, however small or large.
        let decimals = if r >= 100.0 {
            0
        } else if r >= 1.0 {
            2
        } else {
            (1 - r.log10().floor() as i32).clamp(2, 6) as usize
        };
        format!(" (×{r:.decimals$})")
    })
}

fn cell<T>(o: &Outcome<T>, f: impl Fn(&T) -> String) -> String {
    match o {
        Outcome::Ok(v) => f(v),
        Outcome::Failed(_) => "**failed** ᶠ".into(),
        Outcome::Skipped(why) if why.is_empty() => "—".into(),
        Outcome::Skipped(_) => "not run ᶠ".into(),
    }
}

/// The `tools/call echo` round trips of direct and of `warden bridge`, when both ran.
pub fn echo_direct_and_bridged(r: &Report) -> Option<(Stats, Stats)> {
    let [direct, bridged, ..] = r.results.as_slice() else {
        return None;
    };
    Some((direct.echo.ok()?.clone(), bridged.echo.ok()?.clone()))
}

/// The peers section of docs/BENCHMARKS.md.
pub fn report(r: &Report, w: &mut String) {
    let plan = r.plan;
    let big_mb = plan.big_bytes / 1_000_000;
    let measured: Vec<&PeerResult> = r.results.iter().filter(|p| p.missing.is_none()).collect();
    let direct = r.results.first();
    // Direct's own cells carry no ratio.
    let d_echo = direct.and_then(|d| d.echo.ok().cloned());
    let d_burst = direct.and_then(|d| d.burst.ok().map(|b| b.0));
    let d_big = direct.and_then(|d| d.big.ok().copied());
    let ratio = |p: &PeerResult, v: f64, d: Option<f64>| {
        if direct.is_some_and(|x| std::ptr::eq(x, p)) {
            String::new()
        } else {
            ratio_of(v, d)
        }
    };
    let mbps = |b: &BigRun| b.bytes as f64 / 1e6 / b.total;

    let _ = writeln!(w, "## Against other relays\n");
    let _ = writeln!(
        w,
        "The same fake server, the same client and the same workloads through each peer, \
         taking turns within one run ({:.0} s). Each cell is the value and, in brackets, its \
         ratio to direct (for times, ×2 means twice as long; for throughput, ×0.5 means half \
         the rate). Memory is the relay's own (all its processes), not the server's.\n",
        r.elapsed.as_secs_f64()
    );
    if chart(r).is_some() {
        let _ = writeln!(
            w,
            "![Each relay's small-request p50 (log scale) and its 100 MB throughput, from the table below]({CHART})\n"
        );
    }
    let mut head = String::from("| | ");
    let mut sep = String::from("|---|");
    for p in &measured {
        let _ = write!(head, "{} | ", p.name);
        sep.push_str("---:|");
    }
    let _ = writeln!(w, "{}\n{sep}", head.trim_end());
    let row = |w: &mut String, label: String, f: &dyn Fn(&PeerResult) -> String| {
        let _ = write!(w, "| {label} |");
        for p in &measured {
            let _ = write!(w, " {} |", f(p));
        }
        let _ = writeln!(w);
    };
    row(w, "small request (`tools/call echo`), p50".into(), &|p| {
        cell(&p.echo, |s| {
            format!(
                "{}{}",
                fmt_us(s.p50),
                ratio(p, s.p50, d_echo.as_ref().map(|d| d.p50))
            )
        })
    });
    row(w, "small request, p99".into(), &|p| {
        cell(&p.echo, |s| {
            format!(
                "{}{}",
                fmt_us(s.p99),
                ratio(p, s.p99, d_echo.as_ref().map(|d| d.p99))
            )
        })
    });
    row(w, "small request, samples".into(), &|p| {
        cell(&p.echo, |s| s.n.to_string())
    });
    row(
        w,
        format!(
            "burst: {} requests written at once → last answer (best of ≤ {})",
            plan.burst, plan.burst_runs
        ),
        &|p| {
            cell(&p.burst, |(t, _)| {
                format!("{}{}", fmt_ms(*t), ratio(p, *t, d_burst))
            })
        },
    );
    row(
        w,
        format!(
            "{big_mb} MB response: throughput, request → last byte (best of ≤ {})",
            plan.big_runs
        ),
        &|p| {
            cell(&p.big, |b| {
                let rate = mbps(b);
                let prec = if rate >= 10.0 { 0 } else { 1 };
                format!(
                    "{rate:.prec$} MB/s{}",
                    ratio(p, rate, d_big.as_ref().map(mbps))
                )
            })
        },
    );
    row(
        w,
        format!("{big_mb} MB response: request → first byte"),
        &|p| cell(&p.big, |b| fmt_ms(b.first_byte)),
    );
    row(
        w,
        format!("{big_mb} MB response: request → last byte"),
        &|p| {
            cell(&p.big, |b| {
                format!(
                    "{}{}",
                    fmt_ms(b.total),
                    ratio(p, b.total, d_big.map(|d| d.total))
                )
            })
        },
    );
    row(w, "relay RSS, idle after the handshake".into(), &|p| {
        p.idle_rss_kb.map_or("—".into(), mb)
    });
    row(w, "relay peak RSS over the run (VmHWM)".into(), &|p| {
        p.peak_rss_kb.map_or("—".into(), |k| {
            format!("{}{}", mb(k), if p.peak_sampled { " ˢ" } else { "" })
        })
    });
    let _ = writeln!(w);

    let mut notes = Vec::new();
    for p in &measured {
        for (what, o) in [
            ("small request", outcome_note(&p.echo)),
            ("burst", outcome_note(&p.burst)),
            (
                &format!("{big_mb} MB response") as &str,
                outcome_note(&p.big),
            ),
        ] {
            if let Some(text) = o {
                notes.push(format!("**{}**, {what}: {text}", p.name));
            }
        }
    }
    if !notes.is_empty() {
        let _ = writeln!(w, "ᶠ Failures are results, reported as they happened:\n");
        for n in notes {
            let _ = writeln!(w, "- {n}");
        }
        let _ = writeln!(w);
    }
    // What the large answer's timing says about how each relay moves it.
    let stored: Vec<String> = measured
        .iter()
        .filter(|p| !direct.is_some_and(|d| std::ptr::eq(d, **p)))
        .filter_map(|p| {
            let b = p.big.ok()?;
            (b.first_byte >= 0.9 * b.total).then(|| {
                format!(
                    "{} ({} of {})",
                    p.name,
                    fmt_ms(b.first_byte),
                    fmt_ms(b.total)
                )
            })
        })
        .collect();
    if !stored.is_empty() {
        let _ = writeln!(
            w,
            "Store and forward: {} delivered the first byte of the {big_mb} MB answer only \
             after 90% or more of the whole time, i.e. once they had all of it.\n",
            stored.join(", ")
        );
    }
    if measured.iter().any(|p| p.peak_sampled) {
        let _ = writeln!(
            w,
            "ˢ The relay died; its peak is the last `VmHWM` sampled (every 10 ms) before it did.\n"
        );
    }
    let _ = writeln!(w, "The peers:\n");
    for p in &r.results {
        match &p.missing {
            None => {
                let _ = writeln!(w, "- **{}**: {}.", p.name, p.what);
            }
            Some(why) => {
                let _ = writeln!(
                    w,
                    "- **{}** (not measured in this run: {why}): {}.",
                    p.name, p.what
                );
            }
        }
    }
    let _ = writeln!(
        w,
        "\nWhat else was checked in the registries: `fastmcp` 3.x and 4.x (the current \
         4.1.6) do not install from the registry reachable here (they need a `certifi` newer \
         than it serves), so the newest 2.x stands in; `supergateway` and `mcp-proxy` (npm) \
         and `mcp-contextforge-gateway`'s `mcpgateway.translate` (PyPI) convert stdio to \
         SSE/HTTP and back like `mcp-proxy` (PyPI) above, which stands for that design (and \
         the asyncio relay reproduces `mcpgateway.translate`'s stdio side); `mcp-remote` (npm) \
         only connects to remote servers.\n"
    );
    let _ = writeln!(
        w,
        "How the peer numbers are taken: small requests are sequential `tools/call echo \
         {{\"text\":\"hello\"}}` round trips ({} warm-up, then up to {} rounds of {} per \
         peer, rotating the order each round; a peer stops adding samples once its round \
         trips add up to {} s), from writing the request to reading the whole answer line. \
         (`tools/call`, not `ping`, because an SDK-based proxy answers `ping` itself.) The \
         burst is {} such requests written with one `write_all` by a writer thread while the \
         main thread reads, until every id has come back once (any order). The large \
         response is `tools/call big {{\"bytes\": {}}}`, timed to the answer's `\\n`, its size \
         checked, then one echo to check the stream is still in step. A run slower than {} s \
         is not repeated; a workload that takes longer than {} s fails and its relay is \
         killed. Peak RSS is the relay processes' `VmHWM` at the end (summed over \
         mcp-proxy's two processes).\n",
        plan.warmup,
        plan.rounds,
        plan.per_round,
        plan.budget.as_secs(),
        plan.burst,
        plan.big_bytes,
        plan.slow.as_secs(),
        plan.timeout.as_secs()
    );
}

fn outcome_note<T>(o: &Outcome<T>) -> Option<String> {
    match o {
        Outcome::Failed(why) => Some(format!("failed: {}", why.replace('|', "\\|"))),
        Outcome::Skipped(why) if !why.is_empty() && why != "not installed" => {
            Some(format!("not run: {why}"))
        }
        _ => None,
    }
}

/// Where [`chart`] is drawn, relative to the report.
pub const CHART: &str = "bench/relays.svg";

/// The report's picture: each relay's small-request p50 (log scale: they span three orders of
/// magnitude) and its 100 MB throughput, as bars, one row per relay; `None` without results.
pub fn chart(r: &Report) -> Option<String> {
    const W: f64 = 760.0;
    const LABEL: f64 = 200.0;
    const ROW: f64 = 24.0;
    const HEAD: f64 = 44.0;
    let measured: Vec<&PeerResult> = r.results.iter().filter(|p| p.missing.is_none()).collect();
    let p50s: Vec<Option<f64>> = measured
        .iter()
        .map(|p| p.echo.ok().map(|s| s.p50))
        .collect();
    let mbps: Vec<Option<f64>> = measured
        .iter()
        .map(|p| p.big.ok().map(|b| b.bytes as f64 / 1e6 / b.total))
        .collect();
    let slowest = p50s.iter().flatten().copied().fold(f64::NAN, f64::max);
    let fastest = mbps.iter().flatten().copied().fold(f64::NAN, f64::max);
    if slowest.is_nan() || fastest.is_nan() {
        return None;
    }
    let panel = HEAD + ROW * measured.len() as f64 + 28.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
        2.0 * panel
    );
    let bars = W - LABEL - 110.0;
    let colour = |i: usize, name: &str| match (i, name) {
        (0, _) => "#9e9e9e",
        (_, "warden bridge") => "#1f6feb",
        _ => "#e39a4b",
    };
    // Panel 1: p50 on a log axis from 10 µs to the slowest's decade.
    let top_decade = slowest.log10().ceil().max(2.0);
    let x_log = |v: f64| LABEL + bars * ((v.max(10.0).log10() - 1.0) / (top_decade - 1.0));
    let _ = writeln!(
        svg,
        "<text x=\"8\" y=\"20\" font-size=\"14\" font-weight=\"bold\">Small request round trip, p50 (shorter is better; log scale)</text>"
    );
    // Panel 2: throughput on a linear axis from 0 to a round number, in steps of 1, 2 or 5
    // times a power of ten.
    let magnitude = 10f64.powf((fastest / 4.0).log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .map(|m| m * magnitude)
        .into_iter()
        .find(|s| s * 4.0 >= fastest)
        .unwrap_or(10.0 * magnitude);
    let steps = (fastest / step).ceil();
    let x_lin = |v: f64| LABEL + bars * (v / (step * steps));
    for (panel_no, top) in [(0, 0.0), (1, panel)] {
        if panel_no == 1 {
            let _ = writeln!(
                svg,
                "<text x=\"8\" y=\"{}\" font-size=\"14\" font-weight=\"bold\">100 MB response, throughput (longer is better)</text>",
                top + 20.0
            );
        }
        let axis_y = top + HEAD + ROW * measured.len() as f64;
        // Grid lines and their labels.
        let ticks: Vec<(f64, String)> = if panel_no == 0 {
            (1..=top_decade as i32)
                .map(|d| {
                    let v = 10f64.powi(d);
                    (
                        x_log(v),
                        if v >= 1e3 {
                            format!("{} ms", v / 1e3)
                        } else {
                            format!("{v} µs")
                        },
                    )
                })
                .collect()
        } else {
            (0..=steps as i32)
                .map(|i| {
                    let v = step * f64::from(i);
                    (x_lin(v), format!("{v:.0} MB/s"))
                })
                .collect()
        };
        for (x, label) in ticks {
            let _ = writeln!(
                svg,
                "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{axis_y:.1}\" stroke=\"#ddd\"/>\
                 <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#555\">{label}</text>",
                top + HEAD - 6.0,
                axis_y + 16.0
            );
        }
        for (i, p) in measured.iter().enumerate() {
            let y = top + HEAD + ROW * i as f64;
            let _ = writeln!(
                svg,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                LABEL - 8.0,
                y + 16.0,
                escape(&p.name)
            );
            let (value, x, text) = if panel_no == 0 {
                let v = p50s[i];
                (
                    v,
                    v.map_or(LABEL, x_log),
                    v.map_or_else(|| "failed".to_owned(), fmt_us),
                )
            } else {
                let v = mbps[i];
                (
                    v,
                    v.map_or(LABEL, x_lin),
                    v.map_or_else(|| "failed".to_owned(), |v| format!("{v:.1} MB/s")),
                )
            };
            if value.is_some() {
                let _ = writeln!(
                    svg,
                    "<rect x=\"{LABEL}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"/>",
                    y + 4.0,
                    (x - LABEL).max(1.0),
                    ROW - 8.0,
                    colour(i, &p.name)
                );
            }
            let fill = if value.is_some() { "#222" } else { "#c62828" };
            let _ = writeln!(
                svg,
                "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{fill}\">{text}</text>",
                x + 6.0,
                y + 16.0
            );
        }
    }
    svg.push_str("</svg>\n");
    Some(svg)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
