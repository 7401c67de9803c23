//! What `warden bridge` costs: the fake MCP server reached directly and through the bridge, in
//! one run, on one machine, then the same workloads through other relays (`peers`: a reference
//! asyncio relay, fastmcp and mcp-proxy from PyPI), and `docs/BENCHMARKS.md` written from the
//! results.
//!
//! Run it with `scripts/bench.sh` (or `cargo bench -p warden-cli --bench bridge`). The report
//! goes to `$BENCH_OUT`, default `<repo>/docs/BENCHMARKS.md` (its chart to `bench/relays.svg`
//! beside it); `$BENCH_WARDEN` measures another `warden` binary against the same fake server
//! (A/B of a change). Without `--bench` (as under
//! `cargo test --all-targets`) it runs a quick smoke pass and writes nothing.
//!
//! The measuring client is plain blocking std I/O: a 1 MiB `BufReader` over the child's stdout,
//! std's memchr-based `read_until`/`skip_until` to find line ends, and no JSON parsing inside a
//! timed region. Every process it starts is closed (or killed) before it exits, also on panic.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

#[path = "bridge/network.rs"]
mod network;
#[path = "bridge/peers.rs"]
mod peers;

const WARDEN: &str = env!("CARGO_BIN_EXE_warden");
const FAKE: &str = env!("CARGO_BIN_EXE_mcp-fake-server");
/// The bridge under test: this build's, or `$BENCH_WARDEN` (to compare another build).
fn warden() -> PathBuf {
    std::env::var_os("BENCH_WARDEN").map_or_else(|| PathBuf::from(WARDEN), PathBuf::from)
}

const READ_BUF: usize = 1 << 20;
/// Prefix of the fake server's `big` answer; the rest is the body and `"}]},"id":N}`.
const BIG_HEAD: &str = r#"{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":""#;

// The bridge's targets (issue 14), each against direct in the same run: what it may add to a
// round trip (p50, p99) and to start-up, its share of direct's 100 MB throughput, its RSS idle
// and at its peak after the 100 MB responses.
const TARGET_ADDED_P50_US: f64 = 8.0;
/// On one core, what the bridge adds against what a relay that only copies adds.
const TARGET_RELAY_RATIO: f64 = 1.3;
const TARGET_ADDED_P99_US: f64 = 25.0;
const TARGET_BIG_RATIO: f64 = 0.9;
/// Issue 28: what the sandbox may add to a server's start-up.
const TARGET_SANDBOX_MS: f64 = 15.0;
/// Issue 35: what a `sandbox_network` list may add to start-up over the sandbox without, to
/// each HTTPS-sized request (p50), and the share of a direct download's rate kept.
const TARGET_LIST_MS: f64 = 20.0;
const TARGET_PROXY_P50_MS: f64 = 1.0;
const TARGET_PROXY_RATIO: f64 = 0.8;
const TARGET_STARTUP_MS: f64 = 2.0;
const TARGET_IDLE_RSS_MB: f64 = 5.0;
const TARGET_PEAK_RSS_MB: f64 = 12.0;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Via {
    Direct,
    Bridged,
    /// `cat`: echoes each request; the cost of one more process in the path, both ways.
    Cat,
    /// The bridge with its busy poll off (`busy_poll_us = 0`): its thread sleeps between
    /// messages, as before the busy poll.
    Sleeping,
    /// [`copy_relay`] in front of the fake server: an event-loop relay that only copies.
    Relay,
    /// [`thread_relay`] in front of the fake server: a blocked thread per direction, copying.
    Threads,
    /// [`poll_relay`] in front of the fake server: one thread in `poll`, copying.
    Poll,
    /// The bridge with `sandbox = "on"`: the server under bubblewrap (start-up only).
    Sandboxed,
    /// The same with a `sandbox_network` list: its proxy and network namespace too.
    Listed,
}

impl Via {
    const BOTH: [Via; 2] = [Via::Direct, Via::Bridged];
    fn idx(self) -> usize {
        self as usize
    }
}

/// Sizes of one run: the full benchmark, or a smoke pass.
struct Plan {
    warmup: usize,
    pings: usize,
    ping_rounds: usize,
    burst: usize,
    burst_runs: usize,
    big_bytes: u64,
    big_runs: usize,
    startups: usize,
    /// Rounds of the network-by-name comparison, its small requests per round and its
    /// download's size.
    proxy_rounds: usize,
    proxy_requests: usize,
    proxy_big: u64,
}

const FULL: Plan = Plan {
    warmup: 2_000,
    pings: 10_000,
    ping_rounds: 100,
    burst: 10_000,
    burst_runs: 5,
    big_bytes: 100_000_000,
    big_runs: 5,
    startups: 20,
    proxy_rounds: 5,
    proxy_requests: 100,
    proxy_big: 100_000_000,
};

const SMOKE: Plan = Plan {
    warmup: 10,
    pings: 200,
    ping_rounds: 2,
    burst: 500,
    burst_runs: 1,
    big_bytes: 1_000_000,
    big_runs: 1,
    startups: 2,
    proxy_rounds: 1,
    proxy_requests: 5,
    proxy_big: 1_000_000,
};

/// Where processes keep their (nonexistent) config and their state: nothing of the user's.
struct Env {
    config: PathBuf,
    state: PathBuf,
    socket: PathBuf,
}

impl Env {
    fn in_dir(dir: &Path) -> Env {
        Env {
            config: dir.join("no-config.toml"),
            state: dir.join("state"),
            // Never the user's own supervisor.
            socket: dir.join("run").join("control.sock"),
        }
    }
}

/// The child's stdout, counting `read` calls (how many wake-ups the client needed).
struct Counting {
    inner: ChildStdout,
    reads: u64,
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.reads += 1;
        self.inner.read(buf)
    }
}

/// One running server, direct or behind the bridge. Dropping it kills what is still running.
struct Proc {
    via: Via,
    child: Child,
    stdin: Option<ChildStdin>,
    out: BufReader<Counting>,
    line: Vec<u8>,
    next_id: u64,
}

impl Proc {
    fn spawn(via: Via, env: &Env) -> Proc {
        let mut cmd = match via {
            Via::Direct => Command::new(FAKE),
            Via::Cat => Command::new("cat"),
            Via::Relay | Via::Threads | Via::Poll => {
                let mut c = Command::new(std::env::current_exe().expect("this benchmark"));
                c.args([
                    RELAYS.iter().find(|(v, ..)| *v == via).expect("a relay").1,
                    FAKE,
                ]);
                c
            }
            Via::Bridged => {
                let mut c = Command::new(warden());
                c.args(["bridge", "--server", "fake", "--", FAKE]);
                c
            }
            Via::Sandboxed | Via::Listed => {
                let mut c = Command::new(warden());
                c.args(["bridge", "--server", "fake", "--set", "sandbox=\"on\""]);
                if via == Via::Listed {
                    // A destination nothing listens on: the list, its proxy and namespace
                    // are what is measured, not a connection.
                    c.args(["--set", "sandbox_network=[\"127.0.0.1:9\"]"]);
                }
                c.args(["--", FAKE]);
                c
            }
            Via::Sleeping => {
                let mut c = Command::new(warden());
                c.args([
                    "bridge",
                    "--server",
                    "fake",
                    "--set",
                    "busy_poll_us=0",
                    "--",
                    FAKE,
                ]);
                c
            }
        };
        cmd.env("WARDEN_CONFIG", &env.config)
            .env("WARDEN_STATE_DIR", &env.state)
            .env("WARDEN_SOCKET", &env.socket)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("spawn");
        let stdin = child.stdin.take();
        let out = BufReader::with_capacity(
            READ_BUF,
            Counting {
                inner: child.stdout.take().expect("stdout"),
                reads: 0,
            },
        );
        Proc {
            via,
            child,
            stdin,
            out,
            line: Vec::with_capacity(4096),
            next_id: 1,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn reads(&self) -> u64 {
        self.out.get_ref().reads
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to server");
    }

    /// The next line (with its `\n`) in `self.line`.
    fn recv(&mut self) -> &[u8] {
        self.line.clear();
        let n = self.out.read_until(b'\n', &mut self.line).expect("read");
        assert!(n > 0, "{:?}: stdout closed", self.via);
        &self.line
    }

    fn recv_json(&mut self) -> Value {
        let via = self.via;
        let line = self.recv();
        serde_json::from_slice(line).unwrap_or_else(|e| {
            panic!(
                "{via:?}: not JSON ({e}): {:?}",
                String::from_utf8_lossy(&line[..line.len().min(200)])
            )
        })
    }

    fn request(&mut self, method: &str, params: &str) -> Value {
        let id = self.id();
        let msg = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
        self.send(format!("{msg}\n").as_bytes());
        let v = self.recv_json();
        assert_eq!(v["id"], id, "{:?}: wrong answer {v}", self.via);
        v
    }

    fn handshake(&mut self) {
        let v = self.request("initialize", INIT_PARAMS);
        assert_eq!(v["result"]["serverInfo"]["name"], "mcp-fake-server");
        self.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    }

    /// Closes stdin and waits for the exit; kills after 10 s.
    fn close(mut self) {
        self.stdin.take();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                assert!(status.success(), "{:?} exited with {status}", self.via);
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        panic!("{:?} did not exit within 10 s of stdin closing", self.via);
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.stdin.take();
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            // The bridge's server gets SIGKILL with it (PR_SET_PDEATHSIG).
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

const INIT_PARAMS: &str = r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"warden-bench","version":"1"}}"#;

fn ping(id: u64) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n")
}

/// The small request a latency pass sends: `ping`, or `tools/call echo` (the same request the
/// peers part sends).
#[derive(Clone, Copy, PartialEq)]
enum Small {
    Ping,
    Echo,
}

impl Small {
    fn request(self, id: u64) -> String {
        match self {
            Small::Ping => ping(id),
            Small::Echo => format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"hello\"}}}}}}\n"
            ),
        }
    }
}

