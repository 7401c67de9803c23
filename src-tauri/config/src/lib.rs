//! config.toml: limits per server, loaded in two phases.
//!
//! Phase one reads the file into raw layers (`[defaults]`, `[servers.NAME]`, `--set`
//! overrides) keeping each value's line. Phase two resolves the layers for one server into
//! typed, validated [`Limits`]. Every value in the file is validated at load time, not only the
//! ones in use, so a typo is reported the first time any bridge starts. Errors name the file,
//! the line, the key and the fix; unknown keys are warnings, so an older or newer config keeps
//! loading.

pub mod fsutil;
pub mod fswatch;
pub mod keychain;
pub mod paths;
pub mod pins;
pub mod policy;
pub mod selectors;
pub mod testing;

pub mod edit;
mod keys;
pub mod network;
pub(crate) mod watch;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::{Spanned, Value};

pub use keys::{CHOICES, KEYS, KeyDef, choices};
pub use watch::ConfigWatch;

/// The official MCP Registry's base URL (without `/v0.1`), `[registry] url`'s default.
pub const OFFICIAL_URL: &str = "https://registry.modelcontextprotocol.io";
/// Which sandbox `sandbox = "on"` may use (`sandbox_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// bubblewrap where it works, else Landlock (reported as degraded).
    #[default]
    Auto,
    /// Only bubblewrap, or the server is refused.
    Bwrap,
    /// Only Landlock, or the server is refused.
    Landlock,
}

/// What Warden does about tools whose definition is not the pinned one (`pin_tools`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PinMode {
    Off,
    /// Report changed and new tools (an event, a notice).
    #[default]
    Warn,
    /// Also hold them back from the client until approved.
    Block,
}

/// The fallback mode of a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fallback {
    #[default]
    Off,
    Rg,
}

/// Validated, resolved limits of one server. See [`KEYS`] for meaning, defaults and reasons.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    pub idle_timeout: Duration,
    pub max_timeout: Duration,
    pub startup_timeout: Duration,
    pub stderr_is_activity: bool,
    pub max_message_bytes: usize,
    /// The largest answer held whole to be checked (`tools/list` and the like).
    pub max_list_bytes: usize,
    pub retries: u32,
    pub backoff: Duration,
    pub max_backoff: Duration,
    pub circuit_failures: u32,
    pub circuit_cooldown: Duration,
    pub busy_poll: Duration,
    pub debug: bool,
    pub fallback: Fallback,
    pub force_fallback: bool,
    pub fallback_roots: Vec<PathBuf>,
    pub clamp: BTreeMap<String, BTreeMap<String, f64>>,
    pub result_soft_cap_bytes: u64,
    pub idempotent_tools: Vec<String>,
    pub pin_tools: PinMode,
    pub tools_allow: ToolGlobs,
    pub tools_ask: ToolGlobs,
    pub tools_deny: ToolGlobs,
    /// How long a call of a `tools_ask` tool waits for an answer.
    pub ask_timeout: Duration,
    /// `sandbox = "on"`.
    pub sandbox: bool,
    pub sandbox_write: Vec<PathBuf>,
    pub sandbox_deny: Vec<PathBuf>,
    /// `sandbox_network`: none, the host's, or a list of destinations.
    pub sandbox_network: network::Network,
    pub sandbox_mode: SandboxMode,
    /// A remote server's sign-in: the client id registered by hand, if any, and the issuer it
    /// was registered at (required with it).
    pub oauth_client_id: Option<String>,
    pub oauth_issuer: Option<String>,
}

