//! The registry as the window shows it: a search's servers in a line each, and one server's
//! install plan for the consent screen, read from what `warden registry search --json` and
//! `warden registry show --json` print. The window asks with a [`RegistryRequest`] (its own
//! command, never the control socket, so none of this is linked into `warden`), runs
//! `warden-registry` with [`RegistryRequest::args`] through the shell plugin's sidecar API, and
//! answers with [`RegistryRequest::answer`] of what it printed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::document::{ServerResponse, ServerStatus};
use super::error::{InputRequest, RegistryError};
use super::parse::{parse_list, parse_server};
use super::plan::{InstallPlan, PlanOptions};
use super::planner::{entry_name, plan};

/// What the window's Add flow asks of the MCP Registry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum RegistryRequest {
    /// Servers whose name or description contains `term` (all when empty), latest versions.
    Search(registry_op::Search),
    /// One server (`version`: exact, else the latest) and what installing it would write
    /// with the user's `inputs` (by the keys the plan asks for) as entry `as_name`.
    Plan(registry_op::Plan),
    /// The same for a server.json the user pasted (nothing is fetched).
    Document(registry_op::Document),
}

/// The answer to a [`RegistryRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RegistryAnswer {
    Found {
        servers: Vec<Found>,
    },
    Plan(Box<PlanView>),
    /// What went wrong, with its code and what to do.
    Error {
        message: String,
    },
}

/// Each [`RegistryRequest`] as a type (see [`warden_rpc::Op`]).
pub mod registry_op {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Serialize};

    /// Servers whose name or description contains `term` (all when empty), latest versions.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
    pub struct Search {
        pub term: String,
    }

    /// One server (`version`: exact, else the latest) and what installing it would write
    /// with the user's `inputs` (by the keys the plan asks for) as entry `as_name`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
    pub struct Plan {
        pub name: String,
        #[serde(default)]
        pub version: Option<String>,
        #[serde(default)]
        pub inputs: BTreeMap<String, String>,
        #[serde(default)]
        pub as_name: Option<String>,
    }

    /// The same for a server.json the user pasted (nothing is fetched).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
    pub struct Document {
        pub document: String,
        #[serde(default)]
        pub inputs: BTreeMap<String, String>,
        #[serde(default)]
        pub as_name: Option<String>,
    }

    macro_rules! into_registryrequest {
        ($($unit:ident),*; $($newtype:ident),*) => {
            $(impl From<$unit> for super::RegistryRequest {
                fn from(_: $unit) -> super::RegistryRequest {
                    super::RegistryRequest::$unit
                }
            })*
            $(impl From<$newtype> for super::RegistryRequest {
                fn from(r: $newtype) -> super::RegistryRequest {
                    super::RegistryRequest::$newtype(r)
                }
            })*
        };
    }
    into_registryrequest!(; Search, Plan, Document);
}

warden_rpc::pairs! {
    /// Each [`RegistryRequest`] with its answer (see [`warden_rpc`]).
    registry_op: RegistryRequest => RegistryAnswer {
        Search(Vec<Found>) => |servers| RegistryAnswer::Found { servers };
        Plan(Box<PlanView>) => |r| RegistryAnswer::Plan(r);
        Document(Box<PlanView>) => |r| RegistryAnswer::Plan(r);
    }
}

impl From<String> for RegistryAnswer {
    fn from(message: String) -> RegistryAnswer {
        RegistryAnswer::Error { message }
    }
}

impl RegistryRequest {
    /// The `warden-registry` command line that fetches what this needs (`None`: nothing to
    /// fetch). A term or name that looks like a flag stays a word (after `--`).
    pub fn args(&self) -> Option<Vec<String>> {
        let words = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        match self {
            RegistryRequest::Search(registry_op::Search { term }) => {
                let mut argv = words(&["registry", "search", "--json", "--limit", "50"]);
                if !term.trim().is_empty() {
                    argv.extend(["--".to_owned(), term.trim().to_owned()]);
                }
                Some(argv)
            }
            RegistryRequest::Plan(registry_op::Plan { name, version, .. }) => {
                let mut argv = words(&["registry", "show", "--json"]);
                if let Some(v) = version.as_ref().filter(|v| !v.is_empty()) {
                    argv.extend(["--version".to_owned(), v.clone()]);
                }
                argv.extend(["--".to_owned(), name.clone()]);
                Some(argv)
            }
            RegistryRequest::Document(registry_op::Document { .. }) => None,
        }
    }

    /// The answer, from what [`Self::args`] printed (or why it failed: its message), as
    /// [`registry_op`] declares.
    pub fn answer(self, printed: Result<String, String>) -> RegistryAnswer {
        use warden_rpc::Op;
        let text = |e: RegistryError| e.to_string();
        match self {
            RegistryRequest::Document(registry_op::Document {
                document,
                inputs,
                as_name,
            }) => registry_op::Document::answer(
                document_view(&document, inputs, as_name.as_deref())
                    .map(Box::new)
                    .map_err(text),
            ),
            RegistryRequest::Search(registry_op::Search { .. }) => {
                registry_op::Search::answer(printed.and_then(|out| found(&out).map_err(text)))
            }
            RegistryRequest::Plan(registry_op::Plan {
                inputs, as_name, ..
            }) => registry_op::Plan::answer(printed.and_then(|out| {
                plan_view(&out, inputs, as_name.as_deref())
                    .map(Box::new)
                    .map_err(text)
            })),
        }
    }
}

