//! The per-server sandbox (`sandbox = "on"`, Linux). Whatever the mode, a sandboxed server:
//! - reads everything but the hidden paths (keys and tokens of the usual tools in every home
//!   the bridge knows of, the clients' files that hold other servers' keys, Warden's own
//!   config and state, `/run` with the runtime dir and its sockets, the user's
//!   `sandbox_deny`), hidden for the whole session (made, or replaced by a rename, while it
//!   runs), and writes only its grants (`sandbox_write`; never a home or a folder on `PATH`,
//!   and not what other programs run later: [`READ_ONLY_IN_GRANTS`]) and a folder of its
//!   own under Warden's state (its npm and uv caches, its temp files);
//! - creates no socket but TCP and UDP over IPv4 or IPv6, and with no network none at all
//!   under Landlock, none that leaves its own empty network namespace under bubblewrap
//!   (its seccomp filter, `seccomp.rs`, which also refuses other ABIs' system calls, TCP Fast
//!   Open's connect past `connect()`, io_uring and UNIX datagram pairs): so no UNIX socket,
//!   and neither Warden's control socket, nor the buses, nor agent or abstract sockets are
//!   reachable, whatever its network, nor MPTCP past Landlock's TCP rules;
//! - gets a cleared environment: [`KEPT_ENV`], the variables named by `--pass-env`, the
//!   `--secret-env` values, and its own folders' variables;
//! - signals only processes of its own sandbox.
//!
//! bubblewrap (`bwrap.rs`) makes it with namespaces; where bubblewrap cannot, Landlock
//! (`landlock.rs`, Linux 6.12+: its signal and abstract-socket scopes) does, reported as
//! degraded. A mode that cannot give all of the above is refused ([`launch`]): the client's
//! `initialize` gets `spawn_failed` with a `W-SANDBOX-*` code and its fix. The server never
//! runs unsandboxed when its config says `sandbox = "on"`.
//!
//! Warden's own decisions (which paths it hides, which `bwrap` it runs) do not rest on the
//! variables an IDE entry can set: homes are hidden both as `$HOME` and as the user
//! database has it, `/run` whatever `$XDG_RUNTIME_DIR` says, and bubblewrap is looked for in
//! the system's own folders only.
// On Windows `launch` refuses the sandbox (W-SANDBOX-UNAVAILABLE): its builders are unused.
#![cfg_attr(windows, allow(dead_code, unused_imports, unused_mut))]

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

#[cfg(unix)]
use std::os::fd::OwnedFd;

#[cfg(unix)]
use warden_config::network;
use warden_config::{Limits, SandboxMode};
use warden_wire::codes::Code;

mod bwrap;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod netns;
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
mod seatbelt;
#[cfg(target_os = "linux")]
mod seccomp;
mod stderr;

pub use bwrap::{argv, userns_denied, works};
#[cfg(target_os = "linux")]
pub use netns::{HELPER, PORT_INSIDE, helper, receive_listener};
pub use seatbelt::SEATBELT;
pub use stderr::{Denied, denied};

/// What the sandbox is, as `warden status` shows it.
pub const BWRAP: &str = "bwrap";
/// The fallback where bubblewrap cannot make a sandbox (user namespaces refused).
pub const LANDLOCK: &str = "landlock";

/// Hidden from every sandboxed server, in each home: keys and tokens of the usual tools, the
/// files that hold other servers' keys (each client's own config file at its default place,
/// with its backups and profiles), and Warden's own config and state at their default places.
/// `clients::detect`'s tests check that every client file it reads is here.
const DENIED_IN_HOME: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".azure",
    ".config/gh",
    ".config/gcloud",
    ".config/containers/auth.json",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".pgpass",
    ".vault-token",
    ".minikube",
    ".lima/_config",
    ".colima/_lima/_config",
    ".cache/huggingface/token",
    ".huggingface/token",
    ".local/share/keyrings",
    ".config/warden",
    ".local/state/warden",
    // The clients' files (other servers' inline keys), as `clients::detect` finds them.
    ".claude.json",
    ".claude.json.backup",
    ".claude/.credentials.json",
    ".config/Claude",
    ".cursor/mcp.json",
    ".config/Code/User/mcp.json",
    ".config/Code/User/profiles",
    ".config/Code - Insiders/User/mcp.json",
    ".config/Code - Insiders/User/profiles",
    ".config/VSCodium/User/mcp.json",
    ".config/VSCodium/User/profiles",
    ".vscode-server/data/User/mcp.json",
    ".config/Code/User/globalStorage/saoudrizwan.claude-dev",
    ".config/Code - Insiders/User/globalStorage/saoudrizwan.claude-dev",
    ".config/VSCodium/User/globalStorage/saoudrizwan.claude-dev",
    ".config/Cursor/User/globalStorage/saoudrizwan.claude-dev",
    ".config/Windsurf/User/globalStorage/saoudrizwan.claude-dev",
    ".vscode-server/data/User/globalStorage/saoudrizwan.claude-dev",
    ".copilot",
    ".cline",
    "Documents/Cline",
    ".codeium/windsurf/mcp_config.json",
    ".codeium/mcp_config.json",
    ".config/zed/settings.json",
    ".gemini/settings.json",
    ".codex/config.toml",
    ".config/opencode",
    ".kiro/settings",
    ".lmstudio/mcp.json",
    ".cache/lm-studio/mcp.json",
    ".continue/config.yaml",
    ".continue/mcpServers",
    ".config/goose",
];

/// The keys' folders below a home's own entries that bubblewrap makes (empty, 0700) when
/// they do not exist yet, so that what a tool writes there while a server runs stays hidden
/// (a home's own entries are hidden whether they exist or not: the home is rebuilt).
const MADE_IF_MISSING: &[&str] = &[".config/gh", ".config/gcloud", ".local/share/keyrings"];