impl Default for Limits {
    fn default() -> Self {
        let mut limits = Limits {
            idle_timeout: Duration::ZERO,
            max_timeout: Duration::ZERO,
            startup_timeout: Duration::ZERO,
            stderr_is_activity: false,
            max_message_bytes: 0,
            max_list_bytes: 0,
            retries: 0,
            backoff: Duration::ZERO,
            max_backoff: Duration::ZERO,
            circuit_failures: 0,
            circuit_cooldown: Duration::ZERO,
            busy_poll: Duration::ZERO,
            debug: false,
            fallback: Fallback::Off,
            force_fallback: false,
            fallback_roots: Vec::new(),
            clamp: BTreeMap::new(),
            result_soft_cap_bytes: 0,
            idempotent_tools: Vec::new(),
            pin_tools: PinMode::Off,
            tools_allow: ToolGlobs::default(),
            tools_ask: ToolGlobs::default(),
            tools_deny: ToolGlobs::default(),
            ask_timeout: Duration::ZERO,
            sandbox: false,
            sandbox_write: Vec::new(),
            sandbox_deny: Vec::new(),
            sandbox_network: network::Network::None,
            sandbox_mode: SandboxMode::Auto,
            oauth_client_id: None,
            oauth_issuer: None,
        };
        for key in KEYS {
            let value: Value =
                toml::from_str::<BTreeMap<String, Value>>(&format!("v = {}", key.default))
                    .ok()
                    .and_then(|mut m| m.remove("v"))
                    .unwrap_or(Value::Boolean(false));
            // The defaults are checked by a unit test; a bad one cannot reach users.
            let _ = (key.apply)(&mut limits, &value);
        }
        limits
    }
}

impl Limits {
    /// Whether any of `tools_allow`, `tools_ask`, `tools_deny` lists something.
    pub fn has_tool_policy(&self) -> bool {
        !(self.tools_allow.is_empty() && self.tools_ask.is_empty() && self.tools_deny.is_empty())
    }
}

/// A list of tool-name globs (`*`, `?`, `[a-z]`, `{a,b}`) and annotation selectors
/// (`@readonly`, …, [`crate::selectors::Selector`]), compiled once when the config is read.
#[derive(Debug, Clone, Default)]
pub struct ToolGlobs {
    patterns: Vec<String>,
    /// The name globs of `patterns`, in order.
    globs: Vec<String>,
    /// The globs compiled (globset's translation), matched against the name as text; none
    /// without globs (an empty set still costs a regex engine, at every bridge's start).
    set: Option<regex::bytes::RegexSet>,
    selectors: Vec<crate::selectors::Selector>,
}

impl ToolGlobs {
    pub fn new(patterns: Vec<String>) -> Result<ToolGlobs, String> {
        let mut regexes = Vec::new();
        let mut globs = Vec::new();
        let mut selectors = Vec::new();
        for p in &patterns {
            if let Some(sel) = crate::selectors::Selector::parse(p) {
                selectors.push(sel?);
                continue;
            }
            // Tool names are not paths: `\` escapes on every system (globset's default
            // makes it a path separator on Windows), and the name is matched as it is, never
            // read as a path (globset turns a candidate's `\` into `/` on Windows).
            let glob = globset::GlobBuilder::new(p)
                .backslash_escape(true)
                .build()
                .map_err(|e| format!("has a bad glob: {e}"))?;
            regexes.push(glob.regex().to_owned());
            globs.push(p.clone());
        }
        let set = (!regexes.is_empty())
            .then(|| regex::bytes::RegexSet::new(&regexes))
            .transpose()
            .map_err(|e| format!("has a bad glob: {e}"))?;
        Ok(ToolGlobs {
            patterns,
            globs,
            set,
            selectors,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether an annotation selector is listed (the policy then reads definitions).
    pub fn has_selectors(&self) -> bool {
        !self.selectors.is_empty()
    }

    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// The first entry that matches the tool (a name glob, then a selector), if any.
    pub fn matching(&self, name: &str, hints: crate::selectors::Hints) -> Option<&str> {
        if let Some(set) = &self.set
            && let Some(i) = set.matches(name.as_bytes()).iter().next()
        {
            return self.globs.get(i).map(String::as_str);
        }
        self.selectors
            .iter()
            .find(|s| s.matches(hints))
            .map(|s| s.as_str())
    }
}

/// Two lists are equal when their patterns are.
impl PartialEq for ToolGlobs {
    fn eq(&self, other: &Self) -> bool {
        self.patterns == other.patterns
    }
}

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    File { path: PathBuf, line: usize },
    Set,
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File { path, line } => write!(f, "{}:{line}", path.display()),
            Origin::Set => f.write_str("--set"),
            Origin::Default => f.write_str("default"),
        }
    }
}

