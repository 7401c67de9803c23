//! The per-server sandbox (`sandbox = "on"`, Linux): the server runs under bubblewrap, with
//! the whole file system read-only, a private /tmp, a minimal /dev and /proc, its own pid
//! namespace, writes only to `sandbox_write` and its package runner's cache, the deny list
//! hidden, and no network unless `sandbox_network = "host"`.
//!
//! A sandbox that cannot be set up is never skipped: [`launch`] refuses, and the client's
//! `initialize` gets `spawn_failed` with the code ([`Code::SandboxUnavailable`]); bubblewrap
//! refused user namespaces (AppArmor on Ubuntu 23.10+) is recognised in its stderr
//! ([`userns_denied`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::codes::Code;
use crate::config::Limits;

/// What the sandbox is, as `warden status` shows it.
pub const BWRAP: &str = "bwrap";
/// The fallback where bubblewrap cannot make a sandbox (user namespaces refused).
pub const LANDLOCK: &str = "landlock";

/// Folders package runners write to, made writable (and created when missing, as the runner
/// would): without them `npx -y` and `uvx` cannot start.
const RUNNER_CACHES: &[&str] = &[".npm", ".cache/uv", ".local/share/uv"];

/// Hidden from every sandboxed server: keys and tokens of the usual tools.
const DENIED_IN_HOME: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".netrc",
    ".config/gh",
    ".local/share/keyrings",
];

/// The places of this machine the sandbox is built from.
#[derive(Debug, Clone)]
pub struct Places {
    pub home: Option<PathBuf>,
    /// Hidden too: Warden's config, its state (logs, pins, ledger, backups), the control
    /// socket's folder and the session's runtime folder (the D-Bus socket, the keychain's
    /// way in).
    pub warden: Vec<PathBuf>,
    pub cwd: Option<PathBuf>,
}

impl Places {
    pub fn of_this_process(config: Option<&Path>) -> Places {
        let mut warden = vec![crate::paths::state_dir()];
        if let Some(dir) = config.and_then(Path::parent) {
            warden.push(dir.to_owned());
        }
        if let Some(socket) = crate::control::socket::socket_path().parent() {
            warden.push(socket.to_owned());
        }
        if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
            warden.push(PathBuf::from(run));
        }
        Places {
            home: crate::paths::home_dir(),
            warden,
            cwd: std::env::current_dir().ok(),
        }
    }
}

/// Why a sandboxed server was not started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub code: Code,
    pub cause: String,
}

/// The mode's name from its number in the session's links (0 off, 1 bwrap, 2 landlock).
pub fn mode_name(n: u8) -> &'static str {
    match n {
        1 => BWRAP,
        2 => LANDLOCK,
        _ => "off",
    }
}

/// The mode's number for the session's links.
pub fn mode_number(mode: &str) -> u8 {
    match mode {
        BWRAP => 1,
        LANDLOCK => 2,
        _ => 0,
    }
}

/// How a server process is started: its command line, and the Landlock confinement when
/// that is the sandbox (bubblewrap cannot make one here).
pub struct Launch {
    pub argv: Vec<OsString>,
    /// `off`, `bwrap` or `landlock`, as `warden status` shows it.
    pub mode: &'static str,
    pub confine: Option<Confine>,
}

impl Launch {
    /// `argv` as it is, unsandboxed.
    pub fn plain(argv: Vec<OsString>) -> Launch {
        Launch {
            argv,
            mode: "off",
            confine: None,
        }
    }
}

