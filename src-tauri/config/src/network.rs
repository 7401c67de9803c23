//! `sandbox_network`: none, the host's whole network, or a list of destinations a sandboxed
//! server may reach through the bridge's proxy (`bridge/proxy.rs`). This module is pure: the
//! entries, their parsing (with the errors config.toml shows), the presets and the matcher.
//!
//! Names are matched as the client asked for them (lowercase, no trailing dot), never after
//! resolving; the proxy resolves a listed name itself and then refuses the addresses in
//! [`forbidden`] (loopback, link-local, cloud metadata): only an entry written as an address
//! reaches those.

use std::net::IpAddr;

/// A sandboxed server's network (`sandbox_network`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Network {
    /// `"none"`: its own empty network.
    #[default]
    None,
    /// `"host"`: the host's whole network.
    Host,
    /// A list: only these destinations, through the proxy.
    Only(Vec<Entry>),
}

impl Network {
    /// Whether the server may open connections of its own (the host's network).
    pub fn is_host(&self) -> bool {
        matches!(self, Network::Host)
    }

    /// The list, when the network is one.
    pub fn list(&self) -> Option<&[Entry]> {
        match self {
            Network::Only(list) => Some(list),
            _ => None,
        }
    }
}

/// One entry of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A host and its port (`None`: 80 and 443).
    Dest(Host, Option<u16>),
    /// `@npm`, `@pypi`: expanded when the server starts ([`expand`]).
    Preset(Preset),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// A name, lowercase, without a trailing dot.
    Name(String),
    /// `*.domain`: any name under `domain` (not `domain` itself), stored without `*.`.
    Under(String),
    /// An address: reached as listed, even loopback or link-local.
    Addr(IpAddr),
}

/// An entry of the expanded list: a host and its port (`None`: 80 and 443).
pub type Dest = (Host, Option<u16>);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    Npm,
    Pypi,
}

/// The hosts of each preset, before what the runner's own configuration adds.
pub const NPM_HOSTS: &[&str] = &["registry.npmjs.org"];
pub const PYPI_HOSTS: &[&str] = &["pypi.org", "files.pythonhosted.org"];

/// The variables naming a mirror each preset adds (as a URL; `*_EXTRA_*` may hold several,
/// separated by spaces).
const NPM_VARS: &[&str] = &["npm_config_registry", "NPM_CONFIG_REGISTRY"];
const PYPI_VARS: &[&str] = &[
    "UV_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_INDEX",
    "UV_EXTRA_INDEX_URL",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
];

/// The `sandbox_network` preset of the package runner `command` starts: `npx …` → `@npm`,
/// `uvx …` → `@pypi` (the hosts it downloads from, and the mirror its own configuration
/// names). The one list of package runners: the Add flow's sandbox and the probe's longer
/// timeout ask it.
pub fn runner_preset(command: &[String]) -> Option<&'static str> {
    let program = command.first()?;
    let name = program
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(program)
        .to_ascii_lowercase();
    let name = name.trim_end_matches(".cmd").trim_end_matches(".exe");
    let second = command.get(1).map(String::as_str);
    let npm = matches!(name, "npx" | "bunx" | "pnpx")
        || (matches!(name, "pnpm" | "yarn" | "bun") && matches!(second, Some("dlx" | "x")))
        || (name == "npm" && matches!(second, Some("exec" | "x")));
    let pypi = name == "uvx"
        || (name == "uv" && matches!(second, Some("tool" | "run")))
        || (name == "pipx" && second == Some("run"));
    match (npm, pypi) {
        (true, _) => Some("@npm"),
        (_, true) => Some("@pypi"),
        _ => None,
    }
}

/// What to write instead of a bad value (config.toml's error and the key's docs).
pub const FIX: &str = "\"none\", \"host\", or a list of destinations, e.g. [\"api.github.com\", \"*.githubusercontent.com\", \"127.0.0.1:8080\", \"@npm\"]";

