//! The tray: an icon per worst health, a tooltip that says which servers and why, and a menu
//! with each server (restart, fallback to ripgrep, debug logging, open log), the
//! auto-rewrite switch, Open Warden and Quit; above them, the error of a broken `warden` CLI.
//! [`Model`] is computed from the supervisor's API without a display; [`draw`] draws it (on
//! the event loop's thread). Menu items call the supervisor API, the same functions the window
//! uses.
//!
//! The tooltip and the menu count the servers awaiting approval. The count comes from the
//! supervisor's clients report, which reads the IDE configs, so the host recounts it only at its
//! start and after a config changed (`ApiEvent::ConfigChanged`, `ApiEvent::Client`) or the
//! auto-rewrite switch did; otherwise the tray keeps the last count.

use crate::desktop::{self as commands, TrayHealth};
use serde_json::Value as Json;
use tauri::image::Image;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::{MouseButton, MouseButtonState, TrayIcon, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Runtime};
use warden_supervisor::api::op;
use warden_supervisor::api::{Health, LimitsReport, Request, Response, StatusReport};

/// What a menu item does. Its menu id is [`MenuId::id`], read back by [`MenuId::parse`]:
/// `<action>` for the fixed items, `<action>\u{1f}<server>` for a server's. Items that do
/// nothing (a server's reason, "No servers yet", the sidecar's error) get ids of Tauri's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MenuId {
    Open,
    Quit,
    AutoRewrite,
    Restart(String),
    Fallback(String),
    Debug(String),
    Log(String),
}

const SEP: char = '\u{1f}';

impl MenuId {
    pub fn id(&self) -> String {
        let (action, server) = match self {
            MenuId::Open => return "open".to_owned(),
            MenuId::Quit => return "quit".to_owned(),
            MenuId::AutoRewrite => return "auto".to_owned(),
            MenuId::Restart(s) => ("restart", s),
            MenuId::Fallback(s) => ("fallback", s),
            MenuId::Debug(s) => ("debug", s),
            MenuId::Log(s) => ("log", s),
        };
        format!("{action}{SEP}{server}")
    }

