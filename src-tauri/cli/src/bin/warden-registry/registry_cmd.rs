//! `warden registry`: browsing the MCP Registry (its v0.1 API). What `warden install` will
//! write is shown by `show`, from the same plan (`warden_registry::plan`).
//!
//! This file pages, caches and parses (the request itself is [`crate::http::get`]): answers
//! are kept for [`CACHE_TTL`] under the state directory (`registry-cache/`), keyed by URL,
//! unless `--refresh`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use clap::Subcommand;
use serde_json::{Value, json};
use warden_wire::codes::Code;

use crate::{Failure, print_json};
use warden_registry::{self as registry, PlanOptions, RegistryError, ServerResponse, ServerStatus};
use warden_wire::{say, text};

#[derive(Subcommand)]
pub enum RegistryCommand {
    /// Servers whose name or description contains TERM (all servers without one), latest
    /// versions only, as many pages as it takes up to --limit.
    Search {
        term: Option<String>,
        /// The registry's own server objects (`{server, _meta}`), as a JSON array.
        #[arg(long)]
        json: bool,
        /// Show at most this many servers.
        #[arg(long, value_name = "N", default_value_t = 100)]
        limit: usize,
        /// Ask the registry again instead of using answers cached in the last 10 minutes.
        #[arg(long)]
        refresh: bool,
    },
    /// One server: its packages, environment variables and the exact command line
    /// `warden install` would write (or why it would not).
    // `--version` is the server's version here, not warden's.
    #[command(disable_version_flag = true)]
    Show {
        /// The registry's full name, e.g. io.github.microsoft/playwright-mcp.
        name: String,
        /// An exact version (default: the latest).
        #[arg(long, value_name = "V")]
        version: Option<String>,
        /// The registry's document, the entry name and the plan, as JSON.
        #[arg(long)]
        json: bool,
        /// Ask the registry again instead of using answers cached in the last 10 minutes.
        #[arg(long)]
        refresh: bool,
    },
}

/// How long an answer of the registry is used again without asking.
const CACHE_TTL: Duration = Duration::from_secs(600);
/// The registry's largest page.
const PAGE_MAX: usize = 100;
/// Bounds paging even if a registry hands out cursors forever.
const MAX_PAGES: usize = 50;

pub fn run(command: RegistryCommand) -> ExitCode {
    let result = match command {
        RegistryCommand::Search {
            term,
            json,
            limit,
            refresh,
        } => Registry::new(refresh).and_then(|r| search(&r, term.as_deref(), limit, json)),
        RegistryCommand::Show {
            name,
            version,
            json,
            refresh,
        } => Registry::new(refresh).and_then(|r| show(&r, &name, version.as_deref(), json)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("warden: {} [{}]", text::lines(&e.message), e.code.as_str());
            ExitCode::FAILURE
        }
    }
}

/// Where the registry is and how its answers are fetched.
pub(crate) struct Registry {
    pub base: String,
    refresh: bool,
    cache: PathBuf,
}

impl Registry {
    pub(crate) fn new(refresh: bool) -> Result<Registry, Failure> {
        Ok(Registry {
            base: base_url()?,
            refresh,
            cache: warden_config::paths::state_dir().join("registry-cache"),
        })
    }

    /// The answer at `url`, read by `parse`: from the cache when fresh, else from the registry
    /// (and then cached, if `parse` accepts it: a bad answer is never kept).
    fn get<T>(&self, url: &str, parse: impl Fn(&str) -> Result<T, String>) -> Result<T, Failure> {
        let file = self.cache.join(format!("{:016x}.json", fnv1a(url)));
        if let Some(value) = (!self.refresh)
            .then(|| cached(&file, url))
            .flatten()
            .and_then(|body| parse(&body).ok())
        {
            return Ok(value);
        }
        let body = self.fetch(url)?;
        let value = parse(&body).map_err(|why| {
            Failure::new(
                Code::RegistryInvalid,
                format!(
                    "the MCP Registry's answer from {url} is not what its v0.1 API gives: {why}. Fix: try again (it was not cached); if it persists, check that the registry URL ({}) is an MCP Registry's base URL, without /v0.1",
                    self.base
                ),
            )
        })?;
        // The cache only saves a request: failing to write it changes nothing else.
        let _ = store(&self.cache, &file, url, &body);
        Ok(value)
    }