fn status_kb(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// Minor page faults and CPU time (user + system, ms at USER_HZ = 100) of a process so far.
#[derive(Default, Clone, Copy)]
struct Usage {
    minflt: u64,
    cpu_ms: u64,
}

fn usage(pid: u32) -> Usage {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return Usage::default();
    };
    // Fields after the parenthesised name: state(0) … minflt(7) … utime(11) stime(12).
    let f: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    Usage {
        minflt: num(7),
        cpu_ms: (num(11) + num(12)) * 10,
    }
}

impl std::ops::Sub for Usage {
    type Output = Usage;
    fn sub(self, o: Usage) -> Usage {
        Usage {
            minflt: self.minflt.saturating_sub(o.minflt),
            cpu_ms: self.cpu_ms.saturating_sub(o.cpu_ms),
        }
    }
}

/// CPU time (ms) the whole machine was busy, and the part of it that was this process and its
/// reaped descendants: the rest is other load, which makes numbers noisy.
fn busy_ms() -> (u64, u64) {
    let all = std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|s| {
            let line = s.lines().next()?.to_owned();
            let v: Vec<u64> = line
                .split_whitespace()
                .skip(1)
                .filter_map(|x| x.parse().ok())
                .collect();
            // user nice system idle iowait irq softirq steal
            Some(
                [0, 1, 2, 5, 6, 7]
                    .iter()
                    .filter_map(|&i| v.get(i))
                    .sum::<u64>()
                    * 10,
            )
        })
        .unwrap_or(0);
    let own = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .map(|s| {
            let f: Vec<u64> = s
                .rsplit_once(')')
                .map_or("", |(_, rest)| rest)
                .split_whitespace()
                .skip(11)
                .take(4)
                .filter_map(|x| x.parse().ok())
                .collect();
            f.iter().sum::<u64>() * 10
        })
        .unwrap_or(0);
    (all, own)
}

/// The bridge's server process (its only child).
fn child_of(pid: u32) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).ok()?;
    text.split_whitespace().next()?.parse().ok()
}

#[derive(Default, Clone)]
struct Stats {
    p50: f64,
    p99: f64,
    mean: f64,
    n: usize,
}

fn stats(mut v: Vec<f64>) -> Stats {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Stats {
        p50: v[n / 2],
        p99: v[(n * 99 / 100).min(n - 1)],
        mean: v.iter().sum::<f64>() / n as f64,
        n,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

// ---- the measurements ---------------------------------------------------------------------

/// Sequential small requests, alternating between the sessions in rounds; µs per round trip.
/// The `others`, if any, take their turns in the same rounds.
fn latency(
    procs: &mut [Proc; 2],
    others: &mut [Proc],
    plan: &Plan,
    small: Small,
) -> ([Stats; 2], Vec<Stats>) {
    let per_round = plan.pings / plan.ping_rounds;
    let mut samples = vec![Vec::new(); 2 + others.len()];
    let [direct, bridged] = procs;
    let mut sessions: Vec<&mut Proc> = [direct, bridged].into_iter().chain(others).collect();
    for round in 0..plan.ping_rounds + 1 {
        // Alternate who goes first so none always follows another's burst of activity.
        let mut order: Vec<usize> = (0..sessions.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for i in order {
            let p = &mut *sessions[i];
            let via = p.via;
            // Round 0 is the warm-up.
            let n = if round == 0 { plan.warmup } else { per_round };
            for _ in 0..n {
                let id = p.id();
                let req = small.request(id);
                let t = Instant::now();
                p.send(req.as_bytes());
                let line = p.recv();
                let dt = t.elapsed();
                if via == Via::Cat {
                    assert_eq!(line, req.as_bytes(), "cat echoed something else");
                } else {
                    check_answer(via, line, id);
                }
                if round > 0 {
                    samples[i].push(dt.as_secs_f64() * 1e6);
                }
            }
        }
    }
    let mut all: Vec<Stats> = samples.into_iter().map(stats).collect();
    let others = all.split_off(2);
    let both: [Stats; 2] = all.try_into().ok().expect("direct and bridged");
    (both, others)
}

/// A `ping` or `tools/call` answer to `id`: a result, not an error.
fn check_answer(via: Via, line: &[u8], id: u64) {
    let v: Value = serde_json::from_slice(line).expect("the answer is JSON");
    assert!(
        v["id"] == id && v["result"].is_object(),
        "{via:?}: unexpected answer {v}"
    );
}

/// `n` pings written in one go by a writer thread while this thread reads the answers; the
/// best of `runs`, in seconds, and the client's `read` calls in that run.
fn burst(procs: &mut [Proc; 2], plan: &Plan) -> [(f64, u64); 2] {
    let mut best = [(f64::INFINITY, 0); 2];
    for _ in 0..plan.burst_runs {
        for via in Via::BOTH {
            let p = &mut procs[via.idx()];
            let mut batch = Vec::with_capacity(plan.burst * 48);
            let mut last = 0;
            for _ in 0..plan.burst {
                last = p.id();
                batch.extend_from_slice(ping(last).as_bytes());
            }
            let mut stdin = p.stdin.take().expect("stdin");
            let reads = p.reads();
            let t = Instant::now();
            let writer = std::thread::spawn(move || {
                stdin.write_all(&batch).expect("burst write");
                stdin
            });
            for _ in 0..plan.burst - 1 {
                p.recv();
            }
            let line = p.recv();
            let dt = t.elapsed().as_secs_f64();
            check_answer(via, line, last);
            p.stdin = Some(writer.join().expect("writer"));
            if dt < best[via.idx()].0 {
                best[via.idx()] = (dt, p.reads() - reads);
            }
        }
    }
    best
}

#[derive(Default, Clone, Copy)]
struct Big {
    via: Option<Via>,
    /// Seconds from the request's write to the first byte of the answer.
    first_byte: f64,
    /// Seconds from the request's write to the answer's `\n`.
    total: f64,
    bytes: usize,
    client_reads: u64,
    server: Usage,
    bridge: Option<Usage>,
}

/// `tools/call big` answered with one line of `bytes` bytes of text, counted, not parsed:
/// every run, alternating sides.
fn big(procs: &mut [Proc; 2], plan: &Plan) -> Vec<Big> {
    let bridge_pid = procs[1].pid();
    let server_pids = [procs[0].pid(), child_of(bridge_pid).unwrap_or(0)];
    let mut runs = Vec::new();
    for _ in 0..plan.big_runs {
        for via in Via::BOTH {
            let p = &mut procs[via.idx()];
            let id = p.id();
            let req = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"big\",\"arguments\":{{\"bytes\":{}}}}}}}\n",
                plan.big_bytes
            );
            let expected = BIG_HEAD.len()
                + usize::try_from(plan.big_bytes).unwrap()
                + format!("\"}}]}},\"id\":{id}}}\n").len();
            let (server0, bridge0, reads0) =
                (usage(server_pids[via.idx()]), usage(bridge_pid), p.reads());
            let t = Instant::now();
            p.send(req.as_bytes());
            let avail = p.out.fill_buf().expect("read").len();
            let first_byte = t.elapsed().as_secs_f64();
            assert!(avail > 0, "{via:?}: stdout closed");
            let n = p.out.skip_until(b'\n').expect("read");
            let total = t.elapsed().as_secs_f64();
            assert_eq!(n, expected, "{via:?}: answer of unexpected length");
            let client_reads = p.reads() - reads0;
            runs.push(Big {
                via: Some(via),
                first_byte,
                total,
                bytes: n,
                client_reads,
                server: usage(server_pids[via.idx()]) - server0,
                bridge: (via == Via::Bridged).then(|| usage(bridge_pid) - bridge0),
            });
            // The stream is still in step: the next answer is the next request's.
            let next = p.id();
            p.send(ping(next).as_bytes());
            let line = p.recv();
            check_answer(via, line, next);
        }
    }
    runs
}

/// The fastest run of one side.
fn best_big(runs: &[Big], via: Via) -> Big {
    runs.iter()
        .filter(|r| r.via == Some(via))
        .min_by(|a, b| a.total.total_cmp(&b.total))
        .copied()
        .unwrap_or_default()
}

/// Spawn → `initialize` answered, alternating sides (direct, bridged, and when bubblewrap
/// is there sandboxed without and with a `sandbox_network` list); milliseconds per run.
fn startup(env: &Env, plan: &Plan) -> ([Vec<f64>; 2], Option<[Vec<f64>; 2]>) {
    let mut out = [Vec::new(), Vec::new()];
    let mut sandboxed = has_bwrap().then(|| [Vec::new(), Vec::new()]);
    let init = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{INIT_PARAMS}}}\n"
    );
    let once = |via: Via| {
        let t = Instant::now();
        let mut p = Proc::spawn(via, env);
        p.send(init.as_bytes());
        let line = p.recv();
        let dt = t.elapsed().as_secs_f64() * 1e3;
        let v: Value = serde_json::from_slice(line).expect("initialize answer is JSON");
        assert_eq!(v["id"], 1, "{via:?}: unexpected initialize answer {v}");
        p.close();
        dt
    };
    for _ in 0..plan.startups {
        for via in Via::BOTH {
            out[via.idx()].push(once(via));
        }
        if let Some([without, with]) = sandboxed.as_mut() {
            without.push(once(Via::Sandboxed));
            with.push(once(Via::Listed));
        }
    }
    (out, sandboxed)
}

