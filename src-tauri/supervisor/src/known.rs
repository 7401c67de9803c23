//! What the supervisor knows of servers it may not be running: their commands, from live
//! sessions, the history, and the detected IDE and agent configs.

use std::collections::BTreeSet;

use super::api::KnownServer;
use super::service::Supervisor;

impl Supervisor {
    /// Servers with a known command: live sessions first, then the history, then the stdio
    /// servers of the detected IDE configs.
    pub(super) fn known_commands(&self) -> Vec<(String, Vec<String>)> {
        let mut known: Vec<(String, Vec<String>)> = self
            .lock()
            .servers
            .iter()
            .filter_map(|(n, s)| s.command.clone().map(|c| (n.clone(), c)))
            .collect();
        for (name, command) in client_commands() {
            if !known.iter().any(|(n, _)| *n == name) {
                known.push((name, command));
            }
        }
        known
    }

    pub(super) fn command_of(&self, server: &str) -> Option<Vec<String>> {
        let st = self.lock();
        st.sessions
            .values()
            .find(|s| s.hello.server == server)
            .map(|s| s.hello.command.clone())
            .or_else(|| st.servers.get(server).and_then(|s| s.command.clone()))
            .or_else(|| {
                client_commands()
                    .into_iter()
                    .find(|(n, _)| n == server)
                    .map(|(_, c)| c)
            })
    }

    pub(super) fn known_servers(&self) -> Vec<KnownServer> {
        let st = self.lock();
        let live: BTreeSet<&str> = st
            .sessions
            .values()
            .map(|s| s.hello.server.as_str())
            .collect();
        let mut servers: Vec<KnownServer> = st
            .servers
            .iter()
            .map(|(name, s)| KnownServer {
                name: name.clone(),
                command: s.command.clone(),
                source: if live.contains(name.as_str()) {
                    "session"
                } else if s.command.is_some() {
                    "history"
                } else {
                    "config"
                }
                .to_owned(),
            })
            .collect();
        drop(st);
        for (name, command) in client_commands() {
            if !servers.iter().any(|s| s.name == name) {
                servers.push(KnownServer {
                    name,
                    command: Some(command),
                    source: "ide".to_owned(),
                });
            }
        }
        servers
    }
}

/// The stdio servers of the detected IDE and agent configs, with their original commands
/// (behind `warden bridge` for wrapped ones), named as the bridge would name them.
fn client_commands() -> Vec<(String, Vec<String>)> {
    let Ok(env) = warden_clients::ClientEnv::from_process() else {
        return Vec::new();
    };
    warden_clients::launches(&env)
        .into_iter()
        .map(|l| (l.name, l.command))
        .collect()
}

/// Why `warden probe --server NAME` cannot go on, and what to do.
pub fn unknown_command_message(name: &str) -> String {
    format!(
        "the command of server `{name}` is not known: Warden learns it from a detected IDE config, or when a bridge of `{name}` connects to a supervisor. Start it once through `warden bridge --server {name} -- COMMAND` while `warden daemon` or the tray app runs, or probe the command itself: `warden probe -- COMMAND [ARG]...`"
    )
}
