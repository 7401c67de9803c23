//! A server that never got going. Until the real server has written its first JSON message
//! (the start phase: the client's `initialize`, if sent, has no answer yet), a failure that
//! would leave the client with nothing — the command cannot be spawned, the server exits
//! before answering (its retries used up), a crash loop, no answer within
//! `startup_timeout_ms` — ends the session: every request gets a `spawn_failed` error
//! (command, cause, stderr tail, fix, stable code), the `spawn_failed` event is logged, and
//! the session is told (`Out::GaveUp`) to end once the client's `initialize` has its answer.

use warden_wire::codes::Code;

use super::*;

/// Longest stderr tail carried by the error and the event.
const TAIL_SHOWN: usize = 2000;
/// Longest stdout noise line shown.
const NOISE_LINE_SHOWN: usize = 160;

/// Why the bridge gave up on starting the server.
#[derive(Debug, Clone)]
pub(super) struct StartFailure {
    /// `spawn_failed`, or `startup_timeout` for a server that never answered (the contract's
    /// kind for an unanswered handshake).
    kind: ErrorKind,
    code: Code,
    cause: String,
    fix: String,
    stderr_tail: String,
}

impl StartFailure {
    fn new(code: Code, cause: String, stderr_tail: &str) -> StartFailure {
        let tail = warden_wire::redact::redact_text(stderr_tail.trim());
        let cut = tail.len().saturating_sub(TAIL_SHOWN);
        let cut = (cut..=tail.len())
            .find(|&i| tail.is_char_boundary(i))
            .unwrap_or(0);
        StartFailure {
            kind: ErrorKind::SpawnFailed,
            code,
            cause,
            fix: code.fix().to_owned(),
            stderr_tail: tail[cut..].to_owned(),
        }
    }
}

impl Router {
    /// The command line shown in start failures (program and arguments; never the
    /// environment).
    pub fn set_command(&mut self, command: String) {
        self.command = command.into();
    }

    /// Whether the real server has not got going yet: it never wrote a JSON message (so the
    /// client's `initialize`, if sent, has no answer). A session without `initialize` (MCP
    /// 2026-07-28 style) leaves the start phase with the server's first answer too.
    pub(super) fn starting(&self) -> bool {
        !self.life.spoke && self.life.init_params.is_none() && !self.life.serving_fallback
    }

    /// Whether the bridge gave up on starting the server.
    pub fn gave_up(&self) -> bool {
        self.life.gave_up.is_some()
    }

    /// Whether the client's `initialize` got its `spawn_failed` answer (the session may end).
    pub fn initialize_refused(&self) -> bool {
        self.life.init_refused
    }

    /// The one-line reason the bridge prints on stderr when it ends after giving up.
    pub fn start_failure_line(&self) -> Option<String> {
        let f = self.life.gave_up.as_ref()?;
        Some(format!(
            "cannot start server command `{}` (server `{}`): it {} [{}]",
            self.command,
            self.server,
            f.cause,
            f.code.as_str()
        ))
    }

    /// The `spawn_failed` event, once the bridge gave up (also for a supervisor that
    /// connects later).
    pub fn start_failure_event(&self) -> Option<Event> {
        let f = self.life.gave_up.as_ref()?;
        Some(Event {
            command: Some(self.command.to_string()),
            cause: Some(f.cause.clone()),
            stderr_tail: (!f.stderr_tail.is_empty()).then(|| f.stderr_tail.clone()),
            fix: Some(f.fix.clone()),
            ..Event::new("spawn_failed")
                .code(f.code)
                .detail(format!("`{}` {}", self.command, f.cause))
        })
    }

    /// The bridge will not start the server (its settings are invalid, a secret cannot be
    /// read): the client's `initialize` gets `spawn_failed` with `code` and `cause` ("was not
    /// started: ...").
    pub fn not_started(&mut self, code: Code, cause: String, out: &mut Vec<Out>) {
        self.give_up(StartFailure::new(code, cause, ""), out);
    }

