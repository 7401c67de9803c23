//! Metrics of one server, fed by its events (live, or replayed from the persisted history):
//! counts since the history began, latency percentiles over the last [`LATENCY_WINDOW`]
//! answered requests, figures per tool, a per-minute latency series for the last hour, and the
//! recent outcomes and exits that health is derived from.
//! Everything is bounded: a busy server costs the same memory as a quiet one.

use std::collections::{BTreeMap, VecDeque};

use super::api::LatencyPoint;
use warden_wire::events::Event;

/// Answered requests whose durations make the percentiles.
pub const LATENCY_WINDOW: usize = 1024;
/// Outcomes and exits kept for health (older ones also fall out by time).
const RECENT_CAP: usize = 4096;
/// How far back "recent" reaches.
pub const RECENT_MS: u64 = 5 * 60 * 1000;
/// Tools with figures of their own per server; calls to more count in the server's totals.
pub const TOOLS_CAP: usize = 256;
/// Answered calls per tool whose durations make its percentiles.
const TOOL_LATENCY_WINDOW: usize = 256;
/// Minutes of the latency series (the server page's chart: the last hour).
pub const SERIES_MINUTES: u64 = 60;
const MINUTE_MS: u64 = 60_000;
/// Durations kept per minute for its percentiles (the first ones of a busier minute).
const MINUTE_SAMPLES: usize = 512;
/// The destinations refused by a server's `sandbox_network` proxy that are kept (distinct).
pub const NETWORK_DENIED_KEPT: usize = 5;

/// What a request's outcome says about the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Answered with a result.
    Ok,
    /// Answered with the server's own JSON-RPC error: the server works, the call did not.
    ServerError,
    /// `timeout`, `max_timeout`, `startup_timeout`.
    Timeout,
    /// `server_exited`, `circuit_open`, `message_too_large`, `invalid_response`, …
    Failure,
    /// `cancelled`, `client_closed`: says nothing about the server.
    Neutral,
}

impl Class {
    pub fn of(outcome: &str) -> Class {
        match outcome {
            "ok" => Class::Ok,
            "error" => Class::ServerError,
            "timeout" | "max_timeout" | "startup_timeout" => Class::Timeout,
            "cancelled" | "client_closed" => Class::Neutral,
            _ => Class::Failure,
        }
    }