/// The home's folders that many programs share, with many entries: not rebuilt for a hidden
/// path that does not exist yet.
const SHARED_IN_HOME: &[&str] = &[".config", ".local/share", ".local/state", ".cache"];

/// What other programs run from in a home besides its own files and [`READ_ONLY_IN_GRANTS`]:
/// no grant may be, hold or lie in one (a grant of `~/.config` would take them all).
const RUN_LATER_IN_HOME: &[&str] = &[
    ".config/systemd",
    ".config/autostart",
    ".config/environment.d",
    ".config/git",
    ".config/fish",
    ".config/nvim",
    ".local/share/applications",
    ".local/share/systemd",
];

/// The folders of [`READ_ONLY_IN_GRANTS`] that hold a read-only name without being one.
const HOLDERS: &[&str] = &[".git", ".github"];

/// What stays read-only inside every write grant (and the home, which no grant may be):
/// what other programs run later, outside any sandbox: git's config, hooks and info, the
/// editors' and agents' project settings and tasks, project MCP files, direnv's files, CI
/// workflows. A `.git` that is a file (a linked work tree's pointer) stays read-only whole.
pub const READ_ONLY_IN_GRANTS: &[&str] = &[
    ".git/config",
    ".git/hooks",
    ".git/info",
    ".git/modules",
    ".vscode",
    ".idea",
    ".zed",
    ".cursor",
    ".gemini",
    ".claude",
    ".mcp.json",
    ".envrc",
    ".direnv",
    ".github/workflows",
];

/// Hidden too: the runtime dirs (`/run/user/<uid>`: the session bus, the keychain's way in,
/// Warden's control socket) and the system's sockets (`/run/docker.sock`, the system bus).
const DENIED_SYSTEM: &[&str] = &["/run", "/var/run"];

/// The variables of the bridge's environment a sandboxed server gets (besides `--pass-env`):
/// what a program needs to run and speak the user's language, nothing that names a socket,
/// a token or the IDE's own state.
pub const KEPT_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TZ",
];

/// Container runners: under `sandbox = "on"` their servers would run in the runner's daemon
/// or virtual machine, outside any sandbox Warden can make ([`container_runner`]).
const CONTAINER_RUNNERS: &[&str] = &[
    "docker",
    "docker-compose",
    "podman",
    "podman-remote",
    "podman-compose",
    "nerdctl",
    "finch",
    "lima",
    "limactl",
    "colima",
];

/// The places of this machine a server's sandbox is built from.
#[derive(Debug, Clone, Default)]
pub struct Places {
    /// `$HOME` and the user database's home (the same folder, unless an entry moved `HOME`):
    /// the keys of each are hidden.
    pub homes: Vec<PathBuf>,
    /// Hidden too: Warden's config and state as this process finds them, the control
    /// socket's folder and `$XDG_RUNTIME_DIR` (besides `/run`, hidden always).
    pub warden: Vec<PathBuf>,
    pub cwd: Option<PathBuf>,
    /// The server's own folder under Warden's state (`sandbox/<server>`): its package
    /// caches and temp files, the one place it writes besides its grants.
    pub own: Option<PathBuf>,
    /// Variables of the bridge's environment the server gets besides [`KEPT_ENV`]
    /// (`--pass-env`).
    pub pass_env: Vec<String>,
    /// Warden's own program, run first in a bubblewrap sandbox with a `sandbox_network` list
    /// (`netns.rs`).
    pub helper: Option<PathBuf>,
}

