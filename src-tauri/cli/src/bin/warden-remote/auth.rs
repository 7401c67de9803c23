//! Signing in to a remote server, as the MCP authorization spec asks: a 401's
//! `WWW-Authenticate` → protected-resource metadata (RFC 9728) → authorization-server metadata
//! (RFC 8414, then OIDC discovery) → the client's identity by dynamic registration (RFC 7591,
//! `application_type: "native"`, at each sign-in: its loopback port is new each time) →
//! authorization code with PKCE S256, the `resource` parameter (RFC 8707) and `iss` checked
//! (RFC 9207), redirected to a loopback listener → tokens in the OS keychain (service
//! `mcp-warden-signin`, apart from servers' secrets; account: a hash of the server's URL; the
//! issuer, resource and client id kept with them), refreshed a minute before they expire.
//!
//! One sign-in per server at a time across every process: a lock in the state directory is
//! held while signing in or refreshing, and whoever waited finds the tokens in the keychain.
//!
//! Every endpoint met on the way must be https (http only to this machine): `W-AUTH-INSECURE`.
//! The browser is `$BROWSER` (a program and its words, never a shell) or the system opener,
//! given the URL as one argument, only when it is on the discovered issuer's origin.

use std::io::Write;
use std::net::TcpListener;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use oauth2::basic::BasicClient;
use oauth2::{
    AuthUrl, AuthorizationCode, ClientId, CsrfToken, PkceCodeChallenge, RedirectUrl, RefreshToken,
    Scope, TokenResponse, TokenUrl,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ureq::http::Uri;
use warden_wire::codes::Code;

use crate::net;

/// How long a sign-in may wait for the browser to come back.
const WAIT_FOR_BROWSER: Duration = Duration::from_secs(300);
/// The browser's sign-ins of this process in the last [`AGAIN_AFTER`]: a server that refuses
/// every fresh token must not open a tab per request, and one that asks for more scopes
/// (step-up) gets the browser again only for scopes not asked for yet, [`MAX_OPENS`] times at
/// most.
static BROWSER_OPENED: std::sync::Mutex<Option<Opened>> = std::sync::Mutex::new(None);
const AGAIN_AFTER: Duration = Duration::from_secs(600);
const MAX_OPENS: u32 = 3;

struct Opened {
    since: std::time::Instant,
    times: u32,
    /// Every scope asked for since: a step-up asks for these too, so that two tools needing
    /// two scopes do not take turns at the browser.
    scopes: Vec<String>,
}

fn opened() -> std::sync::MutexGuard<'static, Option<Opened>> {
    let mut guard = BROWSER_OPENED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if guard
        .as_ref()
        .is_some_and(|o| o.since.elapsed() >= AGAIN_AFTER)
    {
        *guard = None;
    }
    guard
}
/// Tokens are refreshed this long before they expire.
const REFRESH_EARLY: u64 = 60;

/// Why a sign-in failed, with its code.
#[derive(Debug)]
pub(crate) struct AuthError {
    pub code: Code,
    pub message: String,
}

/// Messages may hold servers' text: one line, control characters escaped, cut short.
fn fail(code: Code, message: impl Into<String>) -> AuthError {
    let message: String = message.into().chars().take(300).collect();
    AuthError {
        code,
        message: warden_wire::text::line(&message),
    }
}