/// Whether bubblewrap is on the PATH (the sandbox's start-up row needs it); under CI
/// (`CI` set, as `.ci/run` does) its absence fails the run instead of dropping the row.
fn has_bwrap() -> bool {
    warden_config::testing::require_tool("bwrap").is_some()
}

// ---- the report ---------------------------------------------------------------------------

struct Results {
    plan: &'static Plan,
    /// Pings, direct and bridged, in rounds of their own.
    lat: [Stats; 2],
    /// `tools/call echo` round trips, direct and bridged, in rounds of their own.
    echo_lat: [Stats; 2],
    /// Pings again, direct and bridged, in rounds that `cat` and the bridge with
    /// `busy_poll_us = 0` take turns in too; then those two.
    with_others: [Stats; 2],
    cat_lat: Stats,
    sleeping_lat: Stats,
    pinned: Option<OneCpu>,
    /// CPU time per ping round trip (µs) in the second ping pass: direct server, bridged
    /// server, bridge, cat.
    ping_cpu_us: [f64; 4],
    /// Best time (s) and the client's `read` calls in that run.
    burst: [(f64, u64); 2],
    big: Vec<Big>,
    startup_ms: [Vec<f64>; 2],
    /// The sandboxed bridge's start-ups without and with a `sandbox_network` list, when
    /// bubblewrap was there.
    sandboxed_ms: Option<[Vec<f64>; 2]>,
    /// HTTP through a list's proxy against direct, when bubblewrap was there.
    network: Option<network::Report>,
    /// Whether the `warden` binary was dropped from the page cache before the run.
    evicted: bool,
    /// Bridge: VmRSS idle after the handshake, and the part of it that is its own (RssAnon;
    /// the rest is the code of the binary and libc, shared with every other bridge) (kB).
    idle_rss_kb: Option<u64>,
    idle_anon_kb: Option<u64>,
    /// Bridge VmHWM right after the large responses, and at the end, after the pipelined
    /// burst too (kB).
    peak_big_kb: Option<u64>,
    peak_rss_kb: Option<u64>,
    /// Bridge VmRSS 300 ms after the last large response.
    after_rss_kb: Option<u64>,
    /// The fake server's own VmHWM, direct and behind the bridge (kB), for context.
    server_peak_kb: [Option<u64>; 2],
    elapsed: Duration,
    /// Share of the machine's CPU capacity used by other processes during the run.
    other_load: f64,
    loadavg: String,
    peers: peers::Report,
}

fn mb(kb: Option<u64>) -> String {
    kb.map_or("n/a".into(), |k| format!("{:.1} MB", k as f64 / 1024.0))
}

fn met(ok: bool) -> &'static str {
    if ok { "yes" } else { "**NO**" }
}

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_owned())
}

fn run_text(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn machine() -> Vec<(&'static str, String)> {
    let cpuinfo = read_trim("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown".into(), |(_, v)| v.trim().to_owned());
    let ram = read_trim("/proc/meminfo")
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemTotal:"))?.to_owned();
            let kb: f64 = line
                .trim_start_matches("MemTotal:")
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .ok()?;
            Some(format!("{:.1} GiB", kb / 1024.0 / 1024.0))
        })
        .unwrap_or_else(|| "unknown".into());
    let os = read_trim("/etc/os-release")
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_owned())
        })
        .unwrap_or_else(|| std::env::consts::OS.into());
    let nproc = std::thread::available_parallelism().map_or(0, usize::from);
    vec![
        ("CPU", cpu),
        ("cores (nproc)", nproc.to_string()),
        ("RAM", ram),
        ("OS", os),
        (
            "kernel",
            read_trim("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
        ),
        (
            "rustc",
            run_text("rustc", &["--version"]).unwrap_or_else(|| "unknown".into()),
        ),
        (
            "python3",
            run_text("python3", &["--version"]).unwrap_or_else(|| "not found".into()),
        ),
    ]
}

/// "2026-05-01 12:34 UTC" without a date crate.
fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

fn git_revision(repo: &Path) -> String {
    let dir = repo.to_string_lossy();
    let Some(rev) = run_text("git", &["-C", &dir, "rev-parse", "--short", "HEAD"]) else {
        return "unknown".into();
    };
    let dirty =
        run_text("git", &["-C", &dir, "status", "--porcelain"]).is_some_and(|s| !s.is_empty());
    if dirty {
        format!("`{rev}` (with uncommitted changes)")
    } else {
        format!("`{rev}`")
    }
}

