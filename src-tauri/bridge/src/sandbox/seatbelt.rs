//! The sandbox on macOS: a Seatbelt profile (SBPL, the policy language of `sandbox-exec -p`)
//! per server, made from the same keys and places as the Linux sandbox (`Places::listed_hidden`
//! and `Places::writable` are the one source of which paths are hidden and granted):
//! - it reads everything but the hidden paths (the keys of each home, the macOS keychains and
//!   cookies, Warden's own config and state, `/var/run`, `/tmp` but for its program's, working
//!   and home folders there, `sandbox_deny`), which it may not write, rename or rename a
//!   folder above either;
//! - it writes only its grants (`sandbox_write`), its own folder (package caches and temp
//!   files, through the variables the Linux side sets) and the usual devices (`/dev/null`);
//!   inside its grants, what other programs run later stays read-only as on Linux
//!   (`Places::read_only`: `.git/config`, `.vscode`, …), and no folder that holds one (`.git`,
//!   `.github`) may be renamed or removed;
//!   no `ioctl` reaches a terminal (`/dev/tty`: no `TIOCSTI` typing into the user's shell;
//!   the server has no controlling terminal either, `child.rs` starts it in a session of its
//!   own);
//! - it forks and execs freely; it signals, and reads the state of, only processes of its own
//!   sandbox (`target same-sandbox`: the nearest SBPL has to "its own group");
//! - network: none; the whole network (`"host"`, with DNS through mDNSResponder); or, with a
//!   `sandbox_network` list, TCP to the proxy's one port on the loopback and nothing else;
//! - no UNIX socket outside its sandbox can be connected to or bound (but mDNSResponder's,
//!   with the host's network: macOS resolves names through it alone), in any mode: the
//!   default denies them, and every network rule names IP addresses; nor can it make a
//!   system socket (`AF_ROUTE`, `AF_SYSTEM`, kernel controls: `system-socket` is never
//!   allowed);
//! - of the system's Mach services it looks up only those a runtime needs to start (the user
//!   database, logging, notifications, preferences, the temp dir's helper) and, with a
//!   network, the certificate checker and the network's configuration: not the keychain's.
//!
//! [`profile`] is pure (text from a [`Plan`]) and unit-tested on Linux; [`Plan::new`] looks at
//! the file system (it resolves paths, and creates the server's own folder). A path the profile
//! could not say safely (relative, with `..`, not UTF-8, with a control or bidi character) is
//! refused, and the server is not started. Here it is generated and tested, not run: no Mac
//! runs these tests.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use super::Places;
use warden_config::Limits;
use warden_config::network::Network;

/// What `warden status` shows for this sandbox.
pub const SEATBELT: &str = "seatbelt";

/// Hidden as under Landlock (on macOS, `/private/tmp`).
const TMP: &str = "/tmp";

/// The program that runs a command under a profile given as text.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// Hidden too in each home on macOS (besides the keys `DENIED_IN_HOME` names for every
/// system): the keychains' files and the browsers' and apps' cookies.
const DENIED_IN_HOME_MACOS: &[&str] = &["Library/Keychains", "Library/Cookies"];

/// What the server's network may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Net {
    /// Nothing at all.
    None,
    /// The host's whole network (`sandbox_network = "host"`).
    Host,
    /// Only TCP to the proxy's port on the loopback (a `sandbox_network` list).
    Proxy(u16),
}

/// What a server's profile is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Paths it may neither read nor write: each as named and, when that differs, where it
    /// really is (Seatbelt sees resolved paths: `/var/run` is `/private/var/run`).
    pub hidden: Vec<PathBuf>,
    /// Folders it may write (its grants, resolved).
    pub grants: Vec<PathBuf>,
    /// Paths inside its grants it may not write (what other programs run later, resolved:
    /// `Places::read_only`, the list the Linux sandbox binds read-only).
    pub read_only: Vec<PathBuf>,
    /// Its own folder (under Warden's hidden state): read and written.
    pub own: Option<PathBuf>,
    /// What it may read inside a hidden folder: its program's, working and home folders
    /// under `/tmp`, and the resolver's configuration with the host's network
    /// (`/etc/resolv.conf` is `/private/var/run/resolv.conf`).
    pub reads: Vec<PathBuf>,
    pub net: Net,
}

