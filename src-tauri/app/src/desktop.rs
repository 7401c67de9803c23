//! What only the desktop app does with its requests ([`AppRequest`], declared with the
//! supervisor's API): the tray's health, the notifications' texts, opening files, start at
//! login, and a GTK workaround. The app's host serves them as `Request::App` on the control
//! socket, and pushes its state as `ApiEvent::App`; the window (`warden-app --window`)
//! forwards both to the UI.
//!
//! The desktop side effects go through [`Desktop`], so the dispatch is tested without a display.

use std::path::{Path, PathBuf};

pub use warden_supervisor::api::app::{
    AppEvent, AppHandler, AppRequest, AppResponse, AppState, Notification, OpenTarget, Signin,
    TrayHealth, app_op,
};
use warden_supervisor::api::error::{ApiError, ErrorCode};
use warden_supervisor::api::status::Health;
use warden_supervisor::api::{ApiEvent, ClientChangeKind, PendingApproval};

/// The tray health for a set of server healths: the worst one (by [`Health::rank`]) wins.
pub fn tray_health(healths: impl IntoIterator<Item = Health>) -> TrayHealth {
    healths
        .into_iter()
        .max_by_key(|h| h.rank())
        .map_or(TrayHealth::Idle, TrayHealth::from)
}

/// The desktop notification an event deserves, if any: its title and body, through
/// [`notification_text`].
pub fn notification(event: &ApiEvent) -> Option<(String, String)> {
    let (title, body) = match event {
        ApiEvent::Health {
            server,
            health: Health::Down,
            reason,
        } => (format!("{server} is down"), reason.clone()),
        ApiEvent::Event { entry } if matches!(&*entry.event.kind, "tool_changed" | "tool_new") => {
            let tool = entry.event.tool.as_deref().unwrap_or("?");
            (
                format!("{}: tool {tool} is not as pinned", entry.server),
                format!(
                    "{}. Review and approve it on the server's page.",
                    entry
                        .event
                        .detail
                        .as_deref()
                        .unwrap_or("its definition changed")
                ),
            )
        }
        ApiEvent::Event { entry } if entry.event.kind == "signin_waiting" => (
            format!("{} waits for your sign-in", entry.server),
            "A browser window opened to sign in to this remote server. Finish there; every client then uses the sign-in.".to_owned(),
        ),
        ApiEvent::Client {
            change: ClientChangeKind::Awaiting,
            message,
            ..
        } => (
            "A new MCP server awaits your approval".into(),
            message.clone(),
        ),
        ApiEvent::Client {
            change: ClientChangeKind::Reverted | ClientChangeKind::GaveUp,
            message,
            ..
        } => ("A client reverted Warden's edit".into(), message.clone()),
        _ => return None,
    };
    Some(notification_text(&title, &body))
}

/// A notification's title and body as the desktop (and the window's list of them) shows them:
/// through the printable-text rule ([`warden_wire::text`]: the title on one line, the body's lines
/// kept), and with no markup character, since some notification servers read the body as
/// markup (`<b>`, `<a href=…>`, `&amp;`): `<`, `>` and `&` are shown as `‹`, `›` and `＆`.
pub fn notification_text(title: &str, body: &str) -> (String, String) {
    let unmarked = |s: String| {
        s.chars()
            .map(|c| match c {
                '<' => '‹',
                '>' => '›',
                '&' => '＆',
                c => c,
            })
            .collect()
    };
    (
        unmarked(warden_wire::text::line(title)),
        unmarked(warden_wire::text::lines(body)),
    )
}

/// The longest arguments text a held call's notification shows (the window shows more).
const NOTICE_ARGS_CHARS: usize = 160;

/// The buttons of a held call's notification: the action's key and its label. The desktop's
/// `default` action (a click on the notification itself) opens the window.
pub const APPROVAL_ACTIONS: [(&str, &str); 3] = [
    ("allow", "Allow"),
    ("always", "Always allow"),
    ("deny", "Deny"),
];