/// A config value that cannot be used. The message says where, what and how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {}: {source}. Fix: make it readable, or set WARDEN_CONFIG to another file", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {} is not valid TOML: {message}Fix: correct the syntax at the line shown (the file was not changed)", path.display())]
    Syntax { path: PathBuf, message: String },
    #[error("{origin}: `{key}` {problem}. Fix: {fix}")]
    Invalid {
        origin: Origin,
        key: String,
        problem: String,
        fix: String,
    },
    #[error("--set {arg:?} is not KEY=VALUE. Fix: write it like --set idle_timeout_ms=20000")]
    BadSet { arg: String },
}

#[derive(Debug, Clone, Default)]
struct Layer(BTreeMap<String, (Value, Origin)>);

/// A loaded config file (or the defaults when there is none).
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub path: Option<PathBuf>,
    defaults: Layer,
    servers: BTreeMap<String, Layer>,
    /// `[registry] url`: the MCP Registry `warden registry` and `warden install` read
    /// (`$WARDEN_REGISTRY_URL` wins over it).
    pub registry_url: Option<String>,
    /// `[oauth] client_metadata_url`: the https URL of a Client ID Metadata Document that
    /// names Warden to authorization servers that take one.
    pub oauth_metadata_url: Option<String>,
    /// `[sets.NAME] servers = [...]`: named lists of servers `warden sets apply` writes into
    /// a project's (or the users') client files, by name.
    pub sets: BTreeMap<String, Vec<String>>,
    /// Unknown keys and tables, with where they are: reported, never fatal.
    pub warnings: Vec<String>,
}

#[derive(Deserialize)]
struct RawFile {
    #[serde(default)]
    defaults: BTreeMap<String, Spanned<Value>>,
    #[serde(default)]
    servers: BTreeMap<String, BTreeMap<String, Spanned<Value>>>,
    #[serde(default)]
    registry: BTreeMap<String, Spanned<Value>>,
    #[serde(default)]
    oauth: BTreeMap<String, Spanned<Value>>,
    #[serde(default)]
    sets: BTreeMap<String, BTreeMap<String, Spanned<Value>>>,
    #[serde(flatten)]
    other: BTreeMap<String, Value>,
}

/// The file whose presence turns on debug logging for `server`:
/// `<dir of config.toml>/<server>/debug`. The user makes it by hand, so it keeps the readable
/// name ([`crate::paths::safe_name`]), not the hashed one of the server's own files: it holds
/// nothing, and a name shared with another server only turns on its debug log too.
pub fn debug_flag_path(config: &Path, server: &str) -> PathBuf {
    config
        .parent()
        .unwrap_or(Path::new("."))
        .join(crate::paths::safe_name(server))
        .join("debug")
}

/// `$WARDEN_CONFIG`, else `<user config dir>/warden/config.toml`.
pub fn default_path() -> Option<PathBuf> {
    std::env::var_os("WARDEN_CONFIG")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| crate::paths::config_dir().map(|d| d.join("warden").join("config.toml")))
}

