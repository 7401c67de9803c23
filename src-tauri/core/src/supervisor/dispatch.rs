//! The typed API's dispatcher: each [`Request`] to one function and one [`Response`] shape.
//! The functions live with what they do: [`commands`](super::commands),
//! [`checks`](super::checks), [`status`](super::status), [`known`](super::known),
//! [`ide_host`](super::ide_host).

use std::sync::Arc;

use super::api::{ApiError, ErrorCode, Request, Response};
use super::commands::Change;
use super::service::Supervisor;
use crate::desktop::AppRequest;

impl Supervisor {
    /// Serves one request of the typed API.
    pub async fn handle(self: &Arc<Self>, request: Request) -> Response {
        match request {
            Request::Status => Response::Status(self.status()),
            Request::History {
                server,
                since_ms,
                limit,
            } => Response::History {
                entries: self.history(server.as_deref(), since_ms, limit),
            },
            Request::Restart { server } => Response::Command(self.restart(&server).await),
            Request::Fallback { server, on } => reply(
                self.set_key(&server, "force_fallback", Change::Set(on.into()))
                    .await,
                Response::Command,
            ),
            Request::Debug { server, on } => reply(
                self.set_key(&server, "debug", Change::Set(on.into())).await,
                Response::Command,
            ),
            Request::Probe {
                server,
                command,
                timeout_ms,
                env,
            } => reply(
                self.probe(server, command, timeout_ms, env).await,
                Response::Probe,
            ),
            Request::Orphans => Response::Orphans {
                orphans: self.find_orphans().await,
            },
            Request::StopOrphans { pids } => Response::Stopped {
                stopped: self.stop_orphans(&pids).await,
            },
            Request::KnownServers => Response::KnownServers {
                servers: self.known_servers(),
            },
            Request::Subscribe => Response::Subscribed,
            Request::ApproveTools { server, tools } => {
                reply(self.approve_tools(&server, &tools), Response::Command)
            }
            Request::Approvals => Response::Approvals {
                approvals: self.approvals(),
            },
            Request::ApprovalAnswer { id, allow, always } => reply(
                self.answer_approval(&id, allow, always).await,
                Response::Command,
            ),
            Request::ApprovalsForget { server, tool } => reply(
                self.forget_approvals(&server, tool.as_deref()),
                Response::Command,
            ),
            Request::Limits { server } => reply(self.limits(server).await, Response::Limits),
            Request::SetLimit {
                server,
                key,
                value,
                add,
                remove,
            } => reply(
                self.set_limit(&server, &key, value, add, remove).await,
                Response::Command,
            ),
            Request::Clients => reply(self.clients().await, Response::Clients),
            Request::ClientEdit {
                wrap,
                file,
                server,
                dry_run,
                move_secrets,
            } => reply(
                self.edit_clients(wrap, file, server, dry_run, move_secrets)
                    .await,
                |changes| Response::ClientEdit { changes },
            ),
            Request::ServerAdd {
                name,
                clients,
                command,
                args,
                env,
                secrets,
                wrap,
                dry_run,
            } => {
                let entry = crate::clients::NewEntry {
                    name,
                    command,
                    args,
                    env,
                    secret_env: secrets.keys().cloned().collect(),
                };
                reply(
                    self.add_server(entry, clients, secrets, wrap, dry_run)
                        .await,
                    |(changes, risks)| Response::ServerAdd { changes, risks },
                )
            }
            Request::ServerSwitch {
                server,
                clients,
                file,
                scope,
                enabled,
                dry_run,
            } => {
                let sel = crate::clients::Selection {
                    clients,
                    file,
                    scope,
                };
                reply(
                    self.switch_server(server, sel, enabled, dry_run).await,
                    |changes| Response::ClientEdit { changes },
                )
            }
            Request::ServerRemove {
                server,
                clients,
                plan,
                dry_run,
            } => reply(
                self.remove_server(server, clients, plan, dry_run).await,
                |(changes, plan)| Response::ServerRemove { changes, plan },
            ),
            Request::Backups => reply(self.backups().await, |backups| Response::Backups {
                backups,
            }),
            Request::Restore { id, dry_run } => {
                reply(self.restore(id, dry_run).await, Response::Restore)
            }
            Request::AutoRewrite { on, without_asking } => reply(
                self.set_auto_rewrite(on, without_asking),
                |(on, without_asking)| Response::AutoRewrite { on, without_asking },
            ),
            Request::ProbeIde { on } => {
                reply(self.set_probe_ide(on), |on| Response::ProbeIde { on })
            }
            Request::KeepUnwrapped { file, server } => {
                reply(self.keep_unwrapped(file, server).await, |servers| {
                    Response::KeptUnwrapped { servers }
                })
            }
            Request::App { request } => match self.app.get() {
                Some(app) => Response::App {
                    response: app(request).await,
                },
                None => Response::Error(ApiError::new(
                    ErrorCode::Invalid,
                    "this supervisor is `warden daemon`, not the desktop app: stop it (`warden daemon` runs in a terminal or a service) and start MCP Warden",
                )),
            },
        }
    }
}

