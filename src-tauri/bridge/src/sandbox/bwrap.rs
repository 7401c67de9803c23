//! The sandbox made by bubblewrap: the whole file system read-only, a private /tmp, a
//! minimal /dev and /proc, its own user, pid, IPC and UTS namespaces (and network, unless
//! the host's is granted), `/run` covered and each folder that holds a hidden path made
//! afresh without it (hidden for the whole session), writes only to the grants (but what
//! stays read-only in them) and the server's own folder.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::Places;
use warden_config::Limits;

/// The system's own folders bubblewrap is looked for in: never `$PATH`, which an IDE entry
/// sets.
const SYSTEM_BIN: &[&str] = &["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin"];

/// The `bwrap` this machine has, from the system's folders. Debug builds (the tests) take
/// `WARDEN_TEST_BWRAP` instead when it is set (a path, or empty for none).
pub fn program() -> Option<PathBuf> {
    #[cfg(debug_assertions)]
    if let Some(p) = std::env::var_os("WARDEN_TEST_BWRAP") {
        return Some(PathBuf::from(p)).filter(|p| warden_config::paths::is_executable(p));
    }
    SYSTEM_BIN
        .iter()
        .map(|d| Path::new(d).join(super::BWRAP))
        .find(|p| warden_config::paths::is_executable(p))
}

/// The bubblewrap command line (pure but for looking at paths; the server's own folder is
/// created).
pub fn argv(bwrap: &Path, command: &[OsString], limits: &Limits, places: &Places) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec![bwrap.into()];
    let mut push = |items: &[&str]| a.extend(items.iter().map(OsString::from));
    push(&[
        "--new-session",
        "--die-with-parent",
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
    ]);
    if !limits.sandbox_network.is_host() {
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
    let mount = |a: &mut Vec<OsString>, how: &str, from: &Path, to: &Path| {
        a.push(how.into());
        a.push(from.into());
        a.push(to.into());
    };
    // Under the private /tmp, the server's own program, working folder and home stay readable.
    for dir in places.under_tmp(command) {
        mount(&mut a, "--ro-bind", &dir, &dir);
    }
    // Hidden for the whole session: each folder that holds a hidden path is made afresh, its
    // other entries bound back read-only (parents first, the grants and the rest on top).
    let masks = places.masks(limits);
    for dir in &masks.rebuilt {
        rebuild(&mut a, dir, &masks.hidden);
    }
    let (grants, own) = places.writable(limits);
    for dir in &grants {
        mount(&mut a, "--bind", dir, dir);
    }
    // What runs outside later stays read-only inside the grants; the folders that hold it
    // become mount points first, which cannot be renamed or removed.
    for dir in places.holders(limits) {
        mount(&mut a, "--bind", &dir, &dir);
    }
    for path in places.read_only(limits) {
        mount(&mut a, "--ro-bind", &path, &path);
    }
    // After the grants: a hidden path inside a grant stays hidden (the later mount wins).
    for path in &masks.covered {
        if path.is_dir() {
            a.push("--tmpfs".into());
            a.push(path.clone().into());
        } else {
            mount(&mut a, "--ro-bind", Path::new("/dev/null"), path);
        }
    }
    // Name resolution where /etc/resolv.conf points into the hidden /run (systemd-resolved).
    if let Some(dir) = resolver_dir() {
        mount(&mut a, "--ro-bind", &dir, &dir);
    }
    // Last: its own folder lies in Warden's hidden state.
    if let Some(own) = &own {
        mount(&mut a, "--bind", own, own);
    }
    // The rebuilt folders are read-only, as the file system they stand for (after every
    // mount in them: bubblewrap makes the missing mount points in them first).
    for dir in &masks.rebuilt {
        a.push("--remount-ro".into());
        a.push(dir.into());
    }
    if let Some(cwd) = &places.cwd {
        a.push("--chdir".into());
        a.push(cwd.into());
    }
    a.push("--".into());
    a.extend(command.iter().cloned());
    a
}

/// Makes `dir` afresh (a tmpfs) with each of its entries but the `hidden` ones bound back
/// read-only as they are (a symlink as a symlink: bound, it would show what it points to).
/// An entry that vanishes before bubblewrap binds it is left out.
fn rebuild(a: &mut Vec<OsString>, dir: &Path, hidden: &[PathBuf]) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    a.push("--tmpfs".into());
    a.push(dir.into());
    for entry in entries.flatten() {
        let path = entry.path();
        if hidden.contains(&path) {
            continue;
        }
        if entry.file_type().is_ok_and(|t| t.is_symlink()) {
            if let Ok(target) = std::fs::read_link(&path) {
                a.extend(["--symlink".into(), target.into(), path.into()]);
            }
        } else {
            a.extend(["--ro-bind-try".into(), path.clone().into(), path.into()]);
        }
    }
}

/// The folder of the file /etc/resolv.conf resolves to, when it lies under /run.
pub(super) fn resolver_dir() -> Option<PathBuf> {
    let real = Path::new("/etc/resolv.conf").canonicalize().ok()?;
    real.starts_with("/run")
        .then(|| real.parent().map(Path::to_owned))
        .flatten()
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
        let on = Limits {
            sandbox: true,
            ..Limits::default()
        };
        cfg!(target_os = "linux")
            && program().is_some_and(|bwrap| {
                let a = argv(&bwrap, &["true".into()], &on, &Places::default());
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
