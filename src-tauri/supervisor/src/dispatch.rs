//! The typed API's dispatcher: each [`Request`] to one function, answered by the shape
//! `pairs!` declares for it in the API module ([`op`]).
//! The functions live with what they do: [`commands`](super::commands),
//! [`checks`](super::checks), [`status`](super::status), [`known`](super::known),
//! [`clients_host`](super::clients_host).
//!
//! Each request also says what it does ([`Request::access`]: [`Access`]). The control socket
//! (`serve`) serves a peer in other user or pid namespaces than the supervisor's only what is
//! [`Access::Observe`]; anything else gets `W-CONTROL-FOREIGN` there, logged with the peer's pid.
//! In-process callers ([`Supervisor::handle`]) are not judged.

use std::sync::Arc;

use super::api::{ApiError, ErrorCode, Op, Request, Response, op};
use super::commands::Change;
use super::service::Supervisor;
use crate::api::app::{AppRequest, app_op};

impl Supervisor {
    /// Serves one request of the typed API. Each arm answers through [`answer`] with the
    /// request's marker (`op::Name`), so it can only give the answer `pairs!` declares for it.
    pub async fn handle(self: &Arc<Self>, request: Request) -> Response {
        let asked = cfg!(debug_assertions).then(|| request.clone());
        let response = self.dispatch(request).await;
        if let Some(asked) = asked {
            debug_assert!(
                asked.answered_by(&response),
                "{} answered by {response:?}",
                asked.op()
            );
        }
        response
    }

    async fn dispatch(self: &Arc<Self>, request: Request) -> Response {
        match request {
            Request::Status => op::Status::answer(ok(self.status())),
            Request::History(op::History {
                server,
                since_ms,
                limit,
            }) => op::History::answer(ok(self.history(server.as_deref(), since_ms, limit))),
            Request::Restart(op::Restart { server }) => {
                op::Restart::answer(ok(self.restart(&server).await))
            }
            Request::Fallback(op::Fallback { server, on }) => op::Fallback::answer(
                self.set_key(&server, "force_fallback", Change::Set(on.into()))
                    .await,
            ),
            Request::Debug(op::Debug { server, on }) => {
                op::Debug::answer(self.set_key(&server, "debug", Change::Set(on.into())).await)
            }
            Request::Probe(probe) => op::Probe::answer(self.probe(probe).await),
            Request::Orphans => op::Orphans::answer(ok(self.find_orphans().await)),
            Request::StopOrphans(op::StopOrphans { pids }) => {
                op::StopOrphans::answer(ok(self.stop_orphans(&pids).await))
            }
            Request::KnownServers => op::KnownServers::answer(ok(self.known_servers())),
            Request::Subscribe => op::Subscribe::answer(ok(())),
            Request::ApproveTools(op::ApproveTools { server, tools }) => {
                op::ApproveTools::answer(self.approve_tools(&server, &tools))
            }
            Request::Approvals => op::Approvals::answer(ok(self.approvals())),
            Request::ApprovalAnswer(op::ApprovalAnswer { id, allow, always }) => {
                op::ApprovalAnswer::answer(self.answer_approval(&id, allow, always).await)
            }
            Request::ApprovalsForget(op::ApprovalsForget { server, tool }) => {
                op::ApprovalsForget::answer(self.forget_approvals(&server, tool.as_deref()))
            }
            Request::Limits(op::Limits { server }) => op::Limits::answer(self.limits(server).await),
            Request::SetLimit(op::SetLimit {
                server,
                key,
                value,
                add,
                remove,
            }) => op::SetLimit::answer(self.set_limit(&server, &key, value, add, remove).await),
            Request::Clients => op::Clients::answer(self.clients().await),
            Request::ClientEdit(op::ClientEdit {
                wrap,
                file,
                server,
                dry_run,
                move_secrets,
            }) => op::ClientEdit::answer(
                self.edit_clients(wrap, file, server, dry_run, move_secrets)
                    .await,
            ),
            Request::ServerAdd(op::ServerAdd {
                name,
                clients,
                command,
                args,
                url,
                headers,
                env,
                secrets,
                wrap,
                sandbox,
                ask_destructive,
                start,
                dry_run,
            }) => {
                let entry = warden_clients::NewEntry {
                    name,
                    command,
                    args,
                    env,
                    secret_env: secrets.keys().cloned().collect(),
                    url,
                    headers,
                };
                let add = crate::flows::add::Add {
                    entry,
                    clients,
                    secrets,
                    warden: None,
                    sandbox,
                    ask_destructive,
                    start,
                };
                op::ServerAdd::answer(self.add_server(add, wrap, dry_run).await)
            }
            Request::SetToolPolicy(op::SetToolPolicy {
                server,
                tool,
                policy,
            }) => op::SetToolPolicy::answer(self.set_tool_policy(&server, &tool, policy).await),
            Request::ServerSwitch(op::ServerSwitch {
                server,
                clients,
                file,
                scope,
                enabled,
                dry_run,
            }) => {
                let sel = warden_clients::Selection {
                    clients,
                    file,
                    scope,
                };
                op::ServerSwitch::answer(self.switch_server(server, sel, enabled, dry_run).await)
            }
            Request::ServerRemove(op::ServerRemove {
                server,
                clients,
                plan,
                dry_run,
            }) => {
                op::ServerRemove::answer(self.remove_server(server, clients, plan, dry_run).await)
            }
            Request::Projects => op::Projects::answer(self.projects().await),
            Request::SetApply(apply) => op::SetApply::answer(self.apply_set(apply).await),
            Request::SetRemove(remove) => op::SetRemove::answer(self.remove_set(remove).await),
            Request::Backups => op::Backups::answer(self.backups().await),
            Request::Restore(op::Restore { id, dry_run }) => {
                op::Restore::answer(self.restore(id, dry_run).await)
            }
            Request::AutoRewrite(op::AutoRewrite { on, without_asking }) => {
                op::AutoRewrite::answer(self.set_auto_rewrite(on, without_asking))
            }
            Request::ProbeIde(op::ProbeIde { on }) => op::ProbeIde::answer(self.set_probe_ide(on)),
            Request::KeepUnwrapped(op::KeepUnwrapped { file, server }) => {
                op::KeepUnwrapped::answer(self.keep_unwrapped(file, server).await)
            }
            Request::App(op::App { request }) => op::App::answer(match self.app.get() {
                Some(app) => Ok(app(request).await),
                None => Err(ApiError::new(
                    ErrorCode::Invalid,
                    "this supervisor is `warden daemon`, not the desktop app: stop it (`warden daemon` runs in a terminal or a service) and start MCP Warden",
                )),
            }),
        }
    }
}

