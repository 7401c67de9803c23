//! The orphan sweeper: MCP server processes whose bridge is gone.
//!
//! A bridge puts `WARDEN_SESSION=<bridge pid>-<start ms>` in its server's environment, and the
//! server's children inherit it. A process of this user that carries the marker while no
//! bridge of that pid lives is an orphan. A process without the marker is one only when it
//! was re-parented to init and runs exactly the command of a known server (servers started
//! by bridges that did not mark them yet). Found orphans are reported; they are stopped only
//! when asked (after confirmation) or by policy: SIGTERM to the process (its group when it
//! leads one), 2 s, SIGKILL.
//!
//! Linux reads `/proc`; elsewhere the sweep finds nothing (and says so in the docs). On Windows
//! a server's whole tree is in its bridge's kill-on-close Job Object, so none is left behind.

use std::collections::HashMap;
use std::time::Duration;

use super::api::{Orphan, StopResult};

/// Grace between SIGTERM and SIGKILL, as in the bridge's shutdown.
pub const GRACE: Duration = Duration::from_secs(2);

/// What the sweeper knows: sessions by id (id → server), and server commands.
#[derive(Debug, Clone, Default)]
pub struct Known {
    pub sessions: HashMap<String, String>,
    pub commands: Vec<(String, Vec<String>)>,
}

/// One process as `/proc` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proc {
    pub pid: u32,
    pub ppid: u32,
    pub pgid: u32,
    pub uid: u32,
    pub zombie: bool,
    pub cmdline: Vec<String>,
    pub marker: Option<String>,
}

/// The bridge pid in a session marker (`<pid>-<start ms>`).
pub fn marker_pid(marker: &str) -> Option<u32> {
    marker.split('-').next()?.parse().ok()
}

/// Classifies processes; `alive_bridge(pid)` says whether a bridge (or prober) of that pid
/// still runs. Pure, for tests.
pub fn classify(
    procs: &[Proc],
    me: u32,
    uid: u32,
    known: &Known,
    alive_bridge: impl Fn(u32) -> bool,
) -> Vec<Orphan> {
    let mut out = Vec::new();
    for p in procs {
        if p.pid == me || p.pid <= 1 || p.uid != uid || p.zombie || p.cmdline.is_empty() {
            continue;
        }
        let server_of_session = |m: &str| known.sessions.get(m).cloned();
        let orphan = |reason: String, server: Option<String>| Orphan {
            pid: p.pid,
            ppid: p.ppid,
            pgid: p.pgid,
            session: p.marker.clone(),
            bridge_pid: p.marker.as_deref().and_then(marker_pid),
            server,
            command: p.cmdline.clone(),
            reason,
        };
        match &p.marker {
            Some(m) => {
                let Some(bridge) = marker_pid(m) else {
                    continue;
                };
                if bridge == me || alive_bridge(bridge) {
                    continue;
                }
                out.push(orphan(
                    format!("its bridge (pid {bridge}, session {m}) is gone"),
                    server_of_session(m).or_else(|| server_by_command(known, &p.cmdline)),
                ));
            }
            None if p.ppid == 1 => {
                if let Some(server) = server_by_command(known, &p.cmdline) {
                    out.push(orphan(
                        format!(
                            "it has no parent (re-parented to init) and runs the command of server `{server}`"
                        ),
                        Some(server),
                    ));
                }
            }
            None => {}
        }
    }
    out
}

fn server_by_command(known: &Known, cmdline: &[String]) -> Option<String> {
    known
        .commands
        .iter()
        .find(|(_, c)| !c.is_empty() && c.as_slice() == cmdline)
        .map(|(s, _)| s.clone())
}

/// Orphans of this user now.
pub fn scan(known: &Known) -> Vec<Orphan> {
    let procs = sys::processes();
    classify(&procs, std::process::id(), sys::uid(), known, |pid| {
        sys::alive(pid) && sys::looks_like_warden(pid)
    })
}

/// Stops `pids` if they are still orphans now (a pid that is not is refused, so a reused pid
/// is never hit): SIGTERM, [`GRACE`], SIGKILL.
pub async fn stop(pids: &[u32], known: &Known) -> Vec<StopResult> {
    let current = scan(known);
    let mut tasks = Vec::new();
    for &pid in pids {
        let Some(o) = current.iter().find(|o| o.pid == pid).cloned() else {
            tasks.push(tokio::spawn(async move {
                StopResult {
                    pid,
                    ok: false,
                    message: "not an orphan (any more); left alone".to_owned(),
                }
            }));
            continue;
        };
        tasks.push(tokio::spawn(async move { stop_one(&o).await }));
    }
    let mut out = Vec::new();
    for t in tasks {
        if let Ok(r) = t.await {
            out.push(r);
        }
    }
    out
}