fn report(r: &Results, repo: &Path) -> String {
    let plan = r.plan;
    let [ld, lb] = &r.lat;
    let added_p50 = lb.p50 - ld.p50;
    // A direct round trip at twice its one-core time or more: this run's direct path was slow
    // (see the notes), and what the bridge "adds" to it is not judged.
    let slow = |direct: f64| {
        r.pinned
            .as_ref()
            .is_some_and(|p| direct >= 2.0 * p.p50.direct)
    };
    let judge = |direct: f64, ok: bool| {
        if slow(direct) {
            "not judged: direct ran slow (notes)"
        } else {
            met(ok)
        }
    };
    let [bd, bb] = [
        best_big(&r.big, Via::Direct),
        best_big(&r.big, Via::Bridged),
    ];
    let mbps = |bytes: usize, secs: f64| bytes as f64 / 1e6 / secs;
    let big_mb = plan.big_bytes / 1_000_000;
    // With the server's own time to build the line (≈ direct's best time to first byte) taken
    // out.
    let build = r
        .big
        .iter()
        .filter(|b| b.via == Some(Via::Direct))
        .map(|b| b.first_byte)
        .fold(f64::INFINITY, f64::min);
    let relay = |b: Big| mbps(b.bytes, b.total - build);
    let [sd, sb] = [
        median(r.startup_ms[0].clone()),
        median(r.startup_ms[1].clone()),
    ];
    let startup_delta = sb - sd;
    let [(burst_d, reads_d), (burst_b, reads_b)] = r.burst;
    let rate = |secs: f64| plan.burst as f64 / secs;
    let idle_mb = r.idle_rss_kb.map(|k| k as f64 / 1024.0);

    let mut md = String::new();
    let w = &mut md;
    let _ = writeln!(w, "# Benchmarks: what `warden bridge` costs\n");
    let _ = writeln!(
        w,
        "<!-- Generated by src-tauri/cli/benches/bridge.rs (scripts/bench.sh). Do not edit by hand: re-run the script. -->\n"
    );
    let _ = writeln!(
        w,
        "One run measures the same fake MCP server (`mcp-fake-server`) reached **directly** (the \
         client spawns the server: the physical limit), through **`warden bridge`**, and \
         through other relays on the same workloads: a reference **asyncio relay** written \
         the way the Python bridges in the field are (`tests/bench/asyncio_relay.py`), and \
         the SDK-based proxies **fastmcp** and **mcp-proxy** from PyPI. All sessions live side by side in the benchmark process and \
         take turns, so all see the same machine state; results are given as ratios to \
         direct.\n"
    );
    let _ = writeln!(w, "Reproduce with:\n\n```sh\nscripts/bench.sh\n```\n");
    let _ = writeln!(
        w,
        "It installs the pinned peers (`tests/bench/requirements.txt` into `tests/bench/.venv`), \
         builds in release mode and runs `cargo bench -p warden-cli --bench bridge`, which \
         rewrites this file and its picture, `bench/relays.svg` beside it (`BENCH_OUT=path` \
         writes elsewhere). A few minutes plus the build, \
         most of it waiting for the slowest peer. Numbers from a shared or virtual machine are \
         noisy: compare peers within one run, not across runs.\n"
    );
    let _ = writeln!(
        w,
        "The supervisor under load (500 bridge sessions with steady traffic) is measured by \
         `scripts/bench-supervisor.sh`: [SUPERVISOR_LOAD.md](SUPERVISOR_LOAD.md).\n"
    );
    let _ = writeln!(w, "## Run\n");
    let _ = writeln!(w, "| | |\n|---|---|");
    let _ = writeln!(w, "| date | {} |", utc_now());
    let _ = writeln!(w, "| revision | {} |", git_revision(repo));
    if std::env::var_os("BENCH_WARDEN").is_some() {
        let _ = writeln!(
            w,
            "| bridge binary | `{}` (`BENCH_WARDEN`) |",
            warden().display()
        );
    }
    for (k, v) in machine() {
        let _ = writeln!(w, "| {k} | {v} |");
    }
    let _ = writeln!(
        w,
        "| benchmark time | {:.0} s (build excluded) |",
        r.elapsed.as_secs_f64()
    );
    let _ = writeln!(
        w,
        "| other load | load average {} at the start; other processes used {:.0}% of the CPU during the run |\n",
        r.loadavg,
        r.other_load * 100.0
    );

    peers::report(&r.peers, w);

    let _ = writeln!(w, "## `warden bridge` in detail\n");
    let _ = writeln!(
        w,
        "Direct and bridged side by side once more, with the bridge's targets and more \
         detail. The small request here is `ping` and the burst is larger; this part ran \
         before the peers part, in the same run.\n"
    );
    let _ = writeln!(
        w,
        "| metric | direct | bridged | bridge adds | target | met |\n|---|---:|---:|---:|---|---|"
    );
    let _ = writeln!(
        w,
        "| ping round trip, p50 | {:.1} µs | {:.1} µs | {added_p50:+.1} µs | adds ≤ {TARGET_ADDED_P50_US} µs | {} |",
        ld.p50,
        lb.p50,
        judge(ld.p50, added_p50 <= TARGET_ADDED_P50_US)
    );
    if let Some(OneCpu { cpu, p50, p99, cat }) = &r.pinned {
        let (adds, least) = (p50.bridge_adds(), p50.least_relay_adds());
        let _ = writeln!(
            w,
            "| ping round trip, p50, all on CPU {cpu} ³ | {:.1} µs | {:.1} µs | {adds:+.1} µs (`cat`: {cat:.1} µs; {}) | adds ≤ {TARGET_RELAY_RATIO}× what the least of the copy-only relays adds ({:+.1} µs): here {:.2}× | {} |",
            p50.direct,
            p50.bridged,
            p50.relays_text(),
            TARGET_RELAY_RATIO * least,
            adds / least,
            met(adds <= TARGET_RELAY_RATIO * least)
        );
        let _ = writeln!(
            w,
            "| ping round trip, p99, all on CPU {cpu} ³ | {:.1} µs | {:.1} µs | {:+.1} µs ({}) | adds ≤ {TARGET_ADDED_P99_US} µs | {} |",
            p99.direct,
            p99.bridged,
            p99.bridge_adds(),
            p99.relays_text(),
            met(p99.bridge_adds() <= TARGET_ADDED_P99_US)
        );
    }
    let _ = writeln!(
        w,
        "| ping round trip, p99 | {:.1} µs | {:.1} µs | {:+.1} µs | adds ≤ {TARGET_ADDED_P99_US} µs | {} |",
        ld.p99,
        lb.p99,
        lb.p99 - ld.p99,
        judge(ld.p50, lb.p99 - ld.p99 <= TARGET_ADDED_P99_US)
    );
    let [od, ob] = &r.with_others;
    for (what, b) in [
        (
            "in rounds with `cat` and the bridge with its busy poll off",
            ob,
        ),
        (
            "busy poll off (`busy_poll_us = 0`), in the same rounds",
            &r.sleeping_lat,
        ),
    ] {
        let _ = writeln!(
            w,
            "| ping round trip, p50 / p99, {what} ⁵ | {:.1} / {:.1} µs | {:.1} / {:.1} µs | {:+.1} / {:+.1} µs | | |",
            od.p50,
            od.p99,
            b.p50,
            b.p99,
            b.p50 - od.p50,
            b.p99 - od.p99
        );
    }
    let _ = writeln!(
        w,
        "| ping round trip, p50, echoed by `cat` instead, in the same rounds ² ⁵ | | | {:.1} µs | | |",
        r.cat_lat.p50
    );
    let [ed, eb] = &r.echo_lat;
    for (what, dv, bv, target) in [
        ("p50", ed.p50, eb.p50, TARGET_ADDED_P50_US),
        ("p99", ed.p99, eb.p99, TARGET_ADDED_P99_US),
    ] {
        let _ = writeln!(
            w,
            "| `tools/call echo` round trip, {what} ⁶ | {dv:.1} µs | {bv:.1} µs | {:+.1} µs | adds ≤ {target} µs | {} |",
            bv - dv,
            judge(ed.p50, bv - dv <= target)
        );
    }
    // The peers part's echo round trips, direct and through the bridge, for comparison.
    if let Some((d, b)) = peers::echo_direct_and_bridged(&r.peers) {
        let _ = writeln!(
            w,
            "| `tools/call echo` round trip, p50 / p99, in the peers part ⁶ | {:.1} / {:.1} µs | {:.1} / {:.1} µs | {:+.1} / {:+.1} µs | | |",
            d.p50,
            d.p99,
            b.p50,
            b.p99,
            b.p50 - d.p50,
            b.p99 - d.p99
        );
    }
    let _ = writeln!(
        w,
        "| ping round trip, mean | {:.1} µs | {:.1} µs | {:+.1} µs | | |",
        ld.mean,
        lb.mean,
        lb.mean - ld.mean
    );
    let _ = writeln!(
        w,
        "| {big_mb} MB response: throughput, request → last byte (best of {}) | {:.0} MB/s | {:.0} MB/s | ×{:.2} | ≥ ×{TARGET_BIG_RATIO} of direct | {} |",
        plan.big_runs,
        mbps(bd.bytes, bd.total),
        mbps(bb.bytes, bb.total),
        bd.total / bb.total,
        met(bd.total / bb.total >= TARGET_BIG_RATIO)
    );
    let _ = writeln!(
        w,
        "| {big_mb} MB response: request → first byte | {:.1} ms | {:.1} ms | {:+.1} ms | | |",
        bd.first_byte * 1e3,
        bb.first_byte * 1e3,
        (bb.first_byte - bd.first_byte) * 1e3
    );
    let _ = writeln!(
        w,
        "| {big_mb} MB response: request → last byte | {:.1} ms | {:.1} ms | {:+.1} ms | | |",
        bd.total * 1e3,
        bb.total * 1e3,
        (bb.total - bd.total) * 1e3
    );
    let _ = writeln!(
        w,
        "| {big_mb} MB response: relay throughput, server's start-up time taken out ¹ | {:.0} MB/s | {:.0} MB/s | ×{:.2} | | |",
        relay(bd),
        relay(bb),
        relay(bb) / relay(bd)
    );
    let _ = writeln!(
        w,
        "| {} pipelined pings: all answers read (best of {}) | {:.1} ms | {:.1} ms | {:+.1} ms | | |",
        plan.burst,
        plan.burst_runs,
        burst_d * 1e3,
        burst_b * 1e3,
        (burst_b - burst_d) * 1e3
    );
    let _ = writeln!(
        w,
        "| {} pipelined pings: rate | {:.0} msg/s | {:.0} msg/s | ×{:.2} | | |",
        plan.burst,
        rate(burst_d),
        rate(burst_b),
        rate(burst_b) / rate(burst_d)
    );
    let _ = writeln!(
        w,
        "| start-up: spawn → `initialize` answered (median of {}) | {sd:.2} ms | {sb:.2} ms | {startup_delta:+.2} ms | adds ≤ {TARGET_STARTUP_MS} ms | {} |",
        r.startup_ms[0].len(),
        met(startup_delta <= TARGET_STARTUP_MS)
    );
    if let Some([boxed, listed]) = r.sandboxed_ms.clone().filter(|[v, _]| !v.is_empty()) {
        let sx = median(boxed);
        let sl = median(listed);
        let _ = writeln!(
            w,
            "| start-up with `sandbox = \"on\"` (bubblewrap), against the bridge without (median of {}) | {sb:.2} ms | {sx:.2} ms | {:+.2} ms | adds ≤ {TARGET_SANDBOX_MS} ms | {} |",
            r.startup_ms[1].len(),
            sx - sb,
            met(sx - sb <= TARGET_SANDBOX_MS)
        );
        let _ = writeln!(
            w,
            "| start-up with a `sandbox_network` list (its proxy and network namespace), against the sandbox without (median of {}) | {sx:.2} ms | {sl:.2} ms | {:+.2} ms | adds ≤ {TARGET_LIST_MS} ms | {} |",
            r.startup_ms[1].len(),
            sl - sx,
            met(sl - sx <= TARGET_LIST_MS)
        );
    }
    if let Some(n) = &r.network {
        let added_ms = (n.proxied.p50_us - n.direct.p50_us) / 1e3;
        let _ = writeln!(
            w,
            "| {} HTTPS-sized requests (4 KiB, a new connection each) from inside the sandbox through the list's proxy (CONNECT), against direct: p50 (median of {} rounds) | {:.3} ms | {:.3} ms | {added_ms:+.3} ms | adds ≤ {TARGET_PROXY_P50_MS} ms | {} |",
            n.requests,
            n.rounds,
            n.direct.p50_us / 1e3,
            n.proxied.p50_us / 1e3,
            met(added_ms <= TARGET_PROXY_P50_MS)
        );
        let ratio = n.proxied.rate_mbs / n.direct.rate_mbs;
        let _ = writeln!(
            w,
            "| a {} MB download the same way (median of {} rounds) | {:.0} MB/s | {:.0} MB/s | {ratio:.2}× | ≥ {TARGET_PROXY_RATIO}× | {} |",
            n.big_bytes / 1_000_000,
            n.rounds,
            n.direct.rate_mbs,
            n.proxied.rate_mbs,
            met(ratio >= TARGET_PROXY_RATIO)
        );
    }
    let _ = writeln!(
        w,
        "| bridge RSS, idle after the handshake (VmRSS) ⁴ | | {} | {} | ≤ {TARGET_IDLE_RSS_MB} MB | {} |",
        mb(r.idle_rss_kb),
        mb(r.idle_rss_kb),
        met(idle_mb.is_some_and(|m| m <= TARGET_IDLE_RSS_MB))
    );
    let _ = writeln!(
        w,
        "| of which the bridge's own memory (RssAnon) ⁴ | | {} | {} | | |",
        mb(r.idle_anon_kb),
        mb(r.idle_anon_kb)
    );
    let _ = writeln!(
        w,
        "| bridge peak RSS, after the {big_mb} MB responses (VmHWM) | | {} | {} | ≤ {TARGET_PEAK_RSS_MB} MB | {} |",
        mb(r.peak_big_kb),
        mb(r.peak_big_kb),
        met(r
            .peak_big_kb
            .is_some_and(|k| k as f64 / 1024.0 <= TARGET_PEAK_RSS_MB))
    );
    let _ = writeln!(
        w,
        "| bridge peak RSS at the end, after the {} pipelined pings too (VmHWM) | | {} | {} | | |",
        plan.burst,
        mb(r.peak_rss_kb),
        mb(r.peak_rss_kb)
    );
    let _ = writeln!(
        w,
        "| bridge RSS, idle again after the {big_mb} MB responses (VmRSS) | | {} | {} | | |",
        mb(r.after_rss_kb),
        mb(r.after_rss_kb)
    );
    let _ = writeln!(
        w,
        "\n¹ Line bytes ÷ (time to the last byte − direct's shortest time to the first byte). The \
         fake server streams the line in 64 KiB writes; the time before it writes the first \
         (≈ direct's time to first byte) is the same on both sides, and taking it out leaves \
         the time spent moving the bytes: through one pipe direct, through the bridge \
         bridged.\n"
    );
    let _ = writeln!(
        w,
        "² The pings of the second pass (⁵) sent to `cat`, which echoes them: a whole round \
         trip through a process that only copies. On virtual machines round trips swing with \
         how the vCPUs wake one another; compare within one run, or look at the pinned row.\n"
    );
    let _ = writeln!(
        w,
        "³ The ping test once more in a child process started with `taskset -c CPU`, so the \
         client, the bridge, the server, `cat` and the relays all share one core: no wake-up \
         has to reach another core, so this is the steadiest view of what the bridge's own \
         work costs. The copy-only relays (this benchmark run as a relay, in front of the same \
         server) show what one more process in the path costs before it does any work, \
         written three ways: with an event loop (`--copy-relay`), the bridge's shape with \
         nothing of its work: one current-thread tokio runtime with the four pipe ends \
         registered with its reactor, copying bytes as they are read, parsing, queuing and \
         timing nothing; with a thread per direction waiting in `read`, as `cat` does \
         (`--thread-relay`); and with one thread waiting in `poll` on both read ends, copying \
         from whichever is ready (`--poll-relay`). What the bridge adds beyond them is its own \
         work.\n"
    );
    let _ = writeln!(
        w,
        "⁴ RSS counts the pages of the `warden` binary's code that the kernel has mapped into \
         the process: not only the pages the bridge ran, but those around each (fault-around, \
         or the whole large folio the page cache holds). The functions a bridge runs are laid \
         out together at the start of the code (`src-tauri/cli/warden.order`, written by \
         `scripts/order-symbols.sh`), so they take about 1 MB of it instead of spreading over \
         most of its 8.7 MB. How much lies around each page depends on how the file was last \
         read: a copy that `strip` or `cp` read whole sits in large folios, and the same \
         bridge then maps about 1 MB more. {} Those pages are shared with every other bridge \
         and the page cache; RssAnon is what this bridge alone holds.\n",
        if r.evicted {
            "So the benchmark first had the kernel drop the binary from the page cache \
             (written back, then `posix_fadvise(DONTNEED)`), and the bridges mapped it as on \
             a first start after boot."
        } else {
            "This run could not drop the binary from the page cache first, so the figure \
             depends on how it was last read."
        }
    );
    let _ = writeln!(
        w,
        "⁵ The ping test once more, with `cat` and a second bridge with its busy poll off \
         (`--set busy_poll_us=0`) taking turns in the same rounds. That bridge's thread sleeps \
         between messages and each line has to wake it, as before the busy poll: the \
         difference between the two bridged figures is what the busy poll buys. How fast direct \
         pings run can change with what takes turns beside them (compare this pass's direct \
         column with the main rows'), so the main rows time direct and bridged in rounds of \
         their own.\n"
    );
    let _ = writeln!(
        w,
        "⁶ The peers part's small request, `tools/call echo` (the server parses it and builds \
         a result), timed like the pings: direct and bridged taking turns in rounds of their \
         own, right after the main pings (before the second pass, ⁵). The peers part times the same request with the other \
         relays' processes alive beside it.\n"
    );

    let _ = writeln!(w, "### Where the time goes\n");
    let _ = writeln!(
        w,
        "Every {big_mb} MB run, with what `/proc/<pid>/stat` says each process did meanwhile \
         (minor page faults; CPU time, user + system, 10 ms resolution) and how many `read` \
         calls the client needed:\n"
    );
    let _ = writeln!(
        w,
        "| run | side | first byte | last byte | client reads | server faults / CPU | bridge faults / CPU |\n|---:|---|---:|---:|---:|---:|---:|"
    );
    for (i, b) in r.big.iter().enumerate() {
        let bridge = b
            .bridge
            .map_or("".into(), |u| format!("{} / {} ms", u.minflt, u.cpu_ms));
        let _ = writeln!(
            w,
            "| {} | {} | {:.1} ms | {:.1} ms | {} | {} / {} ms | {bridge} |",
            i / 2 + 1,
            if b.via == Some(Via::Bridged) {
                "bridged"
            } else {
                "direct"
            },
            b.first_byte * 1e3,
            b.total * 1e3,
            b.client_reads,
            b.server.minflt,
            b.server.cpu_ms,
        );
    }
    let _ = writeln!(
        w,
        "\nThe bridge holds the first MiB of such a line, then relays it as it arrives; on \
         Linux the rest moves from the server's pipe to the client's by `splice(2)` (the pages \
         themselves), and only a `tee(2)` duplicate is read, to find the line's end and its id. \
         So each byte is copied once in the bridge instead of twice, and no page of the \
         client's pipe is allocated for it. The bridge also asks for 1 MiB pipes on both of \
         its sides (direct, the client's pipe keeps the default 64 KiB), hence the fewer \
         client reads, and a relayed large result can arrive sooner than a direct one."
    );
    let [cpu_direct, cpu_behind, cpu_bridge, cpu_cat] = r.ping_cpu_us;
    let _ = writeln!(
        w,
        "\nCPU time per ping round trip (user + system, over the second pass's {} pings per \
         side, ⁵): the server \
         {cpu_direct:.1} µs direct and {cpu_behind:.1} µs behind the bridge; the bridge \
         {cpu_bridge:.1} µs; `cat` {cpu_cat:.1} µs. The bridge's share includes its busy poll \
         (`busy_poll_us`, 100 µs by default): after relaying a line it polls both pipes until \
         the answer or the next request comes, instead of sleeping and being woken, which is \
         what keeps its round trips close to direct's.",
        plan.warmup + plan.pings
    );
    let _ = writeln!(
        w,
        "\nThe client needed {reads_d} `read` calls for the {} direct answers and {reads_b} \
         for the bridged ones (the fake server writes each answer on its own; the bridge's \
         writer sends whatever is queued in one write).\n",
        plan.burst
    );
    let mut notes = Vec::new();
    if startup_delta > TARGET_STARTUP_MS {
        notes.push(format!(
            "Start-up adds {startup_delta:+.2} ms, over the {TARGET_STARTUP_MS} ms target. A \
             start profile (`perf record` over repeated starts) puts most of it before the \
             bridge's own code runs: starting the `warden` executable costs about three times \
             what starting the fake server does (`warden --version`: 2.1 ms of CPU against \
             0.7 ms here), in the dynamic loader applying about 15,000 relocations of a PIE \
             binary (a fifth of that time) and in the page faults of its first touches (two \
             fifths), then in the fork of the reaper (the process that ends the server's group \
             even when the bridge is killed with SIGKILL) before the server's exec. What would close it: a \
             `warden bridge` executable of its own, small (the bridge without the command \
             line's other commands), or fewer relocations (packed relocations need glibc 2.36, \
             which Ubuntu 22.04 lacks; a non-PIE build gives up address randomisation, which \
             a process between a client and an untrusted server should keep)."
        ));
    }
    if idle_mb.is_some_and(|m| m > TARGET_IDLE_RSS_MB) {
        notes.push(format!(
            "Idle RSS is {} against the {TARGET_IDLE_RSS_MB} MB target, of which the bridge's \
             own memory is {} (RssAnon): the rest are pages of the `warden` executable and of \
             libc mapped from the page cache and shared with every other bridge (⁴). Reaching \
             the target would take the smaller bridge executable the start-up note names.",
            mb(r.idle_rss_kb),
            mb(r.idle_anon_kb)
        ));
    }
    // Store-and-forward: nothing reaches the client before direct would have delivered it all.
    if bb.first_byte >= bd.total {
        notes.push(format!(
            "The bridge forwards a line only once it has all of it (it reads the whole line, \
             checks it is JSON, then writes it), so its extra time shows up before the first \
             byte ({:+.1} ms) while the last stretch, from first to last byte, takes about as \
             long as direct ({:.1} ms vs {:.1} ms). The same buffering sets the peak RSS.",
            (bb.first_byte - bd.first_byte) * 1e3,
            (bb.total - bb.first_byte) * 1e3,
            (bd.total - bd.first_byte) * 1e3
        ));
    }
    if let Some(OneCpu { p50, p99, .. }) = &r.pinned {
        let (d, b, event_loop) = (p50.direct, p50.bridged, p50.relays[0]);
        let (least, most) = (d + p50.least_relay_adds(), d + p50.most_relay_adds());
        let ratio = (b - d) / (least - d);
        notes.push(format!(
            "On one core the bridge adds {:+.1} µs, {ratio:.2}× what the least of the copy-only \
             relays adds ({:+.1} µs; {:+.1} to {:+.1} µs by how it is written, ³){}; the target \
             is {TARGET_RELAY_RATIO}×, {}. There the bridge makes the system calls such a relay \
             makes, no more: per round trip two `read`s, two `write`s and two `epoll_wait`s \
             (counted with `strace -c`; its busy poll is off where it may run on one CPU only, \
             `busy_poll_us`). The other {:.1} µs over the relay of its own shape are its work \
             in user space: finding the line's end, id and method without parsing the whole \
             message, the router's bookkeeping of the request (its deadline, its tool, its \
             figures), and the hand-over from the reading task to the writing one through a \
             queue; a profile of a round trip shows no one part of it above a few per cent of \
             the bridge's time. Closing the rest would mean writing from the reading task \
             itself when the queue is empty, so that a message crosses no task boundary.",
            b - d,
            least - d,
            least - d,
            most - d,
            if most - least <= 1.5 {
                ": about the same, so the time goes to having a process in between, not to \
                 the event loop"
            } else {
                ""
            },
            if ratio <= TARGET_RELAY_RATIO {
                "met"
            } else {
                "not met"
            },
            b - event_loop
        ));
        if p99.bridge_adds() > TARGET_ADDED_P99_US {
            notes.push(format!(
                "On one core the bridge's p99 adds {:+.1} µs, over the {TARGET_ADDED_P99_US} µs \
                 target; the copy-only relays' p99 adds {:+.1} to {:+.1} µs in the same rounds{}.",
                p99.bridge_adds(),
                p99.least_relay_adds(),
                p99.most_relay_adds(),
                if p99.least_relay_adds() > TARGET_ADDED_P99_US {
                    ": a relay that does nothing but copy is over the target too, so the tail \
                     is that of a third process sharing the core (a round trip that meets a \
                     timer tick or a preemption waits for two processes' time slices instead \
                     of one), and what the bridge's own work adds to it is the difference"
                } else {
                    ""
                }
            ));
        }
        if added_p50 > b - d && ld.p50 < 1.5 * d && lb.p50 > b {
            notes.push(format!(
                "On two cores the bridge adds more ({added_p50:+.1} µs) than on one: direct \
                 pings ran at {:.1} µs, near their one-core {d:.1} µs, while bridged ones took \
                 {:.1} µs, more than the {b:.1} µs of all three processes on one core. Most \
                 likely the scheduler spreads three processes over both cores, so that \
                 messages cross cores, which here costs more than switching on one.",
                ld.p50, lb.p50
            ));
        }
        let slowed: Vec<String> = [("ping", ld.p50), ("echo", ed.p50)]
            .into_iter()
            .filter(|&(_, direct)| slow(direct))
            .map(|(what, direct)| format!("{direct:.1} µs ({what})"))
            .collect();
        if !slowed.is_empty() {
            notes.push(format!(
                "In this run direct round trips took {}, against {d:.1} µs for a ping with \
                 everything on one core: the direct path was slow to wake across cores, which \
                 can vary from run to run on a virtual machine, while bridged pings \
                 slowed less ({:.1} µs, against {b:.1} µs on one core). What the bridge adds \
                 to such a direct figure would flatter it, so the targets measured against it \
                 are not judged; the pinned row is the steady figure.",
                slowed.join(" and "),
                lb.p50
            ));
        }
    }
    let bridged_runs: Vec<Usage> = r.big.iter().filter_map(|b| b.bridge).collect();
    if let Some(min) = bridged_runs.iter().map(|u| u.minflt).min()
        && min > 1000
    {
        notes.push(format!(
            "The bridge took at least {min} minor page faults per {big_mb} MB response (one \
                 per 4 KiB page is {}): it moves the bytes through freshly allocated memory \
                 rather than a reused buffer, and each first touch of a page costs a fault.",
            plan.big_bytes / 4096
        ));
    }
    for n in notes {
        let _ = writeln!(w, "- {n}");
    }
    let _ = writeln!(w);

    let _ = writeln!(w, "### How each number is taken\n");
    let _ = writeln!(
        w,
        "- **Ping round trip**: {} sequential `ping` requests per side after {} warm-up pings, \
         in {} rounds that alternate between the sides; from writing the request to reading \
         the whole answer line. After the echo rows (⁶), as many again with `cat` and the \
         bridge with its busy poll off taking turns too (⁵): the `cat` row and the CPU times \
         come from that second pass. Samples: {} direct, {} bridged; {} via `cat`, {} with \
         the busy poll off.",
        plan.pings, plan.warmup, plan.ping_rounds, ld.n, lb.n, r.cat_lat.n, r.sleeping_lat.n
    );
    let _ = writeln!(
        w,
        "- **Large response**: `tools/call big {{\"bytes\": {}}}`, answered with one line of {} \
         bytes; from writing the request to reading the line's `\\n`. The client counts bytes \
         with std's memchr-based `skip_until` and checks the exact length, without parsing. \
         The time includes the fake server writing the line, on both sides. Throughput = \
         line bytes ÷ that time.",
        plan.big_bytes, bb.bytes
    );
    let _ = writeln!(
        w,
        "- **Pipelined pings**: {} `ping` requests written with one `write_all` by a writer \
         thread while the main thread reads the answers; until the last answer is read.",
        plan.burst
    );
    let _ = writeln!(
        w,
        "- **Start-up**: from `spawn` to reading the `initialize` answer, the request written \
         right after spawning (as clients do); a new process per run, alternating sides."
    );
    let _ = writeln!(
        w,
        "- **RSS**: of the `warden` process only (not its server), from `/proc/<pid>/status`: \
         `VmRSS` and `RssAnon` 300 ms after the handshake; `VmHWM` right after the large \
         responses (which run before the pipelined burst) and again just before closing it, \
         after all other tests. For scale, the fake server's own peak (`VmHWM`) was {} direct and {} behind \
         the bridge.",
        mb(r.server_peak_kb[0]),
        mb(r.server_peak_kb[1])
    );
    let _ = writeln!(
        w,
        "- The client is blocking std I/O with a 1 MiB read buffer on default (64 KiB) pipes; \
         no JSON is parsed inside a timed region. Config and state are hermetic \
         (`WARDEN_CONFIG` names a missing file, `WARDEN_STATE_DIR` and `WARDEN_SOCKET` point \
         into a temporary directory), so the bridge runs with default limits, writes its event \
         log there and finds no supervisor."
    );
    // The desktop app's own numbers, measured elsewhere, included as they are.
    let app_idle = repo.join("docs/bench/app-idle.md");
    if let Ok(text) = std::fs::read_to_string(&app_idle) {
        let _ = writeln!(
            w,
            "\n<!-- Included verbatim from docs/bench/app-idle.md. -->\n"
        );
        let _ = write!(w, "{text}");
        if !text.ends_with('\n') {
            let _ = writeln!(w);
        }
    }
    md
}

