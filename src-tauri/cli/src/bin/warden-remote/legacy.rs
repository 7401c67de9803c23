//! The deprecated HTTP+SSE transport (MCP 2024-11-05), spoken only to a server that has no
//! Streamable HTTP: a GET to the server's URL opens an event stream whose first event,
//! `endpoint`, names where to POST each message; every later `message` event is one message from
//! the server. The endpoint is the server's word, so it is held to the server's own origin: a
//! hostile or broken server must not send the client's messages, headers and sign-in elsewhere.

use ureq::http::Uri;

/// Whether the relay tries HTTP+SSE before Streamable HTTP: a URL whose path ends in `/sse`, as
/// the SDKs' servers serve it and as clients' files name it.
pub(crate) fn sse_first(url: &Uri) -> bool {
    url.path().trim_end_matches('/').ends_with("/sse")
}

/// Whether a first POST answered with `status` may mean "no Streamable HTTP here", so the
/// HTTP+SSE stream is tried: the statuses the spec's backwards-compatibility rule names.
pub(crate) fn means_no_streamable_http(status: u16) -> bool {
    matches!(status, 400 | 404 | 405)
}

/// The URL an `endpoint` event names, resolved against the server's URL (it is usually a path
/// with a session id in its query), and refused unless it is on the same origin (scheme, host,
/// port) as `base`.
pub(crate) fn endpoint(base: &Uri, given: &str) -> Result<Uri, String> {
    let given = given.trim();
    if given.is_empty() {
        return Err("its `endpoint` event is empty".into());
    }
    if given
        .chars()
        .any(|c| c.is_control() || c.is_whitespace() || c == '\\')
    {
        return Err(
            "its `endpoint` event is not a URL (a space, a backslash or a control character)"
                .into(),
        );
    }
    let scheme = base.scheme_str().unwrap_or("https");
    let authority = base.authority().map(|a| a.as_str()).unwrap_or_default();
    let has_scheme = given
        .split(['/', '?', '#'])
        .next()
        .is_some_and(|first| first.contains(':'));
    let joined = if has_scheme {
        given.to_owned()
    } else if given.starts_with("//") {
        format!("{scheme}:{given}")
    } else if given.starts_with('/') {
        format!("{scheme}://{authority}{given}")
    } else if given.starts_with('?') {
        format!("{scheme}://{authority}{}{given}", base.path())
    } else {
        let path = base.path();
        let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        let dir = if dir.is_empty() { "/" } else { dir };
        format!("{scheme}://{authority}{dir}{given}")
    };
    let joined = joined.split('#').next().unwrap_or_default();
    let uri: Uri = joined
        .parse()
        .map_err(|_| "its `endpoint` event is not a URL".to_owned())?;
    let origin = |u: &Uri| {
        let scheme = u.scheme_str().unwrap_or_default().to_ascii_lowercase();
        let port = u.port_u16().unwrap_or(match scheme.as_str() {
            "http" => 80,
            _ => 443,
        });
        (
            scheme,
            u.host().unwrap_or_default().to_ascii_lowercase(),
            port,
        )
    };
    let userinfo = uri.authority().is_some_and(|a| a.as_str().contains('@'));
    if userinfo || origin(&uri) != origin(base) {
        let (s, h, p) = origin(&uri);
        return Err(format!(
            "its `endpoint` event names another origin ({s}://{h}:{p}); Warden sends messages, headers and the sign-in only to the server's own origin"
        ));
    }
    Ok(uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Uri {
        "http://127.0.0.1:8000/sse".parse().expect("a URL")
    }

    fn at(given: &str) -> Result<String, String> {
        endpoint(&base(), given).map(|u| u.to_string())
    }

    #[test]
    fn a_path_is_taken_on_the_servers_origin() {
        assert_eq!(
            at("/messages/?session_id=ab12"),
            Ok("http://127.0.0.1:8000/messages/?session_id=ab12".into())
        );
    }

    #[test]
    fn a_relative_path_is_beside_the_servers_path() {
        assert_eq!(
            at("messages?session_id=1"),
            Ok("http://127.0.0.1:8000/messages?session_id=1".into())
        );
    }

    #[test]
    fn a_query_alone_goes_to_the_servers_path() {
        assert_eq!(
            at("?session_id=1"),
            Ok("http://127.0.0.1:8000/sse?session_id=1".into())
        );
    }

    #[test]
    fn a_whole_url_on_the_same_origin_is_taken() {
        assert_eq!(
            at("http://127.0.0.1:8000/m?s=1"),
            Ok("http://127.0.0.1:8000/m?s=1".into())
        );
    }

    #[test]
    fn the_default_port_is_the_same_origin_as_no_port() {
        let base: Uri = "https://mcp.example.com/sse".parse().expect("a URL");
        assert!(endpoint(&base, "https://mcp.example.com:443/m").is_ok());
    }

    #[test]
    fn another_host_is_refused() {
        assert!(at("http://evil.example:8000/m").is_err());
    }

    #[test]
    fn another_port_is_refused() {
        assert!(at("http://127.0.0.1:9/m").is_err());
    }

    #[test]
    fn another_scheme_is_refused() {
        assert!(at("https://127.0.0.1:8000/m").is_err());
    }

    #[test]
    fn a_scheme_relative_url_elsewhere_is_refused() {
        assert!(at("//evil.example/m").is_err());
    }

    #[test]
    fn a_user_name_in_front_of_another_host_is_refused() {
        assert!(at("http://127.0.0.1:8000@evil.example/m").is_err());
    }

    #[test]
    fn a_backslash_is_refused() {
        assert!(at("/\\evil.example/m").is_err());
    }

    #[test]
    fn an_empty_endpoint_is_refused() {
        assert!(at(" ").is_err());
    }

    #[test]
    fn a_url_ending_in_sse_goes_to_the_sse_transport_first() {
        assert!(sse_first(&base()));
    }

    #[test]
    fn another_url_goes_to_streamable_http_first() {
        assert!(!sse_first(&"https://x.example/mcp".parse().expect("a URL")));
    }
}