impl Plan {
    /// The plan for `command` under `limits` (`proxy`: the port of its `sandbox_network`
    /// list's proxy on the loopback). Creates the server's own folder.
    pub fn new(command: &[OsString], limits: &Limits, places: &Places, proxy: Option<u16>) -> Plan {
        let mut listed = places.listed_hidden(limits);
        for home in &places.homes {
            listed.extend(DENIED_IN_HOME_MACOS.iter().map(|d| home.join(d)));
        }
        // `/tmp` as under Landlock: hidden (its temp files go to its own folder), but for the
        // program's, the working folder's and the homes' folders there.
        listed.push(PathBuf::from(TMP));
        let tmp = Path::new(TMP)
            .canonicalize()
            .unwrap_or_else(|_| PathBuf::from(TMP));
        let mut reads: Vec<PathBuf> = places
            .kept(command)
            .into_iter()
            .filter(|d| d.starts_with(&tmp) && *d != tmp)
            .collect();
        let mut hidden: Vec<PathBuf> = Vec::new();
        for path in listed {
            let real = real_path(&path);
            for p in std::iter::once(path).chain(real) {
                if !hidden.contains(&p) {
                    hidden.push(p);
                }
            }
        }
        let (grants, own) = places.writable(limits);
        let read_only = places.read_only(limits);
        let net = match (&limits.sandbox_network, proxy) {
            (Network::Host, _) => Net::Host,
            (Network::Only(_), Some(port)) => Net::Proxy(port),
            _ => Net::None,
        };
        if net == Net::Host {
            reads.extend(
                Path::new("/etc/resolv.conf")
                    .canonicalize()
                    .ok()
                    .filter(|r| hidden.iter().any(|h| r.starts_with(h))),
            );
        }
        Plan {
            hidden,
            grants,
            read_only,
            own,
            reads,
            net,
        }
    }
}

/// Where `path` really is when it or a folder above it is a symlink: its longest existing
/// ancestor resolved, the rest as named (`None`: the same as named, or not resolvable).
fn real_path(path: &Path) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        if let Ok(real) = at.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return (out != path).then_some(out);
        }
        rest.push(at.file_name()?.to_owned());
        at = at.parent()?;
    }
}

/// A path the profile cannot say safely.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("its sandbox profile cannot name the path {path:?}: {why}")]
pub struct Unsayable {
    pub path: String,
    pub why: &'static str,
}