/// Child mode (`--copy-relay SERVER`): the least an event-loop relay does, as the bridge's
/// floor. One current-thread tokio runtime, as in the bridge, with this process's stdin and
/// stdout and the server's pipes registered with its reactor; bytes are copied as read, in
/// both directions, and nothing is parsed, queued or timed.
fn copy_relay(server: &mut Child) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::unix::pipe;

    async fn copy(from: std::fs::File, to: std::fs::File) {
        let mut from = pipe::Receiver::from_file(from).expect("a pipe");
        let mut to = pipe::Sender::from_file(to).expect("a pipe");
        let mut buf = vec![0u8; 64 << 10];
        while let Ok(n @ 1..) = from.read(&mut buf).await {
            if to.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    }
    let [stdin, to_server, from_server, stdout] = relay_ends(server);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        tokio::join!(copy(stdin, to_server), copy(from_server, stdout));
    });
}

/// A copy-only relay, given its server (spawned with piped stdin and stdout).
type RelayMain = fn(&mut Child);

/// The copy-only relays this benchmark runs as a child (`FLAG SERVER`), each in front of the
/// fake server.
const RELAYS: [(Via, &str, RelayMain); 3] = [
    (Via::Relay, "--copy-relay", copy_relay),
    (Via::Threads, "--thread-relay", thread_relay),
    (Via::Poll, "--poll-relay", poll_relay),
];

