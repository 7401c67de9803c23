//! How the supervisor's answers look on a terminal: tables, probe reports, outcomes, events.
//! What servers and clients said (names, reasons, stdout noise, stderr, commands) goes through
//! the printable-text rule (`warden_wire::text`): a server cannot write an escape sequence or
//! a line of its own onto the terminal of `warden history`, `events` or `status`.

use serde_json::Value;
use warden_supervisor::api::{
    ApiEvent, CommandOutcome, HistoryEntry, Orphan, ProbeReport, ServerStatus, SessionState,
    SessionStatus, StatusReport, StopResult,
};
use warden_wire::{say, text};

/// Pretty JSON on stdout.
macro_rules! print_json {
    ($v:expr) => {
        match serde_json::to_string_pretty($v) {
            Ok(s) => println!("{s}"),
            Err(e) => eprintln!("warden: cannot print JSON: {e}"),
        }
    };
}
pub(super) use print_json;

/// Columns padded to their widest cell.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|c| text::line(c)).collect())
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let line = |cells: Vec<String>| {
        let mut s = String::new();
        let last = cells.len().saturating_sub(1);
        for (i, cell) in cells.into_iter().enumerate() {
            if i == last {
                s.push_str(&cell);
            } else {
                let pad = widths[i].saturating_sub(cell.chars().count());
                s.push_str(&cell);
                s.push_str(&" ".repeat(pad + 2));
            }
        }
        s.trim_end().to_owned() + "\n"
    };
    let mut out = line(header.iter().map(|h| (*h).to_owned()).collect());
    for row in rows {
        out.push_str(&line(row));
    }
    out
}

/// `warden status`: servers, then sessions.
pub(super) fn status_table(r: &StatusReport) -> String {
    let mut out = String::new();
    if r.servers.is_empty() {
        out.push_str("No servers known yet: bridges appear here when an IDE starts them through `warden bridge`.\n");
    } else {
        out.push_str(&servers_table(&r.servers));
    }
    if !r.sessions.is_empty() {
        out.push('\n');
        out.push_str(&sessions_table(&r.sessions));
    } else {
        out.push_str("\nNo live sessions.\n");
    }
    out
}

/// `warden status --server NAME`: its row, its tools (slowest p95 first) and its sessions;
/// None when the report has no such server.
pub(super) fn server_view(r: &StatusReport, name: &str) -> Option<String> {
    let server = r.servers.iter().find(|s| s.name == name)?;
    let mut out = servers_table(std::slice::from_ref(server));
    out.push('\n');
    if server.tools.is_empty() {
        out.push_str("No tool calls yet.\n");
    } else {
        let mut tools: Vec<_> = server.tools.iter().collect();
        tools.sort_by(|a, b| b.p95_ms.cmp(&a.p95_ms).then(b.calls.cmp(&a.calls)));
        let rows: Vec<Vec<String>> = tools
            .iter()
            .map(|t| {
                vec![
                    t.name.clone(),
                    t.calls.to_string(),
                    t.errors.to_string(),
                    t.timeouts.to_string(),
                    format!("{}/{}", t.p50_ms, t.p95_ms),
                    t.bytes_out.to_string(),
                ]
            })
            .collect();
        out.push_str(&table(
            &[
                "TOOL",
                "CALLS",
                "ERRORS",
                "TIMEOUTS",
                "P50/95 MS",
                "BYTES OUT",
            ],
            &rows,
        ));
    }
    let sessions: Vec<SessionStatus> = r
        .sessions
        .iter()
        .filter(|s| s.server == name)
        .cloned()
        .collect();
    if !sessions.is_empty() {
        out.push('\n');
        out.push_str(&sessions_table(&sessions));
    }
    Some(out)
}