impl Config {
    /// Loads `path`; a missing file means defaults.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Config {
                    path: Some(path.to_owned()),
                    ..Config::default()
                });
            }
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        Self::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let line_of = |span: std::ops::Range<usize>| {
            1 + text[..span.start.min(text.len())].matches('\n').count()
        };
        let raw: RawFile = toml::from_str(text).map_err(|e| {
            match toml::from_str::<toml::Table>(text) {
                // Valid TOML in the wrong shape (`defaults = 5`): not a syntax error.
                Ok(table) => shape_error(&table, path, e.span().map_or(1, line_of)),
                Err(_) => ConfigError::Syntax {
                    path: path.to_owned(),
                    message: e.to_string(),
                },
            }
        })?;
        let layer = |table: BTreeMap<String, Spanned<Value>>| {
            Layer(
                table
                    .into_iter()
                    .map(|(k, v)| {
                        let origin = Origin::File {
                            path: path.to_owned(),
                            line: line_of(v.span()),
                        };
                        (k, (v.into_inner(), origin))
                    })
                    .collect(),
            )
        };
        let mut config = Config {
            path: Some(path.to_owned()),
            defaults: layer(raw.defaults),
            servers: raw
                .servers
                .into_iter()
                .map(|(name, t)| (name, layer(t)))
                .collect(),
            registry_url: None,
            oauth_metadata_url: None,
            sets: BTreeMap::new(),
            warnings: Vec::new(),
        };
        for key in raw.other.keys() {
            config.warnings.push(format!(
                "{}: unknown table or key `{key}` ignored (known: [defaults], [servers.NAME], [registry], [oauth], [sets.NAME])",
                path.display()
            ));
        }
        for (key, value) in raw.registry {
            let origin = Origin::File {
                path: path.to_owned(),
                line: line_of(value.span()),
            };
            if key == "url" {
                config.registry_url = Some(registry_url(value.get_ref(), origin)?);
            } else {
                config.warnings.push(format!(
                    "{origin}: unknown key `registry.{key}` ignored (known: url)"
                ));
            }
        }
        for (key, value) in raw.oauth {
            let origin = Origin::File {
                path: path.to_owned(),
                line: line_of(value.span()),
            };
            if key == "client_metadata_url" {
                config.oauth_metadata_url = Some(metadata_url(value.get_ref(), origin)?);
            } else {
                config.warnings.push(format!(
                    "{origin}: unknown key `oauth.{key}` ignored (known: client_metadata_url)"
                ));
            }
        }
        for (name, table) in raw.sets {
            let at = |line| Origin::File {
                path: path.to_owned(),
                line,
            };
            let mut servers = None;
            for (key, value) in table {
                let origin = at(line_of(value.span()));
                if key == "servers" {
                    servers = Some(set_servers(&name, value.get_ref(), origin)?);
                } else {
                    config.warnings.push(format!(
                        "{origin}: unknown key `sets.{name}.{key}` ignored (known: servers)"
                    ));
                }
            }
            let Some(servers) = servers else {
                let line = text
                    .lines()
                    .position(|l| l.trim_start().starts_with("[sets.") && l.contains(&*name))
                    .map_or(1, |i| i + 1);
                return Err(ConfigError::Invalid {
                    origin: at(line),
                    key: format!("sets.{name}"),
                    problem: "has no `servers` list".to_owned(),
                    fix: SET_FIX.to_owned(),
                });
            };
            config.sets.insert(name, servers);
        }
        let mut scratch = Limits::default();
        let layers = std::iter::once(("defaults".to_owned(), &config.defaults)).chain(
            config
                .servers
                .iter()
                .map(|(n, l)| (format!("servers.{n}"), l)),
        );
        let mut warnings = Vec::new();
        for (table, layer) in layers {
            for (key, (value, origin)) in &layer.0 {
                match KEYS.iter().find(|k| k.name == key) {
                    Some(def) => {
                        check(def, &mut scratch, value, origin, &format!("{table}.{key}"))?
                    }
                    None => warnings.push(format!(
                        "{origin}: unknown key `{table}.{key}` ignored{}",
                        suggest(key)
                    )),
                }
            }
        }
        config.warnings.extend(warnings);
        Ok(config)
    }

    /// The limits of `server`: built-in defaults, then `[defaults]`, then `[servers.NAME]`,
    /// then the `--set` overrides.
    pub fn limits_for(&self, server: &str, overrides: &Overrides) -> Result<Limits, ConfigError> {
        let mut limits = Limits::default();
        let server_layer = self.servers.get(server);
        let layers = [Some(&self.defaults), server_layer, Some(&overrides.0)];
        for layer in layers.into_iter().flatten() {
            for (key, (value, origin)) in &layer.0 {
                if let Some(def) = KEYS.iter().find(|k| k.name == key) {
                    check(def, &mut limits, value, origin, key)?;
                }
            }
        }
        cross_check(&limits, server)?;
        Ok(limits)
    }

    /// The value of `key` for `server` as written in the file, where it is, and whether it
    /// is `server`'s own (`[servers.NAME]`) or from `[defaults]`; `None`: the built-in default.
    pub fn raw_value(&self, server: &str, key: &str) -> Option<(&Value, &Origin, bool)> {
        if let Some((v, o)) = self.servers.get(server).and_then(|l| l.0.get(key)) {
            return Some((v, o, true));
        }
        self.defaults.0.get(key).map(|(v, o)| (v, o, false))
    }

    /// Names of the servers that have a `[servers.NAME]` table.
    pub fn server_names(&self) -> impl Iterator<Item = &str> {
        self.servers.keys().map(String::as_str)
    }
}

