//! The tray: an icon per worst health, a tooltip that says which servers and why, and a menu
//! with each server (restart, fallback to ripgrep, debug logging, open log), the
//! auto-rewrite switch, Open Warden and Quit. [`Model`] is computed from the supervisor's
//! status without a display; [`apply`] draws it. Menu items call the supervisor API, the
//! same functions the window uses.

use std::path::Path;
use std::sync::Arc;

use tauri::image::Image;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::{MouseButton, MouseButtonState, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Manager};
use warden_core::config::Config;
use warden_core::supervisor::api::{Health, Request, StatusReport};

use crate::Shared;
use crate::commands::{self, AppRequest, OpenTarget, TrayHealth};

const TRAY_ID: &str = "warden";
/// Menu ids: `<action>` for the fixed items, `<action>\u{1f}<server>` for a server's.
const SEP: char = '\u{1f}';

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Model {
    pub health: TrayHealth,
    pub tooltip: String,
    pub servers: Vec<ServerItem>,
    pub auto_rewrite: bool,
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
    /// The tray for `status`; fallback and debug are the config's (what the switches set).
    pub fn from_status(status: &StatusReport, config: Option<&Path>, auto_rewrite: bool) -> Model {
        // One read of config.toml for every server (an unreadable file: no flags set).
        let config = config.and_then(|p| Config::load(p).ok());
        let servers: Vec<ServerItem> = status
            .servers
            .iter()
            .map(|s| {
                let flag = |key: &str| {
                    config
                        .as_ref()
                        .and_then(|c| c.raw_value(&s.name, key))
                        .is_some_and(|(v, _, _)| v.as_bool() == Some(true))
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
        let health = commands::tray_health(servers.iter().map(|s| s.health));
        Model {
            health,
            tooltip: tooltip(health, &servers),
            servers,
            auto_rewrite,
        }
    }
}

fn tooltip(health: TrayHealth, servers: &[ServerItem]) -> String {
    let mut lines = vec![format!("MCP Warden: {}", health.as_str())];
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

fn icon(health: TrayHealth) -> tauri::Result<Image<'static>> {
    let bytes: &'static [u8] = match health {
        TrayHealth::Healthy => include_bytes!("../../../icons/tray-healthy.png"),
        TrayHealth::Degraded => include_bytes!("../../../icons/tray-degraded.png"),
        TrayHealth::Down => include_bytes!("../../../icons/tray-down.png"),
        TrayHealth::Idle => include_bytes!("../../../icons/tray-idle.png"),
    };
    Image::from_bytes(bytes)
}

fn menu(app: &AppHandle, model: &Model) -> tauri::Result<Menu<tauri::Wry>> {
    let menu = Menu::new(app)?;
    if model.servers.is_empty() {
        menu.append(&MenuItem::with_id(
            app,
            "none",
            "No servers yet",
            false,
            None::<&str>,
        )?)?;
    }
    for s in &model.servers {
        let id = |action: &str| format!("{action}{SEP}{}", s.name);
        let sub = Submenu::new(app, format!("{} — {}", s.name, s.health.as_str()), true)?;
        sub.append(&MenuItem::with_id(
            app,
            id("reason"),
            &s.reason,
            false,
            None::<&str>,
        )?)?;
        sub.append(&PredefinedMenuItem::separator(app)?)?;
        sub.append(&MenuItem::with_id(
            app,
            id("restart"),
            "Restart",
            true,
            None::<&str>,
        )?)?;
        sub.append(&CheckMenuItem::with_id(
            app,
            id("fallback"),
            "Fallback to local ripgrep",
            true,
            s.fallback,
            None::<&str>,
        )?)?;
        sub.append(&CheckMenuItem::with_id(
            app,
            id("debug"),
            "Debug logging",
            true,
            s.debug,
            None::<&str>,
        )?)?;
        sub.append(&MenuItem::with_id(
            app,
            id("log"),
            "Open log",
            true,
            None::<&str>,
        )?)?;
        menu.append(&sub)?;
    }
    menu.append(&PredefinedMenuItem::separator(app)?)?;
    menu.append(&CheckMenuItem::with_id(
        app,
        "auto",
        "Wrap new IDE servers automatically",
        true,
        model.auto_rewrite,
        None::<&str>,
    )?)?;
    menu.append(&MenuItem::with_id(
        app,
        "open",
        "Open Warden",
        true,
        None::<&str>,
    )?)?;
    menu.append(&MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?)?;
    Ok(menu)
}

/// Creates the tray icon.
pub fn build(app: &AppHandle) -> tauri::Result<()> {
    let model = Model::default();
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(icon(model.health)?)
        .tooltip("MCP Warden")
        .menu(&menu(app, &model)?)
        .show_menu_on_left_click(false)
        .on_menu_event(|app, event| on_menu(app, event.id().as_ref()))
        .on_tray_icon_event(|tray, event| {
            if let TrayIconEvent::Click {
                button: MouseButton::Left,
                button_state: MouseButtonState::Up,
                ..
            } = event
            {
                crate::show_window(tray.app_handle());
            }
        })
        .build(app)?;
    Ok(())
}

/// Draws `model`.
pub fn apply(app: &AppHandle, model: &Model) -> tauri::Result<()> {
    let Some(tray) = app.tray_by_id(TRAY_ID) else {
        return Ok(());
    };
    tray.set_icon(Some(icon(model.health)?))?;
    tray.set_tooltip(Some(&model.tooltip))?;
    tray.set_menu(Some(menu(app, model)?))?;
    Ok(())
}

/// The request a menu item stands for (`None`: not an API call).
pub fn request_for(id: &str, model: &Model) -> Option<Request> {
    let (action, server) = id.split_once(SEP)?;
    let item = model.servers.iter().find(|s| s.name == server);
    let server = server.to_owned();
    match action {
        "restart" => Some(Request::Restart { server }),
        "fallback" => Some(Request::Fallback {
            on: !item.is_some_and(|s| s.fallback),
            server,
        }),
        "debug" => Some(Request::Debug {
            on: !item.is_some_and(|s| s.debug),
            server,
        }),
        _ => None,
    }
}

fn on_menu(app: &AppHandle, id: &str) {
    let shared = Arc::clone(&app.state::<Arc<Shared>>());
    match id {
        "open" => crate::show_window(app),
        "quit" => crate::quit(app),
        "auto" => {
            let on = !crate::lock(&shared.tray)
                .as_ref()
                .is_some_and(|m| m.auto_rewrite);
            spawn_request(app, shared, Request::AutoRewrite { on });
        }
        _ => {
            if let Some(server) = id.strip_prefix(&format!("log{SEP}")) {
                let target = OpenTarget::EventLog {
                    server: server.to_owned(),
                };
                let open = crate::dispatch_app(app.clone(), shared, AppRequest::Open { target });
                tauri::async_runtime::spawn(open);
                return;
            }
            let model = crate::lock(&shared.tray).clone().unwrap_or_default();
            if let Some(request) = request_for(id, &model) {
                spawn_request(app, shared, request);
            }
        }
    }
}

fn spawn_request(app: &AppHandle, shared: Arc<Shared>, request: Request) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let response = shared.sup.handle(request).await;
        tracing::info!("tray: {response:?}");
        crate::refresh_tray(&app);
    });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use warden_core::supervisor::api::ServerStatus;

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
        let m = Model::from_status(&status, Some(&config), true);
        assert_eq!(m.health, TrayHealth::Degraded);
        assert!(m.servers[0].fallback && !m.servers[0].debug && !m.servers[1].fallback);
        assert!(
            m.tooltip.contains("rg: fallback (rg reason)"),
            "{}",
            m.tooltip
        );
        // The menu's switches flip what the config has.
        assert_eq!(
            request_for("fallback\u{1f}rg", &m),
            Some(Request::Fallback {
                server: "rg".into(),
                on: false
            })
        );
        assert_eq!(
            request_for("debug\u{1f}fs", &m),
            Some(Request::Debug {
                server: "fs".into(),
                on: true
            })
        );
        assert_eq!(
            request_for("restart\u{1f}fs", &m),
            Some(Request::Restart {
                server: "fs".into()
            })
        );
        assert_eq!(request_for("open", &m), None);

        let down = StatusReport {
            servers: vec![server("rg", Health::Down), server("fs", Health::Healthy)],
            ..StatusReport::default()
        };
        let m = Model::from_status(&down, None, false);
        assert_eq!(m.health, TrayHealth::Down);
        assert!(m.tooltip.starts_with("MCP Warden: down"));
        let empty = Model::from_status(&StatusReport::default(), None, false);
        assert_eq!(empty.health, TrayHealth::Idle);
        assert!(empty.tooltip.contains("no servers yet"));
    }

    #[test]
    fn every_state_has_its_own_icon() {
        for h in [
            TrayHealth::Healthy,
            TrayHealth::Degraded,
            TrayHealth::Down,
            TrayHealth::Idle,
        ] {
            let img = icon(h).unwrap();
            assert_eq!((img.width(), img.height()), (64, 64));
        }
    }
}
