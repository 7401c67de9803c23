//! Why a registry document cannot become a command line. Each message says what is wrong,
//! why Warden will not guess, and what to do (after `Fix:`, as elsewhere in Warden).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// Where a value the user must give goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    /// An environment variable of the server (its name is the key).
    Env,
    /// A positional argument without a value (its `valueHint` is the key).
    Positional,
    /// A named argument without a value (its flag without dashes is the key: `--port` → `port`).
    Named,
    /// A `{variable}` inside an argument's or variable's value (its name is the key).
    Variable,
}

impl InputKind {
    fn describe(self) -> &'static str {
        match self {
            InputKind::Env => "environment variable",
            InputKind::Positional => "positional argument",
            InputKind::Named => "argument",
            InputKind::Variable => "value inside an argument",
        }
    }
}

/// A value the document asks for that nobody gave: the CLI asks for it on a terminal, or
/// refuses naming `--env KEY=VALUE`. The same key in [`super::PlanOptions::inputs`] fills it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct InputRequest {
    pub key: String,
    pub kind: InputKind,
    pub secret: bool,
    pub description: Option<String>,
    pub choices: Vec<String>,
    pub placeholder: Option<String>,
}

impl InputRequest {
    /// What a person passes to give it, e.g. `--env API_KEY=VALUE`.
    pub fn flag(&self) -> String {
        format!("--env {}=VALUE", self.key)
    }
}

/// A remote endpoint, for the message that says how to add it to a client directly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RemoteSummary {
    pub kind: String,
    pub url: String,
    /// Names of the headers it asks for, with `(secret)` where they are.
    pub headers: Vec<String>,
}

/// Which package of which server an error is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageId {
    pub server: String,
    pub registry_type: String,
    pub identifier: String,
}

impl std::fmt::Display for PackageId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}'s {} package {}",
            self.server, self.registry_type, self.identifier
        )
    }
}

/// Why no install plan was made. Nothing is written in any of these cases.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error(
        "{what} is not a server document Warden can read: {detail}. Fix: give a server.json of the MCP Registry (schema 2025-09-29 or later) or an answer of its v0.1 API; if it came from the registry, report it to the registry's maintainers"
    )]
    Malformed { what: String, detail: String },

    #[error(
        "{server} lists no package and no remote, so there is nothing to install. Fix: ask its publisher to publish a package, or add the server to your client by hand"
    )]
    NoPackage { server: String },

    #[error("{}", remote_only(server, remotes))]
    RemoteOnly {
        server: String,
        remotes: Vec<RemoteSummary>,
    },

    #[error(
        "{server} lists its remotes only over transports that warden-remote does not speak ({}); it speaks Streamable HTTP and the deprecated HTTP+SSE. Fix: add it to your client as its documentation says, or ask its publisher for a streamable-http remote", kinds.join(", ")
    )]
    RemoteTransport { server: String, kinds: Vec<String> },

    #[error(
        "{server}'s remote cannot be used as it is: {why}. Fix: ask its publisher to fix its server.json"
    )]
    RemoteUnusable { server: String, why: String },

    #[error(
        "{server} has no package {index}: it lists {count} (numbered from 0). Fix: choose one of 0..{count}, or leave the choice to Warden"
    )]
    NoSuchPackage {
        server: String,
        index: usize,
        count: usize,
    },

    #[error("{}", unsupported(package, why, alternatives))]
    UnsupportedPackage {
        package: Box<PackageId>,
        why: String,
        /// Other ways to get it (other packages, a remote), already phrased.
        alternatives: String,
    },

    #[error(
        "{package} runs as an HTTP server ({transport}), not over stdio, so it cannot be a local command of an IDE config. Fix: start it yourself and add its URL to your client as a remote server, or choose a stdio package"
    )]
    NotStdio {
        package: Box<PackageId>,
        transport: String,
    },

    #[error(
        "{package} has version `{version}`, which {why}; Warden writes only exact versions, so what runs tomorrow is what you agreed to today. Fix: install an exact version (`NAME@1.2.3`), or ask the publisher to publish one"
    )]
    VersionNotExact {
        package: Box<PackageId>,
        version: String,
        why: &'static str,
    },

    #[error(
        "`{server}@{version}`: `{version}` {why}; Warden installs only exact versions, so what runs tomorrow is what you agreed to today. Fix: give one exact version (`warden registry show {server}` lists them), or leave `@VERSION` out to install the latest, pinned to its exact version"
    )]
    RequestedVersionNotExact {
        server: String,
        version: String,
        why: &'static str,
    },

    #[error(
        "{package} names no version, so the command would run whatever is newest when it starts. Fix: install a version of the server whose package names one, or ask the publisher to add it"
    )]
    Unpinned { package: Box<PackageId> },

    #[error(
        "{server} is a template: `{text}` still holds `${{{name}}}`, which its publisher's CI fills in before publishing, and the document gives no version to fill it with. Fix: install the published version from the registry (`warden install {server}`), or give the version to use (`NAME@VERSION`)"
    )]
    Template {
        server: String,
        text: String,
        name: String,
    },

    #[error(
        "{package} has runtimeHint `{hint}` and runtime arguments for it ({arguments}), but Warden runs {} packages with `{runner}`, which would not understand them. Fix: choose another package, or add the server by hand with the command its README gives", package.registry_type
    )]
    ForeignRuntimeArguments {
        package: Box<PackageId>,
        hint: String,
        runner: &'static str,
        arguments: String,
    },

    #[error("{}", missing(server, inputs))]
    MissingInputs {
        server: String,
        inputs: Vec<InputRequest>,
    },

    #[error(
        "`{key}` must be one of {}, not `{value}`. Fix: pass `--env {key}=CHOICE` with one of those", choices.join(", ")
    )]
    NotAChoice {
        key: String,
        value: String,
        choices: Vec<String>,
    },
}