/// Parses the key's value: `"none"`, `"host"` or a list of entries.
pub fn parse(value: &toml::Value) -> Result<Network, String> {
    match value {
        toml::Value::String(s) if s == "none" => Ok(Network::None),
        toml::Value::String(s) if s == "host" => Ok(Network::Host),
        toml::Value::String(s) => Err(format!(
            "must be \"none\", \"host\" or a list, not {s:?} (a single destination goes in a list: [{s:?}])"
        )),
        toml::Value::Array(items) => items
            .iter()
            .map(|item| match item.as_str() {
                Some(s) => entry(s).map_err(|why| format!("lists {s:?}, which {why}")),
                None => Err(format!(
                    "must list destinations as strings, not {}",
                    item.type_str()
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Network::Only),
        other => Err(format!(
            "must be \"none\", \"host\" or a list of destinations, not {}",
            other.type_str()
        )),
    }
}

/// One entry: `host`, `host:port`, `*.domain[:port]`, an address (`1.2.3.4[:port]`,
/// `[::1][:port]`, `::1`), `@npm`, `@pypi`. The error completes "lists X, which ...".
pub fn entry(s: &str) -> Result<Entry, String> {
    if let Some(name) = s.strip_prefix('@') {
        return match name {
            "npm" => Ok(Entry::Preset(Preset::Npm)),
            "pypi" => Ok(Entry::Preset(Preset::Pypi)),
            _ => Err("is no preset (there are @npm and @pypi)".to_owned()),
        };
    }
    match s {
        "host" | "none" => {
            return Err(format!(
                "is a whole setting, not a destination: write sandbox_network = \"{s}\""
            ));
        }
        "*" => return Err("would allow everything: write sandbox_network = \"host\"".to_owned()),
        _ => {}
    }
    if s.contains("://") || s.contains('/') {
        return Err(
            "is a URL: write the host alone (and a port if not 80 or 443), e.g. \"api.github.com\""
                .to_owned(),
        );
    }
    let (host, port) = split_port(s)?;
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(Entry::Dest(Host::Addr(ip), port));
    }
    if host.starts_with('[') {
        return Err("is not an IPv6 address in brackets".to_owned());
    }
    let (under, name) = match host.strip_prefix("*.") {
        Some(rest) => (true, rest),
        None => (false, host),
    };
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    check_name(&name)?;
    if under && !name.contains('.') {
        return Err(
            "is too wide: a wildcard needs a domain with a dot, e.g. \"*.github.com\"".to_owned(),
        );
    }
    Ok(Entry::Dest(
        if under {
            Host::Under(name)
        } else {
            Host::Name(name)
        },
        port,
    ))
}

/// `host[:port]`, `[v6][:port]`, or a bare IPv6 address (no port).
fn split_port(s: &str) -> Result<(&str, Option<u16>), String> {
    let port = |p: &str| match p.parse::<u16>() {
        Ok(0) | Err(_) => Err(format!("has no valid port ({p:?}: 1 to 65535)")),
        Ok(n) => Ok(Some(n)),
    };
    if let Some(rest) = s.strip_prefix('[') {
        let (addr, after) = rest
            .split_once(']')
            .ok_or_else(|| "has a `[` without its `]`".to_owned())?;
        return match after {
            "" => Ok((addr, None)),
            _ => match after.strip_prefix(':') {
                Some(p) => Ok((addr, port(p)?)),
                None => Err("has something after `]` that is not `:PORT`".to_owned()),
            },
        };
    }
    match s.matches(':').count() {
        0 => Ok((s, None)),
        1 => {
            let (host, p) = s.split_once(':').unwrap_or((s, ""));
            Ok((host, port(p)?))
        }
        // More colons: a bare IPv6 address, checked by the caller.
        _ => Ok((s, None)),
    }
}

/// A DNS name in ASCII: labels of letters, digits, `-` and `_`, 1 to 63 each.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("names no host".to_owned());
    }
    if !name.is_ascii() {
        return Err("is not ASCII: write the name's punycode form (xn--…)".to_owned());
    }
    if name.contains('*') {
        return Err("has a `*` other than a leading `*.`".to_owned());
    }
    let ok = name.len() <= 253
        && name.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    if ok {
        Ok(())
    } else {
        Err("is not a host name (letters, digits, `-` and dots)".to_owned())
    }
}

