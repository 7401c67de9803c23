//! Health of a server, derived (purely) from its sessions' last heartbeats, its recent events
//! and its last probe, with the reason a person reads.
//!
//! In order, the first rule that applies wins:
//! 1. no live session: `down` if the latest start failed (a bridge's `spawn_failed` with no
//!    start or answer since) or the last probe failed, whichever is newer, else `idle`;
//! 2. a session serves the ripgrep fallback: `fallback`;
//! 3. a session's breaker is open: `down`;
//! 4. every session is unresponsive: `down`;
//! 5. [`CRASH_EXITS`] exits or failed starts within [`CRASH_WINDOW_MS`] and no answer since the
//!    last: `down` (a crash loop);
//! 6. no answer yet since the sessions began: `starting` (or installing packages);
//! 7. within [`RECENT_MS`]: an unresponsive session, exits, timeouts, failures, or mostly
//!    server errors: `degraded`;
//! 8. otherwise `healthy`.

use std::time::Duration;

use super::api::{Health, ProbeReport};
use super::metrics::{Class, Metrics, RECENT_MS};
use warden_control::HEARTBEAT_MS;

/// A session that has not reported for this long has missed three heartbeats (plus a margin
/// for a late one): it is unresponsive.
pub const UNRESPONSIVE_AFTER: Duration = Duration::from_millis(3 * HEARTBEAT_MS + HEARTBEAT_MS / 4);

pub const CRASH_WINDOW_MS: u64 = 60_000;
pub const CRASH_EXITS: usize = 3;

/// What health is derived from, at `now_ms` (wall clock, as events are stamped).
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    pub now_ms: u64,
    /// Sessions connected or not yet reaped.
    pub sessions: usize,
    pub unresponsive: usize,
    /// Start (wall clock) of the oldest live session.
    pub oldest_session_ms: Option<u64>,
    pub circuit_open: bool,
    pub fallback: bool,
    pub metrics: &'a Metrics,
    pub probe: Option<&'a ProbeReport>,
}

/// The health of a server and why, by the rules above.
pub fn derive(i: &Inputs<'_>) -> (Health, String) {
    if i.sessions == 0 {
        return idle(i);
    }
    broken(i)
        .or_else(|| starting(i))
        .unwrap_or_else(|| recent(i))
}

/// Rule 1: no live session.
fn idle(i: &Inputs<'_>) -> (Health, String) {
    let m = i.metrics;
    let now = i.now_ms;
    if let Some(f) = m.start_failure()
        && i.probe.is_none_or(|p| p.ts_ms < f.ts_ms)
    {
        let fix = f
            .fix
            .as_deref()
            .map(|x| format!("; fix: {x}"))
            .unwrap_or_default();
        let code = f
            .code
            .as_deref()
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        return (
            Health::Down,
            format!(
                "failed to start {} ago{code}: {}{fix}",
                ago(now, f.ts_ms),
                f.summary
            ),
        );
    }
    if let Some(p) = i.probe.filter(|p| !p.ok) {
        return (
            Health::Down,
            format!(
                "no live session, and the last probe ({} ago) failed: {}",
                ago(now, p.ts_ms),
                p.error.as_deref().unwrap_or("no reason given")
            ),
        );
    }
    let mut reason = "no live session".to_owned();
    match (i.probe, m.last_seen_ms) {
        (Some(p), _) => reason.push_str(&format!(
            "; last probe ({} ago) ok: {} tools, cold start {} ms",
            ago(now, p.ts_ms),
            p.tools.unwrap_or(0),
            p.cold_start_ms.unwrap_or(0)
        )),
        (None, Some(seen)) => reason.push_str(&format!("; last seen {} ago", ago(now, seen))),
        (None, None) => {}
    }
    (Health::Idle, reason)
}

/// Rules 2 to 5: fallback, breaker open, every session unresponsive, a crash loop.
fn broken(i: &Inputs<'_>) -> Option<(Health, String)> {
    let m = i.metrics;
    let now = i.now_ms;
    if i.fallback {
        let why = m
            .last_fallback
            .as_ref()
            .map(|(_, d)| format!(" ({d})"))
            .unwrap_or_default();
        return Some((
            Health::Fallback,
            format!("serving local ripgrep search instead of the server{why}"),
        ));
    }
    if i.circuit_open {
        let why = m
            .last_circuit
            .as_ref()
            .map(|(_, d)| d.clone())
            .unwrap_or_else(|| "the server failed too often in a row".to_owned());
        return Some((Health::Down, format!("breaker {why}")));
    }
    if i.unresponsive == i.sessions {
        return Some((
            Health::Down,
            format!(
                "no heartbeat from {} for more than {} s: stopped or stuck",
                plural(i.sessions, "bridge", "bridges"),
                UNRESPONSIVE_AFTER.as_secs()
            ),
        ));
    }
    let crash_since = now.saturating_sub(CRASH_WINDOW_MS);
    let exits: Vec<&(u64, String)> = m.exits_since(crash_since).collect();
    if exits.len() >= CRASH_EXITS && m.last_answer_ms.is_none_or(|a| a < exits[0].0) {
        return Some((
            Health::Down,
            format!(
                "crash loop: the server ended {} times in the last {} s; last: {}",
                exits.len(),
                CRASH_WINDOW_MS / 1000,
                exits[0].1
            ),
        ));
    }
    None
}

