//! The typed API's dispatcher: each [`Request`] to one function and one [`Response`] shape.
//! The functions live with what they do: [`commands`](super::commands),
//! [`checks`](super::checks), [`status`](super::status), [`known`](super::known),
//! [`ide_host`](super::ide_host).

use std::sync::Arc;

use super::api::{ApiError, ErrorCode, Request, Response};
use super::service::Supervisor;

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
                self.set_key(&server, "force_fallback", Some(on.into()))
                    .await,
                Response::Command,
            ),
            Request::Debug { server, on } => reply(
                self.set_key(&server, "debug", Some(on.into())).await,
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
            Request::Limits { server } => reply(self.limits(server).await, Response::Limits),
            Request::SetLimit { server, key, value } => reply(
                self.set_limit(&server, &key, value).await,
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
                enabled,
                dry_run,
            } => reply(
                self.switch_server(server, clients, Some(enabled), dry_run)
                    .await,
                |changes| Response::ClientEdit { changes },
            ),
            Request::ServerRemove {
                server,
                clients,
                dry_run,
            } => reply(
                self.switch_server(server, clients, None, dry_run).await,
                |changes| Response::ClientEdit { changes },
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

/// The answer of a request that can fail: `ok` shapes the value, an error is `Error`.
fn reply<T>(result: Result<T, ApiError>, ok: impl FnOnce(T) -> Response) -> Response {
    result.map_or_else(Response::Error, ok)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::desktop::{AppRequest, AppResponse};
    use crate::supervisor::Options;

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