    pub fn parse(id: &str) -> Option<MenuId> {
        let Some((action, server)) = id.split_once(SEP) else {
            return match id {
                "open" => Some(MenuId::Open),
                "quit" => Some(MenuId::Quit),
                "auto" => Some(MenuId::AutoRewrite),
                _ => None,
            };
        };
        let server = server.to_owned();
        match action {
            "restart" => Some(MenuId::Restart(server)),
            "fallback" => Some(MenuId::Fallback(server)),
            "debug" => Some(MenuId::Debug(server)),
            "log" => Some(MenuId::Log(server)),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Model {
    pub health: TrayHealth,
    pub tooltip: String,
    pub servers: Vec<ServerItem>,
    pub auto_rewrite: bool,
    /// New stdio servers that await the user's approval before auto-rewrite wraps them.
    pub awaiting: usize,
    /// Why the bundled `warden` CLI cannot serve the wrapped IDE entries.
    pub sidecar_error: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ServerItem {
    pub name: String,
    pub health: Health,
    pub reason: String,
    /// `force_fallback` in config.toml.
    pub fallback: bool,
    /// `debug` in config.toml.
    pub debug: bool,
}

impl Model {
    /// The tray for `status`. The switches show config.toml's values as the supervisor's
    /// `Limits` reports them (what the window's switches show); a server without a report has
    /// both off. A broken sidecar makes the tray "down": no wrapped server can start.
    pub fn from_status(
        status: &StatusReport,
        limits: &[LimitsReport],
        auto_rewrite: bool,
        awaiting: usize,
        sidecar_error: Option<String>,
    ) -> Model {
        let servers: Vec<ServerItem> = status
            .servers
            .iter()
            .map(|s| {
                let report = limits.iter().find(|r| r.server == s.name);
                let flag = |key: &str| {
                    report
                        .and_then(|r| r.keys.iter().find(|k| k.key == key))
                        .is_some_and(|k| k.value == Json::Bool(true))
                };
                ServerItem {
                    name: s.name.clone(),
                    health: s.health,
                    reason: s.reason.clone(),
                    fallback: flag("force_fallback"),
                    debug: flag("debug"),
                }
            })
            .collect();
        let health = match sidecar_error {
            Some(_) => TrayHealth::Down,
            None => commands::tray_health(servers.iter().map(|s| s.health)),
        };
        Model {
            health,
            tooltip: tooltip(health, &servers, awaiting, sidecar_error.as_deref()),
            servers,
            auto_rewrite,
            awaiting,
            sidecar_error,
        }
    }
}

fn awaiting_text(n: usize) -> String {
    format!("{n} new server(s) await your approval: open Warden, Clients")
}

fn tooltip(
    health: TrayHealth,
    servers: &[ServerItem],
    awaiting: usize,
    sidecar_error: Option<&str>,
) -> String {
    let mut lines = vec![format!("MCP Warden: {}", health.as_str())];
    lines.extend(sidecar_error.map(str::to_owned));
    if awaiting > 0 {
        lines.push(awaiting_text(awaiting));
    }
    let attention: Vec<&ServerItem> = servers
        .iter()
        .filter(|s| matches!(s.health, Health::Down | Health::Degraded | Health::Fallback))
        .collect();
    if servers.is_empty() {
        lines.push("no servers yet: open Warden to wrap your IDEs' servers".to_owned());
    } else if attention.is_empty() {
        lines.push(format!("{} server(s), none needs attention", servers.len()));
    }
    for s in attention.iter().take(4) {
        lines.push(format!("{}: {} ({})", s.name, s.health.as_str(), s.reason));
    }
    lines.join("\n")
}

fn icon_png(health: TrayHealth) -> &'static [u8] {
    match health {
        TrayHealth::Healthy => include_bytes!("../../../icons/tray-healthy.png"),
        TrayHealth::Degraded => include_bytes!("../../../icons/tray-degraded.png"),
        TrayHealth::Down => include_bytes!("../../../icons/tray-down.png"),
        TrayHealth::Idle => include_bytes!("../../../icons/tray-idle.png"),
    }
}

fn icon(health: TrayHealth) -> tauri::Result<Image<'static>> {
    Image::from_bytes(icon_png(health))
}

fn menu<R: Runtime>(app: &AppHandle<R>, model: &Model) -> tauri::Result<Menu<R>> {
    let menu = Menu::new(app)?;
    let text = |text: &str| MenuItem::new(app, text, false, None::<&str>);
    let action = |id: MenuId, text: &str| MenuItem::with_id(app, id.id(), text, true, None::<&str>);
    let switch = |id: MenuId, text: &str, on: bool| {
        CheckMenuItem::with_id(app, id.id(), text, true, on, None::<&str>)
    };
    if let Some(error) = &model.sidecar_error {
        menu.append(&text(error)?)?;
        menu.append(&PredefinedMenuItem::separator(app)?)?;
    }
    if model.servers.is_empty() {
        menu.append(&text("No servers yet")?)?;
    }
    for s in &model.servers {
        let name = || s.name.clone();
        let sub = Submenu::new(app, format!("{} — {}", s.name, s.health.as_str()), true)?;
        sub.append(&text(&s.reason)?)?;
        sub.append(&PredefinedMenuItem::separator(app)?)?;
        sub.append(&action(MenuId::Restart(name()), "Restart")?)?;
        sub.append(&switch(
            MenuId::Fallback(name()),
            "Fallback to local ripgrep",
            s.fallback,
        )?)?;
        sub.append(&switch(MenuId::Debug(name()), "Debug logging", s.debug)?)?;
        sub.append(&action(MenuId::Log(name()), "Open log")?)?;
        menu.append(&sub)?;
    }
    menu.append(&PredefinedMenuItem::separator(app)?)?;
    if model.awaiting > 0 {
        menu.append(&text(&awaiting_text(model.awaiting))?)?;
    }
    menu.append(&switch(
        MenuId::AutoRewrite,
        "Wrap new IDE servers automatically",
        model.auto_rewrite,
    )?)?;
    menu.append(&action(MenuId::Open, "Open Warden")?)?;
    menu.append(&action(MenuId::Quit, "Quit")?)?;
    Ok(menu)
}

/// Creates the tray icon, drawn as `model`; its menu's clicks and (where the platform sends
/// them: not Linux) a left click on the icon go to `on_menu` and `on_click`.
pub fn build<R: Runtime>(
    app: &AppHandle<R>,
    model: &Model,
    on_menu: impl Fn(MenuId) + Send + Sync + 'static,
    on_click: impl Fn() + Send + Sync + 'static,
) -> tauri::Result<TrayIcon<R>> {
    TrayIconBuilder::with_id("warden")
        .icon(icon(model.health)?)
        .tooltip(&model.tooltip)
        .menu(&menu(app, model)?)
        .show_menu_on_left_click(false)
        .on_menu_event(move |_, event| {
            if let Some(id) = MenuId::parse(event.id().as_ref()) {
                on_menu(id);
            }
        })
        .on_tray_icon_event(move |_, event| {
            if let TrayIconEvent::Click {
                button: MouseButton::Left,
                button_state: MouseButtonState::Up,
                ..
            } = event
            {
                on_click();
            }
        })
        .build(app)
}

/// Draws `model`.
pub fn draw<R: Runtime>(tray: &TrayIcon<R>, model: &Model) -> tauri::Result<()> {
    tray.set_icon(Some(icon(model.health)?))?;
    tray.set_tooltip(Some(&model.tooltip))?;
    tray.set_menu(Some(menu(tray.app_handle(), model)?))
}

/// The API request a menu item stands for (`None`: not an API call). The switches flip
/// what `model` shows.
pub fn request_for(id: &MenuId, model: &Model) -> Option<Request> {
    let shows = |server: &str, flag: fn(&ServerItem) -> bool| {
        model
            .servers
            .iter()
            .find(|s| s.name == server)
            .is_some_and(flag)
    };
    match id {
        MenuId::Restart(server) => Some(Request::Restart(op::Restart {
            server: server.clone(),
        })),
        MenuId::Fallback(server) => Some(Request::Fallback(op::Fallback {
            on: !shows(server, |s| s.fallback),
            server: server.clone(),
        })),
        MenuId::Debug(server) => Some(Request::Debug(op::Debug {
            on: !shows(server, |s| s.debug),
            server: server.clone(),
        })),
        // Switched on here, it asks before wrapping (the window offers "without asking").
        MenuId::AutoRewrite => Some(Request::AutoRewrite(op::AutoRewrite {
            on: !model.auto_rewrite,
            without_asking: false,
        })),
        MenuId::Open | MenuId::Quit | MenuId::Log(_) => None,
    }
}

/// How a notification names a tray action.
pub fn action_title(request: &Request) -> String {
    let switch = |on: bool| if on { "on" } else { "off" };
    match request {
        Request::Restart(op::Restart { server }) => format!("Restart {server}"),
        Request::Fallback(op::Fallback { server, on }) => {
            format!("Fallback {} for {server}", switch(*on))
        }
        Request::Debug(op::Debug { server, on }) => {
            format!("Debug logging {} for {server}", switch(*on))
        }
        Request::AutoRewrite(op::AutoRewrite { on, .. }) => format!("Auto-rewrite {}", switch(*on)),
        other => format!("{other:?}"),
    }
}

/// Why a tray action's answer is a failure the user should hear of (not only a log line).
pub fn failure(response: &Response) -> Option<String> {
    match response {
        Response::Error(e) => Some(e.message.clone()),
        Response::Command(c) if !c.ok => Some(c.message.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use warden_supervisor::api::{ApiError, CommandOutcome, ErrorCode, ServerStatus};

    use super::*;

    fn server(name: &str, health: Health) -> ServerStatus {
        serde_json::from_value(serde_json::json!({
            "name": name, "health": health, "reason": format!("{name} reason"),
            "sessions": 1, "unresponsive": 0, "inflight": 0, "p50_ms": 0, "p95_ms": 0, "p99_ms": 0,
            "requests": 0, "errors": 0, "timeouts": 0, "retries": 0, "restarts": 0,
            "bytes_in": 0, "bytes_out": 0, "last_error": null, "last_seen_ms": null,
            "command": null, "circuit_open": false, "fallback": false, "debug": false,
            "last_probe": null
        }))
        .unwrap()
    }

    #[test]
    fn the_model_follows_the_worst_server_and_the_config_flags() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        std::fs::write(&config, "[servers.rg]\nforce_fallback = true\n").unwrap();
        let status = StatusReport {
            servers: vec![
                server("rg", Health::Fallback),
                server("fs", Health::Healthy),
            ],
            ..StatusReport::default()
        };
        // What the supervisor's `Limits` request answers for each server.
        let limits: Vec<LimitsReport> = ["rg", "fs"]
            .iter()
            .map(|name| warden_supervisor::settings::limits(Some(&config), name))
            .collect();
        let m = Model::from_status(&status, &limits, true, 0, None);
        assert_eq!(m.health, TrayHealth::Degraded);
        assert!(m.servers[0].fallback && !m.servers[0].debug && !m.servers[1].fallback);
        assert!(
            m.tooltip.contains("rg: fallback (rg reason)"),
            "{}",
            m.tooltip
        );
        // The menu's switches flip what the config has.
        assert_eq!(
            request_for(&MenuId::parse("fallback\u{1f}rg").unwrap(), &m),
            Some(Request::Fallback(op::Fallback {
                server: "rg".into(),
                on: false
            }))
        );
        assert_eq!(
            request_for(&MenuId::parse("debug\u{1f}fs").unwrap(), &m),
            Some(Request::Debug(op::Debug {
                server: "fs".into(),
                on: true
            }))
        );
        assert_eq!(
            request_for(&MenuId::parse("restart\u{1f}fs").unwrap(), &m),
            Some(Request::Restart(op::Restart {
                server: "fs".into()
            }))
        );
        assert_eq!(request_for(&MenuId::parse("open").unwrap(), &m), None);

        let down = StatusReport {
            servers: vec![server("rg", Health::Down), server("fs", Health::Healthy)],
            ..StatusReport::default()
        };
        let m = Model::from_status(&down, &[], false, 0, None);
        assert_eq!(m.health, TrayHealth::Down);
        assert!(m.tooltip.starts_with("MCP Warden: down"));
        let empty = Model::from_status(&StatusReport::default(), &[], false, 0, None);
        assert_eq!(empty.health, TrayHealth::Idle);
        assert!(empty.tooltip.contains("no servers yet"));
    }

    /// Servers awaiting approval show in the tooltip (and the menu), so they are not missed
    /// while the window is closed.
    #[test]
    fn the_tooltip_counts_servers_awaiting_approval() {
        let asking = Model::from_status(&StatusReport::default(), &[], true, 2, None);
        assert!(
            asking
                .tooltip
                .contains("2 new server(s) await your approval"),
            "{}",
            asking.tooltip
        );
    }

    #[test]
    fn menu_ids_read_back_as_what_they_were_made_from() {
        for id in [
            MenuId::Open,
            MenuId::Quit,
            MenuId::AutoRewrite,
            MenuId::Restart("my server".into()),
            MenuId::Fallback("rg".into()),
            MenuId::Debug("a\u{1f}b".into()),
            MenuId::Log("fs".into()),
        ] {
            assert_eq!(MenuId::parse(&id.id()), Some(id));
        }
        assert_eq!(MenuId::parse("reason\u{1f}rg"), None);
        assert_eq!(MenuId::parse("none"), None);
        let m = Model {
            auto_rewrite: true,
            ..Model::default()
        };
        assert_eq!(
            request_for(&MenuId::AutoRewrite, &m),
            Some(Request::AutoRewrite(op::AutoRewrite {
                on: false,
                without_asking: false
            }))
        );
        assert_eq!(request_for(&MenuId::Log("fs".into()), &m), None);
    }

    #[test]
    fn a_broken_sidecar_shows_in_the_tray() {
        let status = StatusReport {
            servers: vec![server("fs", Health::Healthy)],
            ..StatusReport::default()
        };
        let error = "the warden CLI at /opt/warden is missing".to_owned();
        let m = Model::from_status(&status, &[], false, 0, Some(error.clone()));
        assert_eq!(m.health, TrayHealth::Down);
        assert_eq!(m.sidecar_error.as_ref(), Some(&error));
        assert!(
            m.tooltip.lines().nth(1) == Some(error.as_str()),
            "{}",
            m.tooltip
        );
    }

    #[test]
    fn every_state_has_its_own_icon() {
        for h in [
            TrayHealth::Healthy,
            TrayHealth::Degraded,
            TrayHealth::Down,
            TrayHealth::Idle,
        ] {
            let icon = icon(h).unwrap();
            assert_eq!((icon.width(), icon.height()), (64, 64));
        }
    }

    #[test]
    fn a_failed_tray_action_is_named_and_explained() {
        let restart = Request::Restart(op::Restart {
            server: "gh".into(),
        });
        assert_eq!(action_title(&restart), "Restart gh");
        let off = Request::Fallback(op::Fallback {
            server: "rg".into(),
            on: false,
        });
        assert_eq!(action_title(&off), "Fallback off for rg");
        let refused = Response::Command(CommandOutcome {
            ok: false,
            message: "no live session of gh to restart".into(),
            config: None,
            sessions: vec![],
        });
        assert_eq!(
            failure(&refused).as_deref(),
            Some("no live session of gh to restart")
        );
        let error = Response::Error(ApiError::new(ErrorCode::Config, "config.toml: bad"));
        assert_eq!(failure(&error).as_deref(), Some("config.toml: bad"));
        let done = Response::Command(CommandOutcome {
            ok: true,
            message: "restarted".into(),
            config: None,
            sessions: vec![],
        });
        assert_eq!(failure(&done), None);
    }
}