/// Rule 6: no answer yet since the sessions began.
fn starting(i: &Inputs<'_>) -> Option<(Health, String)> {
    let m = i.metrics;
    let now = i.now_ms;
    let since_start = i.oldest_session_ms.unwrap_or(now);
    if m.last_answer_ms.is_some_and(|a| a >= since_start) {
        return None;
    }
    let installing = m.last_installing_ms.is_some_and(|t| t >= since_start);
    let reason = if installing {
        "installing packages (an npx/uvx cold start), no answer yet".to_owned()
    } else if let Some(e) = m.exits_since(now.saturating_sub(CRASH_WINDOW_MS)).next() {
        format!("restarting, no answer yet; last: {}", e.1)
    } else {
        "waiting for the server's first answer".to_owned()
    };
    Some((Health::Starting, reason))
}

/// Rules 7 and 8: degraded by what happened recently, else healthy.
fn recent(i: &Inputs<'_>) -> (Health, String) {
    let m = i.metrics;
    let now = i.now_ms;
    let recent_since = now.saturating_sub(RECENT_MS);
    let (mut total, mut timeouts, mut failures, mut server_errors) = (0usize, 0, 0, 0);
    for class in m.outcomes_since(recent_since) {
        total += 1;
        match class {
            Class::Timeout => timeouts += 1,
            Class::Failure => failures += 1,
            Class::ServerError => server_errors += 1,
            Class::Ok | Class::Neutral => {}
        }
    }
    let recent_exits = m.exits_since(recent_since).count();
    let last_error = m
        .last_error
        .as_ref()
        .filter(|(t, _)| *t >= recent_since)
        .map(|(_, e)| format!("; last: {e}"))
        .unwrap_or_default();
    let window = format!("in the last {} min", RECENT_MS / 60_000);
    if i.unresponsive > 0 {
        return (
            Health::Degraded,
            format!(
                "{} of {} not responding (no heartbeat for more than {} s)",
                plural(i.unresponsive, "bridge", "bridges"),
                i.sessions,
                UNRESPONSIVE_AFTER.as_secs()
            ),
        );
    }
    if recent_exits > 0 {
        return (
            Health::Degraded,
            format!(
                "the server ended {} {window}{last_error}",
                plural(recent_exits, "time", "times")
            ),
        );
    }
    if timeouts > 0 {
        return (
            Health::Degraded,
            format!("{timeouts} of {total} requests timed out {window}{last_error}"),
        );
    }
    if failures > 0 {
        return (
            Health::Degraded,
            format!("{failures} of {total} requests failed {window}{last_error}"),
        );
    }
    if total >= 4 && server_errors * 2 >= total {
        return (
            Health::Degraded,
            format!("{server_errors} of {total} requests got an error from the server {window}"),
        );
    }
    let [p95] = m.percentiles([95.0]);
    let traffic = if total > 0 {
        format!(
            "{} {window}, p95 {p95} ms",
            plural(total, "request", "requests")
        )
    } else {
        "no requests recently".to_owned()
    };
    (
        Health::Healthy,
        format!("{}; {traffic}", plural(i.sessions, "session", "sessions")),
    )
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// "3 s", "4 min", "2 h".
pub fn ago(now_ms: u64, then_ms: u64) -> String {
    let s = now_ms.saturating_sub(then_ms) / 1000;
    match s {
        0..120 => format!("{s} s"),
        120..7200 => format!("{} min", s / 60),
        _ => format!("{} h", s / 3600),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use warden_wire::events::Event;

    const NOW: u64 = 10_000_000;

    fn at(ts: u64, e: Event) -> Event {
        Event { ts_ms: ts, ..e }
    }

    fn request(ts: u64, outcome: &'static str, ms: u64) -> Event {
        Event {
            ts_ms: ts,
            method: Some("tools/call".into()),
            tool: Some("search".into()),
            duration_ms: Some(ms),
            outcome: Some(outcome.into()),
            ..Event::new("request")
        }
    }

    fn inputs(m: &Metrics) -> Inputs<'_> {
        Inputs {
            now_ms: NOW,
            sessions: 1,
            unresponsive: 0,
            oldest_session_ms: Some(NOW - 100_000),
            circuit_open: false,
            fallback: false,
            metrics: m,
            probe: None,
        }
    }

    #[test]
    fn healthy_with_answers_and_starting_without() {
        let mut m = Metrics::default();
        let (h, why) = derive(&inputs(&m));
        assert_eq!(
            (h, why.as_str()),
            (Health::Starting, "waiting for the server's first answer")
        );
        m.record(&at(
            NOW - 99_000,
            Event::new("installing").detail("npm: fetching"),
        ));
        let (h, why) = derive(&inputs(&m));
        assert_eq!(h, Health::Starting);
        assert!(why.contains("installing packages"), "{why}");
        for k in 0..10 {
            m.record(&request(NOW - 50_000 + k, "ok", 10 + k));
        }
        let (h, why) = derive(&inputs(&m));
        assert_eq!(h, Health::Healthy);
        assert_eq!(why, "1 session; 10 requests in the last 5 min, p95 19 ms");
        // Server errors are the server working: healthy until they are most answers.
        m.record(&request(NOW - 1000, "error", 5));
        assert_eq!(derive(&inputs(&m)).0, Health::Healthy);
        for _ in 0..12 {
            m.record(&request(NOW - 900, "error", 5));
        }
        let (h, why) = derive(&inputs(&m));
        assert_eq!(h, Health::Degraded);
        assert!(why.contains("13 of 23 requests got an error"), "{why}");
    }

    #[test]
    fn timeouts_degrade_while_recent_and_then_fade() {
        let mut m = Metrics::default();
        m.record(&request(NOW - 400_000, "ok", 3));
        m.record(&request(NOW - 200_000, "timeout", 30_000));
        m.record(&request(NOW - 100_000, "ok", 3));
        let (h, why) = derive(&inputs(&m));
        assert_eq!(h, Health::Degraded);
        assert_eq!(
            why,
            "1 of 2 requests timed out in the last 5 min; last: timeout: tools/call (tool search) after 30000 ms"
        );
        let later = Inputs {
            now_ms: NOW + RECENT_MS,
            ..inputs(&m)
        };
        assert_eq!(derive(&later).0, Health::Healthy);
    }

    #[test]
    fn a_crash_loop_is_down_with_the_last_exit() {
        let mut m = Metrics::default();
        m.record(&request(NOW - 90_000, "ok", 3));
        for k in 0..3 {
            m.record(&at(
                NOW - 30_000 + k * 1000,
                Event::new("server_exit").detail(format!("exited with status {}", k + 1)),
            ));
        }
        let (h, why) = derive(&inputs(&m));
        assert_eq!(h, Health::Down);
        assert_eq!(
            why,
            "crash loop: the server ended 3 times in the last 60 s; last: server exited: exited with status 3"
        );
        // An answer after the last exit: it recovered, but it is not healthy yet.
        m.record(&request(NOW - 1000, "ok", 3));
        let (h, why) = derive(&inputs(&m));
        assert_eq!(h, Health::Degraded);
        assert!(
            why.starts_with("the server ended 3 times in the last 5 min"),
            "{why}"
        );
        // Two exits are a hiccup, not a loop.
        let mut m = Metrics::default();
        for k in 0..2 {
            m.record(&at(NOW - 5000 + k, Event::new("server_exit").detail("x")));
        }
        assert_eq!(derive(&inputs(&m)).0, Health::Starting);
    }

    #[test]
    fn breaker_fallback_and_unresponsive_bridges() {
        let mut m = Metrics::default();
        m.record(&request(NOW - 10_000, "ok", 3));
        m.record(&at(
            NOW - 5000,
            Event::new("circuit")
                .detail("open: 5 failures in a row; requests fail at once for 30.0 s"),
        ));
        let open = Inputs {
            circuit_open: true,
            ..inputs(&m)
        };
        let (h, why) = derive(&open);
        assert_eq!(h, Health::Down);
        assert_eq!(
            why,
            "breaker open: 5 failures in a row; requests fail at once for 30.0 s"
        );
        m.record(&at(
            NOW - 4000,
            Event::new("fallback").detail("on: the breaker opened"),
        ));
        let fb = Inputs {
            fallback: true,
            circuit_open: true,
            ..inputs(&m)
        };
        let (h, why) = derive(&fb);
        assert_eq!(h, Health::Fallback);
        assert!(why.contains("(on: the breaker opened)"), "{why}");

        let stuck = Inputs {
            sessions: 2,
            unresponsive: 2,
            ..inputs(&m)
        };
        let (h, why) = derive(&stuck);
        assert_eq!(h, Health::Down);
        assert!(why.starts_with("no heartbeat from 2 bridges"), "{why}");
        let one = Inputs {
            sessions: 2,
            unresponsive: 1,
            ..inputs(&m)
        };
        let (h, why) = derive(&one);
        assert_eq!(h, Health::Degraded);
        assert!(why.starts_with("1 bridge of 2 not responding"), "{why}");
    }

    #[test]
    fn idle_and_probes() {
        let m = Metrics::default();
        let none = Inputs {
            sessions: 0,
            oldest_session_ms: None,
            ..inputs(&m)
        };
        assert_eq!(derive(&none), (Health::Idle, "no live session".to_owned()));
        let ok = ProbeReport {
            ok: true,
            ts_ms: NOW - 180_000,
            tools: Some(5),
            cold_start_ms: Some(420),
            ..ProbeReport::default()
        };
        let (h, why) = derive(&Inputs {
            probe: Some(&ok),
            ..none
        });
        assert_eq!(h, Health::Idle);
        assert_eq!(
            why,
            "no live session; last probe (3 min ago) ok: 5 tools, cold start 420 ms"
        );
        let failed = ProbeReport {
            ok: false,
            ts_ms: NOW - 2000,
            error: Some("exited with status 127 before answering initialize".into()),
            ..ProbeReport::default()
        };
        let (h, why) = derive(&Inputs {
            probe: Some(&failed),
            ..none
        });
        assert_eq!(h, Health::Down);
        assert!(
            why.ends_with("(2 s ago) failed: exited with status 127 before answering initialize"),
            "{why}"
        );
    }

    #[test]
    fn a_failed_start_is_down_until_the_server_starts_or_answers() {
        let failed = |ts: u64| Event {
            ts_ms: ts,
            code: Some("W-SPAWN-NOT-FOUND".into()),
            command: Some("npx -y gh-server".into()),
            cause: Some("`npx` was not found on PATH".into()),
            fix: Some("give npx's absolute path".into()),
            ..Event::new("spawn_failed")
        };
        let mut m = Metrics::default();
        m.record(&request(NOW - 60_000, "ok", 3));
        m.record(&failed(NOW - 5000));
        let alone = |m: &Metrics, probe: Option<&ProbeReport>| {
            derive(&Inputs {
                sessions: 0,
                oldest_session_ms: None,
                probe,
                ..inputs(m)
            })
        };
        let (h, why) = alone(&m, None);
        assert_eq!(h, Health::Down);
        assert_eq!(
            why,
            "failed to start 5 s ago (W-SPAWN-NOT-FOUND): npx -y gh-server: `npx` was not found on PATH; fix: give npx's absolute path"
        );
        assert_eq!(
            (
                m.last_error.clone().unwrap().1,
                m.last_error_code.as_deref()
            ),
            (
                "npx -y gh-server: `npx` was not found on PATH".to_owned(),
                Some("W-SPAWN-NOT-FOUND")
            )
        );
        // A probe after it speaks for the server; one before it does not.
        let ok = ProbeReport {
            ok: true,
            ts_ms: NOW - 1000,
            ..ProbeReport::default()
        };
        assert_eq!(alone(&m, Some(&ok)).0, Health::Idle);
        let older = ProbeReport {
            ts_ms: NOW - 9000,
            ..ok
        };
        assert_eq!(alone(&m, Some(&older)).0, Health::Down);
        // A server process started since (another bridge): no longer down.
        m.record(&at(NOW - 4000, Event::new("session_start")));
        assert_eq!(alone(&m, None).0, Health::Idle);
        m.record(&failed(NOW - 3000));
        assert_eq!(alone(&m, None).0, Health::Down);
        m.record(&request(NOW - 2000, "ok", 3));
        assert_eq!(alone(&m, None).0, Health::Idle);
        // Another error after it: the last error has that one's code, or none.
        m.record(&at(NOW - 1500, Event::new("config_rejected").detail("bad")));
        assert_eq!(m.last_error_code, None);
        m.record(&Event {
            code: Some("W-CONFIG-INVALID".into()),
            ..at(NOW - 1000, Event::new("config_rejected").detail("bad"))
        });
        assert_eq!(m.last_error_code.as_deref(), Some("W-CONFIG-INVALID"));
    }
}