/// The command a server process runs: `command` as it is, or in the sandbox when `limits`
/// ask for it: bubblewrap, else Landlock (degraded: reported), never unsandboxed (why not is
/// the answer).
pub fn launch(command: &[OsString], limits: &Limits, places: &Places) -> Result<Launch, Refused> {
    if !limits.sandbox {
        return Ok(Launch::plain(command.to_vec()));
    }
    if !cfg!(target_os = "linux") {
        return Err(Refused {
            code: Code::SandboxUnavailable,
            cause: "was not started: its config says `sandbox = \"on\"`, and Warden's sandbox is Linux-only so far".into(),
        });
    }
    let bwrap = crate::paths::find_on_path(BWRAP.as_ref());
    if let Some(bwrap) = bwrap.as_ref().filter(|_| works()) {
        return Ok(Launch {
            argv: argv(bwrap, command, limits, places),
            mode: BWRAP,
            confine: None,
        });
    }
    #[cfg(target_os = "linux")]
    if let Some(confine) = Confine::new(limits, places) {
        return Ok(Launch {
            argv: command.to_vec(),
            mode: LANDLOCK,
            confine: Some(confine),
        });
    }
    Err(match bwrap {
        Some(_) => Refused {
            code: Code::SandboxUsernsDenied,
            cause: "was not started: its config says `sandbox = \"on\"`, bubblewrap may not create the user namespaces of its sandbox here, and Landlock is not available either".into(),
        },
        None => Refused {
            code: Code::SandboxUnavailable,
            cause: "was not started: its config says `sandbox = \"on\"`, bubblewrap (`bwrap`) is not on the PATH, and Landlock is not available either".into(),
        },
    })
}

/// The bubblewrap command line (pure: paths are only looked at, never created, but for the
/// runner caches).
pub fn argv(bwrap: &Path, command: &[OsString], limits: &Limits, places: &Places) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec![bwrap.into()];
    let mut push = |items: &[&str]| a.extend(items.iter().map(OsString::from));
    push(&[
        "--new-session",
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
    ]);
    if !limits.sandbox_network {
        push(&["--unshare-net"]);
    }
    push(&[
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
    ]);
    // Under the private /tmp, the server's own program and working folder stay readable.
    let program = command.first().map(PathBuf::from).and_then(|p| {
        if p.is_absolute() {
            Some(p)
        } else {
            crate::paths::find_on_path(p.as_os_str())
        }
    });
    let own = program
        .as_deref()
        .and_then(Path::parent)
        .into_iter()
        .chain(places.cwd.as_deref());
    for dir in own.filter(|d| d.starts_with("/tmp") && d.exists()) {
        a.push("--ro-bind".into());
        a.push(dir.into());
        a.push(dir.into());
    }
    let mut writable = runner_caches(places);
    writable.extend(limits.sandbox_write.iter().cloned());
    for dir in writable.iter().filter(|d| d.exists()) {
        a.push("--bind".into());
        a.push(dir.into());
        a.push(dir.into());
    }
    for path in hidden(limits, places) {
        // bwrap aborts on a path that does not exist; a file is covered by /dev/null.
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => {
                a.push("--tmpfs".into());
                a.push(path.into());
            }
            Ok(_) => {
                a.push("--ro-bind".into());
                a.push("/dev/null".into());
                a.push(path.into());
            }
            Err(_) => {}
        }
    }
    if let Some(cwd) = &places.cwd {
        a.push("--chdir".into());
        a.push(cwd.into());
    }
    a.push("--".into());
    a.extend(command.iter().cloned());
    a
}

/// Whether bubblewrap's stderr says it may not create user namespaces (AppArmor's
/// `kernel.apparmor_restrict_unprivileged_userns` on Ubuntu 23.10+, or
/// `kernel.unprivileged_userns_clone = 0`).
pub fn userns_denied(stderr: &str) -> bool {
    stderr.lines().any(|l| {
        l.starts_with("bwrap:")
            && (l.contains("uid map")
                || l.contains("new namespace")
                || l.contains("RTM_NEWADDR")
                || l.contains("Creating new namespace failed"))
    })
}

/// Whether a sandbox can be made here: bubblewrap is there and may create its namespaces
/// (it runs `true` in a sandbox made as [`argv`] makes them, once per process).
pub fn works() -> bool {
    static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WORKS.get_or_init(|| {
        let bare = Places {
            home: None,
            warden: Vec::new(),
            cwd: None,
        };
        let on = Limits {
            sandbox: true,
            ..Limits::default()
        };
        cfg!(target_os = "linux")
            && crate::paths::find_on_path(BWRAP.as_ref()).is_some_and(|bwrap| {
                let a = argv(&bwrap, &["true".into()], &on, &bare);
                std::process::Command::new(&a[0])
                    .args(&a[1..])
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            })
    })
}