/// The error for a file that is TOML but where `[defaults]`, `[servers]` or a
/// `[servers.NAME]` is not a table (fuzzing found these reported as syntax errors).
/// `[oauth] client_metadata_url`: an https URL with a path (the Client ID Metadata Document is
/// named by it, and authorization servers fetch it).
fn metadata_url(value: &Value, origin: Origin) -> Result<String, ConfigError> {
    let problem = match value.as_str().map(str::trim) {
        Some(url)
            if url
                .strip_prefix("https://")
                .and_then(|rest| rest.split_once('/'))
                .is_some_and(|(host, path)| !host.is_empty() && !path.is_empty())
                && !url.contains(char::is_whitespace) =>
        {
            return Ok(url.to_owned());
        }
        Some(url) => format!("= {url:?} is not an https URL with a path"),
        None => format!("must be a URL string, not {}", value.type_str()),
    };
    Err(ConfigError::Invalid {
        origin,
        key: "oauth.client_metadata_url".to_owned(),
        problem,
        fix: "the https URL of the document, e.g. \"https://example.com/warden/client.json\""
            .to_owned(),
    })
}

/// `[registry] url`: an http(s) URL, the registry's base without `/v0.1`.
fn registry_url(value: &Value, origin: Origin) -> Result<String, ConfigError> {
    let problem = match value.as_str().map(str::trim) {
        Some(url) if url.starts_with("https://") || url.starts_with("http://") => {
            return Ok(url.trim_end_matches('/').to_owned());
        }
        Some(url) => format!("= {url:?} is not an http(s) URL"),
        None => format!("must be a URL string, not {}", value.type_str()),
    };
    Err(ConfigError::Invalid {
        origin,
        key: "registry.url".to_owned(),
        problem,
        fix: format!(
            "write the registry's base URL, e.g. url = \"{}\" (https; http only for localhost)",
            OFFICIAL_URL
        ),
    })
}

const SET_FIX: &str = "write the servers' names as they are in the clients' files, e.g. \
     [sets.web] then servers = [\"github\", \"postgres\"] on the next line";

/// `[sets.NAME] servers`: a non-empty list of server names, each once.
fn set_servers(set: &str, value: &Value, origin: Origin) -> Result<Vec<String>, ConfigError> {
    let invalid = |problem: String| ConfigError::Invalid {
        origin: origin.clone(),
        key: format!("sets.{set}.servers"),
        problem,
        fix: SET_FIX.to_owned(),
    };
    let list = value
        .as_array()
        .ok_or_else(|| invalid(format!("must be a list of names, not {}", value.type_str())))?;
    let mut out: Vec<String> = Vec::new();
    for item in list {
        match item.as_str().map(str::trim) {
            Some("") => return Err(invalid("lists an empty name".to_owned())),
            Some(n) if out.iter().any(|o| o == n) => {
                return Err(invalid(format!("lists {n:?} twice")));
            }
            Some(n) => out.push(n.to_owned()),
            None => {
                return Err(invalid(format!(
                    "must list names as strings, not {}",
                    item.type_str()
                )));
            }
        }
    }
    if out.is_empty() {
        return Err(invalid("lists no server".to_owned()));
    }
    Ok(out)
}