/// A handler's value that cannot fail.
fn ok<T>(value: T) -> Result<T, ApiError> {
    Ok(value)
}

/// What a request does, for who may ask it: the control socket serves only
/// [`Access::Observe`] to a peer in other namespaces than the supervisor's (a sandboxed
/// server, a container; [`warden_control::socket::PeerOrigin`]).
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
            | Request::History(op::History { .. })
            | Request::Orphans
            | Request::KnownServers
            | Request::Approvals
            | Request::Subscribe => Observe,
            Request::Limits(op::Limits { .. })
            | Request::Clients
            | Request::Backups
            | Request::Projects => ReadFiles,
            Request::ClientEdit(op::ClientEdit { dry_run, .. })
            | Request::ServerAdd(op::ServerAdd { dry_run, .. })
            | Request::ServerSwitch(op::ServerSwitch { dry_run, .. })
            | Request::ServerRemove(op::ServerRemove { dry_run, .. })
            | Request::SetApply(op::SetApply { dry_run, .. })
            | Request::SetRemove(op::SetRemove { dry_run, .. })
            | Request::Restore(op::Restore { dry_run, .. }) => files(*dry_run),
            Request::Restart(op::Restart { .. })
            | Request::Fallback(op::Fallback { .. })
            | Request::Debug(op::Debug { .. })
            | Request::Probe(op::Probe { .. })
            | Request::StopOrphans(op::StopOrphans { .. })
            | Request::ApproveTools(op::ApproveTools { .. })
            | Request::ApprovalAnswer(op::ApprovalAnswer { .. })
            | Request::ApprovalsForget(op::ApprovalsForget { .. })
            | Request::SetLimit(op::SetLimit { .. })
            | Request::SetToolPolicy(op::SetToolPolicy { .. })
            | Request::AutoRewrite(op::AutoRewrite { .. })
            | Request::KeepUnwrapped(op::KeepUnwrapped { .. })
            | Request::ProbeIde(op::ProbeIde { .. }) => Act,
            Request::App(op::App { request }) => match request {
                AppRequest::State
                | AppRequest::Signins
                | AppRequest::Autostart(app_op::Autostart { on: None }) => Observe,
                AppRequest::SignIn(app_op::SignIn { .. }) => Act,
                AppRequest::Autostart(app_op::Autostart { on: Some(_) })
                | AppRequest::Open(app_op::Open { .. }) => Act,
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::Options;
    use crate::api::app::AppResponse;

    /// A peer in other namespaces may read the supervisor's state; what runs, writes or
    /// reads the user's files for it is refused.
    #[test]
    fn requests_are_classified_by_what_they_do() {
        let server = || "rg".to_owned();
        // A preview reads the clients' files; a write, and the first start it may run, act.
        let add = |dry_run, start| {
            Request::ServerAdd(op::ServerAdd {
                name: server(),
                clients: Vec::new(),
                command: "rg".into(),
                args: Vec::new(),
                url: None,
                headers: Vec::new(),
                env: Default::default(),
                secrets: Default::default(),
                wrap: true,
                sandbox: None,
                ask_destructive: false,
                start,
                dry_run,
            })
        };
        let set_apply = |dry_run| {
            Request::SetApply(op::SetApply {
                set: "web".into(),
                project: None,
                clients: Vec::new(),
                plan: None,
                dry_run,
            })
        };
        let requests = [
            Request::Status,
            Request::Subscribe,
            Request::Clients,
            Request::Restore(op::Restore {
                id: "b".into(),
                dry_run: true,
            }),
            Request::Restore(op::Restore {
                id: "b".into(),
                dry_run: false,
            }),
            Request::Probe(op::Probe {
                server: None,
                command: Some(vec!["touch".into(), "/tmp/x".into()]),
                timeout_ms: None,
                env: Default::default(),
                cwd: None,
            }),
            Request::SetLimit(op::SetLimit {
                server: server(),
                key: "debug".into(),
                value: None,
                add: Vec::new(),
                remove: Vec::new(),
            }),
            Request::SetToolPolicy(op::SetToolPolicy {
                server: server(),
                tool: "push".into(),
                policy: super::super::api::PolicyKind::Allow,
            }),
            add(true, false),
            add(false, true),
            Request::Projects,
            set_apply(true),
            set_apply(false),
            Request::App(op::App {
                request: AppRequest::Autostart(app_op::Autostart { on: None }),
            }),
            Request::App(op::App {
                request: AppRequest::Quit,
            }),
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
            ("set_tool_policy", Access::Act),
            ("server_add", Access::ReadFiles),
            ("server_add", Access::Act),
            ("projects", Access::ReadFiles),
            ("set_apply", Access::ReadFiles),
            ("set_apply", Access::Act),
            ("app", Access::Observe),
            ("app", Access::Act),
        ]
        .map(|(op, access)| (op.to_owned(), access));
        assert_eq!(got, want);
    }

    /// A request is answered by the variant `pairs!` declares for it or an error, never by
    /// another request's (`server_switch` is answered by `client_edit`, not `server_remove`).
    #[test]
    fn each_request_has_its_declared_answer() {
        let switch = Request::ServerSwitch(op::ServerSwitch {
            server: "rg".into(),
            clients: Vec::new(),
            file: None,
            scope: None,
            enabled: false,
            dry_run: true,
        });
        let edit = Response::ClientEdit {
            changes: Vec::new(),
        };
        let removal = Response::ServerRemove {
            changes: Vec::new(),
            plan: Vec::new(),
        };
        let error = Response::Error(ApiError::new(ErrorCode::Invalid, "no"));
        assert!(switch.answered_by(&edit) && switch.answered_by(&error));
        assert!(!switch.answered_by(&removal));
        assert_eq!(
            op::ServerSwitch::answer(Ok::<_, ApiError>(Vec::new())),
            edit
        );
        let ops: Vec<String> = Request::ANSWERS
            .iter()
            .map(|(op, _)| warden_rpc::snake(op))
            .collect();
        assert!(ops.contains(&switch.op()) && ops.len() == 31, "{ops:?}");
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
        let quit = || {
            Request::App(op::App {
                request: AppRequest::Quit,
            })
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
