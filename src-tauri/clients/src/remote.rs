//! Remote servers (Streamable HTTP) in the clients' files: which URLs Warden bridges, how an
//! entry's headers become the bridge's `--header NAME=ENVVAR`, and the bridge's arguments for
//! a remote server (`warden bridge --server NAME --remote URL ...`). Pure: no HTTP here (that
//! is `warden-remote`'s), so `warden` and the registry's planner share these rules.

/// https with a host, or plain http to this machine; never a user name or password in it.
/// The same rule `warden-remote` applies before it connects (`src/net.rs`), said before
/// anything is written.
pub fn check_url(url: &str) -> Result<(), String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(format!("`{url}` is not an https URL"));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err(format!(
            "`{}` has a user name or password in it, which would be sent in plain sight and logged; give credentials as a header instead",
            shown(url)
        ));
    }
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority.split(':').next().unwrap_or_default(),
    };
    if url
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '{' || c == '}')
    {
        return Err(format!(
            "`{}` is not a URL Warden can reach as it is (a placeholder or a space in it)",
            shown(url)
        ));
    }
    match scheme.to_ascii_lowercase().as_str() {
        "https" if !host.is_empty() => Ok(()),
        "http" if is_loopback(host) => Ok(()),
        "http" => Err(format!(
            "`{}` is plain http to a host that is not this machine; Warden speaks to it only over https (http is allowed for localhost, 127.0.0.1 and ::1)",
            shown(url)
        )),
        _ => Err(format!("`{}` is not an https URL", shown(url))),
    }
}

/// `url` as messages show it: without its query (it may hold a key) or a user name and
/// password.
pub fn shown(url: &str) -> String {
    let base = url.split(['?', '#']).next().unwrap_or(url);
    match base.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let host = authority.rsplit('@').next().unwrap_or(authority);
            format!("{scheme}://{host}{path}")
        }
        None => base.to_owned(),
    }
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The variable a header's whole value comes from: `${VAR}`, `${env:VAR}` (VS Code, Cursor)
/// or `{env:VAR}` (opencode).
pub fn header_var(value: &str) -> Option<&str> {
    let var = match value.strip_prefix("${") {
        Some(rest) => {
            let inner = rest.strip_suffix('}')?;
            inner.strip_prefix("env:").unwrap_or(inner)
        }
        None => value.strip_prefix("{env:")?.strip_suffix('}')?,
    };
    let ok = !var.is_empty()
        && !var.starts_with(|c: char| c.is_ascii_digit())
        && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    ok.then_some(var)
}

fn header_name_ok(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
}

/// An entry's headers as the bridge's `NAME=ENVVAR` arguments, or why they cannot be: the
/// bridge sends a header whole from one environment variable, so a value written in the
/// file (a secret in plain text, most likely) or one that mixes text and a variable is named
/// (never shown) with what to do.
pub fn header_args(headers: &[(String, String)]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for (name, value) in headers {
        if !header_name_ok(name) {
            return Err(format!(
                "its header {name:?} is not a valid header name; nothing was changed in this entry"
            ));
        }
        match header_var(value) {
            Some(var) => out.push(format!("{name}={var}")),
            None if value.starts_with("${")
                && value.ends_with('}')
                && value.matches("${").count() == 1 =>
            {
                return Err(format!(
                    "its header {name:?} comes from a reference the bridge cannot read (it reads only `${{VAR}}` and `${{env:VAR}}`, an environment variable). Fix: put the value in an environment variable, write the header as `${{VAR}}`, and wrap again"
                ));
            }
            None if value.contains("${") || value.contains("{env:") => {
                return Err(format!(
                    "its header {name:?} mixes text and a variable (such as `Bearer ${{env:TOKEN}}`); the bridge sends a header whole from one environment variable. Fix: set a variable to the whole value (for example AUTH_HEADER=\"Bearer …\"), write the header as `${{AUTH_HEADER}}`, and wrap again"
                ));
            }
            None => {
                return Err(format!(
                    "its header {name:?} has its value written in the file; the bridge sends a header only from an environment variable, and never writes a secret into arguments. Fix: write the header as `${{VAR}}` with the value in the variable VAR, and wrap again; or remove the entry and add it with `warden servers add NAME --url URL --secret-env VAR --header {name}=VAR --client ID` (the value goes into the OS keychain)"
                ));
            }
        }
    }
    Ok(out)
}