/// The Landlock confinement of a server (Linux 5.13+): read everywhere but the hidden paths,
/// write only the grants, the runner caches, /tmp and /dev/null, and (ABI 4+) no TCP unless
/// `sandbox_network = "host"`. What it cannot do, bubblewrap's sandbox does: a private /tmp,
/// a pid namespace, UDP and DNS cut, files created later in a folder that holds a hidden path
/// (they are not readable, being outside the rules made at start).
#[cfg(target_os = "linux")]
pub struct Confine {
    ruleset: Option<landlock::RulesetCreated>,
}

#[cfg(not(target_os = "linux"))]
pub struct Confine;

#[cfg(not(target_os = "linux"))]
impl Confine {
    pub fn apply_before_exec(self, _: &mut tokio::process::Command) {}
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
impl Confine {
    /// The rules for `limits` (`None`: no Landlock here, or `WARDEN_NO_LANDLOCK` set).
    pub fn new(limits: &Limits, places: &Places) -> Option<Confine> {
        use landlock::{
            ABI, Access, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr,
            RulesetCreatedAttr,
        };
        if std::env::var_os("WARDEN_NO_LANDLOCK").is_some() || landlock_abi() < 1 {
            return None;
        }
        let abi = ABI::V4;
        let mut ruleset = Ruleset::default()
            .handle_access(AccessFs::from_all(abi))
            .ok()?;
        if !limits.sandbox_network {
            ruleset = ruleset.handle_access(AccessNet::from_all(abi)).ok()?;
        }
        let mut created = ruleset.create().ok()?;
        let rule = |path: &Path, access| {
            PathFd::new(path)
                .ok()
                .map(|fd| PathBeneath::new(fd, access))
        };
        for root in read_roots(&hidden(limits, places)) {
            if let Some(r) = rule(&root, AccessFs::from_read(abi)) {
                created = created.add_rule(r).ok()?;
            }
        }
        let mut writable = runner_caches(places);
        writable.extend(limits.sandbox_write.iter().cloned());
        writable.push(PathBuf::from("/tmp"));
        for dir in writable.iter().filter(|d| d.exists()) {
            if let Some(r) = rule(dir, AccessFs::from_all(abi)) {
                created = created.add_rule(r).ok()?;
            }
        }
        if let Some(r) = rule(Path::new("/dev/null"), AccessFs::from_file(abi)) {
            created = created.add_rule(r).ok()?;
        }
        Some(Confine {
            ruleset: Some(created),
        })
    }

    /// Confines the server in the forked child, right before it execs.
    pub fn apply_before_exec(mut self, cmd: &mut tokio::process::Command) {
        // SAFETY: runs in the forked child before exec: `restrict_self` makes two syscalls
        // (prctl, landlock_restrict_self) and closes the ruleset's fd; its error is a
        // preallocated one.
        unsafe {
            cmd.pre_exec(
                move || match self.ruleset.take().map(|r| r.restrict_self()) {
                    Some(Ok(_)) | None => Ok(()),
                    Some(Err(_)) => Err(std::io::Error::from_raw_os_error(libc::EPERM)),
                },
            );
        }
    }
}

/// The Landlock ABI the kernel offers (0: none).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn landlock_abi() -> i64 {
    const CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the version query takes no attributes and creates nothing.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    v.max(0)
}

/// The paths a sandboxed server may not read: the defaults in the home, Warden's own, the
/// user's `sandbox_deny` (those that exist).
fn hidden(limits: &Limits, places: &Places) -> Vec<PathBuf> {
    let mut denied: Vec<PathBuf> = Vec::new();
    if let Some(home) = &places.home {
        denied.extend(DENIED_IN_HOME.iter().map(|d| home.join(d)));
    }
    denied.extend(places.warden.iter().cloned());
    denied.extend(limits.sandbox_deny.iter().cloned());
    denied.retain(|d| d.exists());
    denied
}

/// The runner caches (created when missing, as the runner would).
fn runner_caches(places: &Places) -> Vec<PathBuf> {
    let Some(home) = &places.home else {
        return Vec::new();
    };
    RUNNER_CACHES
        .iter()
        .map(|cache| {
            let dir = home.join(cache);
            let _ = std::fs::create_dir_all(&dir);
            dir
        })
        .collect()
}

