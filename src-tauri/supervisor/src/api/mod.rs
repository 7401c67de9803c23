//! The supervisor's one typed API: requests, responses and the event stream, declared once.
//!
//! The app's host (`warden-app`) calls [`Supervisor::handle`](super::Supervisor::handle)
//! in-process and subscribes to [`ApiEvent`]s; it and `warden daemon` serve the same enums on the control socket
//! as [`ApiMessage`] lines next to the bridges' [`Message`](warden_control::Message)s (each
//! side ignores the `type`s it does not know, so the two share one socket and one framing).
//! `warden status --json` is [`StatusReport`] (status.rs).
//!
//! This file holds the three enums of the wire and their TypeScript declarations; the types
//! they carry are in files that import nothing of it (so the desktop app's types, carried by
//! [`Request::App`], may use them): [`error`], [`status`], [`reports`] and [`clients`];
//! [`warden_rpc::bindings`] writes and checks the generated files.
//!
//! Each request is a type ([`op`]) answered by its declared variant through [`Op::answer`]:
//!
//! ```
//! use warden_supervisor::api::{ApiError, Op, Response, op};
//! let r = op::ServerSwitch::answer(Ok::<_, ApiError>(Vec::new()));
//! assert_eq!(r, Response::ClientEdit { changes: Vec::new() });
//! ```
//!
//! and a handler that gives another request's value does not compile (`server_remove`'s changes
//! and plan, for `server_switch`):
//!
//! ```compile_fail
//! use warden_supervisor::api::{ApiError, Op, op};
//! let _ = op::ServerSwitch::answer(Ok::<_, ApiError>((Vec::new(), Vec::new())));
//! ```

pub mod app;
pub mod clients;
pub mod error;
pub mod op;
pub mod reports;
pub mod status;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use warden_clients::sets::Overview;
use warden_clients::{Backup, ClientId, PlannedFile};
#[cfg(feature = "ts")]
use warden_clients::{Notice, ServerEntry};
#[cfg(feature = "ts")]
use warden_wire::events::Event;

pub use clients::{
    AddAnswer, AddSandbox, AddStep, AwaitingServer, ClientChangeKind, ClientFile, ClientsReport,
    FileChangeView, FirstStartNetwork, RestoreView, SetAnswer, SetFileView, SkippedEntry,
};
pub use error::{ApiError, ErrorCode};
pub use reports::{
    CommandOutcome, GrantReadOnly, HistoryEntry, KnownServer, LimitSource, LimitValue,
    LimitsReport, Orphan, PendingApproval, PolicyKind, ProbeReport, SessionAck, StopResult,
    ToolPolicy,
};
pub use status::{
    Health, InflightStatus, LatencyPoint, NetworkDenial, PinState, ServerStatus, SessionState,
    SessionStatus, StatusReport, SupervisorInfo, ToolStatus,
};
pub use warden_rpc::Op;
#[cfg(feature = "ts")]
pub use warden_rpc::bindings::{bindings_file, check_bindings};