/// What a sign-in keeps (in the OS keychain; never in a file).
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct Tokens {
    pub access: String,
    pub refresh: Option<String>,
    /// Seconds since the epoch.
    pub expires_at: Option<u64>,
    pub issuer: String,
    pub resource: String,
    pub client_id: String,
    pub token_endpoint: String,
    /// Where the tokens are revoked at sign-out (RFC 7009), when the server offers it.
    #[serde(default)]
    pub revocation_endpoint: Option<String>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("issuer", &self.issuer)
            .field("resource", &self.resource)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// When a token given `expires_in` expires (a year at most: a server's huge value must not
/// overflow the clock).
fn expiry(expires_in: Option<Duration>) -> Option<u64> {
    expires_in.map(|d| now().saturating_add(d.as_secs().min(365 * 24 * 3600)))
}

impl Tokens {
    pub(crate) fn fresh(&self) -> bool {
        self.expires_at.is_none_or(|at| now() + REFRESH_EARLY < at)
    }
}

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The discovered authorization server.
#[derive(Debug, Deserialize)]
struct Server {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    #[serde(default)]
    registration_endpoint: Option<String>,
    #[serde(default)]
    revocation_endpoint: Option<String>,
    /// It takes a Client ID Metadata Document's URL as a client id.
    #[serde(default)]
    client_id_metadata_document_supported: bool,
    #[serde(default)]
    code_challenge_methods_supported: Vec<String>,
    /// RFC 9207: the redirect must then carry `iss`.
    #[serde(default)]
    authorization_response_iss_parameter_supported: bool,
}

/// An HTTP client for the oauth2 crate: ureq, no redirects (an OAuth exchange has none to
/// follow, and following one opens the client to request forgery).
pub(crate) struct Http(pub ureq::Agent);

impl oauth2::SyncHttpClient for Http {
    type Error = ureq::Error;

    fn call(&self, request: oauth2::HttpRequest) -> Result<oauth2::HttpResponse, Self::Error> {
        let response = self.0.run(request)?;
        let (parts, mut body) = response.into_parts();
        let bytes = body.with_config().limit(1 << 20).read_to_vec()?;
        Ok(ureq::http::Response::from_parts(parts, bytes))
    }
}

/// A GET of a JSON document; `None` when the answer is not 200 (the next place is tried).
fn get_json(agent: &ureq::Agent, url: &str) -> Result<Option<Value>, AuthError> {
    net::check_url(url).map_err(|why| fail(Code::AuthInsecure, why))?;
    let mut response = agent
        .get(url)
        .header("accept", "application/json")
        .call()
        .map_err(|e| {
            fail(
                Code::RemoteUnreachable,
                format!("{url}: {}", net::describe(&e, Duration::from_secs(15))),
            )
        })?;
    match response.status().as_u16() {
        200 => json_body(&mut response)
            .map(Some)
            .map_err(|e| fail(Code::RemoteUnreachable, format!("{url}: not JSON ({e})"))),
        // Not there (404), or not for us to read (401, 403…): the next place is tried.
        _ => Ok(None),
    }
}

/// A JSON answer's body (at most 1 MiB), or why not.
fn json_body(response: &mut ureq::http::Response<ureq::Body>) -> Result<Value, String> {
    let bytes = response
        .body_mut()
        .with_config()
        .limit(1 << 20)
        .read_to_vec()
        .map_err(|e| e.to_string())?;
    serde_json::from_slice(&bytes).map_err(|e| e.to_string())
}

/// The parameter `name` of a `WWW-Authenticate: Bearer k="v", k2=v2` challenge (RFC 6750
/// §3): quoted (with `\` escapes) or a bare token; `None` when absent or empty.
pub(crate) fn challenge_param(header: &str, name: &str) -> Option<String> {
    let mut rest = header.trim_start();
    // The scheme: a word not followed by `=`.
    if let Some((scheme, after)) = rest.split_once(' ')
        && !scheme.contains('=')
    {
        rest = after;
    }
    loop {
        rest = rest.trim_start_matches([' ', ',', '\t']);
        let (key, after) = rest.split_once('=')?;
        let after = after.trim_start();
        let (value, next) = match after.strip_prefix('"') {
            Some(quoted) => {
                let mut value = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => value.extend(chars.next().map(|(_, c)| c)),
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        c => value.push(c),
                    }
                }
                (value, &quoted[end..])
            }
            None => {
                let end = after.find([',', ' ']).unwrap_or(after.len());
                (after[..end].to_owned(), &after[end..])
            }
        };
        if key.trim().eq_ignore_ascii_case(name) {
            return (!value.is_empty()).then_some(value);
        }
        rest = next;
    }
}