/// Folders and files that, read beneath each, give everything but `hidden`: Landlock allows
/// by path and cannot take a subfolder out of an allowed one, so each folder on the way to a
/// hidden path is replaced by its entries but the one leading there.
fn read_roots(hidden: &[PathBuf]) -> Vec<PathBuf> {
    let mut roots = vec![PathBuf::from("/")];
    for h in hidden {
        let Some(i) = roots.iter().position(|r| h.starts_with(r)) else {
            continue;
        };
        let mut at = roots.swap_remove(i);
        let Ok(rest) = h.strip_prefix(&at).map(Path::to_owned) else {
            continue;
        };
        for part in rest.components() {
            let next = at.join(part);
            if let Ok(entries) = std::fs::read_dir(&at) {
                roots.extend(entries.flatten().map(|e| e.path()).filter(|p| *p != next));
            }
            at = next;
        }
    }
    roots
}

/// What a sandboxed server was refused, read from a line of its stderr: the network, or a
/// path outside its grants (writing it, or reading a hidden one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denied {
    Network,
    Path(PathBuf),
}

impl Denied {
    /// As the `sandbox_denied` event's detail: the path, or `network`.
    pub fn detail(&self) -> String {
        match self {
            Denied::Network => "network".to_owned(),
            Denied::Path(p) => p.display().to_string(),
        }
    }
}

/// Errors that mean "no network" inside a sandbox without one (Node, Python, libc, curl): no
/// route out, no DNS, and nothing listening on its own loopback (the host's services are not
/// there).
const NETWORK_ERRORS: &[&str] = &[
    "ECONNREFUSED",
    "Connection refused",
    "ENETUNREACH",
    "Network is unreachable",
    "EAI_AGAIN",
    "Temporary failure in name resolution",
    "getaddrinfo ENOTFOUND",
    "Could not resolve host",
];
/// Errors that mean a path was refused (read-only, or hidden and so not permitted).
const PATH_ERRORS: &[&str] = &[
    "EROFS",
    "Read-only file system",
    "EACCES",
    "Permission denied",
    "EPERM",
];

/// What `line` of a sandboxed server's stderr says it was refused, if anything; a path
/// inside one of `limits`' grants is not the sandbox's doing.
pub fn denied(line: &str, limits: &Limits) -> Option<Denied> {
    if !limits.sandbox_network && NETWORK_ERRORS.iter().any(|e| line.contains(e)) {
        return Some(Denied::Network);
    }
    if !PATH_ERRORS.iter().any(|e| line.contains(e)) {
        return None;
    }
    let path = quoted_path(line).or_else(|| {
        line.split_whitespace()
            .map(|w| w.trim_matches(|c: char| matches!(c, ',' | ':' | ';' | '(' | ')')))
            .find(|w| w.starts_with('/') && w.len() > 1)
            .map(str::to_owned)
    })?;
    let path = PathBuf::from(path);
    let granted = limits.sandbox_write.iter().any(|g| path.starts_with(g));
    (!granted && !path.starts_with("/tmp")).then_some(Denied::Path(path))
}