/// One row per server, then the last error of those that have one.
fn servers_table(servers: &[ServerStatus]) -> String {
    let rows: Vec<Vec<String>> = servers
        .iter()
        .map(|s| {
            vec![
                s.name.clone(),
                s.health.as_str().to_owned(),
                s.sessions.to_string(),
                s.inflight.to_string(),
                s.requests.to_string(),
                format!("{}/{}/{}", s.p50_ms, s.p95_ms, s.p99_ms),
                s.timeouts.to_string(),
                s.retries.to_string(),
                s.restarts.to_string(),
                s.reason.clone(),
            ]
        })
        .collect();
    let mut out = table(
        &[
            "SERVER",
            "HEALTH",
            "SESSIONS",
            "INFLIGHT",
            "REQUESTS",
            "P50/95/99 MS",
            "TIMEOUTS",
            "RETRIES",
            "RESTARTS",
            "REASON",
        ],
        &rows,
    );
    for s in servers.iter().filter(|s| s.last_error.is_some()) {
        let code = s
            .code
            .as_deref()
            .map(|c| format!(" [{c}]"))
            .unwrap_or_default();
        out.push_str(&text::line(&format!(
            "  {} last error{code}: {}",
            s.name,
            s.last_error.as_deref().unwrap_or("")
        )));
        out.push('\n');
    }
    for s in servers.iter().filter(|s| !s.network_denied.is_empty()) {
        let refused: Vec<String> = s
            .network_denied
            .iter()
            .map(|d| {
                if d.host.contains(':') {
                    format!("[{}]:{}", d.host, d.port)
                } else {
                    format!("{}:{}", d.host, d.port)
                }
            })
            .collect();
        out.push_str(&text::line(&format!(
            "  {} network refused (not in sandbox_network), latest first: {}",
            s.name,
            refused.join(", ")
        )));
        out.push('\n');
    }
    out
}

/// One row per session, then one line per request in flight.
fn sessions_table(sessions: &[SessionStatus]) -> String {
    let rows: Vec<Vec<String>> = sessions
        .iter()
        .map(|s| {
            let state = match s.state {
                SessionState::Live => "live",
                SessionState::Unresponsive => "unresponsive",
                SessionState::Disconnected => "disconnected",
            };
            let mut flags = Vec::new();
            if s.circuit_open {
                flags.push("breaker open");
            }
            if s.fallback {
                flags.push("fallback");
            }
            if s.debug {
                flags.push("debug");
            }
            vec![
                s.id.clone(),
                s.server.clone(),
                s.pid.to_string(),
                s.client.clone().unwrap_or_else(|| "-".to_owned()),
                state.to_owned(),
                format!("{:.1} s ago", s.last_heartbeat_ms as f64 / 1000.0),
                s.inflight.len().to_string(),
                flags.join(", "),
            ]
        })
        .collect();
    let mut out = table(
        &[
            "SESSION",
            "SERVER",
            "PID",
            "CLIENT",
            "STATE",
            "HEARTBEAT",
            "INFLIGHT",
            "FLAGS",
        ],
        &rows,
    );
    for s in sessions {
        for i in &s.inflight {
            out.push_str(&text::line(&format!(
                "  {} request {} {}{}: {:.1} s old, idle {:.1} s{}",
                s.id,
                i.id,
                i.method,
                i.tool
                    .as_deref()
                    .map(|t| format!(" ({t})"))
                    .unwrap_or_default(),
                i.age_ms as f64 / 1000.0,
                i.idle_ms as f64 / 1000.0,
                i.progress
                    .as_deref()
                    .map(|p| format!(", progress: {p}"))
                    .unwrap_or_default(),
            )));
            out.push('\n');
        }
    }
    out
}

pub(super) fn print_probe(r: &ProbeReport) {
    let name = r
        .server
        .clone()
        .unwrap_or_else(|| r.command.first().cloned().unwrap_or_default());
    if r.ok {
        let info = r
            .server_info
            .as_ref()
            .map(|i| {
                format!(
                    " ({} {})",
                    i.get("name").and_then(Value::as_str).unwrap_or("?"),
                    i.get("version").and_then(Value::as_str).unwrap_or("")
                )
            })
            .unwrap_or_default();
        say!(
            "{name}{info}: ok, {}, cold start {} ms, {} tools{}",
            era_text(r),
            r.cold_start_ms.unwrap_or(0),
            r.tools.unwrap_or(0),
            if r.tool_names.is_empty() {
                String::new()
            } else {
                format!(": {}", r.tool_names.join(", "))
            }
        );
    } else {
        say!(
            "{name}: FAILED: {}",
            r.error.as_deref().unwrap_or("no reason")
        );
        if !r.stderr_tail.trim().is_empty() {
            println!(
                "stderr (last lines):\n{}",
                text::lines(r.stderr_tail.trim_end())
            );
        }
    }
    if !r.ok && r.era.is_some() {
        say!("  era: {}", era_text(r));
    }
    say!("  command: {}", text::argv(&r.command));
    say!("  shutdown: {} (total {} ms)", r.shutdown, r.total_ms);
}