/// The well-known places of `kind` for `url` (RFC 8414 §3.1: the path goes after the
/// well-known part), then at the origin.
fn well_known(url: &Uri, kind: &str) -> Vec<String> {
    let origin = format!(
        "{}://{}",
        url.scheme_str().unwrap_or("https"),
        url.authority().map(|a| a.as_str()).unwrap_or_default()
    );
    let path = url.path().trim_end_matches('/');
    let mut places = Vec::new();
    if !path.is_empty() {
        places.push(format!("{origin}/.well-known/{kind}{path}"));
    }
    places.push(format!("{origin}/.well-known/{kind}"));
    places
}

/// Finds the authorization server for the resource at `server_url` (the 401's header first).
fn discover(
    agent: &ureq::Agent,
    server_url: &Uri,
    www_authenticate: Option<&str>,
) -> Result<(String, Server, Vec<String>), AuthError> {
    let mut metadata = None;
    let places: Vec<String> = www_authenticate
        .and_then(|h| challenge_param(h, "resource_metadata"))
        .into_iter()
        .chain(well_known(server_url, "oauth-protected-resource"))
        .collect();
    for place in &places {
        if let Some(doc) = get_json(agent, place)? {
            metadata = Some(doc);
            break;
        }
    }
    let metadata = metadata.ok_or_else(|| {
        fail(
            Code::AuthRequired,
            format!(
                "the server asks for a sign-in but publishes no protected-resource metadata (tried {})",
                places.join(", ")
            ),
        )
    })?;
    let resource = metadata
        .get("resource")
        .and_then(Value::as_str)
        .map_or_else(|| net::shown(server_url), str::to_owned);
    // RFC 9728 §3.3: the metadata must be about this very server: the same scheme, host and
    // port, and a path that is the server's or a whole-segment prefix of it.
    let named = net::check_url(&resource).map_err(|why| fail(Code::AuthInsecure, why))?;
    let same_origin = named.scheme_str() == server_url.scheme_str()
        && named
            .host()
            .zip(server_url.host())
            .is_some_and(|(a, b)| a.eq_ignore_ascii_case(b))
        && named.port_u16() == server_url.port_u16();
    let (np, sp) = (named.path().trim_end_matches('/'), server_url.path());
    let covers = sp == np || sp.starts_with(&format!("{np}/")) || np.is_empty();
    if !same_origin || !covers || named.query().is_some() {
        return Err(fail(
            Code::AuthDenied,
            format!(
                "the protected-resource metadata is about {}, not {}",
                net::shown(&named),
                net::shown(server_url)
            ),
        ));
    }
    let resource = net::shown(&named);
    let scopes: Vec<String> = metadata
        .get("scopes_supported")
        .and_then(Value::as_array)
        .map(|s| {
            s.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let issuer = metadata
        .pointer("/authorization_servers/0")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            fail(
                Code::AuthRequired,
                "the protected-resource metadata names no authorization server",
            )
        })?
        .to_owned();
    let issuer_uri = net::check_url(&issuer).map_err(|why| fail(Code::AuthInsecure, why))?;
    let mut places = well_known(&issuer_uri, "oauth-authorization-server");
    places.extend(well_known(&issuer_uri, "openid-configuration"));
    for place in &places {
        if let Some(doc) = get_json(agent, place)? {
            let server: Server = serde_json::from_value(doc).map_err(|e| {
                fail(
                    Code::AuthRequired,
                    format!("{place}: not authorization-server metadata ({e})"),
                )
            })?;
            if server.issuer.trim_end_matches('/') != issuer.trim_end_matches('/') {
                return Err(fail(
                    Code::AuthDenied,
                    format!("{place} names issuer {} instead of {issuer}", server.issuer),
                ));
            }
            for endpoint in [&server.authorization_endpoint, &server.token_endpoint]
                .into_iter()
                .chain(server.registration_endpoint.as_ref())
                .chain(server.revocation_endpoint.as_ref())
            {
                net::check_url(endpoint).map_err(|why| fail(Code::AuthInsecure, why))?;
            }
            if !server
                .code_challenge_methods_supported
                .iter()
                .any(|m| m == "S256")
            {
                return Err(fail(
                    Code::AuthDenied,
                    "the authorization server does not offer PKCE S256, which MCP requires",
                ));
            }
            return Ok((resource, server, scopes));
        }
    }
    Err(fail(
        Code::AuthRequired,
        format!(
            "no authorization-server metadata for {issuer} (tried {})",
            places.join(", ")
        ),
    ))
}