/// The first absolute path in quotes (`'/x'` as Node and Python print them, or `"/x"`).
fn quoted_path(line: &str) -> Option<String> {
    for q in ['\'', '"'] {
        let mut parts = line.split(q);
        parts.next();
        while let Some(inside) = parts.next() {
            if inside.starts_with('/') {
                return Some(inside.to_owned());
            }
            parts.next();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn places(dir: &Path) -> Places {
        Places {
            home: Some(dir.join("home")),
            warden: vec![dir.join("state"), dir.join("gone")],
            cwd: Some(dir.to_owned()),
        }
    }

    fn text(a: &[OsString]) -> String {
        a.iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn grants_and_denials_are_mounted_in_order_and_missing_paths_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("home/.ssh")).unwrap();
        std::fs::write(d.join("home/.netrc"), "machine x").unwrap();
        std::fs::create_dir_all(d.join("state")).unwrap();
        std::fs::create_dir_all(d.join("notes")).unwrap();
        let limits = Limits {
            sandbox: true,
            sandbox_write: vec![d.join("notes"), d.join("nowhere")],
            ..Limits::default()
        };
        let a = text(&argv(
            Path::new("/usr/bin/bwrap"),
            &["npx".into(), "-y".into(), "x@1".into()],
            &limits,
            &places(d),
        ));
        let d = d.display();
        assert!(
            a.starts_with("/usr/bin/bwrap --new-session --die-with-parent --unshare-pid"),
            "{a}"
        );
        assert!(a.contains(" --unshare-net "), "{a}");
        assert!(a.contains(&format!("--bind {d}/notes {d}/notes")), "{a}");
        assert!(
            a.contains(&format!("--bind {d}/home/.npm {d}/home/.npm")),
            "{a}"
        );
        assert!(!a.contains("nowhere") && !a.contains("gone"), "{a}");
        assert!(a.contains(&format!("--tmpfs {d}/home/.ssh")), "{a}");
        assert!(
            a.contains(&format!("--ro-bind /dev/null {d}/home/.netrc")),
            "{a}"
        );
        assert!(a.contains(&format!("--tmpfs {d}/state")), "{a}");
        // Denials come after the grants (the later mount wins), the command last.
        assert!(a.find("--tmpfs /tmp") < a.find("--bind"), "{a}");
        assert!(
            a.rfind("--bind") < a.find(&format!("--tmpfs {d}/home/.ssh")),
            "{a}"
        );
        assert!(a.ends_with(&format!("--chdir {d} -- npx -y x@1")), "{a}");
    }

    #[test]
    fn the_host_network_keeps_the_network() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            sandbox_network: true,
            ..Limits::default()
        };
        let a = text(&argv(
            Path::new("bwrap"),
            &["s".into()],
            &limits,
            &places(dir.path()),
        ));
        assert!(!a.contains("--unshare-net"), "{a}");
    }

    #[test]
    fn a_refusal_in_stderr_names_the_path_or_the_network() {
        let limits = Limits {
            sandbox: true,
            sandbox_write: vec![PathBuf::from("/home/me/notes")],
            ..Limits::default()
        };
        let d = |line: &str| denied(line, &limits);
        assert_eq!(
            d("Error: EROFS: read-only file system, open '/home/me/out.txt'"),
            Some(Denied::Path("/home/me/out.txt".into()))
        );
        assert_eq!(
            d("PermissionError: [Errno 13] Permission denied: '/home/me/.ssh/id_rsa'"),
            Some(Denied::Path("/home/me/.ssh/id_rsa".into()))
        );
        assert_eq!(
            d("cannot write /home/me/x: Read-only file system (os error 30)"),
            Some(Denied::Path("/home/me/x".into()))
        );
        assert_eq!(
            d("getaddrinfo EAI_AGAIN registry.npmjs.org"),
            Some(Denied::Network)
        );
        // Inside a grant, or in its own /tmp: not the sandbox.
        assert_eq!(
            d("EACCES: permission denied, open '/home/me/notes/a'"),
            None
        );
        assert_eq!(d("EACCES: permission denied, open '/tmp/a'"), None);
        assert_eq!(d("listening on stdio"), None);
        let host = Limits {
            sandbox_network: true,
            ..limits.clone()
        };
        assert_eq!(denied("connect ENETUNREACH 1.2.3.4:443", &host), None);
    }

    #[test]
    fn landlock_reads_everything_but_the_hidden_paths() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for p in [
            "home/.ssh",
            "home/.config/gh",
            "home/.config/app",
            "home/src",
        ] {
            std::fs::create_dir_all(d.join(p)).unwrap();
        }
        let hidden = [d.join("home/.ssh"), d.join("home/.config/gh")];
        let roots = read_roots(&hidden);
        let readable = |p: &Path| roots.iter().any(|r| p.starts_with(r));
        assert!(readable(&d.join("home/src/main.rs")));
        assert!(readable(&d.join("home/.config/app/x")));
        assert!(readable(Path::new("/usr/bin/env")));
        assert!(!readable(&d.join("home/.ssh/id_rsa")));
        assert!(!readable(&d.join("home/.config/gh/hosts.yml")));
    }

    #[test]
    fn bubblewrap_refused_namespaces_is_recognised() {
        assert!(userns_denied(
            "bwrap: setting up uid map: Permission denied\n"
        ));
        assert!(userns_denied(
            "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces"
        ));
        assert!(!userns_denied("node: cannot open /x: Permission denied"));
    }
}