    fn fetch(&self, url: &str) -> Result<String, Failure> {
        let body = crate::http::get(url)?;
        String::from_utf8(body).map_err(|_| {
            Failure::new(
                Code::RegistryInvalid,
                format!("the MCP Registry's answer from {url} is not UTF-8 text. Fix: check that the registry URL ({}) is an MCP Registry's", self.base),
            )
        })
    }

    fn versions_url(&self, name: &str, version: &str) -> String {
        format!(
            "{}/v0.1/servers/{}/versions/{}",
            self.base,
            encode(name),
            encode(version)
        )
    }

    /// One server's document at `version` (default: the latest), typed and as the registry
    /// sent it. A version the registry does not have, of a server it has, is refused naming
    /// those it has and `how` to give one.
    pub(crate) fn server(
        &self,
        name: &str,
        version: Option<&str>,
        how: &str,
    ) -> Result<(ServerResponse, Value), Failure> {
        let url = self.versions_url(name, version.unwrap_or("latest"));
        let found = self.get(&url, |body| {
            let response = registry::parse_server(body).map_err(|e| e.to_string())?;
            let raw: Value = serde_json::from_str(body).map_err(|e| e.to_string())?;
            Ok((response, raw))
        });
        match (found, version) {
            (Err(mut f), Some(v)) if f.code == Code::RegistryNotFound => {
                let versions = self.versions(name).map(|v| version_list(&v));
                if let Some(versions) = versions.ok().filter(|v| !v.is_empty()) {
                    f.message = format!(
                        "{name} has no version {v} in the registry; it has {versions}. Fix: {how}, or leave it out for the latest"
                    );
                }
                Err(f)
            }
            (found, _) => found,
        }
    }

    /// The versions the registry has of `name`, newest first (`GET .../versions`).
    fn versions(&self, name: &str) -> Result<Vec<String>, Failure> {
        let url = format!("{}/v0.1/servers/{}/versions", self.base, encode(name));
        self.get(&url, |body| {
            let list = registry::parse_list(body).map_err(|e| e.to_string())?;
            Ok(list
                .servers
                .into_iter()
                .filter(|s| status(s) != Some(&ServerStatus::Deleted))
                .filter_map(|s| s.server.version)
                .collect())
        })
    }
}

/// Versions for a person: the first few, then how many more.
fn version_list(versions: &[String]) -> String {
    const SHOWN: usize = 10;
    let mut text = versions
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if versions.len() > SHOWN {
        let _ = write!(text, " and {} older", versions.len() - SHOWN);
    }
    text
}

/// `$WARDEN_REGISTRY_URL`, else `[registry] url` of config.toml, else the official registry.
fn base_url() -> Result<String, Failure> {
    if let Some(url) = std::env::var("WARDEN_REGISTRY_URL")
        .ok()
        .filter(|u| !u.trim().is_empty())
    {
        return Ok(url.trim().trim_end_matches('/').to_owned());
    }
    if let Some(path) = warden_config::default_path() {
        let config = warden_config::Config::load(&path)
            .map_err(|e| Failure::new(Code::ConfigInvalid, e.to_string()))?;
        if let Some(url) = config.registry_url {
            return Ok(url);
        }
    }
    Ok(registry::OFFICIAL_URL.to_owned())
}