/// Dynamic client registration (RFC 7591) for the loopback `redirect`.
fn register(
    agent: &ureq::Agent,
    server: &Server,
    redirect: &str,
    scopes: &[String],
) -> Result<String, AuthError> {
    let endpoint = server.registration_endpoint.as_deref().ok_or_else(|| {
        fail(
            Code::AuthRequired,
            "the authorization server offers no dynamic registration. Fix: register Warden there yourself (a public client, redirect http://127.0.0.1/callback) and set `oauth_client_id` under [servers.NAME] in config.toml",
        )
    })?;
    let mut body = serde_json::json!({
        "client_name": "MCP Warden",
        "redirect_uris": [redirect],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "native",
    });
    if !scopes.is_empty() {
        body["scope"] = Value::String(scopes.join(" "));
    }
    let mut response = agent
        .post(endpoint)
        .header("content-type", "application/json")
        .send(body.to_string())
        .map_err(|e| fail(Code::RemoteUnreachable, format!("{endpoint}: {e}")))?;
    let status = response.status().as_u16();
    let answer: Value = json_body(&mut response).map_err(|e| {
        fail(
            Code::AuthDenied,
            format!("{endpoint} answered HTTP {status}, not JSON ({e})"),
        )
    })?;
    answer
        .get("client_id")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| {
            fail(
                Code::AuthDenied,
                format!("{endpoint} registered no client (HTTP {status})"),
            )
        })
}

/// Opens `url` in the browser: `$BROWSER` (its first command; `%s` stands for the URL, else
/// the URL is its last argument), else the system opener. No shell is involved.
fn open_browser(url: &str) -> Result<(), String> {
    let mut command = match std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty())
    {
        Some(browser) => {
            let first = browser.split(':').next().unwrap_or_default();
            let mut words = first.split_whitespace();
            let program = words.next().ok_or("BROWSER is empty")?;
            let mut c = std::process::Command::new(program);
            let mut placed = false;
            for w in words {
                if w.contains("%s") {
                    c.arg(w.replace("%s", url));
                    placed = true;
                } else {
                    c.arg(w);
                }
            }
            if !placed {
                c.arg(url);
            }
            c
        }
        None if cfg!(target_os = "macos") => {
            let mut c = std::process::Command::new("open");
            c.arg(url);
            c
        }
        None if cfg!(windows) => {
            let mut c = std::process::Command::new("rundll32");
            c.args(["url.dll,FileProtocolHandler", url]);
            c
        }
        None => {
            let mut c = std::process::Command::new("xdg-open");
            c.arg(url);
            c
        }
    };
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Waits for the browser's redirect on `listener`; returns the code once `state` (and `iss`,
/// when the server sends it) match.
fn wait_for_code(
    listener: &TcpListener,
    state: &str,
    issuer: &str,
    iss_required: bool,
) -> Result<String, AuthError> {
    let deadline = std::time::Instant::now() + WAIT_FOR_BROWSER;
    listener
        .set_nonblocking(true)
        .map_err(|e| fail(Code::AuthRequired, e.to_string()))?;
    loop {
        if std::time::Instant::now() > deadline {
            return Err(fail(
                Code::AuthRequired,
                format!(
                    "no sign-in came back from the browser within {} s",
                    WAIT_FOR_BROWSER.as_secs()
                ),
            ));
        }
        match listener.accept() {
            Ok((mut stream, _)) => {
                let _ = stream.set_nonblocking(false);
                // One read, briefly: a browser sends its request line at once, and a local
                // process that connects and stalls must not hold up the sign-in.
                let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
                let mut head = [0u8; 8192];
                let n = std::io::Read::read(&mut stream, &mut head).unwrap_or(0);
                let first = String::from_utf8_lossy(&head[..n])
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                let target = first
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or_default()
                    .to_owned();
                let query = target.split_once('?').map(|(_, q)| q).unwrap_or_default();
                let params: std::collections::HashMap<String, String> =
                    form_urlencoded::parse(query.as_bytes())
                        .into_owned()
                        .collect();
                let (page, outcome) = if params.get("state").map(String::as_str) != Some(state) {
                    (
                        "This sign-in link is not the one MCP Warden is waiting for.",
                        None,
                    )
                } else if let Some(error) = params.get("error") {
                    (
                        "The sign-in was refused. You can close this tab.",
                        Some(Err(fail(
                            Code::AuthDenied,
                            format!("the authorization server refused: {error}"),
                        ))),
                    )
                } else if params.get("iss").map_or(iss_required, |iss| {
                    iss.trim_end_matches('/') != issuer.trim_end_matches('/')
                }) {
                    (
                        "The sign-in came back from another server than the one asked.",
                        Some(Err(fail(
                            Code::AuthDenied,
                            "the redirect's iss is not the issuer asked (RFC 9207)",
                        ))),
                    )
                } else if let Some(code) = params.get("code") {
                    (
                        "Signed in to the MCP server. You can close this tab.",
                        Some(Ok(code.clone())),
                    )
                } else {
                    ("The sign-in came back without a code.", None)
                };
                let html = format!("<!doctype html><title>MCP Warden</title><p>{page}</p>");
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{html}",
                    html.len()
                );
                if let Some(outcome) = outcome {
                    return outcome;
                }
            }
            // A non-blocking listener (std has no accept with a deadline): the deadline above is
            // checked every turn.
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(fail(Code::AuthRequired, e.to_string())),
        }
    }
}