fn remote_only(server: &str, remotes: &[RemoteSummary]) -> String {
    let mut s = format!(
        "{server} is a remote server, not a local stdio server: there is no package for Warden to run. Fix: `warden install {server} --client ID` writes it into a client's file run through the bridge (`warden bridge --remote URL`, a Streamable HTTP remote), or add it to your client directly as a remote server:"
    );
    for r in remotes {
        let _ = write!(s, " {} at {}", r.kind, r.url);
        if !r.headers.is_empty() {
            let _ = write!(s, " with header {}", r.headers.join(", "));
        }
        s.push(';');
    }
    s.push_str(" e.g. `claude mcp add --transport http NAME URL`, or the client's \"add server\" with that URL (replace any `{placeholder}` in it first)");
    s
}

fn unsupported(package: &PackageId, why: &str, alternatives: &str) -> String {
    let PackageId {
        server,
        registry_type,
        identifier,
    } = package;
    let mut s = format!(
        "{server}'s package {identifier} is of type `{registry_type}`, which Warden cannot run as a local command: {why}. Warden runs npm (npx), pypi (uvx), oci (docker) and nuget (dnx) packages."
    );
    if alternatives.is_empty() {
        s.push_str(" Fix: install it the way its publisher describes, outside Warden");
    } else {
        let _ = write!(s, " Fix: {alternatives}");
    }
    s
}

fn missing(server: &str, inputs: &[InputRequest]) -> String {
    let mut s = format!(
        "{server} needs {} that Warden cannot choose for you:",
        if inputs.len() == 1 {
            "a value"
        } else {
            "values"
        }
    );
    for (i, input) in inputs.iter().enumerate() {
        let _ = write!(
            s,
            "{} `{}` ({}{})",
            if i == 0 { "" } else { ";" },
            input.key,
            if input.secret { "secret " } else { "" },
            input.kind.describe()
        );
        if let Some(d) = &input.description {
            let _ = write!(s, ": {}", d.trim());
        }
        if !input.choices.is_empty() {
            let _ = write!(s, " [one of {}]", input.choices.join(", "));
        }
    }
    let flags: Vec<String> = inputs.iter().map(InputRequest::flag).collect();
    let _ = write!(
        s,
        ". Fix: pass {}, or run the command on a terminal to be asked",
        flags.join(" ")
    );
    s
}