impl Places {
    /// The places for server `server` of a bridge run by this process.
    pub fn of_this_process(config: Option<&Path>, server: &str, pass_env: &[String]) -> Places {
        let state = warden_config::paths::state_dir();
        let mut warden = vec![state.clone()];
        if let Some(dir) = config.and_then(Path::parent) {
            warden.push(dir.to_owned());
        }
        if let Some(socket) = warden_control::socket::socket_path().parent() {
            warden.push(socket.to_owned());
        }
        if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
            warden.push(PathBuf::from(run));
        }
        warden.extend(warden_config::paths::runtime_dir());
        let mut homes: Vec<PathBuf> = warden_config::paths::home_dir().into_iter().collect();
        #[cfg(unix)]
        if let Some(h) = warden_config::paths::user_home().filter(|h| !homes.contains(h)) {
            homes.push(h);
        }
        Places {
            homes,
            warden,
            cwd: std::env::current_dir().ok(),
            own: Some(warden_config::paths::server_path_fresh(
                &state.join("sandbox"),
                server,
                "",
            )),
            pass_env: pass_env.to_vec(),
            helper: std::env::current_exe().and_then(std::fs::canonicalize).ok(),
        }
    }

    /// The paths a sandboxed server may not read, as named (whether each exists or not): the
    /// system's sockets, the keys of each home, Warden's own paths, `sandbox_deny`.
    pub fn listed_hidden(&self, limits: &Limits) -> Vec<PathBuf> {
        let mut denied: Vec<PathBuf> = DENIED_SYSTEM.iter().map(PathBuf::from).collect();
        for home in &self.homes {
            denied.extend(DENIED_IN_HOME.iter().map(|d| home.join(d)));
        }
        denied.extend(self.warden.iter().cloned());
        denied.extend(limits.sandbox_deny.iter().cloned());
        let mut seen = std::collections::HashSet::new();
        denied.retain(|p| seen.insert(p.clone()));
        denied
    }

    /// [`Places::listed_hidden`], resolved (a hidden path reached through a symlinked `/home`
    /// is hidden where it really is; one that does not exist yet, where it would be), without
    /// those inside another. A path that does not exist is kept: the sandbox must not show it
    /// when it appears while the server runs.
    fn hidden(&self, limits: &Limits) -> Vec<PathBuf> {
        let all = unique(
            self.listed_hidden(limits)
                .iter()
                .filter_map(|p| resolved_leniently(p)),
        );
        all.iter()
            .filter(|p| !all.iter().any(|q| q != *p && p.starts_with(q)))
            .cloned()
            .collect()
    }

    /// How bubblewrap hides [`Places::hidden`] for the whole session:
    /// - an entry of a home (`~/.netrc`, `~/.aws`): the home is made afresh, a tmpfs with its
    ///   other entries bound back read-only, so neither a hidden file replaced by a rename
    ///   (which would take a mask on the file itself away) nor one made while the server runs
    ///   ever shows;
    /// - a file elsewhere: the same for its folder;
    /// - a folder elsewhere: a tmpfs on it; one of the keys' folders ([`MADE_IF_MISSING`]) that
    ///   does not exist yet is made first, empty and 0700, so it is hidden once made; another
    ///   path not made yet: its folder is rebuilt, unless it is one of the home's large shared
    ///   folders ([`SHARED_IN_HOME`]);
    /// - inside a grant (whose rebuild would lose the server's new files), under the sandbox's
    ///   own `/tmp`, or right under `/`: covered where it is, if it exists.
    ///
    /// Every bind costs the start about 0.4 ms, which is why only homes and the folders of
    /// hidden files are rebuilt.
    fn masks(&self, limits: &Limits) -> Masks {
        let hidden = self.hidden(limits);
        let grants = resolved(limits.sandbox_write.clone());
        let homes = resolved(self.homes.clone());
        let kept: Vec<PathBuf> = homes
            .iter()
            .cloned()
            .chain(resolved(self.cwd.iter().cloned().collect()))
            .collect();
        // Under /tmp (the sandbox's own) only a home or working folder kept readable there is
        // rebuilt: another would show what the private /tmp leaves out.
        let rebuildable = |p: &Path| {
            p != Path::new("/")
                && (!p.starts_with("/tmp")
                    || p != Path::new("/tmp") && kept.iter().any(|k| p.starts_with(k)))
        };
        let mut masks = Masks::default();
        let mut rebuild = |p: &Path| {
            if !masks.rebuilt.iter().any(|r| r == p) {
                masks.rebuilt.push(p.to_owned());
            }
        };
        // The home's large shared folders are not rebuilt for a path that is not there yet
        // (each entry costs a bind): what a program makes there while the server runs shows.
        let shared: Vec<PathBuf> = homes
            .iter()
            .flat_map(|h| SHARED_IN_HOME.iter().map(move |d| h.join(d)))
            .collect();
        let mut covered = Vec::new();
        for h in &hidden {
            let Some(parent) = h.parent() else { continue };
            if grants.iter().any(|g| h.starts_with(g)) || !rebuildable(parent) {
                if h.exists() {
                    covered.push(h.clone());
                }
            } else if homes.iter().any(|home| home == parent) {
                rebuild(parent);
            } else if h.is_dir() {
                covered.push(h.clone());
            } else if h.exists() {
                rebuild(parent);
            } else if parent.is_dir()
                && homes
                    .iter()
                    .any(|home| MADE_IF_MISSING.iter().any(|m| home.join(m) == *h))
                && private_dirs(h).is_ok()
            {
                covered.push(h.clone());
            } else if parent.is_dir() && !shared.iter().any(|f| f == parent) {
                // A client's own folder, say: made afresh, so the file shows not when made.
                rebuild(parent);
            }
        }
        // A folder before the ones inside it: each is rebuilt in what its parent's rebuild made.
        masks.rebuilt.sort_by_key(|p| p.components().count());
        masks.covered = covered;
        masks.hidden = hidden;
        masks
    }

    /// The folders in the server's grants that hold a read-only name ([`holders_in`]).
    fn holders(&self, limits: &Limits) -> Vec<PathBuf> {
        let grants = resolved(limits.sandbox_write.clone());
        unique(grants.iter().flat_map(|g| holders_in(g)))
    }

    /// The paths that stay read-only inside the server's grants ([`READ_ONLY_IN_GRANTS`]),
    /// resolved, for those that exist.
    fn read_only(&self, limits: &Limits) -> Vec<PathBuf> {
        let grants = resolved(limits.sandbox_write.clone());
        unique(grants.iter().flat_map(|g| read_only_in(g)))
    }

    /// Folders under `/tmp` that stay readable under the sandbox's own `/tmp`: [`Places::kept`]
    /// under `/tmp`.
    fn under_tmp(&self, command: &[OsString]) -> Vec<PathBuf> {
        self.kept(command)
            .into_iter()
            .filter(|d| d.starts_with("/tmp") && d != Path::new("/tmp"))
            .collect()
    }

    /// The folders a sandbox that hides `/tmp` keeps readable when they lie there (resolved):
    /// the server's program's folder (a venv, a download), its working folder, the homes,
    /// and the folder of Warden's own program (the network's helper and the fallback run it
    /// in the sandbox).
    fn kept(&self, command: &[OsString]) -> Vec<PathBuf> {
        let program = command.first().map(PathBuf::from).and_then(|p| {
            if p.is_absolute() {
                Some(p)
            } else {
                warden_config::paths::find_on_path(p.as_os_str())
            }
        });
        let mut dirs: Vec<PathBuf> = program
            .as_deref()
            .and_then(Path::parent)
            .into_iter()
            .map(Path::to_owned)
            .collect();
        dirs.extend(self.cwd.iter().cloned());
        dirs.extend(self.homes.iter().cloned());
        dirs.extend(
            self.helper
                .as_deref()
                .and_then(Path::parent)
                .map(Path::to_owned),
        );
        resolved(dirs)
    }

    /// The folders the server may write: its grants (resolved) and its own folder, created
    /// ([`own_dirs`]: through no link the server planted in it; `own` itself is Warden's).
    fn writable(&self, limits: &Limits) -> (Vec<PathBuf>, Option<PathBuf>) {
        let own = self.own.as_ref().and_then(|own| {
            own_dirs(own).ok()?;
            own.canonicalize().ok()
        });
        (resolved(limits.sandbox_write.clone()), own)
    }
}

