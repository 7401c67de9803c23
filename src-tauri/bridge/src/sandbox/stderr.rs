//! What a sandboxed server was refused, read from its stderr: the `sandbox_denied` event the
//! window offers a grant for.

use std::path::PathBuf;

use warden_config::Limits;

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
    if limits.sandbox_network == warden_config::network::Network::None
        && NETWORK_ERRORS.iter().any(|e| line.contains(e))
    {
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
    // The sandbox's own /tmp takes any write, so a refusal below it is of a folder kept
    // readable there (the program's, the working folder, a home under /tmp); one of a file
    // of /tmp itself is not the sandbox's doing.
    let granted = limits.sandbox_write.iter().any(|g| path.starts_with(g));
    let own_tmp = path.parent() == Some(std::path::Path::new("/tmp"));
    (!granted && !own_tmp).then_some(Denied::Path(path))
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
