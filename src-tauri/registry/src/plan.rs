//! What a plan is made of: the caller's options, and the plan (argv, environment, pinned
//! package, warnings) that the consent screen shows and the IDE config gets.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::document::RegistryType;
use super::error::InputRequest;
use warden_clients::Risk;

/// What the caller decides: which package, the user's values, the version for templates.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// An index into `packages`; `None` picks the first stdio package of type npm, else
    /// pypi, else oci, else nuget.
    pub package: Option<usize>,
    /// The user's values (`--env KEY=VALUE`), by the keys of [`InputRequest`]:
    /// environment variable names, `{variable}` names, `valueHint`s, flags without dashes.
    /// A key nothing uses becomes an extra environment variable (with a warning).
    pub inputs: BTreeMap<String, String>,
    /// What `${VERSION}` stands for when the document is a template without a version of
    /// its own (a repository's CI copy); the user's `NAME@VERSION`.
    pub version: Option<String>,
}

/// Everything the consent screen shows and the IDE config gets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct InstallPlan {
    /// The registry name, e.g. `io.github.microsoft/playwright-mcp`.
    pub server: String,
    /// The server's version (a `${VERSION}` template filled).
    pub version: Option<String>,
    pub package: PlannedPackage,
    /// The program: `npx`, `uvx`, `docker` or `dnx`.
    pub command: String,
    pub args: Vec<String>,
    /// Declared variables (set or not), then the user's undeclared ones.
    pub env: Vec<PlannedEnv>,
    /// Inputs of arguments left out because nobody gave them (none of them is required).
    pub optional_inputs: Vec<InputRequest>,
    pub warnings: Vec<Warning>,
    /// What the consent screen flags: the command's (`clients::risks`: root, a shell line, a
    /// runner option that widens what the server gets), then the variables set that steer
    /// loading or paths, as high risk when the document itself sets them.
    #[serde(default)]
    pub risks: Vec<Risk>,
}

impl InstallPlan {
    /// `command` then `args`.
    pub fn argv(&self) -> Vec<String> {
        std::iter::once(self.command.clone())
            .chain(self.args.iter().cloned())
            .collect()
    }

    /// Whether a warning of `kind` is among the warnings.
    pub fn has_warning(&self, kind: WarningKind) -> bool {
        self.warnings.iter().any(|w| w.kind == kind)
    }
}

/// A remote server's plan (a document with `remotes` only): the URL `warden bridge
/// --remote` reaches, and its headers, each sent from a variable Warden names after the
/// header, whose value goes into the OS keychain (a secret) or the entry's `env`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RemotePlan {
    /// The registry name.
    pub server: String,
    /// The server's version, as the registry lists it (what was agreed to).
    pub version: Option<String>,
    /// `streamable-http`.
    pub transport: String,
    /// The URL, its `{variables}` filled.
    pub url: String,
    /// The bridge's `--header NAME=ENVVAR`s: one for each header that has a value.
    pub headers: Vec<String>,
    /// The headers' variables (set or not), then the user's undeclared values.
    pub env: Vec<PlannedEnv>,
    pub warnings: Vec<Warning>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PlannedPackage {
    /// Its index in the document's `packages`.
    pub index: usize,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub registry_type: RegistryType,
    pub identifier: String,
    /// The exact version: the package version, the image tag or digest.
    pub version: String,
    /// As on the command line: `ID@VERSION`, `ID==VERSION`, `IMAGE:TAG`.
    pub reference: String,
}

/// One environment variable of the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PlannedEnv {
    pub name: String,
    pub required: bool,
    /// Goes to the keychain, not the IDE file.
    pub secret: bool,
    pub default: Option<String>,
    pub description: Option<String>,
    /// What to set; `None`: not set (optional, and nobody gave a value).
    pub value: Option<String>,
    pub source: ValueSource,
    /// False for the user's values that the document does not declare.
    pub declared: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ValueSource {
    /// The user gave it.
    User,
    /// Fixed by the document (`value`, with its variables filled).
    Document,
    /// The document's `default`.
    Default,
    Unset,
}

/// Something the user should know before agreeing: a normalization, a guess, a risk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Warning {
    pub kind: WarningKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// `runtimeHint` names another program than Warden's runner (e.g. `python`).
    RuntimeHint,
    /// The package has no `transport`; stdio was assumed.
    NoTransport,
    /// `${VERSION}` was filled with the pinned version.
    TemplateFilled,
    /// Positional runtime arguments (the server's own subcommand) moved after the package.
    RuntimeArgumentsMoved,
    /// Runtime arguments that repeat what Warden's runner already has (`run -i --rm`).
    RunnerFlagsDropped,
    /// A docker TTY flag (`-t`) was dropped: a TTY would corrupt the JSON-RPC stream.
    TtyDropped,
    /// The image tag and the package's `version` differ; the tag is used.
    TagMismatch,
    /// A `{placeholder}` or `${...}` stays as written.
    Placeholder,
    /// An optional argument was left out for want of a value.
    OptionalLeftOut,
    /// A secret is in the command line, so in the IDE's file in plain text.
    SecretInArguments,
    /// A secret `-e NAME=VALUE` of docker became `-e NAME` plus an environment variable.
    SecretMovedToEnv,
    /// The user's value replaces a value the document fixes.
    InputOverridesValue,
    /// A user's value that the document does not declare, set as an environment variable.
    UndeclaredInput,
    /// An argument without `type`.
    ArgumentTypeInferred,
}