/// The list with its presets replaced by their hosts: the defaults, and the registry or index
/// the runner's configuration names (`var` reads the bridge's environment, `npmrc` are the
/// texts of the user's own `.npmrc` files, in HOME: never the working folder's). A mirror
/// written as an address that a listed name could not reach either ([`forbidden`]: loopback,
/// link-local, cloud metadata) is not added, whoever wrote it: a preset names registries on
/// the network, and such an address is reached only when the list names it itself.
pub fn expand(list: &[Entry], var: impl Fn(&str) -> Option<String>, npmrc: &[String]) -> Vec<Dest> {
    let mut out: Vec<Dest> = Vec::new();
    let mut add = |d: Dest| {
        if !out.contains(&d) {
            out.push(d);
        }
    };
    for e in list {
        match e {
            Entry::Dest(h, p) => add((h.clone(), *p)),
            Entry::Preset(preset) => {
                let (hosts, vars) = match preset {
                    Preset::Npm => (NPM_HOSTS, NPM_VARS),
                    Preset::Pypi => (PYPI_HOSTS, PYPI_VARS),
                };
                for h in hosts {
                    add((Host::Name((*h).to_owned()), None));
                }
                let mut urls: Vec<String> = vars
                    .iter()
                    .filter_map(|v| var(v))
                    .flat_map(|v| v.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
                    .collect();
                if *preset == Preset::Npm {
                    urls.extend(npmrc.iter().flat_map(|text| npmrc_registries(text)));
                }
                for url in urls {
                    match url_host(&url) {
                        Some((Host::Addr(ip), _)) if forbidden(ip).is_some() => {}
                        Some(d) => add(d),
                        None => {}
                    }
                }
            }
        }
    }
    out
}

/// The `registry=` and `@scope:registry=` URLs of an `.npmrc`.
fn npmrc_registries(text: &str) -> Vec<String> {
    npmrc_registry_settings(text)
        .into_iter()
        .map(|(_, url)| url)
        .collect()
}

/// The `registry` and `@scope:registry` settings of an `.npmrc`, each key with its URL (no
/// other line: the file's tokens stay in it).
pub fn npmrc_registry_settings(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once('=')?;
            let k = k.trim();
            (k == "registry" || k.ends_with(":registry"))
                .then(|| (k.to_owned(), v.trim().trim_matches('"').to_owned()))
        })
        .collect()
}

/// The host and port of an `http(s)://` URL (`name=URL` as uv's `UV_INDEX` writes it, too).
fn url_host(url: &str) -> Option<Dest> {
    let url = url.split_once('=').map_or(url, |(_, u)| u);
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    match entry(authority).ok()? {
        Entry::Dest(h, p) => Some((h, p)),
        Entry::Preset(_) => None,
    }
}

/// Whether `port` is one an entry with `listed` allows.
fn port_ok(listed: Option<u16>, port: u16) -> bool {
    match listed {
        None => port == 80 || port == 443,
        Some(p) => p == port,
    }
}

/// How a destination, as the client asked for it, stands against the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A listed address: reach it as it is.
    Addr(IpAddr),
    /// A listed name: resolve it, and keep only addresses [`forbidden`] lets through.
    Name(String),
    /// Not listed.
    Unlisted,
}

/// The host as a client names it, normalized: lowercase, no trailing dot, no brackets.
pub fn normalize(host: &str) -> String {
    let h = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    h.strip_suffix('.').unwrap_or(h).to_ascii_lowercase()
}

/// Checks `host:port` (as the client asked) against the expanded list.
pub fn check(list: &[Dest], host: &str, port: u16) -> Verdict {
    let host = normalize(host);
    if let Ok(ip) = host.parse::<IpAddr>() {
        let ip = ip.to_canonical();
        let listed = list.iter().any(|(h, p)| {
            matches!(h, Host::Addr(a) if a.to_canonical() == ip) && port_ok(*p, port)
        });
        return if listed {
            Verdict::Addr(ip)
        } else {
            Verdict::Unlisted
        };
    }
    // Only a host name is matched (and so resolved): not `%2e`, `/`, `@` or other bytes a
    // resolver might read its own way.
    if check_name(&host).is_err() {
        return Verdict::Unlisted;
    }
    let listed = list.iter().any(|(h, p)| {
        port_ok(*p, port)
            && match h {
                Host::Name(n) => *n == host,
                Host::Under(d) => host
                    .strip_suffix(d.as_str())
                    .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
                Host::Addr(_) => false,
            }
    });
    if listed {
        Verdict::Name(host)
    } else {
        Verdict::Unlisted
    }
}