/// This process's stdin and stdout, and the server's pipes, as files (blocking I/O).
fn relay_ends(server: &mut Child) -> [std::fs::File; 4] {
    use std::os::fd::{AsFd as _, OwnedFd};
    let own = |fd: std::os::fd::BorrowedFd<'_>| {
        std::fs::File::from(fd.try_clone_to_owned().expect("dup"))
    };
    [
        own(std::io::stdin().as_fd()),
        OwnedFd::from(server.stdin.take().expect("server stdin")).into(),
        OwnedFd::from(server.stdout.take().expect("server stdout")).into(),
        own(std::io::stdout().as_fd()),
    ]
}

/// Copies `from` to `to` as it reads (a plain loop, not `io::copy`, which would splice between
/// the pipes) until end of file or an error.
fn copy_as_read(mut from: &std::fs::File, mut to: &std::fs::File, buf: &mut [u8]) -> bool {
    match from.read(buf) {
        Ok(n @ 1..) => to.write_all(&buf[..n]).is_ok(),
        _ => false,
    }
}

/// Child mode (`--thread-relay SERVER`): a relay with no event loop, a thread per direction
/// blocked in `read` and copying what it reads, as `cat` does.
fn thread_relay(server: &mut Child) {
    let [stdin, to_server, from_server, stdout] = relay_ends(server);
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 << 10];
        while copy_as_read(&stdin, &to_server, &mut buf) {}
    });
    let mut buf = vec![0u8; 64 << 10];
    while copy_as_read(&from_server, &stdout, &mut buf) {}
}

