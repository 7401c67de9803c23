//! The watchdog's rules: the deadlines of pending requests (hard, idle, start-up), and the
//! error, cancellation and event when one passes.

use super::*;

/// How long a relay's sign-in may keep the clocks standing: its five minutes, and a margin.
const SIGNIN_WAIT: Duration = Duration::from_secs(330);

impl Router {
    /// When `p` last showed signs of life (its own activity, or stderr when that counts).
    pub(super) fn activity(&self, p: &Pending) -> Instant {
        match self.last_stderr {
            Some(t) if self.limits.stderr_is_activity && t > p.last_activity => t,
            _ => p.last_activity,
        }
    }

    /// Fails every request past a deadline; returns the next deadline, if any.
    pub fn tick(&mut self, now: Instant, out: &mut Vec<Out>) -> Option<Instant> {
        // A person signing in to a remote server in the browser: no idle or start-up clock
        // runs out on them (the relay gives a sign-in five minutes; `max_timeout_ms` holds).
        let signing_in = self
            .signing_in
            .is_some_and(|t| now.duration_since(t) < SIGNIN_WAIT);
        let paused = signing_in
            || !self.s2c.is_empty()
            || self
                .adapt
                .asking
                .values()
                .any(|(call, _)| self.c2s.contains_key(call));
        let mut expired = Vec::new();
        let mut next: Option<Instant> = None;
        for (id, p) in &self.c2s {
            let hard = (p.class != Class::Initialize).then(|| p.started + self.limits.max_timeout);
            let idle = match (p.held_since, p.class) {
                // Waiting for a (re)started server: bounded by the start-up limit.
                (Some(since), _) => Some(since + self.limits.startup_timeout),
                (None, Class::Normal) if !paused => {
                    Some(self.activity(p) + self.limits.idle_timeout)
                }
                (None, Class::Initialize) if !signing_in => {
                    Some(p.started + self.limits.startup_timeout)
                }
                _ => None,
            };
            if hard.is_some_and(|t| t <= now) {
                expired.push((id.clone(), ErrorKind::MaxTimeout));
            } else if idle.is_some_and(|t| t <= now) {
                let kind = if p.class == Class::Initialize || p.held_since.is_some() {
                    ErrorKind::StartupTimeout
                } else {
                    ErrorKind::Timeout
                };
                expired.push((id.clone(), kind));
            } else {
                for t in [hard, idle].into_iter().flatten() {
                    next = Some(next.map_or(t, |n| n.min(t)));
                }
            }
        }
        for (id, kind) in expired {
            self.expire(id, kind, now, out);
        }
        if let Some(t) = self.life_tick(now, out) {
            next = Some(next.map_or(t, |n| n.min(t)));
        }
        if let Some(t) = self.ask_tick(now, out) {
            next = Some(next.map_or(t, |n| n.min(t)));
        }
        if let Some(t) = self.learn_tick(now, out) {
            next = Some(next.map_or(t, |n| n.min(t)));
        }
        self.armed = next;
        next
    }

    fn expire(&mut self, id: Id, kind: ErrorKind, now: Instant, out: &mut Vec<Out>) {
        let first_handshake = self
            .c2s
            .get(&id)
            .is_some_and(|p| p.class == Class::Initialize && p.held_since.is_none());
        if kind == ErrorKind::StartupTimeout && first_handshake && self.starting() {
            self.stats.timeouts += 1;
            return self.start_timed_out(out);
        }
        let Some(p) = self.c2s.remove(&id) else {
            return;
        };
        self.stats.timeouts += 1;
        self.bury(id.clone(), p.token.clone());
        let was_held = p.held_since.is_some();
        let elapsed = now.saturating_duration_since(p.started);
        let l = &self.limits;
        let (msg, limit) = match kind {
            ErrorKind::MaxTimeout => (
                format!(
                    "Request timed out: {} on server `{}` ran for {} and passed max_timeout_ms ({}), the hard limit that applies even while a tool reports progress. Warden cancelled it. If the tool needs longer, raise max_timeout_ms for this server in config.toml.",
                    describe(&p),
                    self.server,
                    secs(elapsed),
                    l.max_timeout.as_millis()
                ),
                l.max_timeout,
            ),
            ErrorKind::StartupTimeout if was_held => (
                format!(
                    "Request timed out: server `{}` was (re)starting and did not become ready within {} (startup_timeout_ms = {}), so {} was never sent. {}",
                    self.server,
                    secs(l.startup_timeout),
                    l.startup_timeout.as_millis(),
                    describe(&p),
                    self.life.last_exit_note(),
                ),
                l.startup_timeout,
            ),
            ErrorKind::StartupTimeout => (
                format!(
                    "Request timed out: server `{}` did not answer `initialize` within {} (startup_timeout_ms = {}). If it downloads packages on first start (npx, uvx), run it once by hand to fill the cache, or raise startup_timeout_ms.",
                    self.server,
                    secs(l.startup_timeout),
                    l.startup_timeout.as_millis()
                ),
                l.startup_timeout,
            ),
            _ => (
                format!(
                    "Request timed out: {} on server `{}` had no response, progress or activity for {} (idle_timeout_ms = {}). Warden cancelled it. If the tool is slow but working, raise idle_timeout_ms for this server in config.toml; if the server is stuck, restart it.",
                    describe(&p),
                    self.server,
                    secs(now.saturating_duration_since(self.activity(&p))),
                    l.idle_timeout.as_millis()
                ),
                l.idle_timeout,
            ),
        };
        let data = json!({
            "limit_ms": limit.as_millis() as u64,
            "elapsed_ms": elapsed.as_millis() as u64,
            "method": &*p.method,
        });
        out.push(Out::Client(error_response(
            Some(&id),
            kind,
            &self.server,
            &msg,
            data,
        )));
        match (p.class, &p.task_id) {
            _ if was_held => {}
            (Class::Initialize, _) => {}
            (Class::TaskResult, Some(task_id)) => {
                let own = self.own_id(lifecycle::Own::Swallow);
                let cancel = json!({"jsonrpc": "2.0", "id": own.to_value(), "method": "tasks/cancel", "params": {"taskId": &**task_id}});
                out.push(Out::Server(Bytes::from(cancel.to_string())));
            }
            _ => {
                let reason = format!("Warden: {} (limit {} ms)", kind.as_str(), limit.as_millis());
                let known_as = self.adapt_server_id(&id).unwrap_or_else(|| id.clone());
                out.push(Out::Server(notification(
                    "notifications/cancelled",
                    json!({"requestId": known_as.to_value(), "reason": reason}),
                )));
            }
        }
        out.push(Out::Event(
            self.finished(&id, &p, now, kind.as_str(), None)
                .code(kind.stable_code()),
        ));
        self.adapt_forget(&id);
        if !was_held {
            self.count_failure(now, &format!("{} timed out", describe(&p)), out);
        }
    }
}
