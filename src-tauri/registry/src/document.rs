//! The parts of the MCP Registry's documents that Warden reads: `server.json` (schema
//! 2025-09-29 and later) and the v0.1 API's answers, which wrap it as `{server, _meta}`.
//!
//! Lenient where the schema is (unknown fields are ignored, `null` is an absent value, a
//! number or boolean where the schema says string becomes its text, as the schema's
//! `format` asks); the checks that keep a command line from being wrong are in
//! [`super::planner`], which refuses with a message rather than guessing.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

impl ServerJson {
    /// The publisher's namespace: the name before its `/`.
    pub fn namespace(&self) -> &str {
        self.name
            .split_once('/')
            .map_or(self.name.as_str(), |(ns, _)| ns)
    }
}

/// A `server.json`: one version of one server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerJson {
    #[serde(rename = "$schema", default, deserialize_with = "opt_string")]
    pub schema: Option<String>,
    /// Reverse-DNS name with one `/`, e.g. `io.github.user/weather`.
    pub name: String,
    #[serde(default, deserialize_with = "string_or_empty")]
    pub description: String,
    #[serde(default, deserialize_with = "opt_string")]
    pub title: Option<String>,
    /// Exact version of this server (the registry refuses ranges and `latest` at publish).
    #[serde(default, deserialize_with = "opt_string")]
    pub version: Option<String>,
    #[serde(default)]
    pub repository: Option<Repository>,
    #[serde(default, deserialize_with = "opt_string")]
    pub website_url: Option<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub packages: Vec<Package>,
    #[serde(default, deserialize_with = "null_default")]
    pub remotes: Vec<Remote>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Repository {
    #[serde(default, deserialize_with = "opt_string")]
    pub url: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    pub source: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    pub id: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    pub subfolder: Option<String>,
}

/// Where a package comes from; decides the runner (`npx`, `uvx`, `docker`, `dnx`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RegistryType {
    Npm,
    Pypi,
    Oci,
    Nuget,
    Mcpb,
    /// Anything else (`cargo`, `go`, a typo), as written.
    Other(String),
}

impl RegistryType {
    pub fn as_str(&self) -> &str {
        match self {
            RegistryType::Npm => "npm",
            RegistryType::Pypi => "pypi",
            RegistryType::Oci => "oci",
            RegistryType::Nuget => "nuget",
            RegistryType::Mcpb => "mcpb",
            RegistryType::Other(s) => s,
        }
    }

    /// The program Warden runs packages of this type with, if it runs them at all.
    pub fn runner(&self) -> Option<&'static str> {
        match self {
            RegistryType::Npm => Some("npx"),
            RegistryType::Pypi => Some("uvx"),
            RegistryType::Oci => Some("docker"),
            RegistryType::Nuget => Some("dnx"),
            RegistryType::Mcpb | RegistryType::Other(_) => None,
        }
    }
}

impl From<&str> for RegistryType {
    fn from(s: &str) -> Self {
        match s.to_ascii_lowercase().as_str() {
            "npm" => RegistryType::Npm,
            "pypi" => RegistryType::Pypi,
            "oci" => RegistryType::Oci,
            "nuget" => RegistryType::Nuget,
            "mcpb" => RegistryType::Mcpb,
            _ => RegistryType::Other(s.to_owned()),
        }
    }
}

impl fmt::Display for RegistryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for RegistryType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for RegistryType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(RegistryType::from(String::deserialize(d)?.as_str()))
    }
}

/// One way to get and run the server locally.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    pub registry_type: RegistryType,
    #[serde(default, deserialize_with = "opt_string")]
    pub registry_base_url: Option<String>,
    /// Package name; for oci the image reference (with tag or digest), for mcpb a URL.
    pub identifier: String,
    #[serde(default, deserialize_with = "opt_string")]
    pub version: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    pub file_sha256: Option<String>,
    /// What the publisher runs it with (`npx`, `uvx`, `docker`, `dnx`), a hint only.
    #[serde(default, deserialize_with = "opt_string")]
    pub runtime_hint: Option<String>,
    /// Required by the schema; older documents lack it (then stdio is assumed, with a warning).
    #[serde(default)]
    pub transport: Option<Transport>,
    /// For the runner (`npx`, `docker`...), before the package.
    #[serde(default, deserialize_with = "null_default")]
    pub runtime_arguments: Vec<Argument>,
    /// For the server itself, after the package.
    #[serde(default, deserialize_with = "null_default")]
    pub package_arguments: Vec<Argument>,
    #[serde(default, deserialize_with = "null_default")]
    pub environment_variables: Vec<KeyValueInput>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Transport {
    /// `stdio`, `streamable-http` or `sse`.
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, deserialize_with = "opt_string")]
    pub url: Option<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub headers: Vec<KeyValueInput>,
}

/// A server reached over HTTP rather than run locally.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remote {
    /// `streamable-http` or `sse`.
    #[serde(rename = "type")]
    pub kind: String,
    /// May hold `{variables}`.
    pub url: String,
    #[serde(default, deserialize_with = "null_default")]
    pub headers: Vec<KeyValueInput>,
    #[serde(default, deserialize_with = "null_default")]
    pub variables: BTreeMap<String, Input>,
}