fn shape_error(table: &toml::Table, path: &Path, line: usize) -> ConfigError {
    let not_table = |v: &Value| !v.is_table();
    let set_not_table = match table.get("sets") {
        Some(Value::Table(sets)) => sets
            .iter()
            .find(|(_, v)| not_table(v))
            .map(|(n, v)| (format!("sets.{n}"), v)),
        Some(v) => Some(("sets".to_owned(), v)),
        None => None,
    };
    if let Some((key, v)) = set_not_table {
        return ConfigError::Invalid {
            origin: Origin::File {
                path: path.to_owned(),
                line,
            },
            key,
            problem: format!("must be a table, not {}", v.type_str()),
            fix: SET_FIX.to_owned(),
        };
    }
    if let Some(v) = table.get("registry").filter(|v| not_table(v)) {
        return ConfigError::Invalid {
            origin: Origin::File {
                path: path.to_owned(),
                line,
            },
            key: "registry".to_owned(),
            problem: format!("must be a table, not {}", v.type_str()),
            fix: format!(
                "write [registry] then url = \"{}\" on the next line",
                OFFICIAL_URL
            ),
        };
    }
    let (key, value) = match (table.get("defaults"), table.get("servers")) {
        (Some(v), _) if not_table(v) => ("defaults".to_owned(), Some(v)),
        (_, Some(v)) if not_table(v) => ("servers".to_owned(), Some(v)),
        (_, Some(Value::Table(servers))) => servers
            .iter()
            .find(|(_, v)| not_table(v))
            .map_or(("servers".to_owned(), None), |(name, v)| {
                (format!("servers.{name}"), Some(v))
            }),
        _ => ("defaults".to_owned(), None),
    };
    ConfigError::Invalid {
        origin: Origin::File {
            path: path.to_owned(),
            line,
        },
        problem: match value {
            Some(v) => format!("must be a table, not {}", v.type_str()),
            None => "has the wrong shape".to_owned(),
        },
        key,
        fix: "write tables of key = value: [defaults] and [servers.NAME], e.g. \
              [servers.rg] then idle_timeout_ms = 20000 on the next line"
            .to_owned(),
    }
}

fn check(
    def: &KeyDef,
    limits: &mut Limits,
    value: &Value,
    origin: &Origin,
    key: &str,
) -> Result<(), ConfigError> {
    (def.apply)(limits, value).map_err(|problem| ConfigError::Invalid {
        origin: origin.clone(),
        key: key.to_owned(),
        problem,
        fix: format!("{} (default: {})", def.fix, def.default),
    })
}

fn cross_check(l: &Limits, server: &str) -> Result<(), ConfigError> {
    let invalid = |key: &str, problem: String, fix: &str| ConfigError::Invalid {
        origin: Origin::Default,
        key: format!("servers.{server}.{key}"),
        problem,
        fix: fix.to_owned(),
    };
    if l.max_timeout < l.idle_timeout {
        return Err(invalid(
            "max_timeout_ms",
            format!(
                "({} ms) is below idle_timeout_ms ({} ms)",
                l.max_timeout.as_millis(),
                l.idle_timeout.as_millis()
            ),
            "raise max_timeout_ms or lower idle_timeout_ms: the hard maximum must be at least the idle limit",
        ));
    }
    if l.max_backoff < l.backoff {
        return Err(invalid(
            "max_backoff_ms",
            format!(
                "({} ms) is below backoff_ms ({} ms)",
                l.max_backoff.as_millis(),
                l.backoff.as_millis()
            ),
            "raise max_backoff_ms or lower backoff_ms",
        ));
    }
    if l.oauth_client_id.is_some() && l.oauth_issuer.is_none() {
        return Err(invalid(
            "oauth_client_id",
            "is set without oauth_issuer".to_owned(),
            "set oauth_issuer to the authorization server where you registered that client id, so that it is given to no other",
        ));
    }
    Ok(())
}

fn suggest(key: &str) -> String {
    let close = KEYS.iter().map(|k| k.name).min_by_key(|k| strsim(k, key));
    match close {
        Some(k) if strsim(k, key) <= 3 => format!(" (did you mean `{k}`?)"),
        _ => String::new(),
    }
}