/// Checks the bridge's `NAME=ENVVAR` header arguments as given on a command line.
pub fn check_header_args(headers: &[String]) -> Result<(), String> {
    for h in headers {
        let ok = h.split_once('=').is_some_and(|(name, var)| {
            header_name_ok(name)
                && !var.is_empty()
                && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if !ok {
            return Err(format!(
                "--header {h:?} is not NAME=ENVVAR (a header name, then the environment variable whose value is sent)"
            ));
        }
    }
    Ok(())
}

/// Why a remote entry of this transport (`type` as written) cannot be bridged, if it cannot.
/// Streamable HTTP and the deprecated HTTP+SSE (`type: "sse"`, a URL ending in `/sse`) both
/// can: warden-remote speaks each; WebSocket cannot.
pub fn transport_problem(transport: Option<&str>, _url: &str) -> Option<String> {
    match transport {
        Some("ws" | "websocket") => Some(format!(
            "remote server over WebSocket (type {:?}); warden-remote speaks Streamable HTTP and HTTP+SSE only, so the entry stays as it is",
            transport.unwrap_or_default()
        )),
        _ => None,
    }
}

/// Whether `url` names an HTTP+SSE server's stream (its path ends in `/sse`), as clients' files
/// spell such an entry.
pub fn is_sse_url(url: &str) -> bool {
    shown(url).trim_end_matches('/').ends_with("/sse")
}

/// The bridge's arguments for a remote server: `bridge --server NAME [--secret-env VAR]...
/// --remote URL [--header NAME=ENVVAR]...`.
pub fn bridge_args(
    name: &str,
    url: &str,
    headers: &[String],
    secret_env: &[String],
) -> Vec<String> {
    let mut v = vec!["bridge".to_owned()];
    if name.starts_with('-') {
        v.push(format!("--server={name}"));
    } else {
        v.extend(["--server".to_owned(), name.to_owned()]);
    }
    for k in secret_env {
        v.extend(["--secret-env".to_owned(), k.clone()]);
    }
    v.extend(["--remote".to_owned(), url.to_owned()]);
    for h in headers {
        v.extend(["--header".to_owned(), h.clone()]);
    }
    v
}

/// What a bridge's arguments (after `bridge`) say about a remote server, when they name one
/// (`--remote`, no `--`): the server's name, the URL and the headers.
pub(crate) struct RemoteArgs {
    pub server: Option<String>,
    pub url: String,
    pub headers: Vec<String>,
    pub secret_env: Vec<String>,
}

pub(crate) fn parse_bridge_args(items: &[String]) -> Option<RemoteArgs> {
    if items.first().map(String::as_str) != Some("bridge") || items.iter().any(|a| a == "--") {
        return None;
    }
    let mut out = RemoteArgs {
        server: None,
        url: String::new(),
        headers: Vec::new(),
        secret_env: Vec::new(),
    };
    let mut url = None;
    let mut i = 1;
    while i < items.len() {
        let a = items[i].as_str();
        let (key, inline) = match a.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k, Some(v.to_owned())),
            _ => (a, None),
        };
        let takes = matches!(
            key,
            "--server"
                | "--remote"
                | "--header"
                | "--secret-env"
                | "--pass-env"
                | "--set"
                | "--config"
        );
        let value = match (&inline, takes) {
            (Some(v), _) => Some(v.clone()),
            (None, true) => {
                i += 1;
                items.get(i).cloned()
            }
            (None, false) => None,
        };
        match key {
            "--server" => out.server = value,
            "--remote" => url = value,
            "--header" => out.headers.extend(value),
            "--secret-env" => out.secret_env.extend(value),
            _ => {}
        }
        i += 1;
    }
    out.url = url?;
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_http_without_credentials() {
        for ok in [
            "https://mcp.example.com/mcp",
            "http://127.0.0.1:8080/mcp",
            "http://localhost/mcp",
            "http://[::1]:9/mcp",
        ] {
            assert_eq!(check_url(ok), Ok(()), "{ok}");
        }
        for bad in [
            "http://example.com/mcp",
            "https://user:pw@example.com/mcp",
            "ftp://example.com",
            "example.com/mcp",
            "https://",
            "https://${HOST}/mcp",
            "https://{tenant}.example.com/mcp",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
        let e = check_url("https://u:secretpw@example.com/mcp?key=k1").unwrap_err();
        assert!(!e.contains("k1"), "{e}");
    }

    #[test]
    fn a_header_from_one_variable_maps_and_others_say_why_without_the_value() {
        let h = |n: &str, v: &str| vec![(n.to_owned(), v.to_owned())];
        assert_eq!(
            header_args(&h("Authorization", "${env:GH_AUTH}")),
            Ok(vec!["Authorization=GH_AUTH".to_owned()])
        );
        assert_eq!(
            header_args(&h("X-Key", "${KEY_1}")),
            Ok(vec!["X-Key=KEY_1".to_owned()])
        );
        let e = header_args(&h("Authorization", "Bearer ${env:TOKEN}")).unwrap_err();
        assert!(e.contains("\"Authorization\"") && e.contains("Fix:"), "{e}");
        let e = header_args(&h("Authorization", "Bearer sk-live-123")).unwrap_err();
        assert!(
            e.contains("\"Authorization\"") && !e.contains("sk-live-123"),
            "{e}"
        );
        assert!(header_args(&h("Bad Name", "${X}")).is_err());
        assert_eq!(
            header_args(&h("K", "{env:CTX_KEY}")),
            Ok(vec!["K=CTX_KEY".to_owned()])
        );
        let e = header_args(&h("K", "${input:tok}")).unwrap_err();
        assert!(e.contains("cannot read"), "{e}");
    }

    #[test]
    fn the_bridge_args_read_back() {
        let args = bridge_args(
            "gh",
            "https://x/mcp",
            &["A=B".to_owned()],
            &["B".to_owned()],
        );
        let r = parse_bridge_args(&args).unwrap();
        assert_eq!(r.server.as_deref(), Some("gh"));
        assert_eq!(r.url, "https://x/mcp");
        assert_eq!(r.headers, ["A=B"]);
        assert_eq!(r.secret_env, ["B"]);
        let mut local = args.clone();
        local.extend(["--".to_owned(), "cmd".to_owned()]);
        assert!(parse_bridge_args(&local).is_none());
        let r = parse_bridge_args(&bridge_args("-x", "https://y", &[], &[])).unwrap();
        assert_eq!(r.server.as_deref(), Some("-x"));
    }
}