/// What the UI and the command line may ask of the supervisor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Servers' health and live sessions.
    Status,
    /// Events of the history, oldest first: of one server or all, newer than `since_ms`
    /// (wall clock), at most `limit` (the newest ones).
    History(op::History),
    /// Restart the server process of every live session of `server` (acknowledged by each).
    Restart(op::Restart),
    /// `force_fallback` of `server` in config.toml; running bridges pick it up.
    Fallback(op::Fallback),
    /// `debug` of `server` in config.toml; running bridges pick it up.
    Debug(op::Debug),
    /// Probe a server: by name (its command is known from a session's hello), or a command.
    Probe(op::Probe),
    /// Server processes whose bridge is gone.
    Orphans,
    /// Stop these orphans (pids from [`Request::Orphans`]; others are refused).
    StopOrphans(op::StopOrphans),
    /// Servers the supervisor knows, with their commands (for probes and the UI).
    KnownServers,
    /// On the socket: the connection becomes an event stream ([`ApiMessage::ApiEvent`]).
    Subscribe,
    /// Approves the tool definitions `server` shows now (all when `tools` is empty), as
    /// `warden tools approve` does; running bridges release held-back tools.
    ApproveTools(op::ApproveTools),
    /// The calls of `tools_ask` tools waiting for an answer, in every session.
    Approvals,
    /// Answers held call `id` ([`PendingApproval::id`]): it runs, or fails with
    /// `tool_declined`. `always` (with `allow`): that tool of that server is not asked about
    /// again while its definition is unchanged.
    ApprovalAnswer(op::ApprovalAnswer),
    /// Forgets the `always` answers of `server` (of one tool, or all).
    ApprovalsForget(op::ApprovalsForget),
    /// Every config key for `server`: its effective value, where it comes from, its default.
    Limits(op::Limits),
    /// Sets `key` in `[servers.NAME]` of config.toml (or removes it: `value: null`) after
    /// checking it like the bridges do; running bridges pick it up.
    /// With `add` or `remove` (a list key, and no `value`): those items are added to or taken
    /// out of the list config.toml holds at the time of the edit, so that two changes of one
    /// list at once both land.
    SetLimit(op::SetLimit),
    /// The detected IDE and agent config files and their stdio servers, wrapped or not.
    Clients,
    /// Wraps (or unwraps) the stdio servers of one file (all active files when `file` is
    /// null), one server or all; `dry_run` computes the diff only.
    ClientEdit(op::ClientEdit),
    /// The backups taken before each write of an IDE config file, newest first.
    Backups,
    /// Puts a backup back (after backing up the current contents); `dry_run`: the diff only.
    Restore(op::Restore),
    /// The switch of the IDE config watcher: wrap new stdio servers automatically, after
    /// the user's approval unless `without_asking`.
    AutoRewrite(op::AutoRewrite),
    /// Keeps `server` of `file` unwrapped: auto-rewrite no longer asks about it or wraps it.
    KeepUnwrapped(op::KeepUnwrapped),
    /// The switch of probing the IDE configs' servers before they are used.
    ProbeIde(op::ProbeIde),
    /// Adds server `name` to the file of each of `clients` (through the bridge unless `wrap`
    /// is false); `secrets` go into the OS keychain, never into a file (not in a dry run).
    /// Refused, nothing written, when a file has `name` already.
    ServerAdd(op::ServerAdd),
    /// Moves `tool` of `server` to `policy` by its own entry in `tools_deny`, `tools_ask` and
    /// `tools_allow`, in one write of config.toml; running bridges pick it up.
    SetToolPolicy(op::SetToolPolicy),
    /// Turns `server` on or off in the files of `clients` (every client that has it when
    /// empty), only in `file` and only in `scope` of it when given (a row of the Manage
    /// page: `[]` is the file's own list, Claude Code's projects `["projects", "/abs/path"]`),
    /// by the client's own switch, else by keeping the entry aside.
    ServerSwitch(op::ServerSwitch),
    /// Removes `server` from the files of `clients` (all that have it when empty). With
    /// `plan` (what a dry run answered), only while every file reads as it did then: else
    /// nothing is written and the error (`W-CLIENT-CHANGED`) asks for a new preview.
    ServerRemove(op::ServerRemove),
    /// The sets of config.toml, where each is applied, the projects the clients list (and
    /// those a set was applied in), and what each client starts in each project.
    Projects,
    /// Writes set `set`'s servers, bridged, into the project files in `project` of `clients`
    /// (their user files without `project`). With `plan` (what a dry run answered), only
    /// while every file reads as it did then: else nothing is written (`W-CLIENT-CHANGED`).
    SetApply(op::SetApply),
    /// Takes out exactly the entries `SetApply` added for `set` in `project`, of `clients`
    /// (all when empty); a file it created is deleted. `plan` as for `SetApply`.
    SetRemove(op::SetRemove),
    /// What only the desktop app does, served by the app's host (`warden-app`), which hosts
    /// the supervisor; `warden daemon` answers an `invalid` error.
    App(op::App),
}

