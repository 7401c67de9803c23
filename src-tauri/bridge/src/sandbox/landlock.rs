//! The sandbox made by Landlock where bubblewrap cannot make one (Linux 6.12+, Landlock ABI
//! 6): reads everywhere but the hidden paths (a hidden path made while the server runs too:
//! the folders above it are allowed entry by entry) and `/tmp`, writes only the grants but
//! what stays read-only in them (a grant that holds such a name is allowed entry by entry,
//! so its top takes no new entry) and the server's own folder (its temp files included,
//! through `TMPDIR`), no TCP unless the host's
//! network is granted (with a `sandbox_network` list: TCP connect to the proxy's port only), no signal to a process outside the sandbox and no abstract UNIX
//! socket (its scopes). With the system-call filter, no UNIX socket at all. What it cannot
//! do that bubblewrap does: a pid namespace (the user's processes stay visible in /proc,
//! though not their memory or environment), and with a list, a connection to the proxy's
//! port number on another address (the filter allows no socket with `"none"`, and only TCP,
//! no listener, with a list).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope,
};

use super::Places;
use warden_config::Limits;
use warden_wire::codes::Code;

/// The Landlock ABI whose scopes keep signals and abstract sockets in: Linux 6.12.
const NEEDED: i64 = 6;

/// Why Landlock cannot make the sandbox here.
#[derive(Debug, thiserror::Error)]
pub enum Unfit {
    #[error("Landlock is not available here (Linux 5.13+, enabled in the kernel)")]
    Missing,
    #[error(
        "Landlock here (ABI {0}) cannot keep the server's signals and abstract sockets in (it needs ABI 6, Linux 6.12)"
    )]
    TooOld(i64),
    #[error("its Landlock rules cannot be made: {0}")]
    Rules(String),
}

impl Unfit {
    pub fn code(&self) -> Code {
        match self {
            Unfit::Missing | Unfit::Rules(_) => Code::SandboxUnavailable,
            Unfit::TooOld(_) => Code::SandboxKernel,
        }
    }
}

/// A server's Landlock rules, made before the fork and enforced in the child.
pub struct Rules(Option<RulesetCreated>);

impl Rules {
    /// The rules for `command` under `limits`, and the server's own folder (created).
    /// With a `sandbox_network` list, `proxy` is the proxy's port on the host's loopback:
    /// the one TCP port the server may connect to (Landlock rules name ports, not hosts).
    pub fn new(
        command: &[OsString],
        limits: &Limits,
        places: &Places,
        proxy: Option<u16>,
    ) -> Result<(Rules, Option<PathBuf>), Unfit> {
        let abi = available_abi();
        if std::env::var_os("WARDEN_NO_LANDLOCK").is_some() || abi < 1 {
            return Err(Unfit::Missing);
        }
        if abi < NEEDED {
            return Err(Unfit::TooOld(abi));
        }
        let rules = |e: landlock::RulesetError| Unfit::Rules(e.to_string());
        let v6 = ABI::V6;
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(v6))
            .map_err(rules)?
            .scope(Scope::from_all(v6))
            .map_err(rules)?;
        if !limits.sandbox_network.is_host() {
            ruleset = ruleset
                .handle_access(AccessNet::from_all(v6))
                .map_err(rules)?;
        }
        let mut created = ruleset.create().map_err(rules)?;
        if let Some(port) = proxy.filter(|_| !limits.sandbox_network.is_host()) {
            created = created
                .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
                .map_err(rules)?;
        }
        let mut hidden = places.hidden(limits);
        let (grants, own) = places.writable(limits);
        let mut reads = places.under_tmp(command);
        if let Some(dir) = super::bwrap::resolver_dir() {
            reads.push(dir);
        }
        let mut readable = split(&reads, &hidden);
        hidden.push(PathBuf::from("/tmp"));
        readable.extend(split(&[PathBuf::from("/")], &hidden));
        for root in &readable {
            add(&mut created, root, AccessFs::from_read(v6))?;
        }
        hidden.pop();
        // What runs outside later stays read-only inside the grants: left out of them, and
        // readable (a grant under /tmp is not otherwise).
        let read_only = places.read_only(limits);
        for path in &read_only {
            add(&mut created, path, AccessFs::from_read(v6))?;
        }
        // A hidden path not made yet inside a grant is the server's to make: splitting the
        // grant for it would only take the top of the grant from the server.
        hidden.retain(|h| h.exists() || !grants.iter().any(|g| h.starts_with(g)));
        hidden.extend(read_only);
        for dir in split(&grants, &hidden).iter().chain(own.iter()) {
            add(&mut created, dir, AccessFs::from_all(v6))?;
        }
        add(
            &mut created,
            Path::new("/dev/null"),
            AccessFs::from_file(v6),
        )?;
        Ok((Rules(Some(created)), own))
    }

    /// Enforces the rules on this process (in the forked child, before exec).
    pub fn restrict_self(mut self) -> std::io::Result<()> {
        match self.0.take().map(RulesetCreated::restrict_self) {
            Some(Ok(_)) | None => Ok(()),
            Some(Err(_)) => Err(std::io::Error::from_raw_os_error(libc::EPERM)),
        }
    }
}

/// Allows `access` beneath `path` (a path that vanished meanwhile allows nothing).
fn add(
    ruleset: &mut RulesetCreated,
    path: &Path,
    access: landlock::BitFlags<AccessFs>,
) -> Result<(), Unfit> {
    // A file takes only a file's rights (a folder's would make the rule invalid).
    let access = if path.is_dir() {
        access
    } else {
        access & AccessFs::from_file(ABI::V6)
    };
    if let Ok(fd) = PathFd::new(path) {
        ruleset
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| Unfit::Rules(e.to_string()))?;
    }
    Ok(())
}

/// The Landlock ABI the kernel offers (0: none).
#[allow(unsafe_code)]
fn available_abi() -> i64 {
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

/// Folders and files that, allowed beneath each, give everything under `roots` but `hidden`:
/// Landlock allows by path and cannot take a subfolder out of an allowed one, so a root that
/// holds a hidden path is replaced, on the way down to it, by its entries but the one leading
/// there; a root inside a hidden path goes. Symlinks are never roots (what they point to is
/// allowed or not where it lies). All paths are resolved ones.
pub(super) fn split(roots: &[PathBuf], hidden: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = roots.to_vec();
    for h in hidden {
        out.retain(|r| !r.starts_with(h));
        while let Some(i) = out.iter().position(|r| h.starts_with(r)) {
            let mut at = out.swap_remove(i);
            let Ok(rest) = h.strip_prefix(&at).map(Path::to_owned) else {
                continue;
            };
            for part in rest.components() {
                let next = at.join(part);
                if let Ok(entries) = std::fs::read_dir(&at) {
                    out.extend(
                        entries
                            .flatten()
                            .filter(|e| e.file_type().is_ok_and(|t| !t.is_symlink()))
                            .map(|e| e.path())
                            .filter(|p| *p != next),
                    );
                }
                at = next;
            }
        }
    }
    out
}