/// The body of a fresh cache file of `url` (its first line is the URL it answers).
fn cached(file: &Path, url: &str) -> Option<String> {
    let age = file.metadata().ok()?.modified().ok()?.elapsed().ok()?;
    if age > CACHE_TTL {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let (first, body) = text.split_once('\n')?;
    (first == url).then(|| body.to_owned())
}

/// Writes the cache file whole or not at all (a temporary file renamed over it).
fn store(dir: &Path, file: &Path, url: &str, body: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    prune(dir);
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    writeln!(tmp, "{url}")?;
    tmp.write_all(body.as_bytes())?;
    tmp.persist(file).map_err(|e| e.error)?;
    // A file older than it says would be used past its time; one from the future never expires.
    let _ = std::fs::File::options()
        .write(true)
        .open(file)
        .and_then(|f| f.set_modified(SystemTime::now()));
    Ok(())
}

/// Removes answers past their time, so the folder holds only what the last minutes asked.
fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > CACHE_TTL);
        if stale && path.extension().is_some_and(|e| e == "json") {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// FNV-1a, 64 bits: a short stable file name for a URL (the file itself says which URL).
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Percent-encodes everything but RFC 3986's unreserved characters (so `/` becomes `%2F`).
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// One page of a list: the typed servers and the registry's own objects, side by side.
struct Page {
    servers: Vec<(ServerResponse, Value)>,
    next: Option<String>,
}

fn parse_page(body: &str) -> Result<Page, String> {
    let list = registry::parse_list(body).map_err(|e| e.to_string())?;
    let raw: Value = serde_json::from_str(body).map_err(|e| e.to_string())?;
    let items = raw["servers"].as_array().cloned().unwrap_or_default();
    if items.len() != list.servers.len() {
        return Err("its `servers` list does not read as server objects".into());
    }
    Ok(Page {
        next: list.next_cursor().map(str::to_owned),
        servers: list.servers.into_iter().zip(items).collect(),
    })
}

fn search(r: &Registry, term: Option<&str>, limit: usize, as_json: bool) -> Result<(), Failure> {
    let mut found: Vec<(ServerResponse, Value)> = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        if found.len() >= limit {
            break;
        }
        let mut url = format!(
            "{}/v0.1/servers?version=latest&limit={}",
            r.base,
            (limit - found.len()).clamp(1, PAGE_MAX)
        );
        if let Some(term) = term.filter(|t| !t.is_empty()) {
            let _ = write!(url, "&search={}", encode(term));
        }
        if let Some(c) = &cursor {
            let _ = write!(url, "&cursor={}", encode(c));
        }
        let page = r.get(&url, parse_page)?;
        // Deleted servers (moderated, e.g. malware) are not offered at all.
        found.extend(
            page.servers
                .into_iter()
                .filter(|(s, _)| status(s) != Some(&ServerStatus::Deleted)),
        );
        match page.next {
            Some(next) if cursor.as_deref() != Some(&next) => cursor = Some(next),
            _ => break,
        }
    }
    found.truncate(limit);
    if as_json {
        let raw: Vec<&Value> = found.iter().map(|(_, v)| v).collect();
        print_json(&json!(raw));
        return Ok(());
    }
    if found.is_empty() {
        say!(
            "No server in {} matches{}.",
            r.base,
            term.map(|t| format!(" `{t}`")).unwrap_or_default()
        );
        return Ok(());
    }
    for (s, _) in &found {
        let doc = &s.server;
        let mut kinds: Vec<&str> = Vec::new();
        for p in &doc.packages {
            if !kinds.contains(&p.registry_type.as_str()) {
                kinds.push(p.registry_type.as_str());
            }
        }
        let kinds = if kinds.is_empty() && !doc.remotes.is_empty() {
            "remote only".to_owned()
        } else if kinds.is_empty() {
            "no package".to_owned()
        } else {
            kinds.join(", ")
        };
        say!(
            "{}  {}  [{kinds}]{}",
            doc.name,
            doc.version.as_deref().unwrap_or("?"),
            deprecated(s)
        );
        if !doc.description.trim().is_empty() {
            say!("    {}", doc.description.trim());
        }
    }
    say!();
    say!(
        "{} server(s) from {}. `warden registry show NAME` shows one and the command Warden would run.",
        found.len(),
        r.base
    );
    Ok(())
}

fn status(s: &ServerResponse) -> Option<&ServerStatus> {
    s.meta.official.as_ref()?.status.as_ref()
}

fn deprecated(s: &ServerResponse) -> String {
    match status(s) {
        Some(ServerStatus::Deprecated) => {
            let why = s
                .meta
                .official
                .as_ref()
                .and_then(|o| o.status_message.as_deref())
                .map(|m| format!(": {m}"))
                .unwrap_or_default();
            format!("  (deprecated{why})")
        }
        Some(ServerStatus::Deleted) => "  (deleted by the registry)".to_owned(),
        _ => String::new(),
    }
}