/// The server's own folder's parts: npm's cache, uv's cache, tools and Pythons, pip's cache,
/// other tools' caches, and its temp files.
const OWN_DIRS: &[&str] = &[
    "npm",
    "uv/cache",
    "uv/tools",
    "uv/python",
    "pip",
    "cache",
    "tmp",
];

/// The variables that point the package runners (and other tools) at the server's own
/// folder: the user's caches are read-only to it.
fn own_env(own: &Path, private_tmp: bool) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = [
        ("npm_config_cache", "npm"),
        ("UV_CACHE_DIR", "uv/cache"),
        ("UV_TOOL_DIR", "uv/tools"),
        ("UV_PYTHON_INSTALL_DIR", "uv/python"),
        ("PIP_CACHE_DIR", "pip"),
        ("XDG_CACHE_HOME", "cache"),
    ]
    .iter()
    .map(|(k, d)| (OsString::from(k), own.join(d).into_os_string()))
    .collect();
    if !private_tmp {
        env.push(("TMPDIR".into(), own.join("tmp").into_os_string()));
    }
    env
}

/// Creates the server's own folder `own` (with its missing parents, Warden's state) and its
/// parts ([`OWN_DIRS`]), 0700, following no symbolic link below `own`: the server writes
/// there, and a link it planted (`npm` or `tmp` pointing at a folder of the user's) would
/// have Warden make folders through it on the next start. Each part is made and opened
/// relative to its parent's descriptor, without following a link (`O_NOFOLLOW`), so a
/// link swapped in meanwhile (by another bridge's server of the same name) is met too.
/// `Err`: why, with the path to delete when a link or a file stands where a part goes.
fn own_dirs(own: &Path) -> Result<(), String> {
    private_dirs(own)
        .map_err(|e| format!("its own folder {} cannot be made ({e})", own.display()))?;
    #[cfg(unix)]
    {
        use rustix::fs::{CWD, Mode, OFlags, mkdirat, openat};
        use rustix::io::Errno;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fail = |path: &Path, e: Errno| {
            if e == Errno::LOOP || e == Errno::NOTDIR {
                format!(
                    "its own folder holds {} as a symbolic link or a file where Warden keeps a folder (the server writes there: a link it planted would have Warden make folders wherever it points); Warden follows no link there. Delete {} (it is made again at the next start)",
                    path.display(),
                    path.display()
                )
            } else {
                format!("its own folder's {} cannot be made ({e})", path.display())
            }
        };
        let root = openat(CWD, own, flags, Mode::empty()).map_err(|e| fail(own, e))?;
        for sub in OWN_DIRS {
            let mut path = own.to_owned();
            let mut dir: Option<OwnedFd> = None;
            for part in sub.split('/') {
                path.push(part);
                let parent = dir.as_ref().unwrap_or(&root);
                match mkdirat(parent, part, Mode::from_raw_mode(0o700)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(fail(&path, e)),
                }
                dir = Some(openat(parent, part, flags, Mode::empty()).map_err(|e| fail(&path, e))?);
            }
        }
    }
    #[cfg(not(unix))]
    for sub in OWN_DIRS {
        private_dirs(&own.join(sub))
            .map_err(|e| format!("its own folder {} cannot be made ({e})", own.display()))?;
    }
    Ok(())
}

/// Creates `dir` and its missing parents, 0700.
fn private_dirs(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)
}

/// `paths` that exist, with their symlinks resolved, each once.
fn resolved(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    unique(paths.iter().filter_map(|p| p.canonicalize().ok()))
}

