//! What `warden-registry` and `warden-remote` share about HTTP (ureq with rustls, no OpenSSL):
//! which URLs they may reach, and how a failure is said. Each of those programs includes this
//! file (`#[path]`); `warden` does not, so it links no HTTP or TLS code (scripts/test.sh checks
//! its symbols).

use std::time::Duration;

/// https, or http to a loopback host (a test's server, a local mirror): nothing else, so
/// nothing is read or sent in plain text over the network.
pub(crate) fn check_url(url: &str) -> Result<ureq::http::Uri, String> {
    let uri: ureq::http::Uri = url
        .parse()
        .map_err(|e| format!("`{url}` is not a URL ({e})"))?;
    let host = uri.host().unwrap_or_default();
    if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
        return Err(format!(
            "`{}` has a user name or password in it, which would be sent in plain sight and logged; give credentials as a header instead",
            shown(&uri)
        ));
    }
    match uri.scheme_str() {
        Some("https") if !host.is_empty() => Ok(uri),
        Some("http") if is_loopback(host) => Ok(uri),
        Some("http") => Err(format!(
            "`{url}` is plain http to a host that is not this machine; Warden speaks to it only over https (http is allowed for localhost)"
        )),
        _ => Err(format!("`{url}` is not an https URL")),
    }
}

/// `uri` as messages show it: scheme, host, port and path, without a query (it may hold a key)
/// or anything before the host.
pub(crate) fn shown(uri: &ureq::http::Uri) -> String {
    let port = uri.port_u16().map(|p| format!(":{p}")).unwrap_or_default();
    format!(
        "{}://{}{port}{}",
        uri.scheme_str().unwrap_or("?"),
        uri.host().unwrap_or_default(),
        uri.path()
    )
}

pub(crate) fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// An agent for `uri`: HTTP errors as answers (the caller reads them), a bound on each whole
/// exchange (`global`) or on connecting only, at most `redirects` redirects and https kept
/// across them, a proxy from the environment except for loopback.
pub(crate) fn agent(
    uri: &ureq::http::Uri,
    global: Option<Duration>,
    connect: Option<Duration>,
    redirects: u32,
    accept: &str,
) -> ureq::Agent {
    let https = uri.scheme_str() == Some("https");
    ureq::Agent::config_builder()
        .max_redirects(redirects)
        .timeout_global(global)
        .timeout_connect(connect)
        .http_status_as_error(false)
        .https_only(https)
        .proxy(if https {
            ureq::Proxy::try_from_env()
        } else {
            None
        })
        .user_agent(concat!("mcp-warden/", env!("CARGO_PKG_VERSION")))
        .accept(accept)
        .build()
        .into()
}

/// Whether the error is the certificate's (TLS), not the network's.
#[allow(dead_code)] // warden-registry reports both as unreachable
pub(crate) fn is_tls(e: &ureq::Error) -> bool {
    matches!(e, ureq::Error::Tls(_) | ureq::Error::Rustls(_))
        || e.to_string().to_ascii_lowercase().contains("certificate")
}

/// The error in words, with what ureq wraps (an I/O error's kind says more than its class).
pub(crate) fn describe(e: &ureq::Error, timeout: Duration) -> String {
    match e {
        ureq::Error::HostNotFound => "the host name does not resolve (offline, or a typo?)".into(),
        ureq::Error::ConnectionFailed => "the connection was refused or failed".into(),
        ureq::Error::Timeout(t) => format!("no answer within {} s ({t})", timeout.as_secs()),
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

/// The start of an error body, on one line, for a message.
pub(crate) fn snippet(body: &[u8]) -> String {
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
        assert!(check_url("https://user:token@example.com/mcp").is_err());
    }

    #[test]
    fn a_shown_url_has_no_query() {
        let uri = check_url("https://example.com:8443/mcp?api_key=sk-123").expect("a valid URL");
        assert_eq!(shown(&uri), "https://example.com:8443/mcp");
    }
}