/// The notification of held call `a` (`tools_ask`): which server wants to run which tool,
/// with which arguments (as the bridge shows them: secrets redacted, long values cut; cut
/// shorter here), through [`notification_text`].
pub fn approval_notification(a: &PendingApproval) -> (String, String) {
    let mut args = a.args.clone();
    if args.chars().count() > NOTICE_ARGS_CHARS {
        args = args.chars().take(NOTICE_ARGS_CHARS).collect::<String>() + "…";
    }
    let with = if args == "{}" {
        String::new()
    } else {
        format!(" with {args}")
    };
    let secs = a.left_ms.div_ceil(1000);
    notification_text(
        &format!("{} wants to run {}", a.server, a.tool),
        &format!(
            "Tool {} of {}{with}. Refused in {secs} s unless you allow it.",
            a.tool, a.server
        ),
    )
}

/// What the host does with a held call: a notification with [`APPROVAL_ACTIONS`] where the
/// desktop shows actions; else a plain one, and the window (which lists the call on top of
/// every page) is opened, so that the call can be answered at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalPresentation {
    Actions,
    OpenWindow,
}

/// The presentation for a notification server's capabilities (`Err`: none answers).
pub fn approval_presentation<E>(capabilities: Result<&[String], E>) -> ApprovalPresentation {
    match capabilities {
        Ok(caps) if caps.iter().any(|c| c == "actions") => ApprovalPresentation::Actions,
        _ => ApprovalPresentation::OpenWindow,
    }
}

/// What an action of a held call's notification does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalAction {
    /// [`Request::ApprovalAnswer`](crate::api::Request::ApprovalAnswer).
    Answer { allow: bool, always: bool },
    /// The notification itself was clicked.
    OpenWindow,
    /// Dismissed, expired or withdrawn: the call still waits in the window.
    Nothing,
}

pub fn approval_action(action: &str) -> ApprovalAction {
    match action {
        "allow" => ApprovalAction::Answer {
            allow: true,
            always: false,
        },
        "always" => ApprovalAction::Answer {
            allow: true,
            always: true,
        },
        "deny" => ApprovalAction::Answer {
            allow: false,
            always: false,
        },
        "default" => ApprovalAction::OpenWindow,
        _ => ApprovalAction::Nothing,
    }
}

/// The held calls the host has notified: each call is notified once, and its notification is
/// withdrawn once the call is no longer held (answered anywhere, timed out, or its session
/// gone). Approval ids are never reused, so an answered call is never notified again.
#[derive(Debug, Default)]
pub struct ApprovalNotices {
    shown: std::collections::BTreeSet<String>,
}

impl ApprovalNotices {
    /// The calls to notify now (held, not yet notified), and the ids whose notification to
    /// withdraw (notified, no longer held).
    pub fn update<'a>(
        &mut self,
        held: &'a [PendingApproval],
    ) -> (Vec<&'a PendingApproval>, Vec<String>) {
        let now: std::collections::BTreeSet<&str> = held.iter().map(|a| a.id.as_str()).collect();
        let gone: Vec<String> = self
            .shown
            .iter()
            .filter(|id| !now.contains(id.as_str()))
            .cloned()
            .collect();
        for id in &gone {
            self.shown.remove(id);
        }
        let new = held
            .iter()
            .filter(|a| self.shown.insert(a.id.clone()))
            .collect();
        (new, gone)
    }
}

/// `name` in the directory of the running executable, where the app's programs sit side by
/// side (`/usr/bin` in the .deb, `target/debug` in a dev build).
pub fn beside_me(name: &str) -> PathBuf {
    let me = std::env::current_exe().unwrap_or_default();
    me.with_file_name(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// Keeps GTK from loading the GL driver at start: on X11 it picks its visuals by asking the
/// driver, and Mesa then maps its whole driver (LLVM included), about 50 MB resident in a
/// process that never draws with GDK's GL (WebKit renders in its own process). Wayland loads GL
/// only on demand. A `GDK_GL` the user set wins.
///
/// # Safety
///
/// It sets an environment variable: call it first thing in `main`, while the process has one
/// thread, so that no other thread reads the environment meanwhile.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub unsafe fn keep_gtk_off_gl() {
    if std::env::var_os("GDK_GL").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
        // SAFETY: the caller's promise, one thread.
        unsafe { std::env::set_var("GDK_GL", "disable") };
    }
}