/// What a request does, for who may ask it: the control socket serves only
/// [`Access::Observe`] to a peer in other namespaces than the supervisor's (a sandboxed
/// server, a container; [`crate::control::socket::PeerOrigin`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads the supervisor's own state (servers, sessions, history, events), or reports to
    /// it as a bridge does.
    Observe,
    /// Reads the user's files for the asker (client configs, their backups, config.toml):
    /// what a sandbox hides from the programs in it.
    ReadFiles,
    /// Runs a program, changes a file, a setting or a process, or answers for the user.
    Act,
}

impl Access {
    /// What a refused request would have done, for the refusal's message.
    pub fn what(self) -> &'static str {
        match self {
            Access::Observe => "only reads the supervisor's state",
            Access::ReadFiles => "reads your files",
            Access::Act => "acts for you",
        }
    }
}

impl Request {
    /// What this request does (the match is exhaustive: a new request must be classified).
    pub fn access(&self) -> Access {
        use Access::{Act, Observe, ReadFiles};
        let files = |dry_run: bool| if dry_run { ReadFiles } else { Act };
        match self {
            Request::Status
            | Request::History { .. }
            | Request::Orphans
            | Request::KnownServers
            | Request::Approvals
            | Request::Subscribe => Observe,
            Request::Limits { .. } | Request::Clients | Request::Backups => ReadFiles,
            Request::ClientEdit { dry_run, .. }
            | Request::ServerAdd { dry_run, .. }
            | Request::ServerSwitch { dry_run, .. }
            | Request::ServerRemove { dry_run, .. }
            | Request::Restore { dry_run, .. } => files(*dry_run),
            Request::Restart { .. }
            | Request::Fallback { .. }
            | Request::Debug { .. }
            | Request::Probe { .. }
            | Request::StopOrphans { .. }
            | Request::ApproveTools { .. }
            | Request::ApprovalAnswer { .. }
            | Request::ApprovalsForget { .. }
            | Request::SetLimit { .. }
            | Request::AutoRewrite { .. }
            | Request::KeepUnwrapped { .. }
            | Request::ProbeIde { .. } => Act,
            Request::App { request } => match request {
                AppRequest::State | AppRequest::Autostart { on: None } => Observe,
                AppRequest::Autostart { on: Some(_) } | AppRequest::Open { .. } => Act,
                AppRequest::Quit => Act,
            },
        }
    }

    /// The request's name on the wire (`probe`, `set_limit` …), for messages.
    pub fn op(&self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.get("op")?.as_str().map(str::to_owned))
            .unwrap_or_default()
    }
}

/// The answer of a request that can fail: `ok` shapes the value, an error is `Error`.
fn reply<T>(result: Result<T, ApiError>, ok: impl FnOnce(T) -> Response) -> Response {
    result.map_or_else(Response::Error, ok)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::desktop::AppResponse;
    use crate::supervisor::Options;

    /// A peer in other namespaces may read the supervisor's state; what runs, writes or
    /// reads the user's files for it is refused.
    #[test]
    fn requests_are_classified_by_what_they_do() {
        let server = || "rg".to_owned();
        let requests = [
            Request::Status,
            Request::Subscribe,
            Request::Clients,
            Request::Restore {
                id: "b".into(),
                dry_run: true,
            },
            Request::Restore {
                id: "b".into(),
                dry_run: false,
            },
            Request::Probe {
                server: None,
                command: Some(vec!["touch".into(), "/tmp/x".into()]),
                timeout_ms: None,
                env: Default::default(),
            },
            Request::SetLimit {
                server: server(),
                key: "debug".into(),
                value: None,
                add: Vec::new(),
                remove: Vec::new(),
            },
            Request::App {
                request: AppRequest::Autostart { on: None },
            },
            Request::App {
                request: AppRequest::Quit,
            },
        ];
        let got: Vec<(String, Access)> = requests.iter().map(|r| (r.op(), r.access())).collect();
        let want = [
            ("status", Access::Observe),
            ("subscribe", Access::Observe),
            ("clients", Access::ReadFiles),
            ("restore", Access::ReadFiles),
            ("restore", Access::Act),
            ("probe", Access::Act),
            ("set_limit", Access::Act),
            ("app", Access::Observe),
            ("app", Access::Act),
        ]
        .map(|(op, access)| (op.to_owned(), access));
        assert_eq!(got, want);
    }

    /// The desktop app's requests reach the handler the tray set; `warden daemon`, which sets
    /// none, says so instead.
    #[tokio::test]
    async fn app_requests_go_to_the_tray_or_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options {
            socket: dir.path().join("control.sock"),
            config: None,
            history: None,
            logs: None,
            auto_rewrite_file: None,
            ..Options::from_env()
        };
        let sup = Supervisor::new(opts).unwrap();
        let quit = || Request::App {
            request: AppRequest::Quit,
        };
        let Response::Error(e) = sup.handle(quit()).await else {
            panic!("a supervisor without the tray answered an app request")
        };
        assert_eq!(e.code, ErrorCode::Invalid);
        assert!(e.message.contains("warden daemon"), "{}", e.message);

        sup.serve_app(Arc::new(|request| {
            Box::pin(async move {
                assert_eq!(request, AppRequest::Quit);
                AppResponse::Quitting
            })
        }));
        assert_eq!(
            sup.handle(quit()).await,
            Response::App {
                response: AppResponse::Quitting
            }
        );
    }
}