/// `paths` each once, in their first order.
fn unique(paths: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for p in paths {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// `path` with its symlinks resolved as far as it exists, the rest as named (a path with `..`
/// after the part that exists is not taken: it could name anything once made).
fn resolved_leniently(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = path.canonicalize() {
        return Some(p);
    }
    let mut base = path;
    let mut rest: Vec<&OsStr> = Vec::new();
    loop {
        rest.push(base.file_name()?);
        base = base.parent()?;
        if let Ok(b) = base.canonicalize() {
            return Some(rest.iter().rev().fold(b, |p, part| p.join(part)));
        }
    }
}

/// What bubblewrap does to hide [`Places::hidden`] (see [`Places::masks`]).
#[derive(Debug, Default)]
struct Masks {
    /// Folders made afresh, each with its entries but the hidden ones bound back, parents first.
    rebuilt: Vec<PathBuf>,
    /// Paths covered where they are (a tmpfs on a folder, `/dev/null` on a file).
    covered: Vec<PathBuf>,
    /// Every hidden path, resolved: the entries a rebuilt folder leaves out.
    hidden: Vec<PathBuf>,
}

/// The paths of [`READ_ONLY_IN_GRANTS`] that exist in the folder `grant`, resolved, inside
/// it: a symlinked one that points out of the grant is left out (what lies outside the grants
/// is read-only or hidden already, and mounting or allowing what it points to would show a
/// hidden path: a server could plant `.idea -> ../../.ssh`). For the window too, which shows
/// them beside each grant.
pub fn read_only_in(grant: &Path) -> Vec<PathBuf> {
    let Ok(root) = grant.canonicalize() else {
        return Vec::new();
    };
    let git = root.join(".git");
    let names = READ_ONLY_IN_GRANTS.iter().map(|n| root.join(n));
    // A linked work tree's `.git` is a file that names its git folder: read-only whole.
    let candidates: Vec<PathBuf> = if git.is_file() {
        std::iter::once(git).chain(names).collect()
    } else {
        names.collect()
    };
    unique(
        candidates
            .iter()
            .filter_map(|p| p.canonicalize().ok())
            .filter(|r| r.starts_with(&root) && *r != root),
    )
}

/// The folders in `grant` that hold a read-only name ([`HOLDERS`]), resolved, inside it: bound
/// onto themselves, they become mount points, which cannot be renamed or removed, so a server
/// cannot move `.git` aside and make a new one with a config of its own.
fn holders_in(grant: &Path) -> Vec<PathBuf> {
    let Ok(root) = grant.canonicalize() else {
        return Vec::new();
    };
    HOLDERS
        .iter()
        .filter_map(|h| root.join(h).canonicalize().ok())
        .filter(|p| p.starts_with(&root) && *p != root && p.is_dir())
        .collect()
}

/// Refuses (`W-SANDBOX-GRANT`) a write grant that would let the server change what runs
/// outside the sandbox later: a home or a folder that holds one (its shell's start-up files),
/// a folder on `PATH` or one that holds one, or a folder inside a name that stays read-only
/// (in a home or in another grant).
fn check_grants(limits: &Limits, places: &Places) -> Result<(), Refused> {
    let grants = resolved(limits.sandbox_write.clone());
    let homes = resolved(places.homes.clone());
    let mut on_path: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .filter(|d| d.is_absolute())
                .collect()
        })
        .unwrap_or_default();
    // The user's own program folders, on the PATH of their shell if not of the IDE's.
    for home in &homes {
        on_path.extend([".local/bin", "bin", ".cargo/bin"].map(|d| home.join(d)));
    }
    let on_path = resolved(on_path);
    let refuse = |grant: &Path, why: String| {
        Err(Refused::new(
            Code::SandboxGrant,
            &format!(
                "its `sandbox_write` grants {}, {why}: a program run outside the sandbox later would run what the server wrote there",
                grant.display()
            ),
        ))
    };
    // A grant is judged where it leads: one reached through a link in a home (a cloned
    // repository's `out -> ../../.config`) would grant what the link points to.
    for g in &limits.sandbox_write {
        let Some(home) = places
            .homes
            .iter()
            .chain(homes.iter())
            .find(|h| g.starts_with(h))
        else {
            continue;
        };
        let mut at = home.clone();
        for part in g.strip_prefix(home).into_iter().flat_map(Path::components) {
            at.push(part);
            if at
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink())
            {
                return refuse(
                    g,
                    format!(
                        "through the link {}: grant the folder it points to, if that is what you mean",
                        at.display()
                    ),
                );
            }
        }
    }
    for g in &grants {
        if let Some(home) = homes.iter().find(|h| h.starts_with(g)) {
            return refuse(
                g,
                if home == g {
                    "the home folder".to_owned()
                } else {
                    format!("which holds the home folder {}", home.display())
                },
            );
        }
        if let Some(dir) = on_path.iter().find(|d| d.starts_with(g)) {
            return refuse(
                g,
                format!("which holds {}, a folder on PATH", dir.display()),
            );
        }
        if let Some(dir) = homes
            .iter()
            .flat_map(|h| RUN_LATER_IN_HOME.iter().map(move |d| h.join(d)))
            .find(|d| d.starts_with(g) || g.starts_with(d))
        {
            return refuse(
                g,
                format!(
                    "which is, holds or lies in {}, which other programs run from",
                    dir.display()
                ),
            );
        }
        for root in homes.iter().chain(grants.iter().filter(|o| *o != g)) {
            if let Some(name) = READ_ONLY_IN_GRANTS
                .iter()
                .find(|n| g.starts_with(root.join(n)))
            {
                return refuse(
                    g,
                    format!(
                        "which lies in {}, read-only in every sandbox",
                        root.join(name).display()
                    ),
                );
            }
        }
    }
    Ok(())
}

/// Why a sandboxed server was not started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub code: Code,
    pub cause: String,
}

impl Refused {
    fn new(code: Code, why: &str) -> Refused {
        Refused {
            code,
            cause: format!("was not started: its config says `sandbox = \"on\"`, and {why}"),
        }
    }
}

/// The mode's name from its number in the session's links (0 off, 1 bwrap, 2 landlock,
/// 3 seatbelt).
pub fn mode_name(n: u8) -> &'static str {
    match n {
        1 => BWRAP,
        2 => LANDLOCK,
        3 => SEATBELT,
        _ => "off",
    }
}

/// The mode's number for the session's links.
pub fn mode_number(mode: &str) -> u8 {
    match mode {
        BWRAP => 1,
        LANDLOCK => 2,
        SEATBELT => 3,
        _ => 0,
    }
}

/// How a server process is started: its command line, its environment when the sandbox
/// clears it, and what confines it right before it execs.
pub struct Launch {
    pub argv: Vec<OsString>,
    /// `off`, `bwrap` or `landlock`, as `warden status` shows it.
    pub mode: &'static str,
    /// `Some`: the server's whole environment (the `--secret-env` values and
    /// `WARDEN_SESSION` are added to it); `None`: the bridge's, inherited.
    pub env: Option<Vec<(OsString, OsString)>>,
    pub confine: Option<Confine>,
    /// A `sandbox_network` list: the way to the proxy the bridge starts with the server.
    #[cfg(unix)]
    pub net: Option<Net>,
}

impl Launch {
    /// `argv` as it is, unsandboxed.
    pub fn plain(argv: Vec<OsString>) -> Launch {
        Launch {
            argv,
            mode: "off",
            env: None,
            confine: None,
            #[cfg(unix)]
            net: None,
        }
    }
}

#[cfg(unix)]
/// What the proxy of a server with a `sandbox_network` list needs: the list (presets
/// expanded) and where it listens.
pub struct Net {
    pub list: Vec<network::Dest>,
    pub way: Way,
}