warden_rpc::pairs! {
    /// Each [`Request`] with its answer: `op::Name` is request `Name`, and the dispatcher
    /// answers it by `op::Name::answer(result)` with the value declared here.
    op: Request => Response {
        Status(StatusReport) => |r| Response::Status(r);
        History(Vec<HistoryEntry>) => |entries| Response::History { entries };
        Restart(CommandOutcome) => |r| Response::Command(r);
        Fallback(CommandOutcome) => |r| Response::Command(r);
        Debug(CommandOutcome) => |r| Response::Command(r);
        Probe(ProbeReport) => |r| Response::Probe(r);
        Orphans(Vec<Orphan>) => |orphans| Response::Orphans { orphans };
        StopOrphans(Vec<StopResult>) => |stopped| Response::Stopped { stopped };
        KnownServers(Vec<KnownServer>) => |servers| Response::KnownServers { servers };
        Subscribe(()) => |()| Response::Subscribed {};
        ApproveTools(CommandOutcome) => |r| Response::Command(r);
        Approvals(Vec<PendingApproval>) => |approvals| Response::Approvals { approvals };
        ApprovalAnswer(CommandOutcome) => |r| Response::Command(r);
        ApprovalsForget(CommandOutcome) => |r| Response::Command(r);
        Limits(LimitsReport) => |r| Response::Limits(r);
        SetLimit(CommandOutcome) => |r| Response::Command(r);
        Clients(ClientsReport) => |r| Response::Clients(r);
        ClientEdit(Vec<FileChangeView>) => |changes| Response::ClientEdit { changes };
        Backups(Vec<Backup>) => |backups| Response::Backups { backups };
        Restore(RestoreView) => |r| Response::Restore(r);
        AutoRewrite((bool, bool)) =>
            |(on, without_asking)| Response::AutoRewrite { on, without_asking };
        KeepUnwrapped(Vec<String>) => |servers| Response::KeptUnwrapped { servers };
        ProbeIde(bool) => |on| Response::ProbeIde { on };
        ServerAdd(AddAnswer) => |r| Response::ServerAdd(r);
        SetToolPolicy(CommandOutcome) => |r| Response::Command(r);
        ServerSwitch(Vec<FileChangeView>) => |changes| Response::ClientEdit { changes };
        ServerRemove((Vec<FileChangeView>, Vec<PlannedFile>)) =>
            |(changes, plan)| Response::ServerRemove { changes, plan };
        Projects(Overview) => |r| Response::Projects(r);
        SetApply(SetAnswer) => |r| Response::Set(r);
        SetRemove(SetAnswer) => |r| Response::Set(r);
        App(app::AppResponse) => |response| Response::App { response };
    }
}

impl From<ApiError> for Response {
    fn from(e: ApiError) -> Response {
        Response::Error(e)
    }
}

/// The window's event channels (Tauri events): the supervisor's [`ApiEvent`]s go to
/// `EVENTS_API`, the desktop app's [`AppEvent`](app::AppEvent)s to `EVENTS_APP`.
pub const EVENTS_API: &str = "warden://event";
pub const EVENTS_APP: &str = "warden://app";

/// The answer to a [`Request`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Response {
    Status(StatusReport),
    History {
        entries: Vec<HistoryEntry>,
    },
    Command(CommandOutcome),
    Probe(ProbeReport),
    Orphans {
        orphans: Vec<Orphan>,
    },
    Stopped {
        stopped: Vec<StopResult>,
    },
    KnownServers {
        servers: Vec<KnownServer>,
    },
    Subscribed,
    Limits(LimitsReport),
    Approvals {
        approvals: Vec<PendingApproval>,
    },
    Clients(ClientsReport),
    ClientEdit {
        changes: Vec<FileChangeView>,
    },
    /// What removing a server did (or, in a dry run, would do), and the plan to send back
    /// to apply exactly that.
    ServerRemove {
        changes: Vec<FileChangeView>,
        plan: Vec<PlannedFile>,
    },
    /// What adding a server did (or would do), and what deserves a look in its command.
    ServerAdd(AddAnswer),
    /// The sets, the projects and what each client starts there.
    Projects(Overview),
    /// What applying or removing a set did (or, in a dry run, would do), and its plan.
    Set(SetAnswer),
    Backups {
        backups: Vec<Backup>,
    },
    Restore(RestoreView),
    AutoRewrite {
        on: bool,
        without_asking: bool,
    },
    App {
        response: app::AppResponse,
    },
    KeptUnwrapped {
        servers: Vec<String>,
    },
    ProbeIde {
        on: bool,
    },
    Error(ApiError),
}