/// Signs in to the resource at `server_url` after its 401 (whose `WWW-Authenticate` is given).
pub(crate) fn sign_in(
    agent: &ureq::Agent,
    site: &Site,
    www_authenticate: Option<&str>,
) -> Result<Tokens, AuthError> {
    let server_url = &site.url;
    let (resource, server, supported) = discover(agent, server_url, www_authenticate)?;
    // The MCP spec's scope choice: the challenge's `scope`, else all the server supports.
    let mut scopes: Vec<String> = www_authenticate
        .and_then(|h| challenge_param(h, "scope"))
        .map_or(supported, |s| {
            s.split_whitespace().map(str::to_owned).collect()
        });
    if let Some(before) = opened().as_ref() {
        for s in &before.scopes {
            if !scopes.contains(s) {
                scopes.push(s.clone());
            }
        }
    }
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| {
        fail(
            Code::AuthRequired,
            format!("no loopback port for the redirect: {e}"),
        )
    })?;
    let port = listener
        .local_addr()
        .map_err(|e| fail(Code::AuthRequired, e.to_string()))?
        .port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    // The client's identity, in the spec's order: configured, a metadata document, registered.
    let client_id = match (&site.client_id, &site.metadata_url) {
        (Some((id, issuer)), _)
            if issuer.trim_end_matches('/') == server.issuer.trim_end_matches('/') =>
        {
            id.clone()
        }
        (Some((_, issuer)), _) => {
            return Err(fail(
                Code::AuthDenied,
                format!(
                    "the client id of oauth_client_id was registered at {issuer} (oauth_issuer), but this server's authorization server is {}; Warden gives it to no other. Fix: check the entry's URL, or correct oauth_issuer",
                    server.issuer
                ),
            ));
        }
        (None, Some(url)) if server.client_id_metadata_document_supported => url.clone(),
        _ => register(agent, &server, &redirect, &scopes)?,
    };
    let bad_url = |e: oauth2::url::ParseError| fail(Code::AuthDenied, e.to_string());
    let client = BasicClient::new(ClientId::new(client_id.clone()))
        .set_auth_uri(AuthUrl::new(server.authorization_endpoint.clone()).map_err(bad_url)?)
        .set_token_uri(TokenUrl::new(server.token_endpoint.clone()).map_err(bad_url)?)
        .set_redirect_uri(RedirectUrl::new(redirect).map_err(bad_url)?);
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let mut authorize = client
        .authorize_url(CsrfToken::new_random)
        .set_pkce_challenge(challenge)
        .add_extra_param("resource", resource.clone());
    for scope in &scopes {
        authorize = authorize.add_scope(Scope::new(scope.clone()));
    }
    let (url, state) = authorize.url();
    let issuer_origin = net::check_url(&server.issuer)
        .map(|u| {
            (
                u.scheme_str().map(str::to_owned),
                u.authority().map(|a| a.as_str().to_owned()),
            )
        })
        .map_err(|why| fail(Code::AuthInsecure, why))?;
    let auth_origin = (
        Some(url.scheme().to_owned()),
        Some(match url.port() {
            Some(p) => format!("{}:{p}", url.host_str().unwrap_or_default()),
            None => url.host_str().unwrap_or_default().to_owned(),
        }),
    );
    if auth_origin != issuer_origin {
        return Err(fail(
            Code::AuthInsecure,
            "the authorization endpoint is not on the issuer's origin; Warden does not open it",
        ));
    }
    eprintln!(
        "warden-remote: signing in to {} through {}: a browser opens; if none does, open {url}",
        net::shown(server_url),
        warden_wire::text::line(&server.issuer)
    );
    {
        let mut guard = opened();
        let o = guard.get_or_insert_with(|| Opened {
            since: std::time::Instant::now(),
            times: 0,
            scopes: Vec::new(),
        });
        o.times += 1;
        o.scopes.clone_from(&scopes);
    }
    if let Err(e) = open_browser(url.as_str()) {
        eprintln!("warden-remote: could not open a browser ({e}); open the link above");
    }
    let code = wait_for_code(
        &listener,
        state.secret(),
        &server.issuer,
        server.authorization_response_iss_parameter_supported,
    )?;
    let http = Http(agent.clone());
    let token = client
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(verifier)
        .add_extra_param("resource", resource.clone())
        .request(&http)
        .map_err(|e| fail(Code::AuthDenied, format!("the token exchange failed: {e}")))?;
    Ok(Tokens {
        access: token.access_token().secret().clone(),
        refresh: token.refresh_token().map(|r| r.secret().clone()),
        expires_at: expiry(token.expires_in()),
        issuer: server.issuer,
        resource,
        client_id,
        token_endpoint: server.token_endpoint,
        revocation_endpoint: server.revocation_endpoint,
    })
}