/// Where the proxy listens.
#[cfg(unix)]
pub enum Way {
    /// bubblewrap: inside the server's network namespace. The sandbox's helper sends the
    /// listener over `ours`; `theirs` is the end the server process inherits (closed in the
    /// bridge once it is spawned).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Inside { ours: OwnedFd, theirs: OwnedFd },
    /// Landlock and Seatbelt: on the host's loopback, the one port the server may connect to.
    Host(std::net::TcpListener),
}

/// The variables that send HTTP clients (curl, Python, uv, pip, npm, Node's fetch with
/// `NODE_USE_ENV_PROXY`) through the proxy at `url`.
fn proxy_env(url: &str) -> Vec<(OsString, OsString)> {
    [
        ("HTTP_PROXY", url),
        ("HTTPS_PROXY", url),
        ("http_proxy", url),
        ("https_proxy", url),
        ("npm_config_proxy", url),
        ("npm_config_https_proxy", url),
        ("NODE_USE_ENV_PROXY", "1"),
    ]
    .iter()
    .map(|(k, v)| (OsString::from(k), OsString::from(v)))
    .collect()
}

/// Landlock and Seatbelt: with a `sandbox_network` list, the proxy's listener on the host's
/// loopback (the one port the server may connect to), its port, and the list expanded.
#[cfg(unix)]
#[allow(clippy::type_complexity)]
fn host_proxy(
    limits: &Limits,
    places: &Places,
) -> Result<Option<((std::net::TcpListener, u16), Vec<network::Dest>)>, Refused> {
    let Some(list) = limits.sandbox_network.list() else {
        return Ok(None);
    };
    let l = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr().map(|a| (l, a.port())))
        .map_err(|e| {
            Refused::new(
                Code::SandboxUnavailable,
                &format!("its `sandbox_network` proxy cannot listen on 127.0.0.1 ({e})"),
            )
        })?;
    Ok(Some((l, expanded(list, places))))
}

#[cfg(unix)]
/// The list with its presets expanded: the runner's mirror from the bridge's environment and
/// the `.npmrc` of each home: the user's own configuration. Never the working folder's: a
/// cloned repository (or the server itself, which may write there, then a restart) would
/// choose what the server may reach.
fn expanded(list: &[network::Entry], places: &Places) -> Vec<network::Dest> {
    let npmrc: Vec<String> = places
        .homes
        .iter()
        .filter_map(|d| std::fs::read_to_string(d.join(".npmrc")).ok())
        .collect();
    network::expand(list, |k| std::env::var(k).ok(), &npmrc)
}

/// What confines the server process in its last step before exec (after the reaper split
/// off, so only the server is confined): the system-call filter always, Landlock's rules in
/// that mode.
pub struct Confine {
    #[cfg(target_os = "linux")]
    filter: seccomp::Filter,
    #[cfg(target_os = "linux")]
    landlock: Option<landlock::Rules>,
}

impl Confine {
    #[cfg(not(target_os = "linux"))]
    pub fn apply_before_exec(self, _: &mut tokio::process::Command) {}

    /// Confines the server in the forked child, right before it execs.
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    pub fn apply_before_exec(self, cmd: &mut tokio::process::Command) {
        let Confine {
            filter,
            mut landlock,
        } = self;
        // SAFETY: runs in the forked child before exec, and makes only system calls: Landlock's
        // (prctl, landlock_restrict_self, close) and the filter's (prctl, seccomp), on data
        // built before the fork; the errors are preallocated.
        unsafe {
            cmd.pre_exec(move || {
                if let Some(rules) = landlock.take() {
                    rules.restrict_self()?;
                }
                filter.apply()
            });
        }
    }
}

/// The command a server process runs: `command` as it is, or in the sandbox when `limits`
/// ask for it: bubblewrap, else Landlock (degraded: reported), as `sandbox_mode` allows,
/// never unsandboxed (why not is the answer).
pub fn launch(command: &[OsString], limits: &Limits, places: &Places) -> Result<Launch, Refused> {
    if !limits.sandbox {
        return Ok(Launch::plain(command.to_vec()));
    }
    if !cfg!(any(target_os = "linux", target_os = "macos")) {
        return Err(Refused::new(
            Code::SandboxUnavailable,
            "Warden's sandbox exists on Linux and macOS only so far",
        ));
    }
    if let Some(runner) = container_runner(command) {
        return Err(Refused::new(
            Code::SandboxContainer,
            &format!(
                "`{runner}` runs its server in the container runner's daemon, outside any sandbox Warden can make"
            ),
        ));
    }
    if let Some(own) = &places.own {
        own_dirs(own).map_err(|why| Refused::new(Code::SandboxOwnFolder, &why))?;
    }
    check_grants(limits, places)?;
    // Every other hidden path lies in `/`: hiding it would hide nothing under bubblewrap
    // (which hides each path inside another once) and everything under Landlock.
    if places.hidden(limits).iter().any(|h| h.parent().is_none()) {
        return Err(Refused::new(
            Code::SandboxUnavailable,
            "a path it must hide is `/` itself (a `sandbox_deny` entry, or a Warden folder at the top: `XDG_RUNTIME_DIR`, `WARDEN_SOCKET`'s or the config file's): hiding it would leave the sandbox nothing to show; name the folders to hide instead",
        ));
    }
    #[cfg(target_os = "linux")]
    return linux::launch(command, limits, places);
    #[cfg(target_os = "macos")]
    return macos::launch(command, limits, places);
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let _ = places;
        unreachable!("refused above")
    }
}

/// Programs that run the command in their arguments: it may be a runner.
const WRAPPERS: &[&str] = &[
    "env",
    "nice",
    "nohup",
    "timeout",
    "stdbuf",
    "setsid",
    "ionice",
    "chrt",
    "taskset",
    "exec",
    "sudo",
    "doas",
    "time",
    "command",
    "busybox",
    "flock",
    "caffeinate",
    "arch",
];