async fn stop_one(o: &Orphan) -> StopResult {
    let group = o.pgid == o.pid;
    let result = |ok, message: String| StopResult {
        pid: o.pid,
        ok,
        message,
    };
    if let Err(e) = signal(o.pid, group, Sig::Term) {
        if !sys::alive(o.pid) {
            return result(true, "already gone".to_owned());
        }
        return result(false, format!("cannot signal it: {e}"));
    }
    if wait_gone(o.pid, GRACE).await {
        return result(true, "stopped by SIGTERM".to_owned());
    }
    let _ = signal(o.pid, group, Sig::Kill);
    if wait_gone(o.pid, GRACE).await {
        result(
            true,
            "did not stop on SIGTERM within 2 s; killed".to_owned(),
        )
    } else {
        result(false, "still running after SIGKILL".to_owned())
    }
}

/// Polls: a process that is not our child has no exit to await.
async fn wait_gone(pid: u32, limit: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if !sys::alive(pid) {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Whether `pid` runs (a zombie has exited).
pub fn alive(pid: u32) -> bool {
    sys::alive(pid)
}

enum Sig {
    Term,
    Kill,
}

/// Sends `sig` to a process, or to its whole group.
#[cfg(unix)]
fn signal(pid: u32, group: bool, sig: Sig) -> std::io::Result<()> {
    let sig = match sig {
        Sig::Term => rustix::process::Signal::TERM,
        Sig::Kill => rustix::process::Signal::KILL,
    };
    let pid = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    if group {
        rustix::process::kill_process_group(pid, sig)?;
    } else {
        rustix::process::kill_process(pid, sig)?;
    }
    Ok(())
}

#[cfg(target_os = "linux")]
mod sys {
    use super::Proc;
    use std::os::unix::fs::MetadataExt;

    pub fn uid() -> u32 {
        rustix::process::getuid().as_raw()
    }

    fn stat_fields(pid: u32) -> Option<(char, u32, u32)> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // Fields after the parenthesised name: state ppid pgrp …
        let mut f = stat.rsplit_once(')')?.1.split_whitespace();
        let state = f.next()?.chars().next()?;
        let ppid = f.next()?.parse().ok()?;
        let pgid = f.next()?.parse().ok()?;
        Some((state, ppid, pgid))
    }

    pub fn alive(pid: u32) -> bool {
        matches!(stat_fields(pid), Some((state, _, _)) if state != 'Z' && state != 'X')
    }

    pub fn looks_like_warden(pid: u32) -> bool {
        let cmd = cmdline(pid);
        cmd.iter().take(2).any(|a| a.contains("warden"))
            || std::fs::read_link(format!("/proc/{pid}/exe"))
                .map(|p| p.to_string_lossy().contains("warden"))
                .unwrap_or(false)
    }

    fn cmdline(pid: u32) -> Vec<String> {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|b| {
                b.split(|&c| c == 0)
                    .filter(|a| !a.is_empty())
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn marker(pid: u32) -> Option<String> {
        let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        env.split(|&c| c == 0)
            .find_map(|kv| kv.strip_prefix(b"WARDEN_SESSION="))
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }

    pub fn processes() -> Vec<Proc> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(meta) = entry.metadata() else { continue };
            let Some((state, ppid, pgid)) = stat_fields(pid) else {
                continue;
            };
            out.push(Proc {
                pid,
                ppid,
                pgid,
                uid: meta.uid(),
                zombie: state == 'Z' || state == 'X',
                cmdline: cmdline(pid),
                marker: marker(pid),
            });
        }
        out
    }
}

/// No signals on Windows (and no orphans to send them to: see the module's comment).
#[cfg(windows)]
fn signal(_: u32, _: bool, _: Sig) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

#[cfg(windows)]
mod sys {
    use super::Proc;

    pub fn uid() -> u32 {
        0
    }

    /// Whether `pid` runs: it opens, and has no exit code yet.
    #[allow(unsafe_code)]
    pub fn alive(pid: u32) -> bool {
        use windows_sys::Win32::Foundation::{CloseHandle, STILL_ACTIVE};
        use windows_sys::Win32::System::Threading::{
            GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
        };
        if pid == 0 {
            return false;
        }
        // SAFETY: plain calls; the handle is closed below.
        unsafe {
            let handle = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
            if handle.is_null() {
                return false;
            }
            let mut code = 0u32;
            let ok = GetExitCodeProcess(handle, &mut code);
            CloseHandle(handle);
            ok != 0 && code == STILL_ACTIVE as u32
        }
    }

    pub fn looks_like_warden(_: u32) -> bool {
        false
    }

    /// A server's tree dies with its bridge's Job Object: nothing is searched for.
    pub fn processes() -> Vec<Proc> {
        Vec::new()
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
mod sys {
    use super::Proc;

    pub fn uid() -> u32 {
        rustix::process::getuid().as_raw()
    }

    pub fn alive(pid: u32) -> bool {
        i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
            .is_some_and(|p| rustix::process::test_kill_process(p).is_ok())
    }

    pub fn looks_like_warden(_: u32) -> bool {
        true
    }

    /// Without /proc the environment of other processes is not readable: nothing is found.
    pub fn processes() -> Vec<Proc> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn p(pid: u32, ppid: u32, marker: Option<&str>, cmd: &str) -> Proc {
        Proc {
            pid,
            ppid,
            pgid: pid,
            uid: 1000,
            zombie: false,
            cmdline: cmd.split(' ').map(str::to_owned).collect(),
            marker: marker.map(str::to_owned),
        }
    }

    #[test]
    fn markers_of_gone_bridges_and_parentless_known_commands() {
        let known = Known {
            sessions: HashMap::from([("77-1".to_owned(), "rg".to_owned())]),
            commands: vec![(
                "git".to_owned(),
                vec!["uvx".into(), "mcp-server-git".into()],
            )],
        };
        let procs = vec![
            p(10, 77, Some("77-1"), "npx -y mcp-ripgrep"), // bridge 77 alive
            p(11, 1, Some("78-5"), "node ripgrep.js"),     // bridge 78 gone
            p(12, 1, None, "uvx mcp-server-git"),          // no marker, no parent, known
            p(13, 400, None, "uvx mcp-server-git"),        // has a parent: not ours to judge
            p(14, 1, None, "vim"),                         // unknown command
            Proc {
                uid: 0,
                ..p(15, 1, Some("79-1"), "x")
            }, // another user's
            Proc {
                zombie: true,
                ..p(16, 1, Some("79-1"), "x")
            },
            p(99, 1, Some("79-1"), "me"), // the sweeper itself
        ];
        let found = classify(&procs, 99, 1000, &known, |pid| pid == 77);
        let pids: Vec<u32> = found.iter().map(|o| o.pid).collect();
        assert_eq!(pids, vec![11, 12]);
        assert_eq!(found[0].bridge_pid, Some(78));
        assert_eq!(found[0].reason, "its bridge (pid 78, session 78-5) is gone");
        assert_eq!(found[1].server.as_deref(), Some("git"));
    }

    /// Under a bridge on Linux: bridge 50 → reaper 51 (a fork of the bridge: its command
    /// line, no marker, leads the group) → server 52 → grandchild 53, both marked. The
    /// server is recognised by its marker; the reaper never is, even parentless.
    #[test]
    fn the_reaper_is_not_taken_for_a_server() {
        let known = Known {
            sessions: HashMap::new(),
            commands: vec![("rg".to_owned(), vec!["npx".into(), "mcp-ripgrep".into()])],
        };
        let tree = |reaper_parent| {
            vec![
                Proc {
                    pgid: 51,
                    ..p(
                        51,
                        reaper_parent,
                        None,
                        "warden bridge --server rg -- npx mcp-ripgrep",
                    )
                },
                Proc {
                    pgid: 51,
                    ..p(52, 51, Some("50-1"), "npx mcp-ripgrep")
                },
                Proc {
                    pgid: 51,
                    ..p(53, 52, Some("50-1"), "node ripgrep.js")
                },
            ]
        };
        assert!(classify(&tree(50), 99, 1000, &known, |pid| pid == 50).is_empty());
        let found = classify(&tree(1), 99, 1000, &known, |_| false);
        let pids: Vec<u32> = found.iter().map(|o| o.pid).collect();
        assert_eq!(pids, vec![52, 53]);
        assert_eq!(found[0].server.as_deref(), Some("rg"));
    }

    #[tokio::test]
    async fn stop_refuses_what_is_not_an_orphan() {
        let r = stop(&[std::process::id()], &Known::default()).await;
        assert_eq!(r.len(), 1);
        assert!(!r[0].ok);
        assert!(alive(std::process::id()));
    }
}