/// Levenshtein distance, for "did you mean".
fn strsim(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// `--set KEY=VALUE` overrides of one session.
#[derive(Debug, Clone, Default)]
pub struct Overrides(Layer);

impl Overrides {
    /// Parses `KEY=VALUE` items. VALUE is TOML (`20000`, `true`, `"rg"`, `["/src"]`); a bare
    /// word that is not TOML is taken as a string, so `--set fallback=rg` works.
    pub fn parse<S: AsRef<str>>(items: &[S]) -> Result<Overrides, ConfigError> {
        let mut layer = Layer::default();
        for item in items {
            let item = item.as_ref();
            let Some((key, value)) = item.split_once('=') else {
                return Err(ConfigError::BadSet {
                    arg: item.to_owned(),
                });
            };
            let key = key.trim();
            if !KEYS.iter().any(|k| k.name == key) {
                return Err(ConfigError::Invalid {
                    origin: Origin::Set,
                    key: key.to_owned(),
                    problem: format!("is not a config key{}", suggest(key)),
                    fix: format!(
                        "use one of: {}",
                        KEYS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
                    ),
                });
            }
            let value = toml::from_str::<BTreeMap<String, Value>>(&format!("v = {value}"))
                .ok()
                .and_then(|mut m| m.remove("v"))
                .unwrap_or_else(|| Value::String(value.to_owned()));
            let def = KEYS.iter().find(|k| k.name == key);
            if let Some(def) = def {
                check(def, &mut Limits::default(), &value, &Origin::Set, key)?;
            }
            layer.0.insert(key.to_owned(), (value, Origin::Set));
        }
        Ok(Overrides(layer))
    }
}

/// docs/config.md: every key with its default and the reason for it, from [`KEYS`].
pub fn reference_markdown() -> String {
    let mut md = String::from(
        "# config.toml reference\n\n\
         <!-- Generated from src-tauri/config/src/keys.rs by \
         `UPDATE_DOCS=1 cargo test -p warden-config config`; do not edit by hand. -->\n\n\
         Path: `$WARDEN_CONFIG`, else `<user config dir>/warden/config.toml` \
         (`~/.config/warden/config.toml` on Linux). A missing file means the defaults below.\n\n\
         Every key may appear in `[defaults]` and in `[servers.NAME]` (the latter wins), and \
         `warden bridge --set KEY=VALUE` overrides one key for one session. A bad value is \
         refused with the file, line, key and fix; an unknown key is a warning, so older and \
         newer files keep loading.\n\n\
         ```toml\n[defaults]\nidle_timeout_ms = 50000\n\n[servers.ripgrep]\n\
         max_message_bytes = 536870912\nclamp = { \"advanced-search\" = { maxResults = 500 } }\n```\n\n\
         | key | default | meaning and reason |\n|---|---|---|\n",
    );
    for key in KEYS {
        md.push_str(&format!(
            "| `{}` | `{}` | {} |\n",
            key.name,
            key.default,
            key.doc.replace('|', "\\|")
        ));
    }
    md.push_str(&format!(
        "\n## `[registry]`\n\n\
         The MCP Registry that `warden registry` (and `warden install`) read; docs/registry.md \
         says more.\n\n\
         ```toml\n[registry]\nurl = \"{url}\"\n```\n\n\
         | key | default | meaning and reason |\n|---|---|---|\n\
         | `url` | `\"{url}\"` | Base URL of an MCP Registry (its v0.1 API, without `/v0.1`): \
         the official one, or a mirror or subregistry you prefer. `$WARDEN_REGISTRY_URL` wins \
         over it. Must be https; http only for a loopback host (tests, a local mirror). |\n",
        url = OFFICIAL_URL
    ));
    md.push_str(
        "\n## `[oauth]`\n\n\
         How Warden names itself when it signs in to a remote server; docs/remote.md says more.\n\n\
         ```toml\n[oauth]\nclient_metadata_url = \"https://example.com/warden/client.json\"\n```\n\n\
         | key | default | meaning and reason |\n|---|---|---|\n\
         | `client_metadata_url` | none | The https URL of a Client ID Metadata Document that you \
         publish for Warden (its `redirect_uris` `http://127.0.0.1/callback`): used as the client \
         id by authorization servers that say they take one \
         (`client_id_metadata_document_supported`), instead of registering Warden at each \
         sign-in. A server's `oauth_client_id` wins over it. |\n",
    );
    md.push_str(
        "\n## `[sets.NAME]`\n\n\
         A project set: servers that go together, written into a project's client files with \
         `warden sets apply NAME --project DIR --client ID...` (or into the clients' user files \
         without `--project`) and taken out again with `warden sets remove`; docs/clients.md \
         (\"Projects\") says more.\n\n\
         ```toml\n[sets.web]\nservers = [\"github\", \"postgres\"]\n```\n\n\
         | key | default | meaning and reason |\n|---|---|---|\n\
         | `servers` | (required) | The servers of the set, by their names in the clients' \
         files: each must be in some client's file already (its entry there, as the client \
         starts it, is what apply writes, through the bridge). A list of names, each once, \
         at least one. |\n",
    );
    md
}

#[cfg(test)]
mod tests;