/// Shells: the command text of `-c` (or a script's arguments) may start a runner.
const SHELLS: &[&str] = &[
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "mksh",
    "ash",
    "fish",
    "cmd",
    "powershell",
    "pwsh",
];

/// The container runner `command` starts, if it is one that can be seen in its command line:
/// - its program, by file name (any case, without `.exe` or lima's `.lima`), as written and
///   with its symlinks resolved (found on `PATH` when it has no `/`): `/usr/local/bin/dk`
///   linked to `docker` is `docker`;
/// - after a wrapper ([`WRAPPERS`]: `env`, `nice`, `timeout`, `sudo`, ...) or a shell
///   ([`SHELLS`]: `sh -c "…"`), a runner named anywhere in the rest of the command line,
///   each argument split into words at spaces and shell punctuation (`env -S "docker run"`,
///   `sh -c "cd x && docker run …"`, `timeout 5 docker`). Their options are not parsed: a
///   wrapped command that only mentions a runner's name as an argument is refused too (run
///   it without the wrapper).
///
/// This is a clear refusal for the command lines that start a runner, not the boundary: a
/// program that starts one in a way its command line does not show (a script) meets the
/// sandbox, which hides the runners' sockets (`/run`, the runtime dir) and allows no UNIX
/// socket.
fn container_runner(command: &[OsString]) -> Option<String> {
    /// The file name as compared: lowercase, without `.exe` or `.lima`.
    fn name_of(word: &Path) -> Option<String> {
        let name = word.file_name()?.to_str()?.to_ascii_lowercase();
        let name = name.strip_suffix(".exe").unwrap_or(&name);
        Some(name.strip_suffix(".lima").unwrap_or(name).to_owned())
    }
    /// `word` as written, then the program it names with its symlinks resolved.
    fn names(word: &str) -> Vec<String> {
        let path = Path::new(word);
        let found = if word.contains('/') {
            Some(path.to_owned())
        } else {
            warden_config::paths::find_on_path(path.as_os_str())
        };
        let real = found.and_then(|p| p.canonicalize().ok());
        name_of(path)
            .into_iter()
            .chain(real.as_deref().and_then(name_of))
            .collect()
    }
    let runner = |word: &str| {
        names(word)
            .into_iter()
            .find(|n| CONTAINER_RUNNERS.contains(&n.as_str()))
    };
    let program = command.first()?.to_str()?;
    if let Some(r) = runner(program) {
        return Some(r);
    }
    let starts_others = names(program)
        .iter()
        .any(|n| WRAPPERS.contains(&n.as_str()) || SHELLS.contains(&n.as_str()));
    if !starts_others {
        return None;
    }
    let split = |c: char| c.is_whitespace() || ";|&()<>`'\"$={}\\,".contains(c);
    command[1..]
        .iter()
        .filter_map(|a| a.to_str())
        .flat_map(|a| a.split(split))
        // `env -Sdocker`: the split string attached to its option.
        .map(|w| w.strip_prefix("-S").unwrap_or(w))
        .filter(|w| !w.is_empty() && !w.starts_with('-'))
        .find_map(runner)
}

/// The sandboxed server's environment: [`KEPT_ENV`] and `LC_*` from the bridge's, the
/// `--pass-env` names, and its own folders' variables.
fn cleared_env(
    places: &Places,
    own: Option<&Path>,
    private_tmp: bool,
    proxy: Option<&str>,
) -> Vec<(OsString, OsString)> {
    let keep = |name: &OsStr| {
        let n = name.to_string_lossy();
        KEPT_ENV.contains(&n.as_ref())
            || n.starts_with("LC_")
            || places.pass_env.iter().any(|p| p.as_str() == n)
    };
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os().filter(|(k, _)| keep(k)).collect();
    if let Some(own) = own {
        let set = own_env(own, private_tmp);
        env.retain(|(k, _)| !set.iter().any(|(s, _)| s == k));
        env.extend(set);
    }
    // `~/.npmrc` is hidden (its tokens): its registries reach npm as variables instead, a
    // URL with a password in it excepted. A variable of the bridge's environment wins.
    for (key, url) in npm_registries(places) {
        let key = OsString::from(format!("npm_config_{key}"));
        if !env.iter().any(|(k, _)| *k == key) {
            env.push((key, url.into()));
        }
    }
    if let Some(url) = proxy {
        let set = proxy_env(url);
        env.retain(|(k, _)| !set.iter().any(|(s, _)| s == k));
        env.extend(set);
    }
    env
}

/// The registries the `.npmrc` of each home names (the first home's setting of a key wins),
/// without those whose URL holds a user or password.
fn npm_registries(places: &Places) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for text in places
        .homes
        .iter()
        .filter_map(|h| std::fs::read_to_string(h.join(".npmrc")).ok())
    {
        for (key, url) in warden_config::network::npmrc_registry_settings(&text) {
            let authority = url.split("://").nth(1).unwrap_or("").split('/').next();
            if !authority.is_some_and(|a| a.contains('@')) && !out.iter().any(|(k, _)| *k == key) {
                out.push((key, url));
            }
        }
    }
    out
}

#[cfg(target_os = "linux")]
mod linux {
    use super::*;