/// New tokens from the refresh token, without the browser.
pub(crate) fn refresh(agent: &ureq::Agent, tokens: &Tokens) -> Result<Tokens, AuthError> {
    let refresh = tokens
        .refresh
        .as_ref()
        .ok_or_else(|| fail(Code::AuthRequired, "the sign-in has no refresh token"))?;
    net::check_url(&tokens.token_endpoint).map_err(|why| fail(Code::AuthInsecure, why))?;
    let client = BasicClient::new(ClientId::new(tokens.client_id.clone())).set_token_uri(
        TokenUrl::new(tokens.token_endpoint.clone())
            .map_err(|e| fail(Code::AuthDenied, e.to_string()))?,
    );
    let token = client
        .exchange_refresh_token(&RefreshToken::new(refresh.clone()))
        .add_extra_param("resource", tokens.resource.clone())
        .request(&Http(agent.clone()))
        .map_err(|e| {
            fail(
                Code::AuthDenied,
                format!("refreshing the sign-in failed: {e}"),
            )
        })?;
    Ok(Tokens {
        access: token.access_token().secret().clone(),
        refresh: token
            .refresh_token()
            .map(|r| r.secret().clone())
            .or_else(|| tokens.refresh.clone()),
        expires_at: expiry(token.expires_in()),
        ..tokens.clone()
    })
}

/// The sign-in kept under `account` in the OS keychain, if any.
pub(crate) fn stored(account: &str) -> Option<Tokens> {
    let text = warden_config::keychain::get_signin(account).ok()?;
    serde_json::from_str(&text).ok()
}