/// The desktop side effects of [`AppRequest`]s.
pub trait Desktop {
    fn state(&self) -> AppState;
    fn autostart(&self) -> Result<bool, String>;
    fn set_autostart(&self, on: bool) -> Result<(), String>;
    /// Opens `path` with the user's default application.
    fn open(&self, path: &Path) -> Result<(), String>;
    fn quit(&self);
    /// Paths the host knows: config.toml, the state dir, and the IDE config files listed.
    fn config_path(&self) -> Option<PathBuf>;
    fn state_dir(&self) -> PathBuf;
    fn client_files(&self) -> Vec<PathBuf>;
    /// Runs the `warden` CLI with `args` (never a shell): what it printed, or the last line
    /// of its error.
    fn warden(&self, args: &[&str]) -> Result<String, String>;
}

/// Carries out one [`AppRequest`], answered as [`app_op`] declares.
pub fn dispatch(desktop: &dyn Desktop, request: AppRequest) -> AppResponse {
    use warden_rpc::Op;
    let asked = cfg!(debug_assertions).then(|| request.clone());
    let response = match request {
        AppRequest::State => app_op::State::answer(Ok::<_, ApiError>(desktop.state())),
        AppRequest::Autostart(app_op::Autostart { on: None }) => {
            app_op::Autostart::answer(desktop.autostart().map_err(|e| {
                ApiError::new(
                    ErrorCode::Io,
                    format!("cannot read the start-at-login setting: {e}"),
                )
            }))
        }
        AppRequest::Autostart(app_op::Autostart { on: Some(on) }) => {
            app_op::Autostart::answer(desktop.set_autostart(on).map(|()| on).map_err(|e| {
                ApiError::new(
                    ErrorCode::Io,
                    format!("cannot change the start-at-login setting: {e}"),
                )
            }))
        }
        AppRequest::Open(app_op::Open { target }) => app_op::Open::answer(open(desktop, target)),
        AppRequest::Quit => {
            desktop.quit();
            app_op::Quit::answer(Ok::<_, ApiError>(()))
        }
        AppRequest::Signins => app_op::Signins::answer(signins(desktop)),
        AppRequest::SignIn(app_op::SignIn { server, out }) => {
            // `--`: a name cannot be read as an option of the CLI.
            let verb = if out { "logout" } else { "login" };
            let said = desktop.warden(&["auth", verb, "--", &server]);
            app_op::SignIn::answer(said.map(|s| s.trim().to_owned()).map_err(|e| {
                let code = if e.contains("no remote server") {
                    ErrorCode::NotFound
                } else {
                    ErrorCode::Io
                };
                ApiError::new(code, e)
            }))
        }
    };
    if let Some(asked) = asked {
        debug_assert!(
            asked.answered_by(&response),
            "{asked:?} answered by {response:?}"
        );
    }
    response
}

/// `warden auth list --json`, read.
fn signins(desktop: &dyn Desktop) -> Result<Vec<Signin>, ApiError> {
    let printed = desktop
        .warden(&["auth", "list", "--json"])
        .map_err(|e| ApiError::new(ErrorCode::Io, e))?;
    serde_json::from_str(&printed).map_err(|e| {
        ApiError::new(
            ErrorCode::Io,
            format!("`warden auth list --json` printed what the app does not read ({e}); is the warden CLI of another version?"),
        )
    })
}