/// What the schema calls `Input`: a value the user may have to give.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Input {
    #[serde(default, deserialize_with = "opt_string")]
    pub description: Option<String>,
    #[serde(default, deserialize_with = "lenient_bool")]
    pub is_required: bool,
    /// `string`, `number`, `boolean` or `filepath`.
    #[serde(default, deserialize_with = "opt_string")]
    pub format: Option<String>,
    /// A fixed value, not for the user to change; `{name}` is filled from `variables`.
    #[serde(default, deserialize_with = "opt_string")]
    pub value: Option<String>,
    #[serde(default, deserialize_with = "lenient_bool")]
    pub is_secret: bool,
    #[serde(default, deserialize_with = "opt_string")]
    pub default: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    pub placeholder: Option<String>,
    #[serde(default, deserialize_with = "string_list")]
    pub choices: Vec<String>,
}

/// An environment variable or header: an [`Input`] with a name and its own `variables`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyValueInput {
    pub name: String,
    #[serde(default, deserialize_with = "null_default")]
    pub variables: BTreeMap<String, Input>,
    #[serde(flatten)]
    pub input: Input,
}

/// `positional` or `named`; anything else is kept to be refused by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgumentKind {
    Positional,
    Named,
    Other(String),
}

impl Serialize for ArgumentKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match self {
            ArgumentKind::Positional => "positional",
            ArgumentKind::Named => "named",
            ArgumentKind::Other(o) => o,
        })
    }
}

impl<'de> Deserialize<'de> for ArgumentKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(match s.as_str() {
            "positional" => ArgumentKind::Positional,
            "named" => ArgumentKind::Named,
            _ => ArgumentKind::Other(s),
        })
    }
}

/// One command-line argument: positional (`value` or `valueHint`) or named (`--flag value`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Argument {
    /// Required by the schema; when absent it is inferred (named if it has a `name`).
    #[serde(rename = "type", default)]
    pub kind: Option<ArgumentKind>,
    /// The flag with its dashes (`--port`); named arguments only.
    #[serde(default, deserialize_with = "opt_string")]
    pub name: Option<String>,
    /// A label for a positional argument's value; never on the command line itself.
    #[serde(default, deserialize_with = "opt_string")]
    pub value_hint: Option<String>,
    #[serde(default, deserialize_with = "lenient_bool")]
    pub is_repeated: bool,
    #[serde(default, deserialize_with = "null_default")]
    pub variables: BTreeMap<String, Input>,
    #[serde(flatten)]
    pub input: Input,
}

/// One server of an API answer: `GET /v0.1/servers/{name}/versions/{version}`, or an item of
/// a list. A bare `server.json` reads as one with empty `_meta` (see [`super::parse_server`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerResponse {
    pub server: ServerJson,
    #[serde(rename = "_meta", default, deserialize_with = "null_default")]
    pub meta: ResponseMeta,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResponseMeta {
    #[serde(
        rename = "io.modelcontextprotocol.registry/official",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub official: Option<OfficialMeta>,
}

/// What the official registry adds to each server it serves.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OfficialMeta {
    #[serde(default)]
    pub status: Option<ServerStatus>,
    #[serde(default, deserialize_with = "opt_string")]
    pub status_message: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    pub status_changed_at: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    pub published_at: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    pub updated_at: Option<String>,
    #[serde(default, deserialize_with = "lenient_bool")]
    pub is_latest: bool,
}

/// `active`, `deprecated` or `deleted` (moderated, e.g. malware); others kept as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerStatus {
    Active,
    Deprecated,
    Deleted,
    Other(String),
}

impl Serialize for ServerStatus {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match self {
            ServerStatus::Active => "active",
            ServerStatus::Deprecated => "deprecated",
            ServerStatus::Deleted => "deleted",
            ServerStatus::Other(o) => o,
        })
    }
}

impl<'de> Deserialize<'de> for ServerStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(match s.as_str() {
            "active" => ServerStatus::Active,
            "deprecated" => ServerStatus::Deprecated,
            "deleted" => ServerStatus::Deleted,
            _ => ServerStatus::Other(s),
        })
    }
}

/// `GET /v0.1/servers` and `GET /v0.1/servers/{name}/versions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerList {
    #[serde(default, deserialize_with = "null_default")]
    pub servers: Vec<ServerResponse>,
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: ListMetadata,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListMetadata {
    #[serde(default, deserialize_with = "opt_string")]
    pub next_cursor: Option<String>,
    #[serde(default)]
    pub count: Option<u64>,
}

impl ServerList {
    /// The cursor of the next page; `None` on the last one (absent or empty `nextCursor`).
    pub fn next_cursor(&self) -> Option<&str> {
        self.metadata
            .next_cursor
            .as_deref()
            .filter(|c| !c.is_empty())
    }
}

/// A scalar as the schema's text form: strings as they are, numbers in decimal, booleans
/// as `true`/`false`. Objects and arrays are errors: no text of them is the right one.
fn scalar<E: serde::de::Error>(v: serde_json::Value) -> Result<Option<String>, E> {
    use serde_json::Value;
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s)),
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::Bool(b) => Ok(Some(b.to_string())),
        other => Err(E::custom(format!(
            "expected a string, found {}",
            match other {
                Value::Array(_) => "an array",
                _ => "an object",
            }
        ))),
    }
}

fn opt_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    scalar(serde_json::Value::deserialize(d)?)
}

fn string_or_empty<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(opt_string(d)?.unwrap_or_default())
}

fn string_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let items: Option<Vec<serde_json::Value>> = Option::deserialize(d)?;
    let mut out = Vec::new();
    for item in items.unwrap_or_default() {
        out.extend(scalar(item)?);
    }
    Ok(out)
}

fn lenient_bool<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(d)?.unwrap_or(false))
}

fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}