/// Why a resolved address may not be reached through a listed *name*: cloud metadata,
/// link-local, loopback (the host's own services), unspecified.
pub fn forbidden(ip: IpAddr) -> Option<&'static str> {
    let ip = ip.to_canonical();
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            if v4 == std::net::Ipv4Addr::new(100, 100, 100, 200)
                || v4 == std::net::Ipv4Addr::new(169, 254, 169, 254)
            {
                Some("a cloud metadata address")
            } else if v4.is_link_local() {
                Some("a link-local address")
            } else if v4.is_loopback() {
                Some("a loopback address (this machine's own services)")
            } else if o[0] == 0 {
                Some("an unspecified address")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            if s == [0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x254] {
                Some("a cloud metadata address")
            } else if s[0] & 0xffc0 == 0xfe80 {
                Some("a link-local address")
            } else if v6.is_loopback() {
                Some("a loopback address (this machine's own services)")
            } else if v6.is_unspecified() {
                Some("an unspecified address")
            } else {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn list(entries: &[&str]) -> Vec<Dest> {
        let parsed: Vec<Entry> = entries.iter().map(|e| entry(e).unwrap()).collect();
        expand(&parsed, |_| None, &[])
    }

    #[test]
    fn names_match_as_asked_with_80_and_443_unless_a_port_is_given() {
        let l = list(&["api.github.com", "Example.ORG.", "localhost:8080"]);
        assert_eq!(
            check(&l, "api.github.com", 443),
            Verdict::Name("api.github.com".into())
        );
        assert_eq!(
            check(&l, "API.GitHub.com.", 80),
            Verdict::Name("api.github.com".into())
        );
        assert_eq!(check(&l, "api.github.com", 22), Verdict::Unlisted);
        assert_eq!(check(&l, "github.com", 443), Verdict::Unlisted);
        assert_eq!(check(&l, "evil-api.github.com", 443), Verdict::Unlisted);
        assert_eq!(
            check(&l, "example.org", 443),
            Verdict::Name("example.org".into())
        );
        assert_eq!(
            check(&l, "localhost", 8080),
            Verdict::Name("localhost".into())
        );
        assert_eq!(check(&l, "localhost", 443), Verdict::Unlisted);
    }

    #[test]
    fn a_wildcard_matches_names_under_its_domain_only() {
        let l = list(&["*.githubusercontent.com", "*.svc.internal:8443"]);
        for (h, p) in [
            ("raw.githubusercontent.com", 443),
            ("a.b.githubusercontent.com", 80),
            ("x.svc.internal", 8443),
        ] {
            assert_eq!(check(&l, h, p), Verdict::Name(h.into()), "{h}:{p}");
        }
        for (h, p) in [
            ("githubusercontent.com", 443),
            ("evilgithubusercontent.com", 443),
            ("githubusercontent.com.evil.net", 443),
            ("x.svc.internal", 443),
        ] {
            assert_eq!(check(&l, h, p), Verdict::Unlisted, "{h}:{p}");
        }
    }

    #[test]
    fn addresses_match_only_addresses_as_listed() {
        let l = list(&["127.0.0.1:8080", "[::1]:9000", "10.0.0.7", "fe80::1"]);
        assert_eq!(
            check(&l, "127.0.0.1", 8080),
            Verdict::Addr("127.0.0.1".parse().unwrap())
        );
        assert_eq!(
            check(&l, "[::1]", 9000),
            Verdict::Addr("::1".parse().unwrap())
        );
        assert_eq!(
            check(&l, "::ffff:127.0.0.1", 8080),
            Verdict::Addr("127.0.0.1".parse().unwrap())
        );
        assert_eq!(
            check(&l, "10.0.0.7", 443),
            Verdict::Addr("10.0.0.7".parse().unwrap())
        );
        assert_eq!(
            check(&l, "[fe80::1]", 80),
            Verdict::Addr("fe80::1".parse().unwrap())
        );
        assert_eq!(check(&l, "127.0.0.1", 8081), Verdict::Unlisted);
        assert_eq!(
            check(&l, "localhost", 8080),
            Verdict::Unlisted,
            "a name is not its address"
        );
        assert_eq!(check(&l, "127.0.0.2", 8080), Verdict::Unlisted);
    }

    /// What a hostile server might ask for, hoping for loopback or an unlisted host.
    #[test]
    fn other_spellings_of_an_address_or_a_name_are_not_it() {
        let l = list(&["127.0.0.1:8080", "localhost:8080", "*.example.com"]);
        // Other forms of 127.0.0.1 (inet_aton's) are names here, and not listed ones.
        for h in [
            "2130706433",
            "0x7f.1",
            "0x7f000001",
            "017700000001",
            "0177.0.0.1",
            "127.1",
            "127.0.0.1%2e",
            "127%2e0%2e0%2e1",
            "0.0.0.0",
            "::",
            "[::]",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "%6cocalhost",
            "localhost..",
            "listed@localhost",
        ] {
            assert_eq!(check(&l, h, 8080), Verdict::Unlisted, "{h}");
        }
        // A wildcard matches host names only: nothing a resolver could read another way.
        for h in [
            "example.com",
            ".example.com",
            "..example.com",
            "a..example.com",
            "evil.net/.example.com",
            "evil.net#.example.com",
            "evil.net%00.example.com",
            "evil.net@x.example.com",
            "evil.net:80.example.com",
            "fe80::1%x.example.com",
            "a b.example.com",
        ] {
            assert_eq!(check(&l, h, 443), Verdict::Unlisted, "{h}");
        }
        // The same destination in another case, with a trailing dot or IPv4-mapped, is it.
        assert_eq!(
            check(&l, "LOCALHOST.", 8080),
            Verdict::Name("localhost".into())
        );
        assert_eq!(
            check(&l, "[::ffff:7f00:1]", 8080),
            Verdict::Addr("127.0.0.1".parse().unwrap())
        );
        assert_eq!(
            check(&l, "A.Example.COM.", 443),
            Verdict::Name("a.example.com".into())
        );
        // A name that resolves to loopback or metadata is matched as a name: the proxy then
        // drops those addresses (`forbidden`), whatever form the resolver read.
        let numeric = list(&["2130706433:8080"]);
        assert_eq!(
            check(&numeric, "2130706433", 8080),
            Verdict::Name("2130706433".into())
        );
    }

    #[test]
    fn presets_bring_their_hosts_and_the_runners_own_mirror() {
        let npmrc = ["; a comment\nregistry=https://npm.corp.example:8443/repo/\n@acme:registry=https://npm.acme.example/\n".to_owned()];
        let var = |k: &str| match k {
            "npm_config_registry" => Some("http://mirror.example/npm/".to_owned()),
            "UV_INDEX_URL" => Some("https://user:pw@pypi.corp.example/simple".to_owned()),
            "PIP_EXTRA_INDEX_URL" => {
                Some("https://a.example/simple https://b.example:4443/simple".to_owned())
            }
            _ => None,
        };
        let l = expand(
            &[entry("@npm").unwrap(), entry("@pypi").unwrap()],
            var,
            &npmrc,
        );
        for (h, p) in [
            ("registry.npmjs.org", 443),
            ("mirror.example", 80),
            ("npm.corp.example", 8443),
            ("npm.acme.example", 443),
            ("pypi.org", 443),
            ("files.pythonhosted.org", 443),
            ("pypi.corp.example", 443),
            ("a.example", 443),
            ("b.example", 4443),
        ] {
            assert_eq!(check(&l, h, p), Verdict::Name(h.into()), "{h}:{p}");
        }
        assert_eq!(check(&l, "npm.corp.example", 443), Verdict::Unlisted);
        assert_eq!(check(&l, "registry.yarnpkg.com", 443), Verdict::Unlisted);
    }

    /// What a hostile `.npmrc` or variable may name as a mirror: loopback, link-local and
    /// metadata addresses, however spelled. None is added; the preset's own hosts are.
    #[test]
    fn a_preset_adds_no_loopback_link_local_or_metadata_address() {
        let npmrc = ["registry=http://127.0.0.1:6379/\n@x:registry=http://[::1]:5432/\n@y:registry=http://169.254.169.254/\n@z:registry=http://[::ffff:127.0.0.1]:6379/\n@w:registry=http://[fe80::1]:8080/\n@v:registry=http://0.0.0.0:6379/\n".to_owned()];
        let var = |k: &str| match k {
            "npm_config_registry" => Some("http://127.0.0.2:11211/".to_owned()),
            "PIP_EXTRA_INDEX_URL" => {
                Some("http://100.100.100.200/ http://[fd00:ec2::254]/".to_owned())
            }
            _ => None,
        };
        let l = expand(
            &[entry("@npm").unwrap(), entry("@pypi").unwrap()],
            var,
            &npmrc,
        );
        let addrs: Vec<&Dest> = l
            .iter()
            .filter(|(h, _)| matches!(h, Host::Addr(_)))
            .collect();
        assert_eq!(addrs, Vec::<&Dest>::new());
    }

    /// A mirror at a private or public address is the user's to name: it is added.
    #[test]
    fn a_preset_adds_a_mirror_at_another_address() {
        let npmrc = ["registry=http://10.0.0.5:4873/\n".to_owned()];
        let l = expand(&[entry("@npm").unwrap()], |_| None, &npmrc);
        assert_eq!(
            check(&l, "10.0.0.5", 4873),
            Verdict::Addr("10.0.0.5".parse().unwrap())
        );
    }

    /// A listed loopback address is still reached: only what a preset adds is checked.
    #[test]
    fn an_address_listed_by_the_user_stays_listed_beside_a_preset() {
        let npmrc = ["registry=http://127.0.0.1:6379/\n".to_owned()];
        let l = expand(
            &[entry("@npm").unwrap(), entry("127.0.0.1:6379").unwrap()],
            |_| None,
            &npmrc,
        );
        assert_eq!(
            check(&l, "127.0.0.1", 6379),
            Verdict::Addr("127.0.0.1".parse().unwrap())
        );
    }

    #[test]
    fn metadata_link_local_and_loopback_are_forbidden_behind_a_name() {
        for ip in [
            "169.254.169.254",
            "169.254.1.1",
            "100.100.100.200",
            "fd00:ec2::254",
            "fe80::1",
            "127.0.0.1",
            "127.1.2.3",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "0.0.0.0",
            "::",
        ] {
            assert!(forbidden(ip.parse().unwrap()).is_some(), "{ip}");
        }
        for ip in [
            "140.82.112.6",
            "10.1.2.3",
            "192.168.1.1",
            "2606:4700::1111",
            "100.100.100.201",
        ] {
            assert_eq!(forbidden(ip.parse().unwrap()), None, "{ip}");
        }
    }

    #[test]
    fn bad_entries_say_what_is_wrong() {
        for (bad, says) in [
            ("https://api.github.com/", "is a URL"),
            ("api.github.com/x", "is a URL"),
            ("host", "whole setting"),
            ("*", "would allow everything"),
            ("*.com", "too wide"),
            ("a.*.com", "`*`"),
            ("api.github.com:0", "no valid port"),
            ("api.github.com:99999", "no valid port"),
            ("api.github.com:", "no valid port"),
            ("[::1", "without its `]`"),
            ("[::1]x", "not `:PORT`"),
            ("bücher.example", "punycode"),
            ("bad name", "not a host name"),
            ("-x.example", "not a host name"),
            ("@yarn", "no preset"),
            ("", "names no host"),
        ] {
            let e = entry(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
        let v: toml::Value =
            toml::from_str::<toml::Table>("v = [\"ok.example\", 5]").unwrap()["v"].clone();
        assert!(parse(&v).unwrap_err().contains("as strings"));
        let v = toml::Value::String("api.github.com".into());
        assert!(parse(&v).unwrap_err().contains("[\"api.github.com\"]"));
        assert_eq!(
            parse(&toml::Value::String("host".into())).unwrap(),
            Network::Host
        );
        assert_eq!(
            parse(&toml::Value::String("none".into())).unwrap(),
            Network::None
        );
        assert_eq!(
            parse(&toml::Value::Array(vec![])).unwrap(),
            Network::Only(vec![])
        );
    }
}