    pub(super) fn launch(
        command: &[OsString],
        limits: &Limits,
        places: &Places,
    ) -> Result<Launch, Refused> {
        // The filter's sockets: bubblewrap gives the server a network namespace of its own
        // unless its network is the host's, and sets it up under the filter.
        let filter = |namespaced| {
            seccomp::Filter::new(seccomp::Sockets::of(&limits.sandbox_network, namespaced)).map_err(
                |e| {
                    Refused::new(
                        Code::SandboxUnavailable,
                        &format!("its system-call filter cannot be made here ({e})"),
                    )
                },
            )
        };
        let bwrap = match limits.sandbox_mode {
            SandboxMode::Landlock => None,
            SandboxMode::Auto | SandboxMode::Bwrap => bwrap::program(),
        };
        if let Some(bwrap) = bwrap.as_ref().filter(|_| works()) {
            let (_, own) = places.writable(limits);
            let mut a = argv(bwrap, command, limits, places);
            let mut net = None;
            let mut proxy = None;
            if let Some(list) = limits.sandbox_network.list() {
                let helper = places.helper.as_ref().ok_or_else(|| {
                    Refused::new(
                        Code::SandboxUnavailable,
                        "Warden cannot find its own program to reach the proxy of its `sandbox_network` list",
                    )
                })?;
                let (ours, theirs) = std::os::unix::net::UnixStream::pair().map_err(|e| {
                    Refused::new(
                        Code::SandboxUnavailable,
                        &format!("the way to its `sandbox_network` proxy cannot be made ({e})"),
                    )
                })?;
                let theirs = OwnedFd::from(theirs);
                let at = a.len() - command.len();
                let fd = std::os::fd::AsRawFd::as_raw_fd(&theirs).to_string();
                a.splice(
                    at..at,
                    [
                        helper.as_os_str().into(),
                        HELPER.into(),
                        fd.into(),
                        "--".into(),
                    ],
                );
                net = Some(Net {
                    list: expanded(list, places),
                    way: Way::Inside {
                        ours: OwnedFd::from(ours),
                        theirs,
                    },
                });
                proxy = Some(format!("http://127.0.0.1:{PORT_INSIDE}"));
            }
            return Ok(Launch {
                argv: a,
                mode: BWRAP,
                env: Some(cleared_env(places, own.as_deref(), true, proxy.as_deref())),
                confine: Some(Confine {
                    filter: filter(true)?,
                    landlock: None,
                }),
                net,
            });
        }
        let why_not_bwrap = match (limits.sandbox_mode, &bwrap) {
            (SandboxMode::Landlock, _) => None,
            (_, Some(_)) => Some((
                Code::SandboxUsernsDenied,
                "bubblewrap may not create the user namespaces of its sandbox here",
            )),
            (_, None) => Some((
                Code::SandboxUnavailable,
                "bubblewrap (`bwrap`) is not installed in /usr/bin, /bin or /usr/local/bin",
            )),
        };
        if limits.sandbox_mode == SandboxMode::Bwrap {
            let (code, why) = why_not_bwrap.unwrap_or((Code::SandboxUnavailable, ""));
            return Err(Refused::new(
                code,
                &format!("{why}; `sandbox_mode = \"bwrap\"` allows no other sandbox"),
            ));
        }
        let listener = host_proxy(limits, places)?;
        let proxy_port = listener.as_ref().map(|((_, port), _)| *port);
        match landlock::Rules::new(command, limits, places, proxy_port) {
            Ok((rules, own)) => Ok(Launch {
                argv: command.to_vec(),
                mode: LANDLOCK,
                env: Some(cleared_env(
                    places,
                    own.as_deref(),
                    false,
                    proxy_port
                        .map(|p| format!("http://127.0.0.1:{p}"))
                        .as_deref(),
                )),
                confine: Some(Confine {
                    filter: filter(false)?,
                    landlock: Some(rules),
                }),
                net: listener.map(|((l, _), list)| Net {
                    list,
                    way: Way::Host(l),
                }),
            }),
            Err(landlock_why) => Err(match why_not_bwrap {
                Some((code, why)) => Refused::new(code, &format!("{why}, and {landlock_why}")),
                None => Refused::new(landlock_why.code(), &landlock_why.to_string()),
            }),
        }
    }
}

/// macOS: the server under `sandbox-exec` with its Seatbelt profile (`seatbelt.rs`).
#[cfg(target_os = "macos")]
mod macos {
    use super::*;

    pub(super) fn launch(
        command: &[OsString],
        limits: &Limits,
        places: &Places,
    ) -> Result<Launch, Refused> {
        if !warden_config::paths::is_executable(Path::new(seatbelt::SANDBOX_EXEC)) {
            return Err(Refused::new(
                Code::SandboxUnavailable,
                &format!("{} is missing", seatbelt::SANDBOX_EXEC),
            ));
        }
        if matches!(
            limits.sandbox_mode,
            SandboxMode::Bwrap | SandboxMode::Landlock
        ) {
            return Err(Refused::new(
                Code::SandboxUnavailable,
                "its `sandbox_mode` asks for a Linux sandbox; on macOS the sandbox is Seatbelt (`sandbox_mode = \"auto\"`)",
            ));
        }
        // A `sandbox_network` list: the proxy listens on the host's loopback, the one port
        // the profile lets the server connect to.
        let net = host_proxy(limits, places)?;
        let port = net.as_ref().map(|((_, port), _)| *port);
        let plan = seatbelt::Plan::new(command, limits, places, port);
        let profile = seatbelt::profile(&plan)
            .map_err(|e| Refused::new(Code::SandboxUnavailable, &e.to_string()))?;
        let proxy = port.map(|p| format!("http://127.0.0.1:{p}"));
        Ok(Launch {
            argv: seatbelt::argv(profile, command),
            mode: SEATBELT,
            env: Some(cleared_env(
                places,
                plan.own.as_deref(),
                false,
                proxy.as_deref(),
            )),
            confine: None,
            net: net.map(|((l, _), list)| Net {
                list,
                way: Way::Host(l),
            }),
        })
    }
}

// Windows has no sandbox to test (refused: W-SANDBOX-UNAVAILABLE).
#[cfg(all(test, unix))]
mod tests;