    /// The first server process could not be spawned at all.
    pub fn spawn_error(&mut self, program: &str, e: &std::io::Error, out: &mut Vec<Out>) {
        let f = match e.kind() {
            std::io::ErrorKind::NotFound => {
                let is_path = program.contains(std::path::MAIN_SEPARATOR);
                let (cause, fix) = if !is_path {
                    let path = std::env::var("PATH").unwrap_or_default();
                    (
                        format!(
                            "was not found: no `{program}` on the PATH Warden searched ({path}); an IDE started from the desktop often gets a shorter PATH than a terminal"
                        ),
                        format!(
                            "Put the absolute path of `{program}` in the client's config entry (`command -v {program}` in a terminal prints it), or install it."
                        ),
                    )
                } else if std::path::Path::new(program).exists() {
                    (
                        format!(
                            "was not found: `{program}` exists, but the interpreter its first line (`#!`) names does not"
                        ),
                        format!(
                            "Fix the `#!` line of `{program}` (`head -1 {program}`), or install the interpreter it names."
                        ),
                    )
                } else {
                    (
                        format!("was not found: `{program}` does not exist"),
                        format!(
                            "Check the path in the client's config entry (`ls -l {program}`), or install the server there."
                        ),
                    )
                };
                let mut f = StartFailure::new(Code::SpawnNotFound, cause, "");
                f.fix = fix;
                f
            }
            std::io::ErrorKind::PermissionDenied => {
                let mut f = StartFailure::new(
                    Code::SpawnPermissionDenied,
                    format!(
                        "may not be run: permission denied (`{program}` is not executable, or a directory on its path may not be searched)"
                    ),
                    "",
                );
                f.fix = format!(
                    "Make it executable (`chmod +x {program}`), or point the client's config entry at the right program."
                );
                f
            }
            _ => StartFailure::new(Code::SpawnError, format!("could not be started: {e}"), ""),
        };
        self.give_up(f, out);
    }

    /// The server process ended during the start phase: what ends the session, if anything
    /// does. `None` restarts it as after any crash (a one-off failure, or the client's
    /// `initialize` not sent yet).
    pub(super) fn start_failure_on_exit(
        &self,
        exit: &str,
        stderr_tail: &str,
    ) -> Option<StartFailure> {
        let last_line = stderr_tail.trim().lines().last().unwrap_or("").trim();
        let stderr_note = if last_line.is_empty() {
            String::new()
        } else {
            format!("; its last stderr line: {last_line}")
        };
        // Not the server: its sandbox could not be made. It will not be made on a retry
        // either, and the server never ran.
        if self.limits.sandbox && crate::sandbox::userns_denied(stderr_tail) {
            let cause = format!(
                "was not started: bubblewrap may not create the user namespaces of its sandbox ({last_line})"
            );
            return Some(StartFailure::new(
                Code::SandboxUsernsDenied,
                cause,
                stderr_tail,
            ));
        }
        let crash_loop = self.life.failures + 1 >= self.limits.circuit_failures
            && self.limits.fallback != warden_config::Fallback::Rg;
        if crash_loop {
            let cause = format!(
                "exited again right after each of {} starts and never answered `initialize` (the last {exit}{stderr_note})",
                self.life.failures + 1
            );
            return Some(StartFailure::new(Code::SpawnCrashLoop, cause, stderr_tail));
        }
        let initialize_in_flight = self.c2s.values().any(|p| {
            p.class == Class::Initialize
                && p.held_since.is_none()
                && p.attempts >= self.limits.retries
        });
        if !initialize_in_flight {
            return None;
        }
        let code = if exit.contains("killed by signal") {
            Code::SpawnSignal
        } else {
            Code::SpawnExited
        };
        let cause = format!("{exit} before answering `initialize`{stderr_note}");
        Some(StartFailure::new(code, cause, stderr_tail))
    }