/// `path` as an SBPL string literal: absolute, normalised (no `.`, no repeated or trailing
/// `/`), with `"` and `\` escaped. Refused: a relative path, one with `..` (what it names
/// depends on symlinks the profile cannot see), one that is not UTF-8 (SBPL strings are),
/// and one with a control character (a line break, NUL) or a character that reorders text
/// (which would make the profile read differently from what it says).
pub fn quoted(path: &Path) -> Result<String, Unsayable> {
    let refuse = |why| Unsayable {
        path: warden_wire::text::line(&path.to_string_lossy()),
        why,
    };
    let text = path.to_str().ok_or_else(|| refuse("it is not UTF-8"))?;
    if text
        .chars()
        .any(|c| c.is_control() || warden_wire::text::is_format(c))
    {
        return Err(refuse("it holds a control or bidi character"));
    }
    let mut normal = String::new();
    for part in path.components() {
        match part {
            Component::RootDir => {}
            Component::CurDir => {}
            Component::Normal(p) => {
                normal.push('/');
                normal.push_str(p.to_str().ok_or_else(|| refuse("it is not UTF-8"))?);
            }
            Component::ParentDir => return Err(refuse("it holds `..`")),
            Component::Prefix(_) => return Err(refuse("it is not a Unix path")),
        }
    }
    if !path.has_root() {
        return Err(refuse("it is not absolute"));
    }
    if normal.is_empty() {
        normal.push('/');
    }
    let mut out = String::with_capacity(normal.len() + 2);
    out.push('"');
    for c in normal.chars() {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    Ok(out)
}

/// The Mach services every server may look up: the user database, logging, notifications,
/// preferences, the temp dir's helper (what libSystem and the runtimes need to start) and
/// file-change events (file watchers: what it may read, it may watch). Chosen from what these
/// services do, not from runs on a Mac: a runtime that needs more is refused by the default.
const MACH_SERVICES: &[&str] = &[
    "com.apple.system.opendirectoryd.libinfo",
    "com.apple.system.opendirectoryd.membership",
    "com.apple.system.logger",
    "com.apple.logd",
    "com.apple.system.notification_center",
    "com.apple.cfprefsd.daemon",
    "com.apple.cfprefsd.agent",
    "com.apple.bsd.dirhelper",
    "com.apple.FSEvents",
];

/// With a network: the certificate checker (TLS) and the network's configuration (proxies,
/// DNS servers).
const MACH_SERVICES_NET: &[&str] = &[
    "com.apple.trustd.agent",
    "com.apple.trustd",
    "com.apple.SystemConfiguration.configd",
];

/// With the host's network: DNS through mDNSResponder, and the resolvers' configuration.
const MACH_SERVICES_DNS: &[&str] = &[
    "com.apple.dnssd.service",
    "com.apple.SystemConfiguration.DNSConfiguration",
];
const MDNS_SOCKET: &str = "/private/var/run/mDNSResponder";

/// The devices every program opens (and writes).
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper"];

/// Those of [`DEVICES`] that take an `ioctl`: not the terminal (`TIOCSTI` would type into the
/// user's shell).
const IOCTL_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/dtracehelper"];

/// The profile for `plan`, as `sandbox-exec -p` takes it. Later rules win over earlier ones
/// in SBPL, so the order is: reads everywhere, writes to the grants, writes denied to what
/// stays read-only inside them, the hidden paths denied (inside a grant too), the renames of
/// the folders above a hidden or read-only path denied, the resolver's file read, the own
/// folder (inside the hidden state) read and written.
pub fn profile(plan: &Plan) -> Result<String, Unsayable> {
    let mut p = String::new();
    let mut line = |s: &str| {
        p.push_str(s);
        p.push('\n');
    };
    line("(version 1)");
    line("(deny default)");
    line("; Processes: its own only.");
    line("(allow process-fork)");
    line("(allow process-exec)");
    line("(allow process-info* (target same-sandbox))");
    line("(allow signal (target same-sandbox))");
    line("; What a runtime needs to start.");
    line("(allow sysctl-read)");
    line("(allow user-preference-read)");
    line("(allow ipc-posix-shm)");
    line("(allow ipc-posix-sem)");
    line("(allow iokit-get-properties)");
    let mut services: Vec<&str> = MACH_SERVICES.to_vec();
    if plan.net != Net::None {
        services.extend(MACH_SERVICES_NET);
    }
    if plan.net == Net::Host {
        services.extend(MACH_SERVICES_DNS);
    }
    let mut s = String::from("(allow mach-lookup");
    for name in services {
        let _ = write!(s, " (global-name \"{name}\")");
    }
    s.push(')');
    line(&s);

    line("; Files: reads everywhere but the hidden paths.");
    line("(allow file-read*)");
    for (rule, devices) in [("file-write*", DEVICES), ("file-ioctl", IOCTL_DEVICES)] {
        let mut s = format!("(allow {rule}");
        for dev in devices {
            let _ = write!(s, " (literal \"{dev}\")");
        }
        s.push(')');
        line(&s);
    }
    for grant in &plan.grants {
        line(&format!("(allow file-write* (subpath {}))", quoted(grant)?));
    }
    // What other programs run later stays read-only inside the grants (after their rule:
    // the later one wins); `file-write*` covers its own rename and removal.
    for path in &plan.read_only {
        line(&format!("(deny file-write* (subpath {}))", quoted(path)?));
    }
    let mut above: Vec<String> = Vec::new();
    for hidden in &plan.hidden {
        line(&format!(
            "(deny file-read* file-write* (subpath {}))",
            quoted(hidden)?
        ));
    }
    // A folder above a hidden or read-only path, renamed inside a grant, would take the path
    // out of its rule (`mv .git .git.old`, write `.git.old/config`, move it back): none may be
    // renamed or removed.
    for path in plan.hidden.iter().chain(&plan.read_only) {
        for dir in path.ancestors().skip(1) {
            let q = quoted(dir)?;
            if dir.parent().is_some() && !above.contains(&q) {
                above.push(q);
            }
        }
    }
    for q in above {
        line(&format!("(deny file-write-unlink (literal {q}))"));
    }
    for path in &plan.reads {
        line(&format!("(allow file-read* (subpath {}))", quoted(path)?));
    }
    // A hidden path inside what was read back stays hidden (a home under /tmp keeps its keys).
    for hidden in &plan.hidden {
        if plan
            .reads
            .iter()
            .any(|r| hidden.starts_with(r) && hidden != r)
        {
            line(&format!(
                "(deny file-read* file-write* (subpath {}))",
                quoted(hidden)?
            ));
        }
    }
    if let Some(own) = &plan.own {
        line(&format!(
            "(allow file-read* file-write* (subpath {}))",
            quoted(own)?
        ));
    }

    match plan.net {
        Net::None => line("; Network: none."),
        Net::Host => {
            line("; Network: the host's.");
            line("(allow network-outbound (remote ip \"*:*\"))");
            line("(allow network-inbound (local ip \"*:*\"))");
            line("(allow network-bind (local ip \"*:*\"))");
            line(&format!(
                "(allow network-outbound (remote unix-socket (path-literal \"{MDNS_SOCKET}\")))"
            ));
        }
        Net::Proxy(port) => {
            line(
                "; Network: TCP to the proxy of its `sandbox_network` list, on the loopback, only.",
            );
            line(&format!(
                "(allow network-outbound (remote tcp \"localhost:{port}\"))"
            ));
        }
    }
    Ok(p)
}

/// The command line that runs `command` under `profile`.
pub fn argv(profile: String, command: &[OsString]) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec![
        SANDBOX_EXEC.into(),
        "-p".into(),
        profile.into(),
        "--".into(),
    ];
    a.extend(command.iter().cloned());
    a
}