/// Child mode (`--poll-relay SERVER`): one thread blocked in `poll` on both read ends, copying
/// from whichever is ready: `cat` for both directions at once.
fn poll_relay(server: &mut Child) {
    use rustix::event::{PollFd, PollFlags, poll};
    let [stdin, to_server, from_server, stdout] = relay_ends(server);
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let mut fds = [
            PollFd::new(&stdin, PollFlags::IN),
            PollFd::new(&from_server, PollFlags::IN),
        ];
        if poll(&mut fds, None).is_err() {
            return;
        }
        let [up, down] = fds.map(|fd| !fd.revents().is_empty());
        if up && !copy_as_read(&stdin, &to_server, &mut buf)
            || down && !copy_as_read(&from_server, &stdout, &mut buf)
        {
            return;
        }
    }
}

/// Asks the kernel to drop `path` from the page cache (written back first), so that what maps
/// it next does so as after a reboot (footnote ⁴); whether it could. Pages a running process
/// maps stay.
#[cfg(target_os = "linux")]
fn evict_from_page_cache(path: &Path) -> bool {
    std::fs::File::open(path).is_ok_and(|file| {
        file.sync_data().is_ok()
            && rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed).is_ok()
    })
}

#[cfg(not(target_os = "linux"))]
fn evict_from_page_cache(_: &Path) -> bool {
    false
}

/// Child mode (`--pinned-latency`, started under `taskset`): the ping test alone, printed as
/// [`OneCpu::parse`] reads it.
fn pinned_latency_child(plan: &Plan) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let env = Env::in_dir(tmp.path());
    let mut procs = [
        Proc::spawn(Via::Direct, &env),
        Proc::spawn(Via::Bridged, &env),
    ];
    let mut others = [
        Proc::spawn(Via::Cat, &env),
        Proc::spawn(Via::Relay, &env),
        Proc::spawn(Via::Threads, &env),
        Proc::spawn(Via::Poll, &env),
    ];
    for p in procs.iter_mut().chain(&mut others[1..]) {
        p.handshake();
    }
    let ([d, b], o) = latency(&mut procs, &mut others, plan, Small::Ping);
    for p in procs.into_iter().chain(others) {
        p.close();
    }
    let paths = |q: fn(&Stats) -> f64| {
        let all = [q(&d), q(&b)].into_iter().chain(o[1..].iter().map(q));
        all.map(|v| v.to_string()).collect::<Vec<_>>().join(" ")
    };
    println!("{} {} {}", o[0].p50, paths(|s| s.p50), paths(|s| s.p99));
}

/// The ping test with this benchmark and all it starts on one CPU (µs).
struct OneCpu {
    cpu: String,
    p50: OneCpuPaths,
    p99: OneCpuPaths,
    /// The p50 of `cat` echoing the pings.
    cat: f64,
}