/// One server of a search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Found {
    /// The registry name, e.g. `io.github.microsoft/playwright-mcp`.
    pub name: String,
    pub title: Option<String>,
    pub version: Option<String>,
    pub description: String,
    pub repository: Option<String>,
    /// What it can be installed as: package types (`npm`, `pypi`, `oci`, ...), and `remote`
    /// when it has remotes.
    pub kinds: Vec<String>,
    pub deprecated: bool,
}

/// One server version and what installing it would write: the consent screen's facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PlanView {
    pub name: String,
    pub title: Option<String>,
    pub version: Option<String>,
    pub description: String,
    /// The publisher's namespace: the name before its `/`.
    pub namespace: String,
    pub repository: Option<String>,
    pub website: Option<String>,
    /// The entry name written into the clients' files.
    pub entry_name: String,
    /// Versions the registry has, newest first (empty when it did not say).
    pub versions: Vec<String>,
    /// What would be written, once every required value is given.
    pub plan: Option<InstallPlan>,
    /// For a server that lists only `remotes`: its URL and headers, in place of `plan`
    /// (written as `warden bridge --remote`).
    #[serde(default)]
    pub remote: Option<super::plan::RemotePlan>,
    /// Values still needed (then `plan` is `null`): ask for them and plan again.
    pub missing: Vec<InputRequest>,
    /// Why it cannot be installed (or what is missing), with what to do.
    pub refused: Option<String>,
}

/// The servers of `warden registry search --json` (an array of the registry's objects).
pub fn found(search_json: &str) -> Result<Vec<Found>, RegistryError> {
    let items: Value = serde_json::from_str(search_json).map_err(|e| malformed(&e))?;
    let list = parse_list(&serde_json::json!({ "servers": items }).to_string())?;
    Ok(list.servers.iter().map(found_one).collect())
}

fn found_one(s: &ServerResponse) -> Found {
    let doc = &s.server;
    let mut kinds: Vec<String> = Vec::new();
    for p in &doc.packages {
        let kind = p.registry_type.as_str().to_owned();
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    if !doc.remotes.is_empty() {
        kinds.push("remote".to_owned());
    }
    let status = s.meta.official.as_ref().and_then(|o| o.status.as_ref());
    Found {
        name: doc.name.clone(),
        title: doc.title.clone(),
        version: doc.version.clone(),
        description: doc.description.trim().to_owned(),
        repository: doc.repository.as_ref().and_then(|r| r.url.clone()),
        kinds,
        deprecated: matches!(
            status,
            Some(ServerStatus::Deprecated | ServerStatus::Deleted)
        ),
    }
}

/// The plan of the server `warden registry show --json` printed, with the user's `inputs`
/// (the keys of [`InputRequest`]) and entry name (`as_name`, else the registry's short name).
pub fn plan_view(
    show_json: &str,
    inputs: BTreeMap<String, String>,
    as_name: Option<&str>,
) -> Result<PlanView, RegistryError> {
    let shown: Value = serde_json::from_str(show_json).map_err(|e| malformed(&e))?;
    let server = shown.get("server").cloned().unwrap_or(Value::Null);
    let response = parse_server(&serde_json::json!({ "server": server }).to_string())?;
    let doc = &response.server;
    let versions = shown
        .get("versions")
        .and_then(Value::as_array)
        .map(|v| {
            v.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let opts = PlanOptions {
        inputs,
        ..PlanOptions::default()
    };
    let missing_inputs = |server, inputs: Vec<InputRequest>| {
        let refused = RegistryError::MissingInputs {
            server,
            inputs: inputs.clone(),
        };
        (inputs, Some(refused.to_string()))
    };
    let (plan, remote, missing, refused) = match plan(doc, &opts) {
        Ok(p) => (Some(p), None, Vec::new(), None),
        Err(RegistryError::MissingInputs { server, inputs }) => {
            let (missing, refused) = missing_inputs(server, inputs);
            (None, None, missing, refused)
        }
        Err(RegistryError::RemoteOnly { .. }) => match super::planner::plan_remote(doc, &opts) {
            Ok(r) => (None, Some(r), Vec::new(), None),
            Err(RegistryError::MissingInputs { server, inputs }) => {
                let (missing, refused) = missing_inputs(server, inputs);
                (None, None, missing, refused)
            }
            Err(e) => (None, None, Vec::new(), Some(e.to_string())),
        },
        Err(e) => (None, None, Vec::new(), Some(e.to_string())),
    };
    Ok(PlanView {
        name: doc.name.clone(),
        title: doc.title.clone(),
        version: doc.version.clone(),
        description: doc.description.trim().to_owned(),
        namespace: doc.namespace().to_owned(),
        repository: doc.repository.as_ref().and_then(|r| r.url.clone()),
        website: doc.website_url.clone(),
        entry_name: entry_name(&doc.name, as_name),
        versions,
        plan,
        remote,
        missing,
        refused,
    })
}

/// [`plan_view`] of a server.json the user gave (or an API answer wrapping one).
pub fn document_view(
    document: &str,
    inputs: BTreeMap<String, String>,
    as_name: Option<&str>,
) -> Result<PlanView, RegistryError> {
    let doc: Value = serde_json::from_str(document).map_err(|e| RegistryError::Malformed {
        what: "the pasted server.json".to_owned(),
        detail: e.to_string(),
    })?;
    let server = doc.get("server").cloned().unwrap_or(doc);
    plan_view(
        &serde_json::json!({ "server": server }).to_string(),
        inputs,
        as_name,
    )
}

fn malformed(e: &serde_json::Error) -> RegistryError {
    RegistryError::Malformed {
        what: "warden-registry's output".to_owned(),
        detail: e.to_string(),
    }
}