    fn answered(self) -> bool {
        matches!(self, Class::Ok | Class::ServerError)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Metrics {
    pub requests: u64,
    pub errors: u64,
    pub timeouts: u64,
    pub retries: u64,
    pub restarts: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// `(ts_ms, what)` of the last failure of any kind.
    pub last_error: Option<(u64, String)>,
    /// The stable code of `last_error`, when it has one.
    pub last_error_code: Option<String>,
    /// The last `spawn_failed`: a bridge could not start the server.
    pub last_start_failure: Option<StartFailure>,
    /// The last sign that a server process started (`session_start`, `restart`).
    pub last_started_ms: Option<u64>,
    /// The last answer (result or server error).
    pub last_answer_ms: Option<u64>,
    /// Detail of the last `circuit` event, and of the last `fallback` event.
    pub last_circuit: Option<(u64, String)>,
    pub last_fallback: Option<(u64, String)>,
    /// The last `installing` event (a package manager downloading before the first message).
    pub last_installing_ms: Option<u64>,
    pub last_seen_ms: Option<u64>,
    latencies: VecDeque<u64>,
    /// Figures per tool of `tools/call`, by name.
    pub tools: BTreeMap<String, ToolMetrics>,
    /// One entry per minute with requests, oldest first, the last [`SERIES_MINUTES`].
    minutes: VecDeque<Minute>,
    recent: VecDeque<(u64, Class)>,
    /// Server exits and failed starts, `(ts_ms, detail)`.
    exits: VecDeque<(u64, String)>,
    /// `(ts_ms, host, port)` of the last [`NETWORK_DENIED_KEPT`] destinations its sandbox's
    /// proxy refused, each once, the latest first.
    pub network_denied: VecDeque<(u64, String, u16)>,
}

impl Metrics {
    /// Takes one event into account.
    pub fn record(&mut self, e: &Event) {
        let ts = e.ts_ms;
        self.last_seen_ms = Some(self.last_seen_ms.map_or(ts, |s| s.max(ts)));
        let detail = e.detail.clone().unwrap_or_default();
        match &*e.kind {
            "request" => {
                self.requests += 1;
                self.bytes_in += e.bytes_in.unwrap_or(0);
                self.bytes_out += e.bytes_out.unwrap_or(0);
                let outcome = e.outcome.as_deref().unwrap_or("ok");
                let class = Class::of(outcome);
                let answered = e.duration_ms.filter(|_| class.answered());
                if class.answered() {
                    self.last_answer_ms = Some(ts);
                }
                if let Some(d) = answered {
                    push_window(&mut self.latencies, LATENCY_WINDOW, d);
                }
                if let Some(minute) = self.minute(ts) {
                    minute.count(class, answered);
                }
                if let (Some("tools/call"), Some(tool)) = (e.method.as_deref(), &e.tool)
                    && let Some(t) = self.tool(tool)
                {
                    t.count(class, answered, e.bytes_out.unwrap_or(0));
                }
                match class {
                    Class::Timeout => self.timeouts += 1,
                    Class::Failure | Class::ServerError => self.errors += 1,
                    Class::Ok | Class::Neutral => {}
                }
                if matches!(class, Class::Timeout | Class::Failure) {
                    let what = match (&e.method, &e.tool) {
                        (Some(m), Some(t)) => format!("{m} (tool {t})"),
                        (Some(m), None) => m.clone(),
                        _ => "a request".to_owned(),
                    };
                    let after = e
                        .duration_ms
                        .map(|d| format!(" after {d} ms"))
                        .unwrap_or_default();
                    self.set_error(e, format!("{outcome}: {what}{after}"));
                }
                push_bounded(&mut self.recent, (ts, class));
            }
            "retry" => self.retries += 1,
            "restart" => {
                self.restarts += 1;
                self.started(ts);
            }
            "session_start" => self.started(ts),
            "spawn_failed" => {
                let failure = StartFailure::of(e);
                self.set_error(e, failure.summary.clone());
                if self
                    .last_start_failure
                    .as_ref()
                    .is_none_or(|f| f.ts_ms <= ts)
                {
                    self.last_start_failure = Some(failure);
                }
            }
            "server_exit" | "start_failed" => {
                let what = if e.kind == "server_exit" {
                    format!("server exited: {detail}")
                } else {
                    format!("server failed to start: {detail}")
                };
                push_bounded(&mut self.exits, (ts, what.clone()));
                self.set_error(e, what);
            }
            "circuit" => {
                if detail.starts_with("open") {
                    self.set_error(e, format!("breaker {detail}"));
                }
                self.last_circuit = Some((ts, detail));
            }
            "fallback" => self.last_fallback = Some((ts, detail)),
            "installing" => self.last_installing_ms = Some(ts),
            "network_denied" => {
                if let (Some(host), Some(port)) = (&e.host, e.port) {
                    self.network_denied(ts, host, port);
                }
            }
            "config_rejected" => self.set_error(e, format!("config.toml refused: {detail}")),
            "probe" if e.outcome.as_deref() == Some("error") => {
                self.set_error(e, format!("probe failed: {detail}"))
            }
            _ => {}
        }
    }

    /// A destination the proxy refused: kept once, the latest first (events of the persisted
    /// history and of several sessions may come in any order).
    fn network_denied(&mut self, ts: u64, host: &str, port: u16) {
        let q = &mut self.network_denied;
        if let Some(i) = q.iter().position(|(_, h, p)| h == host && *p == port) {
            if q[i].0 >= ts {
                return;
            }
            q.remove(i);
        }
        // Before those of the same ms: the one recorded last is the latest.
        let at = q.iter().position(|(t, _, _)| *t <= ts).unwrap_or(q.len());
        q.insert(at, (ts, host.to_owned(), port));
        q.truncate(NETWORK_DENIED_KEPT);
    }

    /// `what` of event `e` becomes the last error (with the event's code) unless a newer one
    /// is known.
    fn set_error(&mut self, e: &Event, what: String) {
        if self.last_error.as_ref().is_none_or(|(t, _)| *t <= e.ts_ms) {
            self.last_error = Some((e.ts_ms, what));
            self.last_error_code = e.code.as_deref().map(str::to_owned);
        }
    }

    /// The figures of `tool`, unless [`TOOLS_CAP`] other tools are tracked already.
    fn tool(&mut self, tool: &str) -> Option<&mut ToolMetrics> {
        if !self.tools.contains_key(tool) && self.tools.len() >= TOOLS_CAP {
            return None;
        }
        Some(self.tools.entry(tool.to_owned()).or_default())
    }

    /// The bucket of the minute `ts` falls in (None when it is older than the series
    /// reaches); minutes that fall out of the series are dropped.
    fn minute(&mut self, ts: u64) -> Option<&mut Minute> {
        let span = SERIES_MINUTES * MINUTE_MS;
        let start = ts - ts % MINUTE_MS;
        let newest = self.minutes.back().map_or(start, |m| m.start_ms.max(start));
        if start + span <= newest {
            return None;
        }
        let mut i = match self.minutes.iter().rposition(|m| m.start_ms <= start) {
            Some(i) if self.minutes[i].start_ms == start => i,
            before => {
                let i = before.map_or(0, |i| i + 1);
                self.minutes.insert(i, Minute::new(start));
                i
            }
        };
        while self
            .minutes
            .front()
            .is_some_and(|m| m.start_ms + span <= newest)
        {
            self.minutes.pop_front();
            i -= 1;
        }
        self.minutes.get_mut(i)
    }

    /// The per-minute series of the hour before `now_ms`, oldest first: minutes with requests.
    pub fn series(&self, now_ms: u64) -> Vec<LatencyPoint> {
        let since = now_ms.saturating_sub(SERIES_MINUTES * MINUTE_MS);
        self.minutes
            .iter()
            .filter(|m| m.start_ms + MINUTE_MS > since)
            .map(Minute::point)
            .collect()
    }

    fn started(&mut self, ts: u64) {
        self.last_started_ms = Some(self.last_started_ms.map_or(ts, |s| s.max(ts)));
    }

    /// The last start failure, unless a server process started or answered after it.
    pub fn start_failure(&self) -> Option<&StartFailure> {
        let failure = self.last_start_failure.as_ref()?;
        let since = self.last_started_ms.max(self.last_answer_ms);
        since.is_none_or(|t| t <= failure.ts_ms).then_some(failure)
    }

    /// The `p`-th percentile (0–100, nearest rank) of the recent answered requests' durations.
    pub fn percentile(&self, p: f64) -> u64 {
        percentiles(&self.latencies, &[p])[0]
    }

    /// Several percentiles with one sort.
    pub fn percentiles<const N: usize>(&self, ps: [f64; N]) -> [u64; N] {
        let v = percentiles(&self.latencies, &ps);
        let mut out = [0; N];
        out.copy_from_slice(&v);
        out
    }

    /// Outcomes since `since_ms`.
    pub fn outcomes_since(&self, since_ms: u64) -> impl Iterator<Item = Class> + '_ {
        self.recent
            .iter()
            .rev()
            .take_while(move |(t, _)| *t >= since_ms)
            .map(|(_, c)| *c)
    }

    /// Server exits and failed starts since `since_ms`, newest first.
    pub fn exits_since(&self, since_ms: u64) -> impl Iterator<Item = &(u64, String)> + '_ {
        self.exits
            .iter()
            .rev()
            .take_while(move |(t, _)| *t >= since_ms)
    }
}

