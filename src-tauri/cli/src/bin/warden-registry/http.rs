//! One HTTP GET to an MCP Registry (ureq with rustls: no OpenSSL).
//!
//! Only `warden-registry` links this, so the HTTP and TLS stack is never in `warden`, whose
//! start-up time, idle memory and size every IDE pays for each server it runs (scripts/test.sh
//! checks `warden`'s symbols).

use std::time::Duration;

use warden_wire::codes::Code;

use crate::Failure;

/// The whole exchange, connection to last byte: a registry that does not answer in this time
/// is reported, not waited for.
const TIMEOUT: Duration = Duration::from_secs(10);
/// A page of the list is tens of KiB; this only bounds a runaway answer.
const MAX_BODY: u64 = 32 << 20;

const WHAT_TO_DO: &str = "Fix: check the network connection and try again, or use another registry with WARDEN_REGISTRY_URL or `url` in the [registry] table of config.toml";

/// https, or http to a loopback host (a test's registry, a local mirror): nothing else, so
/// what is installed is never read in plain text from the network.
fn check_url(url: &str) -> Result<ureq::http::Uri, String> {
    let uri: ureq::http::Uri = url
        .parse()
        .map_err(|e| format!("`{url}` is not a URL ({e})"))?;
    let host = uri.host().unwrap_or_default();
    match uri.scheme_str() {
        Some("https") if !host.is_empty() => Ok(uri),
        Some("http") if is_loopback(host) => Ok(uri),
        Some("http") => Err(format!(
            "`{url}` is plain http to a host that is not this machine; Warden reads registries only over https (http is allowed for localhost)"
        )),
        _ => Err(format!("`{url}` is not an https URL")),
    }
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The body at `url` (https, or http to this machine), or why not, with its code.
pub(crate) fn get(url: &str) -> Result<Vec<u8>, Failure> {
    let uri = check_url(url).map_err(|why| {
        Failure::new(
            Code::RegistryUnreachable,
            format!("{why}. Fix: set WARDEN_REGISTRY_URL or `url` in the [registry] table of config.toml to an https URL"),
        )
    })?;
    let https = uri.scheme_str() == Some("https");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(TIMEOUT))
        .http_status_as_error(false)
        // Once https, redirects may not downgrade it.
        .https_only(https)
        // A proxy from the environment, except for this machine.
        .proxy(if https {
            ureq::Proxy::try_from_env()
        } else {
            None
        })
        .user_agent(concat!("mcp-warden/", env!("CARGO_PKG_VERSION")))
        .accept("application/json")
        .build()
        .into();
    let unreachable = |e: ureq::Error| {
        Failure::new(
            Code::RegistryUnreachable,
            format!(
                "the MCP Registry at {url} could not be reached: {}. {WHAT_TO_DO}",
                describe(&e)
            ),
        )
    };
    let mut response = agent.get(uri).call().map_err(unreachable)?;
    let status = response.status().as_u16();
    let body = response
        .body_mut()
        .with_config()
        .limit(MAX_BODY)
        .read_to_vec();
    if status == 404 {
        return Err(Failure::new(
            Code::RegistryNotFound,
            format!(
                "the registry has no such server or version ({url} answered 404 Not Found). Fix: find the exact name with `warden registry search TERM`"
            ),
        ));
    }
    if !(200..300).contains(&status) {
        let detail = body
            .ok()
            .map(|b| snippet(&b))
            .filter(|s| !s.is_empty())
            .map(|s| format!(": {s}"))
            .unwrap_or_default();
        return Err(Failure::new(
            Code::RegistryUnreachable,
            format!("the MCP Registry at {url} answered HTTP {status}{detail}. {WHAT_TO_DO}"),
        ));
    }
    body.map_err(|e| match e {
        ureq::Error::Timeout(_) => unreachable(e),
        e => Failure::new(
            Code::RegistryInvalid,
            format!(
                "the MCP Registry's answer from {url} could not be read to its end: {}. Fix: try again; if it persists, check that the registry URL is an MCP Registry's",
                describe(&e)
            ),
        ),
    })
}

/// The error in words, with what ureq wraps (an I/O error's kind says more than its class).
fn describe(e: &ureq::Error) -> String {
    match e {
        ureq::Error::HostNotFound => "the host name does not resolve (offline, or a typo?)".into(),
        ureq::Error::ConnectionFailed => "the connection was refused or failed".into(),
        ureq::Error::Timeout(t) => format!("no answer within {} s ({t})", TIMEOUT.as_secs()),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            "the connection was refused (nothing listens there)".into()
        }
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            "the connection closed before the answer ended".into()
        }
        ureq::Error::Io(io) if io.to_string().contains("lookup address") => {
            format!("the host name does not resolve (offline, or a typo?): {io}")
        }
        ureq::Error::BodyExceedsLimit(n) => format!("the answer is larger than {n} bytes"),
        other => other.to_string(),
    }
}

/// The start of an error body, on one line, for the message.
fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None => one_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_http() {
        assert!(check_url("https://registry.modelcontextprotocol.io/v0.1/servers").is_ok());
        assert!(check_url("http://127.0.0.1:8080/v0.1/servers").is_ok());
        assert!(check_url("http://localhost/v0.1/servers").is_ok());
        assert!(check_url("http://[::1]:9/x").is_ok());
        assert!(check_url("http://127.9.9.9/x").is_ok());
        assert!(check_url("http://registry.modelcontextprotocol.io/x").is_err());
        assert!(check_url("http://127.0.0.1.evil.example/x").is_err());
        assert!(check_url("ftp://127.0.0.1/x").is_err());
        assert!(check_url("file:///etc/passwd").is_err());
        assert!(check_url("not a url").is_err());
    }
}
