//! Where each client keeps its MCP config, per OS, user and project level.
//!
//! Paths come from `ClientEnv`, never from the process directly, so tests (and the CLI with
//! a temporary HOME) see exactly the files under the home they give.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::dialect::{Dialect, Format};
use super::lock::LockKind;
use super::model::{ClientError, ClientId};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Os {
    Linux,
    Macos,
    Windows,
}

impl Os {
    pub fn current() -> Os {
        if cfg!(windows) {
            Os::Windows
        } else if cfg!(target_os = "macos") {
            Os::Macos
        } else {
            Os::Linux
        }
    }
}

/// Environment variables (besides HOME, XDG_CONFIG_HOME, APPDATA, LOCALAPPDATA) that move
/// a client's config.
pub const OVERRIDE_VARS: &[&str] = &[
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "CLINE_MCP_SETTINGS_PATH",
    "CLINE_DATA_DIR",
    "CLINE_DIR",
    "OPENCODE_CONFIG",
    "OPENCODE_CONFIG_DIR",
    "COPILOT_HOME",
    "GOOSE_ALLOWLIST",
];

/// Everything discovery depends on.
#[derive(Debug, Clone)]
pub struct ClientEnv {
    pub os: Os,
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME`; `~/.config` when unset.
    pub xdg_config_home: Option<PathBuf>,
    /// `%APPDATA%` (Windows); `~\AppData\Roaming` when unset.
    pub appdata: Option<PathBuf>,
    /// `%LOCALAPPDATA%` (Windows); `~\AppData\Local` when unset.
    pub localappdata: Option<PathBuf>,
    /// The values of [`OVERRIDE_VARS`] that are set.
    pub vars: BTreeMap<String, String>,
    /// Project directories whose project-level files are included.
    pub projects: Vec<PathBuf>,
    /// Where backups and Warden's wrap records go.
    pub state_dir: PathBuf,
}

fn var_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

impl ClientEnv {
    /// From this process: HOME (USERPROFILE on Windows), the XDG/APPDATA variables, the
    /// current directory and its git root as projects, and `warden_config::paths::state_dir()`.
    pub fn from_process() -> Result<ClientEnv, ClientError> {
        let os = Os::current();
        let home = var_path("HOME")
            .or_else(|| {
                (os == Os::Windows)
                    .then(|| var_path("USERPROFILE"))
                    .flatten()
            })
            .or_else(warden_config::paths::home_dir)
            .ok_or(ClientError::NoHome)?;
        let vars = OVERRIDE_VARS
            .iter()
            .filter_map(|v| {
                std::env::var(v)
                    .ok()
                    .filter(|s| !s.is_empty())
                    .map(|s| ((*v).to_owned(), s))
            })
            .collect();
        let mut projects = Vec::new();
        if let Ok(cwd) = std::env::current_dir() {
            let root = cwd
                .ancestors()
                .take_while(|d| *d != home)
                .find(|d| d.join(".git").exists())
                .map(Path::to_path_buf);
            projects.push(cwd.clone());
            if let Some(root) = root.filter(|r| *r != cwd) {
                projects.push(root);
            }
        }
        Ok(ClientEnv {
            os,
            home,
            xdg_config_home: var_path("XDG_CONFIG_HOME").filter(|p| p.is_absolute()),
            appdata: var_path("APPDATA"),
            localappdata: var_path("LOCALAPPDATA"),
            vars,
            projects,
            state_dir: warden_config::paths::state_dir(),
        })
    }

    /// Only `home` (for tests): no XDG/APPDATA overrides, no projects, state under
    /// `home/.local/state/warden`.
    pub fn with_home(home: &Path, os: Os) -> ClientEnv {
        ClientEnv {
            os,
            home: home.to_owned(),
            xdg_config_home: None,
            appdata: None,
            localappdata: None,
            vars: BTreeMap::new(),
            projects: Vec::new(),
            state_dir: home.join(".local").join("state").join("warden"),
        }
    }

    fn var(&self, name: &str) -> Option<PathBuf> {
        self.vars.get(name).map(PathBuf::from)
    }

    /// `$XDG_CONFIG_HOME` or `~/.config` (also used on macOS by Zed, Goose, opencode).
    fn xdg(&self) -> PathBuf {
        self.xdg_config_home
            .clone()
            .unwrap_or_else(|| self.home.join(".config"))
    }

    fn appdata(&self) -> PathBuf {
        self.appdata
            .clone()
            .unwrap_or_else(|| self.home.join("AppData").join("Roaming"))
    }

    fn localappdata(&self) -> PathBuf {
        self.localappdata
            .clone()
            .unwrap_or_else(|| self.home.join("AppData").join("Local"))
    }

    /// A VS Code-family editor's `User` directory (`Code`, `Cursor`, `Windsurf`, ...).
    pub(crate) fn editor_user_dir(&self, product: &str) -> PathBuf {
        match self.os {
            Os::Linux => self.xdg().join(product).join("User"),
            Os::Macos => self
                .home
                .join("Library")
                .join("Application Support")
                .join(product)
                .join("User"),
            Os::Windows => self.appdata().join(product).join("User"),
        }
    }
}

/// User-level or project-level.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "dir")]
pub enum Scope {
    User,
    Project(PathBuf),
}

/// One client config file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigFile {
    pub client: ClientId,
    pub path: PathBuf,
    pub scope: Scope,
    pub dialect: Dialect,
    pub format: Format,
    /// Whether the client reads this file (a legacy path after migration does not).
    /// Operations without `--file` touch active files only.
    pub active: bool,
    pub note: Option<String>,
    #[serde(skip)]
    pub(crate) lock: LockKind,
}

impl ConfigFile {
    fn new(client: ClientId, path: PathBuf, scope: Scope, dialect: Dialect) -> ConfigFile {
        ConfigFile {
            client,
            format: format_for(client, dialect, &path),
            lock: if client == ClientId::Cline {
                LockKind::ClineDir
            } else {
                LockKind::None
            },
            path,
            scope,
            dialect,
            active: true,
            note: None,
        }
    }

    fn note(mut self, note: &str) -> ConfigFile {
        self.note = Some(note.to_owned());
        self
    }

    /// A file named by the user: which client reads it, from `client` or from its path.
    pub fn infer(path: &Path, client: Option<ClientId>) -> Option<ConfigFile> {
        let client = client.or_else(|| client_from_path(path))?;
        let dialect = dialect_for(client, path);
        Some(ConfigFile::new(
            client,
            path.to_owned(),
            Scope::User,
            dialect,
        ))
    }
}

fn file_name(path: &Path) -> &str {
    path.file_name().and_then(|n| n.to_str()).unwrap_or("")
}

fn dialect_for(client: ClientId, path: &Path) -> Dialect {
    let name = file_name(path);
    match client {
        ClientId::ClaudeCode if name == ".claude.json" => Dialect::ClaudeCodeUser,
        ClientId::Vscode if name == "mcp-config.json" => Dialect::McpServers,
        ClientId::Vscode => Dialect::Vscode,
        ClientId::Zed => Dialect::Zed,
        ClientId::Opencode => Dialect::Opencode,
        ClientId::Codex => Dialect::Codex,
        ClientId::Continue if name.ends_with(".json") => Dialect::McpServers,
        ClientId::Continue => Dialect::ContinueYaml,
        ClientId::Goose => Dialect::Goose,
        _ => Dialect::McpServers,
    }
}

fn format_for(client: ClientId, dialect: Dialect, path: &Path) -> Format {
    match dialect {
        Dialect::Codex => Format::Toml,
        Dialect::ContinueYaml | Dialect::Goose => Format::Yaml,
        Dialect::Vscode | Dialect::Zed | Dialect::Opencode => Format::Jsonc,
        _ if client == ClientId::GeminiCli => Format::Jsonc,
        _ if file_name(path).ends_with(".jsonc") => Format::Jsonc,
        _ => Format::Json,
    }
}

fn client_from_path(path: &Path) -> Option<ClientId> {
    let name = file_name(path);
    let text = path.to_string_lossy().replace('\\', "/").to_lowercase();
    let has = |s: &str| text.contains(s);
    Some(match name {
        "claude_desktop_config.json" => ClientId::ClaudeDesktop,
        ".claude.json" | ".mcp.json" => ClientId::ClaudeCode,
        "cline_mcp_settings.json" => ClientId::Cline,
        "mcp_config.json" if has("codeium") => ClientId::Windsurf,
        "opencode.json" | "opencode.jsonc" => ClientId::Opencode,
        "config.toml" if has(".codex") => ClientId::Codex,
        "settings.json" if has("zed") => ClientId::Zed,
        "settings.json" if has(".gemini") => ClientId::GeminiCli,
        "mcp.json" if has(".cursor") => ClientId::Cursor,
        "mcp.json" if has(".kiro") => ClientId::Kiro,
        "mcp.json" if has("lmstudio") || has("lm-studio") => ClientId::LmStudio,
        "mcp.json" if has(".vscode") || has("/user/") => ClientId::Vscode,
        "mcp-config.json" if has("copilot") => ClientId::Vscode,
        _ if has(".continue") => ClientId::Continue,
        "config.yaml" if has("goose") => ClientId::Goose,
        _ => return None,
    })
}

/// Every place a client may keep a config file, existing or not, most authoritative first.
/// Directory listings (VS Code profiles, Continue's block folders, MSIX packages) are read
/// here, so the list depends on the file system.
pub fn candidates(env: &ClientEnv) -> Vec<ConfigFile> {
    let home = &env.home;
    let mut out: Vec<ConfigFile> = Vec::new();
    let user = |client, path: PathBuf| {
        let dialect = dialect_for(client, &path);
        ConfigFile::new(client, path, Scope::User, dialect)
    };

    // Claude Desktop
    match env.os {
        Os::Macos => out.push(user(
            ClientId::ClaudeDesktop,
            home.join("Library/Application Support/Claude/claude_desktop_config.json"),
        )),
        Os::Windows => {
            let packages = env.localappdata().join("Packages");
            let mut msix = vec![packages.join("Claude_pzs8sxrjxfjjc")];
            for dir in read_dir_names(&packages) {
                if dir.starts_with("Claude_") && dir != "Claude_pzs8sxrjxfjjc" {
                    msix.push(packages.join(dir));
                }
            }
            for pkg in msix {
                out.push(
                    user(
                        ClientId::ClaudeDesktop,
                        pkg.join("LocalCache")
                            .join("Roaming")
                            .join("Claude")
                            .join("claude_desktop_config.json"),
                    )
                    .note("Microsoft Store (MSIX) install"),
                );
            }
            out.push(user(
                ClientId::ClaudeDesktop,
                env.appdata()
                    .join("Claude")
                    .join("claude_desktop_config.json"),
            ));
        }
        Os::Linux => out.push(
            user(
                ClientId::ClaudeDesktop,
                env.xdg().join("Claude").join("claude_desktop_config.json"),
            )
            .note("community Linux build"),
        ),
    }

    // Claude Code
    let claude_dir = env.var("CLAUDE_CONFIG_DIR").unwrap_or_else(|| home.clone());
    out.push(
        user(ClientId::ClaudeCode, claude_dir.join(".claude.json"))
            .note("user servers and per-project (local scope) servers"),
    );

    // Cursor
    out.push(user(
        ClientId::Cursor,
        home.join(".cursor").join("mcp.json"),
    ));

    // VS Code
    for product in ["Code", "Code - Insiders", "VSCodium"] {
        let dir = env.editor_user_dir(product);
        out.push(user(ClientId::Vscode, dir.join("mcp.json")));
        let profiles = dir.join("profiles");
        for p in read_dir_names(&profiles) {
            out.push(
                user(ClientId::Vscode, profiles.join(&p).join("mcp.json"))
                    .note(&format!("{product} profile {p}")),
            );
        }
    }
    if env.os != Os::Windows {
        out.push(
            user(
                ClientId::Vscode,
                home.join(".vscode-server/data/User/mcp.json"),
            )
            .note("VS Code remote server"),
        );
    }
    let copilot = env
        .var("COPILOT_HOME")
        .unwrap_or_else(|| home.join(".copilot"));
    out.push(
        user(ClientId::Vscode, copilot.join("mcp-config.json"))
            .note("Copilot portable format (mcpServers)"),
    );

    // Cline: the shared file, then the legacy per-editor ones.
    let cline = env
        .var("CLINE_MCP_SETTINGS_PATH")
        .or_else(|| {
            env.var("CLINE_DATA_DIR")
                .map(|d| d.join("settings").join("cline_mcp_settings.json"))
        })
        .or_else(|| {
            env.var("CLINE_DIR")
                .map(|d| d.join("data/settings/cline_mcp_settings.json"))
        })
        .unwrap_or_else(|| home.join(".cline/data/settings/cline_mcp_settings.json"));
    out.push(
        user(ClientId::Cline, cline).note("shared by the VS Code extension, CLI and JetBrains"),
    );
    let mut legacy: Vec<PathBuf> = ["Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"]
        .iter()
        .map(|p| env.editor_user_dir(p))
        .collect();
    if env.os != Os::Windows {
        legacy.push(home.join(".vscode-server/data/User"));
    }
    for dir in legacy {
        out.push(user(
            ClientId::Cline,
            dir.join("globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"),
        ));
        if let Some(last) = out.last_mut() {
            last.note = Some("legacy location".to_owned());
        }
    }
    out.push(
        user(
            ClientId::Cline,
            home.join("Documents/Cline/MCP/cline_mcp_settings.json"),
        )
        .note("legacy location"),
    );

    // Windsurf
    out.push(user(
        ClientId::Windsurf,
        home.join(".codeium/windsurf/mcp_config.json"),
    ));
    out.push(
        user(ClientId::Windsurf, home.join(".codeium/mcp_config.json"))
            .note("Windsurf plugin for JetBrains"),
    );

    // Zed
    let zed = match env.os {
        Os::Windows => env.appdata().join("Zed").join("settings.json"),
        _ => env.xdg().join("zed").join("settings.json"),
    };
    out.push(user(ClientId::Zed, zed));

    // Gemini CLI
    out.push(user(
        ClientId::GeminiCli,
        home.join(".gemini/settings.json"),
    ));

    // Codex
    let codex = env.var("CODEX_HOME").unwrap_or_else(|| home.join(".codex"));
    out.push(user(ClientId::Codex, codex.join("config.toml")));

    // opencode
    if let Some(file) = env.var("OPENCODE_CONFIG") {
        out.push(user(ClientId::Opencode, file).note("from OPENCODE_CONFIG"));
    }
    let mut oc_dirs = Vec::new();
    if let Some(dir) = env.var("OPENCODE_CONFIG_DIR") {
        oc_dirs.push(dir);
    }
    oc_dirs.push(match env.os {
        Os::Windows => home.join(".config").join("opencode"),
        _ => env.xdg().join("opencode"),
    });
    for dir in oc_dirs {
        for name in ["opencode.json", "opencode.jsonc"] {
            out.push(user(ClientId::Opencode, dir.join(name)));
        }
    }

    // Kiro
    out.push(user(ClientId::Kiro, home.join(".kiro/settings/mcp.json")));

    // LM Studio: its home may be moved by a pointer file.
    if let Ok(pointer) = std::fs::read_to_string(home.join(".lmstudio-home-pointer")) {
        let dir = PathBuf::from(pointer.trim());
        if dir.is_absolute() {
            out.push(
                user(ClientId::LmStudio, dir.join("mcp.json"))
                    .note("from ~/.lmstudio-home-pointer"),
            );
        }
    }
    out.push(user(ClientId::LmStudio, home.join(".lmstudio/mcp.json")));
    out.push(user(
        ClientId::LmStudio,
        home.join(".cache/lm-studio/mcp.json"),
    ));

    // Continue
    out.push(user(ClientId::Continue, home.join(".continue/config.yaml")));
    continue_blocks(&home.join(".continue/mcpServers"), Scope::User, &mut out);

    // Goose
    let goose = match env.os {
        Os::Windows => env.appdata().join("Block/goose/config/config.yaml"),
        _ => env.xdg().join("goose").join("config.yaml"),
    };
    out.push(user(ClientId::Goose, goose));

    for project in &env.projects {
        project_candidates(project, &mut out);
    }
    out
}

fn project_candidates(dir: &Path, out: &mut Vec<ConfigFile>) {
    let scope = Scope::Project(dir.to_owned());
    let mut add = |client, rel: &str, note: Option<&str>| {
        let path = dir.join(rel);
        let dialect = dialect_for(client, &path);
        let mut f = ConfigFile::new(client, path, scope.clone(), dialect);
        f.note = note.map(str::to_owned);
        out.push(f);
    };
    add(
        ClientId::ClaudeCode,
        ".mcp.json",
        Some("also read by VS Code Copilot sessions"),
    );
    add(ClientId::Cursor, ".cursor/mcp.json", None);
    add(ClientId::Vscode, ".vscode/mcp.json", None);
    add(
        ClientId::Zed,
        ".zed/settings.json",
        Some("used in trusted worktrees only"),
    );
    add(ClientId::GeminiCli, ".gemini/settings.json", None);
    add(
        ClientId::Codex,
        ".codex/config.toml",
        Some("read in trusted projects only"),
    );
    for name in [
        "opencode.json",
        "opencode.jsonc",
        ".opencode/opencode.json",
        ".opencode/opencode.jsonc",
    ] {
        add(ClientId::Opencode, name, None);
    }
    add(ClientId::Kiro, ".kiro/settings/mcp.json", None);
    add(ClientId::Goose, ".goose/config.yaml", None);
    continue_blocks(&dir.join(".continue/mcpServers"), scope, out);
}

/// The clients with a project file Warden writes, with its place in the project (the first
/// of opencode's four names when it has none yet). The others have none (Claude Desktop,
/// Cline, Windsurf, LM Studio) or one whose shape is not a client's file (Continue's block
/// folder), and are skipped.
pub const PROJECT_FILES: [(ClientId, &str); 8] = [
    (ClientId::ClaudeCode, ".mcp.json"),
    (ClientId::Cursor, ".cursor/mcp.json"),
    (ClientId::Vscode, ".vscode/mcp.json"),
    (ClientId::Zed, ".zed/settings.json"),
    (ClientId::GeminiCli, ".gemini/settings.json"),
    (ClientId::Codex, ".codex/config.toml"),
    (ClientId::Opencode, "opencode.json"),
    (ClientId::Kiro, ".kiro/settings/mcp.json"),
];

/// `client`'s project file in `dir`: the one there, else where it would be; `None` when the
/// client has no project file format. `true`: it exists.
pub fn project_file(env: &ClientEnv, client: ClientId, dir: &Path) -> Option<(ConfigFile, bool)> {
    PROJECT_FILES.iter().find(|(c, _)| *c == client)?;
    let mut penv = env.clone();
    penv.projects = vec![dir.to_owned()];
    let scope = Scope::Project(dir.to_owned());
    let places: Vec<ConfigFile> = candidates(&penv)
        .into_iter()
        .filter(|f| f.client == client && f.scope == scope)
        .collect();
    if let Some(f) = places.iter().find(|f| f.path.is_file()) {
        return Some((f.clone(), true));
    }
    places.into_iter().next().map(|f| (f, false))
}

/// Continue's block folder: YAML blocks and JSON files in other clients' format.
fn continue_blocks(dir: &Path, scope: Scope, out: &mut Vec<ConfigFile>) {
    for name in read_dir_names(dir) {
        let lower = name.to_lowercase();
        if lower.ends_with(".yaml") || lower.ends_with(".yml") || lower.ends_with(".json") {
            let path = dir.join(&name);
            let dialect = dialect_for(ClientId::Continue, &path);
            out.push(ConfigFile::new(
                ClientId::Continue,
                path,
                scope.clone(),
                dialect,
            ));
        }
    }
}

fn read_dir_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}

/// The config files that exist, each once (by real path), with whether the client reads
/// them.
pub fn detect(env: &ClientEnv) -> Vec<ConfigFile> {
    let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
    let mut files: Vec<ConfigFile> = Vec::new();
    for f in candidates(env) {
        if !f.path.is_file() {
            continue;
        }
        let real = std::fs::canonicalize(&f.path).unwrap_or_else(|_| f.path.clone());
        if seen.insert(real) {
            files.push(f);
        }
    }
    // Cline reads its legacy files once, to migrate them, then only the shared file.
    let shared_cline = files
        .iter()
        .any(|f| f.client == ClientId::Cline && f.note.as_deref() != Some("legacy location"));
    // The MSIX Claude Desktop does not read %APPDATA%\Claude.
    let msix = files.iter().any(|f| {
        f.client == ClientId::ClaudeDesktop
            && f.note.as_deref() == Some("Microsoft Store (MSIX) install")
    });
    for f in &mut files {
        if f.client == ClientId::Cline
            && f.note.as_deref() == Some("legacy location")
            && shared_cline
        {
            f.active = false;
            f.note = Some(
                "legacy location: Cline migrated to ~/.cline/data/settings and no longer reads this file"
                    .to_owned(),
            );
        }
        if f.client == ClientId::ClaudeDesktop && msix && f.note.is_none() {
            f.active = false;
            f.note = Some(
                "not read by the Microsoft Store (MSIX) install, which uses the file under LocalCache"
                    .to_owned(),
            );
        }
    }
    files
}