/// The figures of one tool.
#[derive(Debug, Clone, Default)]
pub struct ToolMetrics {
    pub calls: u64,
    pub errors: u64,
    pub timeouts: u64,
    pub bytes_out: u64,
    latencies: VecDeque<u64>,
}

impl ToolMetrics {
    fn count(&mut self, class: Class, answered: Option<u64>, bytes_out: u64) {
        self.calls += 1;
        self.bytes_out += bytes_out;
        match class {
            Class::Timeout => self.timeouts += 1,
            Class::Failure | Class::ServerError => self.errors += 1,
            Class::Ok | Class::Neutral => {}
        }
        if let Some(d) = answered {
            push_window(&mut self.latencies, TOOL_LATENCY_WINDOW, d);
        }
    }

    /// p50 and p95 of its recent answered calls.
    pub fn p50_p95(&self) -> [u64; 2] {
        let v = percentiles(&self.latencies, &[50.0, 95.0]);
        [v[0], v[1]]
    }
}

/// Requests of one minute.
#[derive(Debug, Clone)]
struct Minute {
    start_ms: u64,
    requests: u64,
    errors: u64,
    timeouts: u64,
    /// Durations of answered requests, sorted.
    sorted: Vec<u64>,
}

impl Minute {
    fn new(start_ms: u64) -> Minute {
        Minute {
            start_ms,
            requests: 0,
            errors: 0,
            timeouts: 0,
            sorted: Vec::new(),
        }
    }