fn show(r: &Registry, name: &str, version: Option<&str>, as_json: bool) -> Result<(), Failure> {
    let (response, raw) = r.server(name, version, "pass one of those to --version")?;
    // Only a list for the reader: without it the server is still shown.
    let versions = r.versions(name).ok();
    let doc = &response.server;
    let entry = registry::entry_name(&doc.name, None);
    let plan = registry::plan(doc, &PlanOptions::default());
    // What it would run once given the values it asks for, shown as `<KEY>`.
    let sketch = match &plan {
        Err(RegistryError::MissingInputs { inputs, .. }) => {
            let inputs = inputs
                .iter()
                .map(|i| (i.key.clone(), format!("<{}>", i.key)))
                .collect();
            let opts = PlanOptions {
                inputs,
                ..PlanOptions::default()
            };
            registry::plan(doc, &opts).ok()
        }
        _ => None,
    };
    if as_json {
        let (plan, refused) = match &plan {
            Ok(p) => (json!(p), Value::Null),
            Err(e) => (Value::Null, json!(e.to_string())),
        };
        print_json(&json!({
            "server": raw.get("server").unwrap_or(&raw),
            "_meta": raw.get("_meta"),
            "entry_name": entry,
            "versions": versions,
            "plan": plan,
            "refused": refused,
        }));
        return Ok(());
    }
    say!(
        "{}  {}{}",
        doc.name,
        doc.version.as_deref().unwrap_or("(no version)"),
        deprecated(&response)
    );
    if let Some(title) = &doc.title {
        say!("  title:       {title}");
    }
    if !doc.description.trim().is_empty() {
        say!("  description: {}", doc.description.trim());
    }
    say!(
        "  publisher:   {} (the namespace before the /)",
        doc.namespace()
    );
    if let Some(repo) = doc.repository.as_ref().and_then(|r| r.url.as_deref()) {
        say!("  repository:  {repo}");
    }
    if let Some(site) = &doc.website_url {
        say!("  website:     {site}");
    }
    if let Some(versions) = versions.as_deref().filter(|v| !v.is_empty()) {
        say!("  versions:    {} (newest first)", version_list(versions));
    }
    if let Some(meta) = &response.meta.official
        && let Some(at) = &meta.published_at
    {
        say!(
            "  published:   {at}{}",
            if meta.is_latest { " (latest)" } else { "" }
        );
    }
    for (i, p) in doc.packages.iter().enumerate() {
        say!();
        say!(
            "package {i}: {} {}{}",
            p.registry_type,
            p.identifier,
            p.version
                .as_deref()
                .map(|v| format!(" {v}"))
                .unwrap_or_default()
        );
        let transport = p
            .transport
            .as_ref()
            .map_or("(not given)", |t| t.kind.as_str());
        say!("  transport: {transport}");
        if let Some(hint) = &p.runtime_hint {
            say!("  runtime hint: {hint}");
        }
        for v in &p.environment_variables {
            let mut flags = vec![if v.input.is_required {
                "required"
            } else {
                "optional"
            }];
            if v.input.is_secret {
                flags.push("secret");
            }
            let mut line = format!("  env {} ({})", v.name, flags.join(", "));
            if let Some(d) = &v.input.default {
                let _ = write!(line, " default {d:?}");
            }
            if let Some(d) = &v.input.description {
                let _ = write!(line, ": {}", d.trim());
            }
            say!("{line}");
        }
    }
    for remote in &doc.remotes {
        say!();
        say!("remote: {} {}", remote.kind, remote.url);
    }
    say!();
    match plan {
        Ok(plan) => {
            say!("Warden would install it as `{entry}`, running:");
            say!("  {}", text::argv(&plan.argv()));
            for env in plan.env.iter().filter(|e| e.value.is_some()) {
                say!(
                    "  with {}={}",
                    env.name,
                    if env.secret {
                        "(secret, kept in the keychain)"
                    } else {
                        env.value.as_deref().unwrap_or_default()
                    }
                );
            }
            for w in &plan.warnings {
                say!("  warning: {}", w.message);
            }
        }
        Err(e) => {
            say!("Warden cannot install it as it is: {e}");
            if let Some(sketch) = sketch {
                say!();
                say!("Given those values, it would run (as `{entry}`):");
                say!("  {}", text::argv(&sketch.argv()));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_path_segment() {
        assert_eq!(
            encode("io.github.microsoft/playwright-mcp"),
            "io.github.microsoft%2Fplaywright-mcp"
        );
        assert_eq!(encode("a b:c~d"), "a%20b%3Ac~d");
    }

    #[test]
    fn a_cache_file_answers_only_its_url() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("x.json");
        store(dir.path(), &file, "http://a/1", "{}\n").expect("store");
        assert_eq!(cached(&file, "http://a/1").as_deref(), Some("{}\n"));
        assert_eq!(cached(&file, "http://a/2"), None);
    }
}
