//! What the user must do for a client to use a changed file, per the research on each
//! client.

use serde::{Deserialize, Serialize};

use super::detect::{ClientEnv, ConfigFile, Scope};
use super::model::ClientId;

/// What the user has to do after a client's file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum NoticeKind {
    /// The client reads the file only at start: restart it.
    Restart,
    /// The client needs a refresh or reload action.
    Reload,
    /// The client asks to approve changed servers again.
    Approval,
    /// An allowlist that matches command lines may block the wrapped command.
    Allowlist,
    /// Nothing to do, or good to know.
    Note,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Notice {
    pub client: ClientId,
    pub kind: NoticeKind,
    pub message: String,
}

/// What a client needs after Warden changed `file` (per the research on each client).
pub fn notices_for(file: &ConfigFile, env: &ClientEnv) -> Vec<Notice> {
    let project = matches!(file.scope, Scope::Project(_));
    let mut out = Vec::new();
    let mut push = |kind, message: &str| {
        out.push(Notice {
            client: file.client,
            kind,
            message: message.to_owned(),
        });
    };
    match file.client {
        ClientId::ClaudeDesktop => push(
            NoticeKind::Restart,
            "Quit Claude Desktop completely (also from the system tray or menu bar) and start it again: it reads its config only at launch, and may overwrite edits made while it runs.",
        ),
        ClientId::ClaudeCode => {
            push(
                NoticeKind::Restart,
                "Start new Claude Code sessions (or restart running ones): each session reads its server list once, at start.",
            );
            if project {
                push(
                    NoticeKind::Note,
                    "Project servers in .mcp.json are approved by name; the names did not change, so no new approval is needed.",
                );
            } else {
                push(
                    NoticeKind::Note,
                    "Running Claude Code sessions rewrite ~/.claude.json often; if one put the old command back, run `warden clients wrap` again when no session runs.",
                );
            }
        }
        ClientId::Cursor => push(
            NoticeKind::Approval,
            "Cursor asks to approve each changed server again: open Cursor Settings → MCP and approve them. Open chats may need Developer: Reload Window.",
        ),
        ClientId::Vscode => push(
            NoticeKind::Reload,
            "VS Code sees the change; restart running servers from 'MCP: List Servers'. It may ask you to trust the changed servers.",
        ),
        ClientId::Cline => push(NoticeKind::Note, "Cline reloads its servers by itself."),
        ClientId::Windsurf => {
            push(
                NoticeKind::Reload,
                "Press the refresh button in Windsurf's MCP panel (Cascade → MCP servers).",
            );
            push(
                NoticeKind::Allowlist,
                "On Windsurf Team/Enterprise plans with an MCP allowlist, the command and every argument must match the allowlist: ask your admin to allow the warden bridge command, or Windsurf blocks the server.",
            );
        }
        ClientId::Zed => {
            push(NoticeKind::Note, "Zed reloads its settings by itself.");
            if project {
                push(
                    NoticeKind::Note,
                    "Zed starts project servers only in trusted worktrees.",
                );
            }
        }
        ClientId::GeminiCli => push(
            NoticeKind::Reload,
            "Run /mcp reload in Gemini CLI, or restart it.",
        ),
        ClientId::Codex => {
            push(
                NoticeKind::Restart,
                "Start a new Codex session. A first npx/uvx start can take longer than startup_timeout_sec (10 s by default): raise it for the server if its start times out.",
            );
            if project {
                push(
                    NoticeKind::Note,
                    "Codex reads a project's .codex/config.toml only when the project is trusted.",
                );
            }
        }
        ClientId::Opencode => push(NoticeKind::Restart, "Restart opencode."),
        ClientId::Kiro => push(
            NoticeKind::Reload,
            "Kiro reconnects on save; if it does not, reconnect the servers from its MCP panel.",
        ),
        ClientId::LmStudio => push(
            NoticeKind::Restart,
            "Restart LM Studio: it may not notice edits made outside its own editor.",
        ),
        ClientId::Continue => push(NoticeKind::Note, "Continue reloads its config by itself."),
        ClientId::Goose => {
            push(
                NoticeKind::Restart,
                "Restart goose: edits to config.yaml take effect at the next start.",
            );
            if env.vars.contains_key("GOOSE_ALLOWLIST") {
                push(
                    NoticeKind::Allowlist,
                    "GOOSE_ALLOWLIST is set: goose starts only allowed extension commands, so the warden bridge command must be on that list.",
                );
            }
        }
    }
    out
}