// Its paths are POSIX paths: the tests run on Unix (Linux here), not under Windows.
#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn plan(net: Net) -> Plan {
        Plan {
            hidden: vec![
                PathBuf::from("/Users/me/.ssh"),
                PathBuf::from("/Users/me/.netrc"),
                PathBuf::from("/var/run"),
                PathBuf::from("/private/var/run"),
                PathBuf::from("/Users/me/Library/Application Support/warden"),
            ],
            grants: vec![PathBuf::from("/Users/me/notes")],
            read_only: Vec::new(),
            own: Some(PathBuf::from(
                "/Users/me/Library/Application Support/warden/sandbox/s",
            )),
            reads: Vec::new(),
            net,
        }
    }

    fn at(text: &str, rule: &str) -> usize {
        text.find(rule)
            .unwrap_or_else(|| panic!("no {rule:?} in:\n{text}"))
    }

    #[test]
    fn hidden_paths_are_neither_read_nor_written_even_inside_a_grant() {
        let p = profile(&plan(Net::None)).unwrap();
        assert!(p.starts_with("(version 1)\n(deny default)\n"), "{p}");
        let read_all = at(&p, "(allow file-read*)\n");
        for h in [
            "/Users/me/.ssh",
            "/Users/me/.netrc",
            "/var/run",
            "/private/var/run",
        ] {
            let deny = at(
                &p,
                &format!("(deny file-read* file-write* (subpath \"{h}\"))"),
            );
            // Later rules win: each deny comes after the reads and the grants it overrides.
            assert!(deny > read_all, "{h}");
            assert!(
                deny > at(&p, "(allow file-write* (subpath \"/Users/me/notes\"))"),
                "{h}"
            );
        }
        // The folders above a hidden path cannot be renamed away from its rule.
        for dir in ["/Users/me", "/Users", "/var", "/private/var"] {
            at(&p, &format!("(deny file-write-unlink (literal \"{dir}\"))"));
        }
        assert!(!p.contains("(literal \"/\")"), "{p}");
        assert_eq!(p.matches("(literal \"/Users\")").count(), 1, "{p}");
    }

    /// A plan whose grant holds what other programs run later.
    fn plan_with_read_only() -> Plan {
        let mut p = plan(Net::None);
        p.read_only = [".git/config", ".git/hooks", ".vscode", ".github/workflows"]
            .iter()
            .map(|n| Path::new("/Users/me/notes").join(n))
            .collect();
        p
    }

    /// What other programs run later is denied writes after the grant's rule (the later rule
    /// wins), so it stays read-only inside the grant.
    #[test]
    fn what_runs_outside_later_stays_read_only_inside_a_grant() {
        let p = profile(&plan_with_read_only()).unwrap();
        let grant = at(&p, "(allow file-write* (subpath \"/Users/me/notes\"))");
        let denied_after: Vec<bool> = [".git/config", ".git/hooks", ".vscode", ".github/workflows"]
            .iter()
            .map(|n| {
                at(
                    &p,
                    &format!("(deny file-write* (subpath \"/Users/me/notes/{n}\"))"),
                ) > grant
            })
            .collect();
        assert_eq!(denied_after, [true; 4], "{p}");
    }

    /// The folders that hold a read-only path inside the grant cannot be renamed or removed:
    /// no `mv .git .git.old`, a new config there, and back.
    #[test]
    fn the_folders_holding_a_read_only_path_cannot_be_renamed() {
        let p = profile(&plan_with_read_only()).unwrap();
        let unlink: Vec<&str> = p
            .lines()
            .filter(|l| l.starts_with("(deny file-write-unlink") && l.contains("/Users/me/notes"))
            .collect();
        assert_eq!(
            unlink,
            [
                "(deny file-write-unlink (literal \"/Users/me/notes/.git\"))",
                "(deny file-write-unlink (literal \"/Users/me/notes\"))",
                "(deny file-write-unlink (literal \"/Users/me/notes/.github\"))",
            ],
            "{p}"
        );
    }

    /// Built from the places: the read-only names that exist in a grant, resolved (the same
    /// list the Linux sandbox binds read-only).
    #[test]
    fn the_plan_keeps_the_read_only_names_that_exist_in_its_grants() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(d.join("notes/.git/hooks")).unwrap();
        std::fs::write(d.join("notes/.git/config"), "").unwrap();
        std::fs::create_dir_all(d.join("notes/.vscode")).unwrap();
        let places = Places {
            homes: vec![d.join("home")],
            warden: vec![d.join("state")],
            cwd: Some(d.clone()),
            own: None,
            pass_env: Vec::new(),
            helper: None,
        };
        let limits = Limits {
            sandbox: true,
            sandbox_write: vec![d.join("notes")],
            ..Limits::default()
        };
        let plan = Plan::new(&["true".into()], &limits, &places, None);
        assert_eq!(
            plan.read_only,
            [
                d.join("notes/.git/config"),
                d.join("notes/.git/hooks"),
                d.join("notes/.vscode"),
            ]
        );
    }

    #[test]
    fn writes_go_to_the_grants_the_own_folder_and_the_devices_only() {
        let p = profile(&plan(Net::None)).unwrap();
        let writes: Vec<&str> = p
            .lines()
            .filter(|l| l.starts_with("(allow") && l.contains("file-write"))
            .collect();
        assert_eq!(
            writes,
            [
                "(allow file-write* (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\") (literal \"/dev/dtracehelper\"))",
                "(allow file-write* (subpath \"/Users/me/notes\"))",
                "(allow file-read* file-write* (subpath \"/Users/me/Library/Application Support/warden/sandbox/s\"))",
            ],
            "{p}"
        );
        // Its own folder lies in Warden's hidden state: allowed after the state is denied.
        assert!(
            at(
                &p,
                "(allow file-read* file-write* (subpath \"/Users/me/Library/Application Support/warden/sandbox/s\"))"
            ) > at(
                &p,
                "(deny file-read* file-write* (subpath \"/Users/me/Library/Application Support/warden\"))"
            )
        );
        // No write anywhere else, and processes and signals only in its own sandbox.
        assert!(!p.contains("(allow file-write*)"), "{p}");
        assert!(!p.contains("(allow default)"), "{p}");
        at(&p, "(allow signal (target same-sandbox))");
        at(&p, "(allow process-exec)");
        at(&p, "(allow process-fork)");
        assert!(!p.contains("(allow signal)"), "{p}");
    }

    #[test]
    fn network_none_host_and_the_proxys_port() {
        let none = profile(&plan(Net::None)).unwrap();
        assert!(!none.contains("network"), "{none}");
        assert!(!none.contains("trustd"), "{none}");

        let host = profile(&plan(Net::Host)).unwrap();
        at(&host, "(allow network-outbound (remote ip \"*:*\"))");
        at(
            &host,
            "(allow network-outbound (remote unix-socket (path-literal \"/private/var/run/mDNSResponder\")))",
        );
        at(&host, "(global-name \"com.apple.dnssd.service\")");
        at(&host, "(global-name \"com.apple.trustd.agent\")");

        let list = profile(&plan(Net::Proxy(41234))).unwrap();
        let net: Vec<&str> = list
            .lines()
            .filter(|l| l.contains("(allow network"))
            .collect();
        assert_eq!(
            net,
            ["(allow network-outbound (remote tcp \"localhost:41234\"))"],
            "{list}"
        );
        // DNS is the proxy's, outside the sandbox.
        assert!(
            !list.contains("dnssd")
                && !list.contains("mDNSResponder")
                && !list.contains("DNSConfiguration"),
            "{list}"
        );
        at(&list, "(global-name \"com.apple.trustd.agent\")");
        // Never the keychain's services.
        for p in [&none, &host, &list] {
            assert!(
                !p.contains("SecurityServer") && !p.contains("securityd"),
                "{p}"
            );
        }
    }

    /// No UNIX socket outside in any mode (but mDNSResponder's, the host's resolver, with the
    /// host's network) and no system socket: every network rule names IP addresses, by TCP
    /// alone with a list; "none" has no network rule at all.
    #[test]
    fn no_unix_or_system_socket_is_allowed_in_any_mode() {
        let mdns = "(allow network-outbound (remote unix-socket (path-literal \"/private/var/run/mDNSResponder\")))";
        for (net, want) in [
            (Net::None, &[][..]),
            (
                Net::Host,
                &[
                    "(allow network-outbound (remote ip \"*:*\"))",
                    "(allow network-inbound (local ip \"*:*\"))",
                    "(allow network-bind (local ip \"*:*\"))",
                    mdns,
                ][..],
            ),
            (
                Net::Proxy(41234),
                &["(allow network-outbound (remote tcp \"localhost:41234\"))"][..],
            ),
        ] {
            let p = profile(&plan(net)).unwrap();
            let rules: Vec<&str> = p
                .lines()
                .filter(|l| {
                    l.starts_with("(allow") && (l.contains("network") || l.contains("socket"))
                })
                .collect();
            assert_eq!(rules, want, "{net:?}:\n{p}");
        }
    }

    /// A terminal takes no `ioctl` (`TIOCSTI` would type into the user's shell).
    #[test]
    fn no_ioctl_reaches_the_terminal() {
        let p = profile(&plan(Net::Host)).unwrap();
        let ioctl: Vec<&str> = p.lines().filter(|l| l.contains("file-ioctl")).collect();
        assert_eq!(
            ioctl,
            [
                "(allow file-ioctl (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/dtracehelper\"))"
            ],
            "{p}"
        );
        assert!(!p.contains("(allow file-ioctl)"), "{p}");
    }

    #[test]
    fn the_resolvers_file_is_read_inside_the_hidden_run_folder() {
        let mut plan = plan(Net::Host);
        plan.reads = vec![PathBuf::from("/private/var/run/resolv.conf")];
        let p = profile(&plan).unwrap();
        assert!(
            at(
                &p,
                "(allow file-read* (subpath \"/private/var/run/resolv.conf\"))"
            ) > at(
                &p,
                "(deny file-read* file-write* (subpath \"/private/var/run\"))"
            )
        );
    }

    #[test]
    fn a_home_under_tmp_is_read_back_with_its_keys_still_hidden() {
        let mut plan = plan(Net::None);
        plan.hidden = vec![
            PathBuf::from("/private/tmp"),
            PathBuf::from("/private/tmp/h/.ssh"),
        ];
        plan.reads = vec![PathBuf::from("/private/tmp/h")];
        let p = profile(&plan).unwrap();
        let tmp = at(
            &p,
            "(deny file-read* file-write* (subpath \"/private/tmp\"))",
        );
        let back = at(&p, "(allow file-read* (subpath \"/private/tmp/h\"))");
        let ssh = "(deny file-read* file-write* (subpath \"/private/tmp/h/.ssh\"))";
        assert!(tmp < back, "{p}");
        // Denied before the read-back and again after it: the later rule wins.
        assert_eq!(p.matches(ssh).count(), 2, "{p}");
        assert!(p.rfind(ssh).unwrap() > back, "{p}");
    }

    #[test]
    fn paths_are_quoted_normalised_or_refused() {
        let q = |s: &str| quoted(Path::new(s));
        assert_eq!(q("/a/b").unwrap(), "\"/a/b\"");
        assert_eq!(q("/a//b/./c/").unwrap(), "\"/a/b/c\"");
        assert_eq!(q("/").unwrap(), "\"/\"");
        assert_eq!(q("/a \"b\"").unwrap(), r#""/a \"b\"""#);
        assert_eq!(q("/a\\b\\\"").unwrap(), r#""/a\\b\\\"""#);
        assert_eq!(q("/ü/日本").unwrap(), "\"/ü/日本\"");
        // A quote cannot end the string early and add a rule of its own.
        let hostile = "/x\") (allow default) (\"";
        assert_eq!(q(hostile).unwrap(), r#""/x\") (allow default) (\"""#);
        for (bad, why) in [
            ("/a/../etc", "`..`"),
            ("/a/b/..", "`..`"),
            ("relative/path", "absolute"),
            ("", "absolute"),
            ("/a\nb", "control"),
            ("/a\rb", "control"),
            ("/a\0b", "control"),
            ("/a\tb", "control"),
            ("/a\u{1b}[2J", "control"),
            ("/a\u{202e}b", "bidi"),
            ("/a\u{2028}b", "bidi"),
        ] {
            let e = q(bad).unwrap_err();
            assert!(e.why.contains(why), "{bad:?}: {e}");
            // The error names the path in one printable line.
            assert!(!e.to_string().contains('\n'), "{e}");
        }
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt as _;
            let latin1 = Path::new(std::ffi::OsStr::from_bytes(b"/caf\xe9"));
            assert!(quoted(latin1).unwrap_err().why.contains("UTF-8"));
        }
    }

    #[test]
    fn a_hostile_path_in_the_plan_refuses_the_whole_profile() {
        for bad in ["/Users/me/x\n(allow default)", "/Users/me/../../etc", "rel"] {
            let mut hidden = plan(Net::None);
            hidden.hidden.push(PathBuf::from(bad));
            assert!(profile(&hidden).is_err(), "hidden {bad:?}");
            let mut grant = plan(Net::None);
            grant.grants.push(PathBuf::from(bad));
            assert!(profile(&grant).is_err(), "grant {bad:?}");
        }
        // A quote or a backslash is said, escaped, and stays inside its string.
        let mut p = plan(Net::None);
        p.grants = vec![PathBuf::from("/Users/me/a\"b\\c")];
        let text = profile(&p).unwrap();
        at(
            &text,
            r#"(allow file-write* (subpath "/Users/me/a\"b\\c"))"#,
        );
    }

    /// Built from the places: the keys of each home and the macOS-only ones, Warden's state,
    /// `sandbox_deny` as named and where they really are (through a symlink); the grants
    /// resolved, a missing grant dropped; the own folder created.
    #[test]
    fn the_plan_hides_and_grants_what_the_linux_sandbox_does() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(d.join("real/home/.ssh")).unwrap();
        std::fs::create_dir_all(d.join("notes")).unwrap();
        std::fs::create_dir_all(d.join("secret")).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(d.join("real/home"), d.join("home")).unwrap();
            std::os::unix::fs::symlink(d.join("secret"), d.join("looks-plain")).unwrap();
        }
        let places = Places {
            homes: vec![d.join("home")],
            warden: vec![d.join("state")],
            cwd: Some(d.clone()),
            own: Some(d.join("state/sandbox/s")),
            pass_env: Vec::new(),
            helper: None,
        };
        let limits = Limits {
            sandbox: true,
            sandbox_write: vec![d.join("notes"), d.join("nowhere")],
            sandbox_deny: vec![d.join("looks-plain")],
            sandbox_network: Network::Host,
            ..Limits::default()
        };
        let plan = Plan::new(&["true".into()], &limits, &places, None);
        for want in [
            d.join("home/.ssh"),
            d.join("home/.aws"),
            d.join("home/Library/Keychains"),
            PathBuf::from("/var/run"),
            d.join("state"),
            d.join("looks-plain"),
        ] {
            assert!(plan.hidden.contains(&want), "{want:?} in {:?}", plan.hidden);
        }
        #[cfg(unix)]
        for want in [
            d.join("real/home/.ssh"),
            // Missing: its folder resolved, its own name kept.
            d.join("real/home/.aws"),
            d.join("secret"),
        ] {
            assert!(plan.hidden.contains(&want), "{want:?} in {:?}", plan.hidden);
        }
        // /tmp is hidden; the working folder, when it lies there, is read back.
        let tmp = Path::new("/tmp").canonicalize().unwrap();
        assert!(plan.hidden.contains(&PathBuf::from("/tmp")));
        assert_eq!(
            plan.reads.contains(&d),
            d.starts_with(&tmp),
            "{:?}",
            plan.reads
        );
        assert!(!plan.reads.contains(&tmp));
        assert_eq!(plan.grants, [d.join("notes")]);
        assert_eq!(plan.own, Some(d.join("state/sandbox/s")));
        assert!(d.join("state/sandbox/s/tmp").is_dir());
        assert_eq!(plan.net, Net::Host);
        let p = profile(&plan).unwrap();
        at(
            &p,
            &format!(
                "(deny file-read* file-write* (subpath \"{}\"))",
                d.join("secret").display()
            ),
        );

        let list = Limits {
            sandbox_network: Network::Only(Vec::new()),
            ..limits.clone()
        };
        let cmd = ["true".into()];
        assert_eq!(Plan::new(&cmd, &list, &places, Some(9)).net, Net::Proxy(9));
        assert_eq!(Plan::new(&cmd, &list, &places, None).net, Net::None);
        // Without the host's network, no resolver's file: only what lies under /tmp.
        assert!(
            Plan::new(&cmd, &list, &places, Some(9))
                .reads
                .iter()
                .all(|r| r.starts_with(&tmp)),
        );
    }

    #[test]
    fn the_command_runs_under_sandbox_exec() {
        let a = argv(
            "(version 1)".into(),
            &["npx".into(), "-y".into(), "x".into()],
        );
        assert_eq!(
            a,
            [
                "/usr/bin/sandbox-exec",
                "-p",
                "(version 1)",
                "--",
                "npx",
                "-y",
                "x"
            ]
            .map(OsString::from)
        );
    }
}