/// The event stream: what the UI redraws from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApiEvent {
    SessionOpened {
        session: SessionStatus,
    },
    /// A heartbeat (or a change of state) of a session.
    SessionUpdated {
        session: SessionStatus,
    },
    SessionClosed {
        session: String,
        server: String,
        reason: String,
    },
    /// Every event of the history as it happens.
    Event {
        entry: HistoryEntry,
    },
    /// A server's row of the status changed (sent at most once per supervisor tick).
    Server {
        server: Box<ServerStatus>,
    },
    /// A server's health changed.
    Health {
        server: String,
        health: Health,
        reason: String,
    },
    Probe {
        report: ProbeReport,
    },
    Orphans {
        orphans: Vec<Orphan>,
    },
    /// The IDE config watcher saw or did something to a client's file.
    Client {
        change: ClientChangeKind,
        client: ClientId,
        path: PathBuf,
        servers: Vec<String>,
        message: String,
    },
    /// `SetLimit`, `Fallback` or `Debug` changed config.toml.
    ConfigChanged {
        server: String,
    },
    /// A step of the add workflow of `server` (`ServerAdd` with `start` or a sandbox).
    AddProgress {
        server: String,
        step: AddStep,
    },
    /// The desktop app's state changed (published by the app's host).
    App {
        event: app::AppEvent,
    },
}

/// The typed API on the control socket, one JSON object per line like
/// [`Message`](warden_control::Message).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ApiMessage {
    ApiRequest { id: u64, request: Request },
    ApiResponse { id: u64, response: Response },
    ApiEvent { event: ApiEvent },
}

impl ApiMessage {
    pub fn to_line(&self) -> Vec<u8> {
        let mut line = serde_json::to_vec(self).unwrap_or_default();
        line.push(b'\n');
        line
    }
}

