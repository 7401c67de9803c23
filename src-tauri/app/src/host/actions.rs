//! Notifications with actions, which `tauri-plugin-notification` does not offer on the
//! desktop: through `notify-rust` (the library the plugin shows its notifications with) on
//! the freedesktop notification service, where a notification server that lists the
//! `actions` capability shows the buttons and reports which one was pressed.

#[cfg(all(unix, not(target_os = "macos")))]
mod freedesktop {
    use crate::desktop::{self as commands, ApprovalAction, ApprovalPresentation};
    use notify_rust::{ActionResponse, Notification, Timeout};

    /// Whether the notification server shows actions (asked each time: it may have changed).
    pub async fn presentation() -> ApprovalPresentation {
        let caps = tauri::async_runtime::spawn_blocking(notify_rust::get_capabilities).await;
        match caps {
            Ok(caps) => commands::approval_presentation(caps.as_deref()),
            Err(_) => ApprovalPresentation::OpenWindow,
        }
    }

    /// Shows the notification until an action is taken, it is dismissed or expires (after
    /// `left_ms`, when the call is refused anyway), or `withdrawn` (then it is closed).
    pub async fn show(
        title: &str,
        body: &str,
        left_ms: u64,
        withdrawn: tokio::sync::oneshot::Receiver<()>,
    ) -> Result<ApprovalAction, String> {
        let mut n = Notification::new();
        n.summary(title)
            .body(body)
            .auto_icon()
            .timeout(Timeout::Milliseconds(
                u32::try_from(left_ms).unwrap_or(u32::MAX),
            ))
            .action("default", "Open Warden");
        for (key, label) in commands::APPROVAL_ACTIONS {
            n.action(key, label);
        }
        let handle = n.show_async().await.map_err(|e| e.to_string())?;
        let acted = async {
            let mut taken = String::new();
            handle
                .wait_for_action_async(|r| {
                    if let ActionResponse::Custom(key) = r {
                        taken = (*key).to_owned();
                    }
                })
                .await;
            taken
        };
        tokio::select! {
            key = acted => Ok(commands::approval_action(&key)),
            _ = withdrawn => {
                handle.close_async().await;
                Ok(ApprovalAction::Nothing)
            }
        }
    }
}

/// Elsewhere (macOS, Windows; type-checked, not run here): the plugin's plain notification,
/// and the window.
#[cfg(not(all(unix, not(target_os = "macos"))))]
mod plain {
    use crate::desktop::{ApprovalAction, ApprovalPresentation};

    pub async fn presentation() -> ApprovalPresentation {
        ApprovalPresentation::OpenWindow
    }

    pub async fn show(
        _title: &str,
        _body: &str,
        _left_ms: u64,
        _withdrawn: tokio::sync::oneshot::Receiver<()>,
    ) -> Result<ApprovalAction, String> {
        Ok(ApprovalAction::OpenWindow)
    }
}

#[cfg(all(unix, not(target_os = "macos")))]
pub use freedesktop::{presentation, show};
#[cfg(not(all(unix, not(target_os = "macos"))))]
pub use plain::{presentation, show};