    /// The client's `initialize` got no answer within `startup_timeout_ms`.
    pub(super) fn start_timed_out(&mut self, out: &mut Vec<Out>) {
        let cause = format!(
            "did not answer `initialize` within {} (startup_timeout_ms = {})",
            secs(self.limits.startup_timeout),
            self.limits.startup_timeout.as_millis()
        );
        let mut f = StartFailure::new(Code::SpawnStartupTimeout, cause, "");
        f.kind = ErrorKind::StartupTimeout;
        self.give_up(f, out);
    }

    /// The destinations the sandbox's proxy refused so far in this session (`host:port`).
    pub fn note_net_refused(&mut self, refused: Vec<String>) {
        self.net_refused = refused;
    }

    /// Ends the start: answers every request with the failure, logs `spawn_failed`, and
    /// tells the session. A server that wrote only non-JSON to stdout gets that code. A
    /// server that ended (or hung) after its sandbox's proxy refused a destination is told
    /// which, and that `sandbox_network` is the key: what it printed is often only its
    /// runner's `403` (npm's "A complete log of this run..." as the last line).
    pub(super) fn give_up(&mut self, mut f: StartFailure, out: &mut Vec<Out>) {
        let after_run = matches!(
            f.code,
            Code::SpawnExited
                | Code::SpawnSignal
                | Code::SpawnCrashLoop
                | Code::SpawnStartupTimeout
        );
        if after_run && !self.net_refused.is_empty() {
            let shown = self.net_refused.join(", ");
            let listed = self
                .net_refused
                .iter()
                .map(|d| format!("{d:?}"))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = write!(
                f.cause,
                "; its sandbox's proxy refused {shown}: not in its `sandbox_network` list"
            );
            f.fix = format!(
                "Add what it needs to `sandbox_network` in [servers.{}] of config.toml ({listed}; \"@npm\" or \"@pypi\" for its package registry), then restart the client's MCP connection.",
                self.server
            );
        }
        if let (Some(line), false) = (&self.life.first_noise, self.life.answered) {
            f.code = Code::SpawnStdoutNoise;
            f.fix = Code::SpawnStdoutNoise.fix().to_owned();
            let _ = write!(
                f.cause,
                "; it wrote only non-JSON to stdout, the first line: {line}"
            );
        }
        self.life.give_up(f);
        out.extend(self.start_failure_event().map(Out::Event));
        let waiting: Vec<Id> = self.c2s.keys().cloned().collect();
        for id in waiting {
            let Some(p) = self.c2s.remove(&id) else {
                continue;
            };
            self.bury(id.clone(), p.token.clone());
            self.stats.errors += 1;
            self.refuse(Some(&id), &p.method, out);
        }
        out.push(Out::GaveUp);
    }

    /// Answers a request after the bridge gave up on starting the server.
    pub(super) fn refuse(&mut self, id: Option<&Id>, method: &str, out: &mut Vec<Out>) {
        let Some(f) = &self.life.gave_up else { return };
        let msg = format!(
            "Server `{}` could not be started: `{}` {}. {} [{}]",
            self.server,
            self.command,
            f.cause,
            f.fix,
            f.code.as_str()
        );
        let data = json!({
            "code": f.code.as_str(),
            "command": &*self.command,
            "cause": f.cause,
            "stderr_tail": f.stderr_tail,
            "fix": f.fix,
            "method": method,
        });
        out.push(Out::Client(error_response(
            id,
            f.kind,
            &self.server,
            &msg,
            data,
        )));
        if method == "initialize" {
            self.life.init_refused = true;
            out.push(Out::GaveUp);
        }
    }

    /// Remembers the first line of stdout noise of the current server (shown if it never
    /// answers).
    pub(super) fn note_noise(&mut self, line: &str) {
        if self.life.first_noise.is_none() {
            let mut shown: String = line.trim().chars().take(NOISE_LINE_SHOWN).collect();
            if line.trim().chars().count() > NOISE_LINE_SHOWN {
                shown.push('…');
            }
            self.life.first_noise = Some(shown);
        }
    }
}