/// "modern MCP (2026-07-28)", "legacy MCP (2025-11-25)": the era the probe spoke (`say!`
/// makes the server's version printable).
fn era_text(r: &ProbeReport) -> String {
    let era = r.era.map_or("unknown", |e| e.as_str());
    match &r.protocol_version {
        Some(v) => format!("{era} MCP ({v})"),
        None => format!("{era} MCP"),
    }
}

pub(super) fn print_outcome(o: &CommandOutcome, json: bool) {
    if json {
        print_json!(o);
        return;
    }
    say!("{}", o.message);
    for s in &o.sessions {
        say!(
            "  {} {} (pid {}): {}",
            if s.ok { "ok  " } else { "FAIL" },
            s.session,
            s.pid,
            s.message
        );
    }
}

pub(super) fn print_orphans(list: &[Orphan]) {
    if list.is_empty() {
        println!("No orphaned server processes.");
        return;
    }
    for o in list {
        say!(
            "pid {} {}: {}",
            o.pid,
            o.server
                .as_deref()
                .map(|s| format!("(server {s})"))
                .unwrap_or_default(),
            o.reason
        );
        say!("  {}", text::argv(&o.command));
    }
}

pub(super) fn print_stopped(results: &[StopResult]) {
    for r in results {
        say!(
            "pid {}: {}{}",
            r.pid,
            if r.ok { "" } else { "NOT STOPPED: " },
            r.message
        );
    }
}

pub(super) fn print_entry(e: &HistoryEntry) {
    let ev = &e.event;
    let secs = ev.ts_ms / 1000;
    let (h, m, s) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
    let mut line = format!("{h:02}:{m:02}:{s:02}Z {:<12} {}", e.server, ev.kind);
    if let Some(method) = &ev.method {
        line.push_str(&format!(" {method}"));
    }
    if let Some(tool) = &ev.tool {
        line.push_str(&format!(" ({tool})"));
    }
    if let Some(o) = &ev.outcome {
        line.push_str(&format!(" {o}"));
    }
    if let Some(d) = ev.duration_ms {
        line.push_str(&format!(" {d} ms"));
    }
    if let Some(c) = &ev.code {
        line.push_str(&format!(" [{c}]"));
    }
    if let Some(d) = &ev.detail {
        line.push_str(&format!(": {d}"));
    }
    if let Some(c) = &ev.command {
        line.push_str(&format!(": {c}"));
    }
    if let Some(c) = &ev.cause {
        line.push_str(&format!(": {c}"));
    }
    if let Some(f) = &ev.fix {
        line.push_str(&format!("; fix: {f}"));
    }
    say!("{line}");
}

/// One event of `warden events`, as a line (or a few).
pub(super) fn print_event(event: &ApiEvent) {
    match event {
        ApiEvent::Event { entry } => print_entry(entry),
        ApiEvent::Health {
            server,
            health,
            reason,
        } => say!("{server}: {} ({reason})", health.as_str()),
        ApiEvent::SessionOpened { session } => say!(
            "session {} of {} opened (pid {})",
            session.id,
            session.server,
            session.pid
        ),
        ApiEvent::SessionClosed {
            session, reason, ..
        } => say!("session {session} closed: {reason}"),
        ApiEvent::Probe { report } => print_probe(report),
        ApiEvent::Orphans { orphans } => print_orphans(orphans),
        ApiEvent::Client { message, .. } => say!("{message}"),
        ApiEvent::ConfigChanged { server } => say!("config.toml changed for {server}"),
        // Rows and heartbeats change every moment; `warden status` shows them. The tray's
        // state is the window's.
        ApiEvent::SessionUpdated { .. }
        | ApiEvent::Server { .. }
        | ApiEvent::App { .. }
        | ApiEvent::AddProgress { .. } => {}
    }
}