    fn count(&mut self, class: Class, answered: Option<u64>) {
        self.requests += 1;
        match class {
            Class::Timeout => self.timeouts += 1,
            Class::Failure | Class::ServerError => self.errors += 1,
            Class::Ok | Class::Neutral => {}
        }
        if let Some(d) = answered.filter(|_| self.sorted.len() < MINUTE_SAMPLES) {
            let at = self.sorted.partition_point(|&x| x <= d);
            self.sorted.insert(at, d);
        }
    }

    fn point(&self) -> LatencyPoint {
        LatencyPoint {
            t_ms: self.start_ms,
            requests: self.requests,
            errors: self.errors,
            timeouts: self.timeouts,
            p50_ms: (!self.sorted.is_empty()).then(|| nearest_rank(&self.sorted, 50.0)),
            p95_ms: (!self.sorted.is_empty()).then(|| nearest_rank(&self.sorted, 95.0)),
        }
    }
}

/// A `spawn_failed` event, as health and status show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartFailure {
    pub ts_ms: u64,
    pub code: Option<String>,
    /// `<command>: <cause>`.
    pub summary: String,
    pub fix: Option<String>,
}

impl StartFailure {
    fn of(e: &Event) -> StartFailure {
        let command = e.command.as_deref().unwrap_or("the server");
        let cause = e
            .cause
            .as_deref()
            .or(e.detail.as_deref())
            .unwrap_or("it could not be started");
        StartFailure {
            ts_ms: e.ts_ms,
            code: e.code.as_deref().map(str::to_owned),
            summary: format!("{command}: {cause}"),
            fix: e.fix.clone(),
        }
    }
}

/// Appends to a sliding window of `cap` values.
fn push_window(q: &mut VecDeque<u64>, cap: usize, v: u64) {
    if q.len() == cap {
        q.pop_front();
    }
    q.push_back(v);
}

fn push_bounded<T>(q: &mut VecDeque<T>, item: T) {
    if q.len() == RECENT_CAP {
        q.pop_front();
    }
    q.push_back(item);
}

fn percentiles(values: &VecDeque<u64>, ps: &[f64]) -> Vec<u64> {
    let mut sorted: Vec<u64> = values.iter().copied().collect();
    sorted.sort_unstable();
    ps.iter().map(|&p| nearest_rank(&sorted, p)).collect()
}