/// One percentile of the pinned ping test through each path.
struct OneCpuPaths {
    direct: f64,
    bridged: f64,
    /// Each of [`RELAYS`], in its order.
    relays: [f64; 3],
}

impl OneCpu {
    /// The child's line: `cat`'s p50, then direct, bridged and each of [`RELAYS`] at p50, then
    /// the same at p99.
    fn parse(cpu: String, line: &str) -> Option<Self> {
        let v: Vec<f64> = line
            .split_whitespace()
            .map(|x| x.parse().ok())
            .collect::<Option<_>>()?;
        let paths = |v: &[f64]| OneCpuPaths {
            direct: v[0],
            bridged: v[1],
            relays: [v[2], v[3], v[4]],
        };
        (v.len() == 11).then(|| Self {
            cpu,
            cat: v[0],
            p50: paths(&v[1..6]),
            p99: paths(&v[6..11]),
        })
    }
}

impl OneCpuPaths {
    fn bridge_adds(&self) -> f64 {
        self.bridged - self.direct
    }

    fn relays_add(&self) -> [f64; 3] {
        self.relays.map(|r| r - self.direct)
    }

    fn least_relay_adds(&self) -> f64 {
        self.relays_add().into_iter().fold(f64::INFINITY, f64::min)
    }

    fn most_relay_adds(&self) -> f64 {
        self.relays_add()
            .into_iter()
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// What each copy-only relay adds, for a table cell.
    fn relays_text(&self) -> String {
        let [event_loop, threads, polled] = self.relays_add();
        format!(
            "copy-only relays: {event_loop:+.1} µs with an event loop, {threads:+.1} µs with a \
             thread per direction, {polled:+.1} µs with one thread in `poll`"
        )
    }
}

/// The ping test again with this benchmark and everything it starts on one CPU (through
/// `taskset`), where no wake-up has to reach another, possibly halted, core; `None` without
/// `taskset`.
fn pinned_latency(full: bool) -> Option<OneCpu> {
    let status = read_trim("/proc/self/status")?;
    let allowed = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?
        .trim();
    let cpu = allowed.split([',', '-']).next()?.to_owned();
    let exe = std::env::current_exe().ok()?;
    let mut cmd = Command::new("taskset");
    cmd.args(["-c", &cpu]).arg(exe).arg("--pinned-latency");
    if full {
        cmd.arg("--bench");
    }
    let out = cmd.stderr(Stdio::inherit()).output().ok()?;
    if !out.status.success() {
        return None;
    }
    OneCpu::parse(cpu, String::from_utf8_lossy(&out.stdout).lines().last()?)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` does not: smoke pass only.
    let full = std::env::args().any(|a| a == "--bench");
    let plan = if full { &FULL } else { &SMOKE };
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == network::CLIENT_FLAG) {
        network::client(&args[i + 1..]);
        return;
    }
    if std::env::args().any(|a| a == "--pinned-latency") {
        pinned_latency_child(plan);
        return;
    }
    for (_, flag, relay) in RELAYS {
        if let Some(server) = std::env::args().skip_while(|a| a != flag).nth(1) {
            let mut child = Command::new(server)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawn the server");
            relay(&mut child);
            let _ = child.kill();
            let _ = child.wait();
            return;
        }
    }
    let started = Instant::now();
    let tmp = tempfile::tempdir().expect("tempdir");
    let env = Env::in_dir(tmp.path());
    let loadavg = read_trim("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    let busy0 = busy_ms();
    let say = |what: &str| eprintln!("[{:>6.1} s] {what}", started.elapsed().as_secs_f64());

    let evicted = evict_from_page_cache(&warden());
    say("start-up");
    let (startup_ms, sandboxed_ms) = startup(&env, plan);
    let network = sandboxed_ms.is_some().then(|| {
        say("HTTP through a `sandbox_network` list's proxy");
        network::run(
            &warden(),
            &env,
            plan.proxy_rounds,
            plan.proxy_requests,
            plan.proxy_big,
        )
    });

    say("handshakes");
    let mut procs = [
        Proc::spawn(Via::Direct, &env),
        Proc::spawn(Via::Bridged, &env),
    ];
    for p in &mut procs {
        p.handshake();
    }
    std::thread::sleep(Duration::from_millis(300));
    let bridge_pid = procs[1].pid();
    let idle_rss_kb = status_kb(bridge_pid, "VmRSS:");
    let idle_anon_kb = status_kb(bridge_pid, "RssAnon:");

    say("ping latency");
    let (lat, _) = latency(&mut procs, &mut [], plan, Small::Ping);
    say("tools/call echo latency");
    let (echo_lat, _) = latency(&mut procs, &mut [], plan, Small::Echo);
    say("ping latency, with `cat` and the bridge with its busy poll off taking turns");
    let mut sleeping = Proc::spawn(Via::Sleeping, &env);
    sleeping.handshake();
    let mut others = [Proc::spawn(Via::Cat, &env), sleeping];
    let cpu_pids = [
        procs[0].pid(),
        child_of(bridge_pid).unwrap_or(0),
        bridge_pid,
        others[0].pid(),
    ];
    let cpu0 = cpu_pids.map(usage);
    let (with_others, other_lat) = latency(&mut procs, &mut others, plan, Small::Ping);
    let cpu1 = cpu_pids.map(usage);
    let pings = (plan.warmup + plan.pings) as f64;
    let ping_cpu_us: [f64; 4] =
        std::array::from_fn(|i| (cpu1[i] - cpu0[i]).cpu_ms as f64 * 1e3 / pings);
    let [cat, sleeping] = others;
    cat.close();
    sleeping.close();
    let [cat_lat, sleeping_lat]: [Stats; 2] = other_lat.try_into().ok().expect("cat and sleeping");
    say("large response");
    let big = big(&mut procs, plan);
    std::thread::sleep(Duration::from_millis(300));
    let after_rss_kb = status_kb(bridge_pid, "VmRSS:");
    let peak_big_kb = status_kb(bridge_pid, "VmHWM:");
    say("pipelined burst");
    let burst = burst(&mut procs, plan);

    let peak_rss_kb = status_kb(bridge_pid, "VmHWM:");
    let server_peak_kb = [
        status_kb(procs[0].pid(), "VmHWM:"),
        child_of(bridge_pid).and_then(|pid| status_kb(pid, "VmHWM:")),
    ];
    let [direct, bridged] = procs;
    direct.close();
    bridged.close();
    say("ping latency, pinned to one CPU");
    let pinned = pinned_latency(full);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let repo = repo.canonicalize().unwrap_or(repo);
    let peer_list = peers::peers(&repo);
    let peer_plan = if full { &peers::FULL } else { &peers::SMOKE };
    let peers = peers::run(&peer_list, peer_plan, &env, &repo, &say);
    if !full {
        peers::check_smoke(&peers);
    }
    say("done");
    let busy1 = busy_ms();
    let cores = std::thread::available_parallelism().map_or(1, usize::from) as f64;
    let other_ms = (busy1.0 - busy0.0).saturating_sub(busy1.1 - busy0.1) as f64;
    let other_load = other_ms / (started.elapsed().as_secs_f64() * 1e3 * cores);
    if other_load > 0.1 {
        eprintln!(
            "warning: other processes used {:.0}% of the CPU during the run; numbers are noisy",
            other_load * 100.0
        );
    }

    let results = Results {
        plan,
        lat,
        echo_lat,
        with_others,
        cat_lat,
        sleeping_lat,
        pinned,
        ping_cpu_us,
        burst,
        big,
        startup_ms,
        sandboxed_ms,
        network,
        evicted,
        idle_rss_kb,
        idle_anon_kb,
        peak_big_kb,
        peak_rss_kb,
        after_rss_kb,
        server_peak_kb,
        elapsed: started.elapsed(),
        other_load,
        loadavg,
        peers,
    };
    let md = report(&results, &repo);
    println!("{md}");
    if full {
        let out = std::env::var_os("BENCH_OUT")
            .map_or_else(|| repo.join("docs/BENCHMARKS.md"), PathBuf::from);
        if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).expect("create report directory");
        }
        std::fs::write(&out, md).expect("write report");
        eprintln!("wrote {}", out.display());
        if let Some(svg) = peers::chart(&results.peers) {
            let path = out.with_file_name(peers::CHART);
            std::fs::create_dir_all(path.parent().expect("in a directory"))
                .expect("create chart directory");
            std::fs::write(&path, svg).expect("write chart");
            eprintln!("wrote {}", path.display());
        }
    } else {
        eprintln!("smoke pass only (run with `cargo bench` for the report)");
    }
}