/// The TypeScript declarations of the API for the web UI (`ui/src/bindings/api.ts`).
/// Integers are `number`: every count and millisecond value stays far below 2^53.
#[cfg(feature = "ts")]
pub fn typescript() -> String {
    use ts_rs::TS;
    let cfg = ts_rs::Config::new().with_large_int("number");
    let decls = [
        Request::decl(&cfg),
        op::History::decl(&cfg),
        op::Restart::decl(&cfg),
        op::Fallback::decl(&cfg),
        op::Debug::decl(&cfg),
        op::Probe::decl(&cfg),
        op::StopOrphans::decl(&cfg),
        op::ApproveTools::decl(&cfg),
        op::ApprovalAnswer::decl(&cfg),
        op::ApprovalsForget::decl(&cfg),
        op::Limits::decl(&cfg),
        op::SetLimit::decl(&cfg),
        op::ClientEdit::decl(&cfg),
        op::Restore::decl(&cfg),
        op::AutoRewrite::decl(&cfg),
        op::KeepUnwrapped::decl(&cfg),
        op::ProbeIde::decl(&cfg),
        op::ServerAdd::decl(&cfg),
        op::SetToolPolicy::decl(&cfg),
        op::ServerSwitch::decl(&cfg),
        op::ServerRemove::decl(&cfg),
        op::SetApply::decl(&cfg),
        op::SetRemove::decl(&cfg),
        op::App::decl(&cfg),
        Response::decl(&cfg),
        ApiError::decl(&cfg),
        ErrorCode::decl(&cfg),
        StatusReport::decl(&cfg),
        SupervisorInfo::decl(&cfg),
        Health::decl(&cfg),
        ServerStatus::decl(&cfg),
        ToolStatus::decl(&cfg),
        PinState::decl(&cfg),
        LatencyPoint::decl(&cfg),
        NetworkDenial::decl(&cfg),
        SessionState::decl(&cfg),
        SessionStatus::decl(&cfg),
        InflightStatus::decl(&cfg),
        HistoryEntry::decl(&cfg),
        Event::decl(&cfg),
        PendingApproval::decl(&cfg),
        CommandOutcome::decl(&cfg),
        SessionAck::decl(&cfg),
        ProbeReport::decl(&cfg),
        warden_wire::protocol::Era::decl(&cfg),
        Orphan::decl(&cfg),
        StopResult::decl(&cfg),
        KnownServer::decl(&cfg),
        LimitsReport::decl(&cfg),
        LimitValue::decl(&cfg),
        LimitSource::decl(&cfg),
        ToolPolicy::decl(&cfg),
        GrantReadOnly::decl(&cfg),
        PolicyKind::decl(&cfg),
        ClientsReport::decl(&cfg),
        ClientFile::decl(&cfg),
        AwaitingServer::decl(&cfg),
        FileChangeView::decl(&cfg),
        AddSandbox::decl(&cfg),
        AddAnswer::decl(&cfg),
        AddStep::decl(&cfg),
        FirstStartNetwork::decl(&cfg),
        PlannedFile::decl(&cfg),
        SkippedEntry::decl(&cfg),
        RestoreView::decl(&cfg),
        SetAnswer::decl(&cfg),
        SetFileView::decl(&cfg),
        Overview::decl(&cfg),
        warden_clients::sets::SetView::decl(&cfg),
        warden_clients::sets::Applied::decl(&cfg),
        warden_clients::sets::ProjectView::decl(&cfg),
        warden_clients::sets::ProjectClient::decl(&cfg),
        warden_clients::sets::Starts::decl(&cfg),
        ClientChangeKind::decl(&cfg),
        ClientId::decl(&cfg),
        ServerEntry::decl(&cfg),
        warden_clients::EntryState::decl(&cfg),
        warden_clients::Risk::decl(&cfg),
        warden_clients::RiskKind::decl(&cfg),
        Notice::decl(&cfg),
        warden_clients::NoticeKind::decl(&cfg),
        Backup::decl(&cfg),
        ApiEvent::decl(&cfg),
        <serde_json::Value as TS>::decl(&cfg),
        warden_rpc::answers_map("Answers", "Response", Request::ANSWERS),
        format!(
            "const CHANNELS = {{ api: {EVENTS_API:?}, app: {EVENTS_APP:?} }} as const;\n\n\
             /** The kinds of the supervisor's events, which `useApi` refetches on. */\n\
             export type ApiEventKind = ApiEvent[\"kind\"];"
        ),
    ];
    bindings_file(
        "// Generated from src-tauri/supervisor/src/api/ by\n\
         // `UPDATE_BINDINGS=1 cargo test -p warden-supervisor --features ts bindings`; do not edit.\n\n\
         import type { AppEvent, AppRequest, AppResponse } from \"./app\";\n",
        &decls,
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A `server_add` as earlier windows and scripts send it (no sandbox, no first start)
    /// still reads as it did, the workflow's fields at their defaults.
    #[test]
    fn a_server_add_without_the_workflows_fields_reads_as_before() {
        let line = r#"{"op":"server_add","name":"x","clients":["cursor"],"command":"c"}"#;
        let Request::ServerAdd(add) = serde_json::from_str(line).unwrap() else {
            panic!("not a server_add")
        };
        assert_eq!(
            (
                add.wrap,
                add.sandbox,
                add.ask_destructive,
                add.start,
                add.dry_run
            ),
            (true, None, false, false, false)
        );
    }

    #[test]
    fn a_row_wraps_a_value_and_takes_the_same_value_out() {
        use super::{Response, op};
        let answer = op::AutoRewrite::wrap((true, false));
        assert_eq!(
            answer,
            Response::AutoRewrite {
                on: true,
                without_asking: false
            }
        );
        assert_eq!(op::AutoRewrite::unwrap(answer), Ok((true, false)));
        // Another request's answer comes back as it was.
        let other = Response::KeptUnwrapped { servers: vec![] };
        assert_eq!(op::AutoRewrite::unwrap(other.clone()), Err(other));
        assert_eq!(op::Subscribe::unwrap(Response::Subscribed), Ok(()));
    }

    #[test]
    fn api_lines_round_trip_and_do_not_collide_with_control_messages() {
        let m = ApiMessage::ApiRequest {
            id: 4,
            request: Request::Fallback(op::Fallback {
                server: "rg".into(),
                on: true,
            }),
        };
        let line = m.to_line();
        assert_eq!(
            String::from_utf8_lossy(&line),
            "{\"type\":\"api_request\",\"id\":4,\"request\":{\"op\":\"fallback\",\"server\":\"rg\",\"on\":true}}\n"
        );
        assert_eq!(serde_json::from_slice::<ApiMessage>(&line).unwrap(), m);
        // A bridge (or an older supervisor) sees a type it does not know, and ignores it.
        assert_eq!(warden_control::Message::from_line(&line).unwrap(), None);
        let status = serde_json::to_value(StatusReport::default()).unwrap();
        assert!(status["servers"].is_array() && status["sessions"].is_array());
    }

    /// The committed bindings match the Rust declarations (CI fails on drift).
    #[cfg(feature = "ts")]
    #[test]
    fn bindings() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/bindings/api.ts");
        let regenerate = "cargo test -p warden-supervisor --features ts bindings";
        check_bindings(&path, &typescript(), regenerate).unwrap();
    }
}