/// The smallest of `sorted` with at least `p` % of the values at or below it (0 if empty).
fn nearest_rank(sorted: &[u64], p: f64) -> u64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted
        .get(rank.clamp(1, sorted.len().max(1)) - 1)
        .copied()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    pub fn request(ts: u64, outcome: &'static str, ms: u64) -> Event {
        Event {
            ts_ms: ts,
            method: Some("tools/call".into()),
            tool: Some("echo".into()),
            duration_ms: Some(ms),
            outcome: Some(outcome.into()),
            bytes_in: Some(10),
            bytes_out: Some(100),
            ..Event::new("request")
        }
    }

    fn denied(ts: u64, host: &str, port: u16) -> Event {
        Event {
            ts_ms: ts,
            host: Some(host.into()),
            port: Some(port),
            ..Event::new("network_denied")
        }
    }

    /// Each destination once, the latest first, the last few; an older report of one kept
    /// (the persisted history read after live events) changes nothing.
    #[test]
    fn refused_destinations_are_kept_once_each_the_latest_first() {
        let mut m = Metrics::default();
        for i in 0..7u16 {
            m.record(&denied(u64::from(i) + 1, &format!("h{i}.example"), 443));
        }
        m.record(&denied(20, "h3.example", 443));
        m.record(&denied(2, "h6.example", 443));
        m.record(&denied(21, "127.0.0.1", 4873));
        let kept: Vec<(u64, &str, u16)> = m
            .network_denied
            .iter()
            .map(|(t, h, p)| (*t, h.as_str(), *p))
            .collect();
        assert_eq!(
            kept,
            [
                (21, "127.0.0.1", 4873),
                (20, "h3.example", 443),
                (7, "h6.example", 443),
                (6, "h5.example", 443),
                (5, "h4.example", 443),
            ]
        );
    }

    #[test]
    fn percentiles_use_nearest_rank_over_a_bounded_window() {
        let mut m = Metrics::default();
        assert_eq!(m.percentiles([50.0, 95.0, 99.0]), [0, 0, 0]);
        for ms in 1..=100 {
            m.record(&request(ms, "ok", ms));
        }
        assert_eq!(m.percentiles([50.0, 95.0, 99.0]), [50, 95, 99]);
        assert_eq!(m.percentile(100.0), 100);
        assert_eq!(m.percentile(0.0), 1);
        // Timeouts are not latencies; they are counted apart.
        m.record(&request(101, "timeout", 60_000));
        assert_eq!(m.percentile(100.0), 100);
        assert_eq!((m.requests, m.timeouts, m.errors), (101, 1, 0));
        assert_eq!(
            m.last_error.as_ref().unwrap().1,
            "timeout: tools/call (tool echo) after 60000 ms"
        );
        assert_eq!((m.bytes_in, m.bytes_out), (1010, 10_100));
        // The window is bounded: old durations fall out.
        for i in 0..(LATENCY_WINDOW as u64) {
            m.record(&request(200 + i, "ok", 7));
        }
        assert_eq!(m.percentiles([50.0, 99.0]), [7, 7]);
        assert_eq!(m.latencies.len(), LATENCY_WINDOW);
    }

    #[test]
    fn counts_and_errors_from_other_events() {
        let mut m = Metrics::default();
        m.record(&Event {
            ts_ms: 5,
            ..Event::new("server_exit").detail("exited with status 1")
        });
        m.record(&Event {
            ts_ms: 6,
            ..Event::new("restart").detail("server process #2 started")
        });
        m.record(&Event {
            ts_ms: 7,
            ..Event::new("retry")
        });
        assert_eq!((m.restarts, m.retries), (1, 1));
        assert_eq!(
            m.last_error,
            Some((5, "server exited: exited with status 1".to_owned()))
        );
        assert_eq!(m.exits_since(0).count(), 1);
        assert_eq!(m.exits_since(6).count(), 0);
        // An older event replayed late does not hide a newer error.
        m.record(&request(1, "server_exited", 3));
        assert_eq!(m.last_error.as_ref().unwrap().0, 5);
        assert_eq!(m.errors, 1);
    }

    fn call(ts: u64, tool: &str, outcome: &'static str, ms: u64) -> Event {
        Event {
            tool: Some(tool.into()),
            ..request(ts, outcome, ms)
        }
    }

    #[test]
    fn each_tool_has_its_own_figures() {
        let mut m = Metrics::default();
        for ms in 1..=20 {
            m.record(&call(ms, "search", "ok", ms));
        }
        m.record(&call(30, "search", "timeout", 60_000));
        m.record(&call(31, "read", "server_exited", 4));
        m.record(&call(32, "read", "error", 2));
        // Not a tool call: counts for the server only, even with a params.name.
        m.record(&Event {
            method: Some("prompts/get".into()),
            ..call(33, "greet", "ok", 1)
        });
        let search = &m.tools["search"];
        assert_eq!((search.calls, search.errors, search.timeouts), (21, 0, 1));
        assert_eq!(search.p50_p95(), [10, 19], "timeouts are not latencies");
        assert_eq!(search.bytes_out, 2100);
        let read = &m.tools["read"];
        assert_eq!((read.calls, read.errors, read.timeouts), (2, 2, 0));
        assert_eq!(
            read.p50_p95(),
            [2, 2],
            "a server error was answered, a crash was not"
        );
        assert_eq!(m.tools.keys().collect::<Vec<_>>(), ["read", "search"]);
        assert_eq!(m.requests, 24);
    }

    #[test]
    fn tools_beyond_the_cap_count_for_the_server_only() {
        let mut m = Metrics::default();
        for i in 0..(TOOLS_CAP as u64 + 5) {
            m.record(&call(i, &format!("t{i:04}"), "ok", 1));
        }
        assert_eq!(m.tools.len(), TOOLS_CAP);
        assert_eq!(m.requests, TOOLS_CAP as u64 + 5);
        m.record(&call(999, "t0000", "ok", 1));
        assert_eq!(m.tools["t0000"].calls, 2, "a tracked tool goes on counting");
    }

    #[test]
    fn the_series_has_one_point_per_minute_for_the_last_hour() {
        let min = 60_000;
        let t0 = 1_000 * min;
        let mut m = Metrics::default();
        for ms in [10, 20, 30, 40] {
            m.record(&request(t0 + 5, "ok", ms));
        }
        m.record(&request(t0 + 7, "timeout", 60_000));
        m.record(&request(t0 + 2 * min, "ok", 5));
        // Late and out of order (another session's event): it lands in its own minute.
        m.record(&request(t0 + min + 1, "server_exited", 3));
        let points = m.series(t0 + 2 * min + 1);
        let starts: Vec<u64> = points.iter().map(|p| (p.t_ms - t0) / min).collect();
        assert_eq!(starts, [0, 1, 2]);
        let first = &points[0];
        assert_eq!((first.requests, first.timeouts, first.errors), (5, 1, 0));
        assert_eq!((first.p50_ms, first.p95_ms), (Some(20), Some(40)));
        assert_eq!(
            (points[1].errors, points[1].p95_ms),
            (1, None),
            "nothing answered"
        );

        // An hour later the first minutes have left the chart, and the buckets too.
        m.record(&request(t0 + 61 * min, "ok", 9));
        let points = m.series(t0 + 61 * min);
        let starts: Vec<u64> = points.iter().map(|p| (p.t_ms - t0) / min).collect();
        assert_eq!(starts, [2, 61]);
        assert_eq!(m.minutes.len(), 2);
        m.record(&request(t0, "ok", 9));
        assert_eq!(m.minutes.len(), 2, "too old for the chart: not kept");
    }
}