/// Opens `target` with the user's default application: the path it opened.
fn open(desktop: &dyn Desktop, target: OpenTarget) -> Result<PathBuf, ApiError> {
    let error = |code, message: String| Err(ApiError::new(code, message));
    let path = match target {
        OpenTarget::Config => match desktop.config_path() {
            Some(p) => p,
            None => {
                return error(
                    ErrorCode::NotFound,
                    "no config file is known (set WARDEN_CONFIG or create ~/.config/warden/config.toml)".to_owned(),
                );
            }
        },
        OpenTarget::EventLog { server } => {
            warden_config::paths::server_path(&desktop.state_dir().join("logs"), &server, ".jsonl")
        }
        OpenTarget::DebugLog { server } => warden_config::paths::server_path(
            &desktop.state_dir().join("logs"),
            &server,
            ".debug.jsonl",
        ),
        OpenTarget::ClientFile { path } => {
            // Only files Warden lists: the webview cannot open arbitrary paths.
            if !desktop.client_files().contains(&path) {
                return error(
                    ErrorCode::NotFound,
                    format!("{} is not a detected client config file", path.display()),
                );
            }
            path
        }
        OpenTarget::StateDir => desktop.state_dir(),
        OpenTarget::AppLog => desktop.state_dir().join(warden_config::paths::APP_LOG),
    };
    if !path.exists() {
        return error(
            ErrorCode::NotFound,
            format!(
                "{} does not exist yet (a log appears once the server ran through the bridge; config.toml once a setting is saved)",
                path.display()
            ),
        );
    }
    match desktop.open(&path) {
        Ok(()) => Ok(path),
        Err(e) => error(
            ErrorCode::Io,
            format!("cannot open {}: {e}", path.display()),
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::cell::RefCell;

    use super::*;

    #[derive(Default)]
    struct FakeDesktop {
        dir: PathBuf,
        opened: RefCell<Vec<PathBuf>>,
        autostart: RefCell<bool>,
        quit: RefCell<bool>,
        ran: RefCell<Vec<String>>,
    }

    impl Desktop for FakeDesktop {
        fn state(&self) -> AppState {
            AppState {
                tray: TrayHealth::Idle,
                tooltip: "MCP Warden".into(),
                supervisor_error: None,
                sidecar_error: None,
                notifications: Vec::new(),
                version: "0".into(),
            }
        }
        fn autostart(&self) -> Result<bool, String> {
            Ok(*self.autostart.borrow())
        }
        fn set_autostart(&self, on: bool) -> Result<(), String> {
            *self.autostart.borrow_mut() = on;
            Ok(())
        }
        fn open(&self, path: &Path) -> Result<(), String> {
            self.opened.borrow_mut().push(path.to_owned());
            Ok(())
        }
        fn quit(&self) {
            *self.quit.borrow_mut() = true;
        }
        fn config_path(&self) -> Option<PathBuf> {
            Some(self.dir.join("config.toml"))
        }
        fn state_dir(&self) -> PathBuf {
            self.dir.join("state")
        }
        fn warden(&self, args: &[&str]) -> Result<String, String> {
            self.ran.borrow_mut().push(args.join(" "));
            match args {
                ["auth", "list", "--json"] => Ok(r#"[{"name":"gh","url":"https://mcp.example/mcp","clients":["cursor"],"signin":"expired","issuer":"https://auth.example","expires_at":5,"refreshable":true}]"#.into()),
                ["auth", "login", "--", "gh"] => Ok("Signed in to `gh`\n".into()),
                _ => Err("warden: no remote server `x`".into()),
            }
        }
        fn client_files(&self) -> Vec<PathBuf> {
            vec![self.dir.join("mcp.json")]
        }
    }

    #[test]
    fn open_resolves_targets_and_refuses_what_is_not_listed() {
        let dir = tempfile::tempdir().unwrap();
        let desktop = FakeDesktop {
            dir: dir.path().to_owned(),
            ..FakeDesktop::default()
        };
        let logs = dir.path().join("state/logs");
        std::fs::create_dir_all(&logs).unwrap();
        // Where the bridge writes it: the name's stem and its hash.
        let log = logs.join(format!(
            "{}.jsonl",
            warden_config::paths::file_stem("my server")
        ));
        std::fs::write(&log, "").unwrap();
        let r = dispatch(
            &desktop,
            AppRequest::Open(app_op::Open {
                target: OpenTarget::EventLog {
                    server: "my server".into(),
                },
            }),
        );
        assert_eq!(r, AppResponse::Opened { path: log });
        // Missing files: a clear error, nothing opened.
        let r = dispatch(
            &desktop,
            AppRequest::Open(app_op::Open {
                target: OpenTarget::Config,
            }),
        );
        let AppResponse::Error(e) = r else {
            panic!("{r:?}")
        };
        assert_eq!(e.code, ErrorCode::NotFound);
        assert!(e.message.contains("does not exist yet"), "{}", e.message);
        // The webview cannot make the app open any path.
        let r = dispatch(
            &desktop,
            AppRequest::Open(app_op::Open {
                target: OpenTarget::ClientFile {
                    path: "/etc/passwd".into(),
                },
            }),
        );
        assert!(matches!(
            r,
            AppResponse::Error(ApiError {
                code: ErrorCode::NotFound,
                ..
            })
        ));
        assert_eq!(desktop.opened.borrow().len(), 1);
    }

    #[test]
    fn sign_ins_are_read_from_the_cli_and_a_name_is_never_an_option() {
        let desktop = FakeDesktop::default();
        let listed = dispatch(&desktop, AppRequest::Signins);
        let signed = dispatch(
            &desktop,
            AppRequest::SignIn(app_op::SignIn {
                server: "gh".into(),
                out: false,
            }),
        );
        let AppResponse::Signins { servers } = listed else {
            panic!("{listed:?}")
        };
        assert_eq!(
            (
                servers[0].signin,
                signed,
                desktop.ran.borrow().last().cloned()
            ),
            (
                warden_supervisor::api::app::SigninState::Expired,
                AppResponse::SignedIn {
                    message: "Signed in to `gh`".into()
                },
                Some("auth login -- gh".into())
            )
        );
    }

    #[test]
    fn autostart_and_quit_reach_the_host() {
        let desktop = FakeDesktop::default();
        assert_eq!(
            dispatch(
                &desktop,
                AppRequest::Autostart(app_op::Autostart { on: Some(true) })
            ),
            AppResponse::Autostart { on: true }
        );
        assert_eq!(
            dispatch(
                &desktop,
                AppRequest::Autostart(app_op::Autostart { on: None })
            ),
            AppResponse::Autostart { on: true }
        );
        assert_eq!(dispatch(&desktop, AppRequest::Quit), AppResponse::Quitting);
        assert!(*desktop.quit.borrow());
    }

    #[test]
    fn the_worst_health_wins() {
        assert_eq!(tray_health([]), TrayHealth::Idle);
        assert_eq!(
            tray_health([Health::Idle, Health::Healthy]),
            TrayHealth::Healthy
        );
        assert_eq!(
            tray_health([Health::Healthy, Health::Fallback]),
            TrayHealth::Degraded
        );
        assert_eq!(
            tray_health([Health::Down, Health::Degraded, Health::Healthy]),
            TrayHealth::Down
        );
    }

    /// A server's name, a down reason and a tool change's detail reach the desktop with no
    /// markup character and no control character: a notification server that reads markup
    /// shows them as written.
    #[test]
    fn a_notification_holds_no_markup_or_control_character() {
        let event = ApiEvent::Health {
            server: "<b>srv</b>".into(),
            health: Health::Down,
            reason: "exited: <a href=\"https://x.invalid\">fix</a> &amp; \x1b[2J\u{202e}".into(),
        };
        let (title, body) = notification(&event).unwrap();
        let shown = format!("{title}{body}");
        assert!(
            !shown.contains(['<', '>', '&', '\x1b', '\u{202e}']),
            "{shown}"
        );
    }

    fn held(id: &str, tool: &str, args: &str) -> PendingApproval {
        PendingApproval {
            id: id.into(),
            server: "gh".into(),
            session: "s1".into(),
            tool: tool.into(),
            args: args.into(),
            age_ms: 100,
            left_ms: 44_100,
            client_asked: false,
        }
    }

    /// One notification per held call: a call is notified once, whatever the number of
    /// updates, its notification withdrawn once it is no longer held, and never shown again.
    #[test]
    fn each_held_call_is_notified_once_and_withdrawn_once_answered() {
        let mut notices = ApprovalNotices::default();
        let (a, b) = (held("a1", "rm", "{}"), held("b2", "push", "{}"));
        let ids =
            |v: Vec<&PendingApproval>| v.into_iter().map(|a| a.id.clone()).collect::<Vec<_>>();
        let (new, gone) = notices.update(std::slice::from_ref(&a));
        assert_eq!((ids(new), gone), (vec!["a1".to_owned()], vec![]));
        let both = [a.clone(), b.clone()];
        let (new, gone) = notices.update(&both);
        assert_eq!((ids(new), gone), (vec!["b2".to_owned()], vec![]));
        let (new, gone) = notices.update(&both);
        assert_eq!((ids(new), gone), (vec![], vec![]), "not repeated");
        let (new, gone) = notices.update(std::slice::from_ref(&b));
        assert_eq!(
            (ids(new), gone),
            (vec![], vec!["a1".to_owned()]),
            "a1 answered"
        );
        let (new, gone) = notices.update(&[]);
        assert_eq!((ids(new), gone), (vec![], vec!["b2".to_owned()]));
        assert_eq!(notices.update(&[]), (vec![], vec![]), "withdrawn once");
    }

    /// The actions answer as the window's buttons do; a click opens the window; a dismissal
    /// (or anything else a notification server sends) answers nothing.
    #[test]
    fn notification_actions_answer_or_open_the_window() {
        let answer = |allow, always| ApprovalAction::Answer { allow, always };
        let keys: Vec<ApprovalAction> = APPROVAL_ACTIONS
            .iter()
            .map(|(k, _)| approval_action(k))
            .collect();
        assert_eq!(
            keys,
            [
                answer(true, false),
                answer(true, true),
                answer(false, false)
            ]
        );
        assert_eq!(approval_action("default"), ApprovalAction::OpenWindow);
        for other in ["__closed", "", "Allow", "ALLOW"] {
            assert_eq!(approval_action(other), ApprovalAction::Nothing, "{other}");
        }
    }

    /// Buttons only where the notification server says it shows actions; else (and with no
    /// notification server at all) the window opens.
    #[test]
    fn the_window_opens_where_the_desktop_shows_no_actions() {
        let caps = |c: &[&str]| c.iter().map(|s| (*s).to_owned()).collect::<Vec<String>>();
        let with = caps(&["body", "actions", "persistence"]);
        let without = caps(&["body", "body-markup"]);
        assert_eq!(
            approval_presentation::<()>(Ok(&with)),
            ApprovalPresentation::Actions
        );
        assert_eq!(
            approval_presentation::<()>(Ok(&without)),
            ApprovalPresentation::OpenWindow
        );
        assert_eq!(
            approval_presentation(Err("no notification server")),
            ApprovalPresentation::OpenWindow
        );
    }

    /// A held call's notification names the server, the tool and the arguments as the bridge
    /// redacted them, cut short, with no markup or control character from the server's text.
    #[test]
    fn a_held_calls_notification_is_printable_unmarked_and_short() {
        let mut a = held(
            "a1",
            "rm\u{202e}<b>x</b>\n",
            &format!(
                "{{\"path\":\"/tmp/&x\",\"token\":\"[redacted]\",\"long\":\"{}\"}}",
                "y".repeat(400)
            ),
        );
        a.server = "g\x1bh".into();
        let (title, body) = approval_notification(&a);
        let shown = format!("{title}{body}");
        assert!(
            !shown.contains(['<', '>', '&', '\x1b', '\u{202e}']),
            "{shown}"
        );
        assert!(!title.contains('\n'), "{title}");
        assert!(
            body.contains("[redacted]") && body.contains("Refused in 45 s"),
            "{body}"
        );
        assert!(body.chars().count() < 300, "{body}");
        let (_, bare) = approval_notification(&held("b", "ls", "{}"));
        assert_eq!(bare, "Tool ls of gh. Refused in 45 s unless you allow it.");
    }
}
