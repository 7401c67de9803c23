//! The local ripgrep fallback as the router sees it: when to serve from it and when to go back.
//!
//! The fallback is a server process like any other (`warden rg-server`, with the tools of
//! mcp-ripgrep), started in place of the real one; the restart machinery gives it the client's
//! handshake and announces the changed tool list. The router only decides which one runs.

use super::lifecycle::Phase;
use super::*;
use warden_config::Fallback;

impl Router {
    /// Whether the next server process should be the local ripgrep fallback.
    pub fn wants_fallback(&self) -> bool {
        self.limits.force_fallback || self.life.fallback_until.is_some()
    }

    /// Whether the current server process is the fallback.
    pub fn serving_fallback(&self) -> bool {
        self.life.serving_fallback
    }

    /// With `fallback = "rg"`, an opened breaker switches to local search instead of failing
    /// requests; the waiting ones are answered by it.
    pub(super) fn fallback_on_failure(
        &mut self,
        now: Instant,
        out: &mut Vec<Out>,
    ) -> Option<Restart> {
        if self.limits.fallback != Fallback::Rg || self.life.serving_fallback {
            return None;
        }
        self.life.fallback_until = Some(now + self.limits.circuit_cooldown);
        self.life.phase = Phase::Down;
        out.push(Out::Event(Event::new("fallback").detail(format!(
            "on: {} failures in a row; local ripgrep answers for {} before the server is tried again",
            self.life.failures,
            secs(self.limits.circuit_cooldown)
        ))));
        Some(Restart::After(Duration::ZERO))
    }

    /// After the cool-down, a request makes the bridge try the real server again (the request
    /// waits for it); if that fails, the breaker brings the fallback back.
    pub(super) fn maybe_leave_fallback(&mut self, now: Instant, out: &mut Vec<Out>) {
        let due = self.life.fallback_until.is_some_and(|until| now >= until);
        if !self.life.serving_fallback || self.limits.force_fallback || !due || !self.life.ready() {
            return;
        }
        self.life.fallback_until = None;
        self.life.trial = true;
        out.push(Out::Event(
            Event::new("fallback").detail("off: trying the server again"),
        ));
        self.swap(out);
    }

    /// `force_fallback` changed (config reload or a click): switch now.
    pub(super) fn follow_force_fallback(&mut self, _now: Instant, out: &mut Vec<Out>) {
        if self.life.generation == 0
            || self.life.swap
            || self.wants_fallback() == self.life.serving_fallback
        {
            return;
        }
        let detail = if self.wants_fallback() {
            "on: force_fallback is set"
        } else {
            "off: force_fallback was cleared"
        };
        out.push(Out::Event(Event::new("fallback").detail(detail)));
        self.swap(out);
    }

    /// Restarts the server process on request (the tray's "restart"): planned, so not a
    /// failure; requests in flight are re-sent when safe, new ones wait.
    pub fn request_restart(&mut self, out: &mut Vec<Out>) {
        if let Phase::Open { .. } = self.life.phase {
            // The user asked for it: a fresh start, not a half-open trial.
            self.life.phase = Phase::Down;
            self.life.failures = 0;
            self.life.trial = false;
            out.push(Out::Event(Event::new("restart_requested")));
            out.push(Out::Event(
                Event::new("circuit").detail("closed: restarted on request"),
            ));
            out.push(Out::StartServer);
            return;
        }
        if self.life.generation == 0 || self.life.swap {
            return;
        }
        out.push(Out::Event(Event::new("restart_requested")));
        self.swap(out);
    }

    /// Replaces the running process with the other kind. Requests in flight are re-sent to
    /// the new one when safe, as after a crash; new ones wait for it.
    fn swap(&mut self, out: &mut Vec<Out>) {
        self.life.swap = true;
        self.life.kill_reason =
            Some("was stopped on purpose (restart or fallback switch)".to_owned());
        self.life.phase = Phase::Down;
        out.push(Out::KillServer);
    }

    /// The fallback's tools are read-only searches: safe to re-send for a server that is
    /// configured to fall back to them.
    pub(super) fn fallback_tool_is_safe(&self, tool: &str) -> bool {
        (self.limits.fallback == Fallback::Rg || self.limits.force_fallback)
            && crate::fallback::Search::has_tool(tool)
    }
}