fn store(account: &str, tokens: &Tokens) {
    let text = serde_json::to_string(tokens).unwrap_or_default();
    if let Err(e) = warden_config::keychain::set_signin(account, &text) {
        eprintln!(
            "warden-remote: the sign-in works for this session, but the OS keychain did not keep it ({e}); the next session signs in again"
        );
    }
}

/// Holds the sign-in kept under `account` for this process and every other one (another
/// client's bridge that needs the same server waits here, then finds the tokens in the
/// keychain).
fn hold(account: &str) -> Result<warden_config::fsutil::Lock, AuthError> {
    let state = warden_config::paths::state_dir();
    let path = state.join(format!("oauth-{account}"));
    warden_config::fsutil::lock_within(&state, &path, WAIT_FOR_BROWSER + Duration::from_secs(30))
        .map_err(|e| {
            fail(
                Code::AuthRequired,
                format!("waiting for another sign-in to the same server: {e}"),
            )
        })
}

/// A remote server as sign-ins know it: its URL, the keychain account of its sign-in (named
/// after the URL as the entry gives it, so `warden auth` finds it without HTTP), and how
/// Warden names itself to its authorization server when config.toml says.
pub(crate) struct Site {
    pub url: Uri,
    pub account: String,
    /// `[servers.NAME] oauth_client_id`, and the `oauth_issuer` it was registered at.
    pub client_id: Option<(String, String)>,
    /// `[oauth] client_metadata_url`.
    pub metadata_url: Option<String>,
}

impl Site {
    /// `server`'s site at `url` (`given` as the entry spells it), with config.toml's identity.
    pub(crate) fn new(server: &str, url: Uri, given: &str) -> Site {
        let config = warden_config::default_path().map(|p| warden_config::Config::load(&p));
        let (client_id, metadata_url) = match config {
            Some(Ok(config)) => (
                config
                    .limits_for(server, &warden_config::Overrides::default())
                    .ok()
                    .and_then(|l| l.oauth_client_id.zip(l.oauth_issuer)),
                config.oauth_metadata_url,
            ),
            Some(Err(e)) => {
                eprintln!("warden-remote: config.toml is not read ({e}); signing in without it");
                (None, None)
            }
            None => (None, None),
        };
        Site {
            url,
            account: warden_config::keychain::signin_account(given),
            client_id,
            metadata_url,
        }
    }
}

/// Fresh tokens for `site` when `tokens` are about to expire: another process's newer ones
/// from the keychain, else a refresh (kept in the keychain).
pub(crate) fn refreshed(
    agent: &ureq::Agent,
    site: &Site,
    tokens: &Tokens,
) -> Result<Tokens, AuthError> {
    let _held = hold(&site.account)?;
    if let Some(newer) = stored(&site.account).filter(|t| t.fresh() && t.access != tokens.access) {
        return Ok(newer);
    }
    let fresh = refresh(agent, tokens)?;
    store(&site.account, &fresh);
    Ok(fresh)
}

/// Tokens for `site` after the server refused `failed` (or no token): another process's
/// sign-in when one happened meanwhile, else a refresh, else a sign-in with the browser. At
/// most one sign-in per server runs at a time, across every client's bridge.
pub(crate) fn sign_in_once(
    agent: &ureq::Agent,
    site: &Site,
    challenge: Option<&str>,
    failed: Option<&str>,
) -> Result<Tokens, AuthError> {
    let _held = hold(&site.account)?;
    if let Some(kept) = stored(&site.account).filter(|t| Some(t.access.as_str()) != failed) {
        if kept.fresh() {
            return Ok(kept);
        }
        if let Ok(fresh) = refresh(agent, &kept) {
            store(&site.account, &fresh);
            return Ok(fresh);
        }
    }
    let asked: Vec<String> = challenge
        .and_then(|h| challenge_param(h, "scope"))
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    if opened()
        .as_ref()
        .is_some_and(|o| o.times >= MAX_OPENS || asked.iter().all(|s| o.scopes.contains(s)))
    {
        return Err(fail(
            Code::AuthDenied,
            "the browser was opened for a sign-in to this server minutes ago, and the server still refuses; Warden does not open it again so soon (a new session of the client tries again)",
        ));
    }
    let tokens = sign_in(agent, site, challenge)?;
    store(&site.account, &tokens);
    Ok(tokens)
}

/// `warden auth login`: a new sign-in with the browser now, whatever was kept (another
/// account, new scopes), kept for every client. `challenge` is the server's answer to a request
/// without a token: `None` when it did not ask for one.
pub(crate) fn sign_in_now(
    agent: &ureq::Agent,
    site: &Site,
    challenge: Option<&str>,
) -> Result<Tokens, AuthError> {
    let _held = hold(&site.account)?;
    let tokens = sign_in(agent, site, challenge)?;
    store(&site.account, &tokens);
    Ok(tokens)
}

/// `warden auth logout`: the kept sign-in is revoked where the authorization server offers
/// revocation (RFC 7009; the refresh token, then the access token) and forgotten. Returns
/// whether there was one, and why the server did not revoke it, if it did not; the keychain
/// forgets it either way.
pub(crate) fn sign_out(
    agent: &ureq::Agent,
    site: &Site,
) -> Result<(bool, Option<String>), AuthError> {
    let _held = hold(&site.account)?;
    let Some(kept) = stored(&site.account) else {
        return Ok((false, None));
    };
    let unrevoked = kept.revocation_endpoint.as_deref().map_or_else(
        || Some("the authorization server offers no revocation".to_owned()),
        |endpoint| revoke(agent, &kept, endpoint).err(),
    );
    warden_config::keychain::delete_signin(&site.account).map_err(|e| {
        fail(
            Code::AuthRequired,
            format!("the OS keychain did not forget the sign-in: {e}"),
        )
    })?;
    Ok((true, unrevoked))
}

/// RFC 7009 by hand: the oauth2 crate revokes only at https endpoints, and a server on this
/// machine is plain http. The refresh token first (it revokes the pair at most servers).
fn revoke(agent: &ureq::Agent, tokens: &Tokens, endpoint: &str) -> Result<(), String> {
    net::check_url(endpoint)?;
    let kinds = tokens
        .refresh
        .iter()
        .map(|t| (t, "refresh_token"))
        .chain([(&tokens.access, "access_token")]);
    for (token, hint) in kinds {
        let body = form_urlencoded::Serializer::new(String::new())
            .append_pair("token", token)
            .append_pair("token_type_hint", hint)
            .append_pair("client_id", &tokens.client_id)
            .finish();
        let answer = agent
            .post(endpoint)
            .header("content-type", "application/x-www-form-urlencoded")
            .send(body.as_bytes())
            .map_err(|e| format!("the revocation endpoint could not be reached ({e})"))?;
        // 200 is success, also for a token the server no longer knows (RFC 7009 §2.2).
        if answer.status() != 200 {
            return Err(format!(
                "the authorization server did not revoke the {hint} (HTTP {})",
                answer.status().as_u16()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resource_metadata_url_is_read_from_the_header() {
        let header = r#"Bearer error="invalid_token", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp""#;
        assert_eq!(
            challenge_param(header, "resource_metadata").as_deref(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
        );
    }

    #[test]
    fn a_challenge_parameter_is_read_by_its_whole_name_quoted_or_not() {
        let header =
            r#"Bearer x_scope="admin", error=insufficient_scope, scope="mcp \"admin\"", realm=r"#;
        assert_eq!(
            (
                challenge_param(header, "scope").as_deref(),
                challenge_param(header, "error").as_deref(),
                challenge_param(header, "realm").as_deref(),
                challenge_param(header, "resource_metadata"),
            ),
            (
                Some(r#"mcp "admin""#),
                Some("insufficient_scope"),
                Some("r"),
                None
            )
        );
    }

    #[test]
    fn well_known_places_put_the_path_after_the_well_known_part() {
        let uri: Uri = "https://auth.example.com/tenant1".parse().expect("a URL");
        assert_eq!(
            well_known(&uri, "oauth-authorization-server"),
            vec![
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/oauth-authorization-server",
            ]
        );
    }
}
