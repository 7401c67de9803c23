//! The limits form: every config key of a server with its effective value, where it comes
//! from and its default; and the conversion of the UI's JSON values into TOML for
//! [`config::edit`](warden_config::edit).
//!
//! The form's edits come back as `SetLimit` requests (`commands`). A list key changes by items to
//! add and to remove, applied to the list config.toml holds when it is edited, under the file's
//! lock (`warden_config::edit::edit_server_list`): two grants made at once both land, where each
//! sending a whole list would drop the other's item.
//!
//! Each tool's policy ([`ToolPolicy`]) is judged as the bridges judge it, by
//! `warden_config::policy::explain` on its pinned definition and the one seen since. Its
//! `name_entry` is the list entry that names this tool and no other (glob characters and `@`
//! escaped): the entry `SetToolPolicy` moves between the lists.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::api::{GrantReadOnly, LimitSource, LimitValue, LimitsReport, PolicyKind, ToolPolicy};
use warden_config::policy::Policy;
use warden_config::{Config, KEYS, Origin};

/// The report for `server` from the config file at `path` (`None`: defaults only).
pub fn limits(path: Option<&Path>, server: &str) -> LimitsReport {
    limits_and_tools(path, server, &[])
}

/// [`limits`], with the policy of the tools `seen` (called) besides those of its pin file.
pub fn limits_and_tools(path: Option<&Path>, server: &str, seen: &[String]) -> LimitsReport {
    let (config, error) = match path.map(Config::load) {
        Some(Ok(c)) => (Some(c), None),
        Some(Err(e)) => (None, Some(e.to_string())),
        None => (None, None),
    };
    let keys = KEYS
        .iter()
        .map(|def| {
            let default = toml_default(def.default);
            let raw = config.as_ref().and_then(|c| c.raw_value(server, def.name));
            let (value, source, line) = match raw {
                Some((v, origin, own)) => (
                    serde_json::to_value(v).unwrap_or(Json::Null),
                    if own {
                        LimitSource::Server
                    } else {
                        LimitSource::Defaults
                    },
                    match origin {
                        Origin::File { line, .. } => Some(*line),
                        _ => None,
                    },
                ),
                None => (default.clone(), LimitSource::Default, None),
            };
            LimitValue {
                key: def.name.to_owned(),
                value,
                default,
                source,
                line,
                doc: def.doc.to_owned(),
                fix: def.fix.to_owned(),
                choices: warden_config::choices(def.name)
                    .iter()
                    .map(|c| (*c).to_owned())
                    .collect(),
            }
        })
        .collect();
    let home = warden_config::paths::home_dir();
    LimitsReport {
        server: server.to_owned(),
        config: path.map(Path::to_owned),
        keys,
        sandbox_hidden: sandbox_hidden(path, config.as_ref(), server),
        sandbox_read_only_names: warden_bridge::sandbox::READ_ONLY_IN_GRANTS
            .iter()
            .map(|n| (*n).to_owned())
            .collect(),
        sandbox_grants: sandbox_grants(config.as_ref(), server),
        tools: tool_policies(
            config.as_ref(),
            server,
            &warden_config::pins::path(server),
            seen,
        ),
        home,
        warnings: config.map(|c| c.warnings).unwrap_or_default(),
        error,
    }
}

/// What a sandboxed `server` may not read, for the window, which grants no folder that holds
/// one or lies in one: the bridge's own list (`bridge::sandbox`), whether each exists or not.
fn sandbox_hidden(path: Option<&Path>, config: Option<&Config>, server: &str) -> Vec<PathBuf> {
    let limits = config
        .and_then(|c| c.limits_for(server, &Default::default()).ok())
        .unwrap_or_default();
    warden_bridge::sandbox::Places::of_this_process(path, server, &[]).listed_hidden(&limits)
}

/// Each existing folder `server` may write, with what stays read-only in it.
fn sandbox_grants(config: Option<&Config>, server: &str) -> Vec<GrantReadOnly> {
    let limits = config
        .and_then(|c| c.limits_for(server, &Default::default()).ok())
        .unwrap_or_default();
    limits
        .sandbox_write
        .iter()
        .filter(|g| g.is_dir())
        .map(|g| GrantReadOnly {
            grant: g.clone(),
            read_only: warden_bridge::sandbox::read_only_in(g),
            git: g.join(".git").exists(),
        })
        .collect()
}

/// The policy of each tool of `server` its pin file (at `pins`) knows, or `seen` names, as
/// the bridges decide it: from the pinned definition and the one seen since when it differs
/// (the strictest), with the spec's defaults for a tool never pinned, or for every tool with
/// `pin_tools = "off"` (the bridges then read no pin; each judges by what the server lists
/// in its session, which only it knows).
fn tool_policies(
    config: Option<&Config>,
    server: &str,
    pins: &Path,
    seen: &[String],
) -> Vec<ToolPolicy> {
    let limits = config
        .and_then(|c| c.limits_for(server, &Default::default()).ok())
        .unwrap_or_default();
    let file = warden_config::pins::PinFile::load(pins)
        .ok()
        .flatten()
        .unwrap_or_default();
    let mut names: std::collections::BTreeSet<&str> = file
        .pinned
        .keys()
        .chain(file.pending.keys())
        .map(String::as_str)
        .collect();
    names.extend(seen.iter().map(String::as_str));
    let pinning = limits.pin_tools != warden_config::PinMode::Off;
    names
        .into_iter()
        .map(|tool| {
            let defs: Vec<&Json> = file
                .pinned
                .get(tool)
                .into_iter()
                .chain(file.pending.get(tool).map(|s| &s.definition))
                .filter(|_| pinning)
                .collect();
            let e = warden_config::policy::explain(tool, &defs, &limits);
            let (policy, key, entry) = match e.policy {
                Policy::Allow => (
                    PolicyKind::Allow,
                    e.allowed_by.is_some().then(|| "tools_allow".to_owned()),
                    e.allowed_by,
                ),
                Policy::Ask(r) => (PolicyKind::Ask, Some(r.key.to_owned()), r.entry),
                Policy::Deny(r) => (PolicyKind::Deny, Some(r.key.to_owned()), r.entry),
            };
            let always = file.always.get(tool);
            ToolPolicy {
                tool: tool.to_owned(),
                policy,
                key,
                entry,
                name_entry: warden_config::policy::name_entry(tool),
                allow_listed: e.allow_listed,
                selectors: e.selectors.iter().map(|s| (*s).to_owned()).collect(),
                known: !defs.is_empty(),
                always: always.is_some(),
                always_current: !defs.is_empty()
                    && always.is_some_and(|h| *h == warden_config::pins::definitions_hash(&defs)),
            }
        })
        .collect()
}

fn toml_default(text: &str) -> Json {
    toml::from_str::<toml::Table>(&format!("v = {text}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .and_then(|v| serde_json::to_value(v).ok())
        .unwrap_or(Json::Null)
}

/// A JSON value from the UI as a TOML value; `null` has no TOML form.
pub fn to_toml(value: &Json) -> Result<toml_edit::Value, String> {
    Ok(match value {
        Json::Null => return Err("null is not a value: remove the key instead".to_owned()),
        Json::Bool(b) => (*b).into(),
        Json::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.into(),
            (None, Some(f)) => f.into(),
            _ => return Err(format!("{n} is out of range")),
        },
        Json::String(s) => s.as_str().into(),
        Json::Array(items) => {
            let mut array = toml_edit::Array::new();
            for item in items {
                array.push(to_toml(item)?);
            }
            toml_edit::Value::Array(array)
        }
        Json::Object(map) => {
            let mut table = toml_edit::InlineTable::new();
            for (k, v) in map {
                table.insert(k, to_toml(v)?);
            }
            toml_edit::Value::InlineTable(table)
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn reports_effective_values_with_their_source_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[defaults]\nidle_timeout_ms = 20000\n\n[servers.rg]\nretries = 5\nidle_timeout_ms = 30000\n",
        )
        .unwrap();
        let report = limits(Some(&path), "rg");
        assert_eq!(report.error, None);
        let get = |r: &LimitsReport, k: &str| r.keys.iter().find(|v| v.key == k).unwrap().clone();
        let idle = get(&report, "idle_timeout_ms");
        assert_eq!(
            (idle.value, idle.source, idle.line),
            (Json::from(30000), LimitSource::Server, Some(6))
        );
        assert_eq!(idle.default, Json::from(50000));
        let other = limits(Some(&path), "other");
        let idle = get(&other, "idle_timeout_ms");
        assert_eq!(
            (idle.value, idle.source, idle.line),
            (Json::from(20000), LimitSource::Defaults, Some(2))
        );
        let max = get(&other, "max_timeout_ms");
        assert_eq!((max.source, max.line), (LimitSource::Default, None));
        assert_eq!(report.keys.len(), KEYS.len());
        // A broken file: defaults, and the reason.
        std::fs::write(&path, "[defaults\n").unwrap();
        let broken = limits(Some(&path), "rg");
        assert!(broken.error.as_deref().unwrap().contains("not valid TOML"));
        assert_eq!(get(&broken, "retries").source, LimitSource::Default);
    }

    #[test]
    #[cfg_attr(windows, ignore = "POSIX paths in the test")]
    fn lists_the_home_and_what_the_sandbox_hides() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[servers.fs]\nsandbox_deny = [\"/srv/private\"]\n").unwrap();
        let report = limits(Some(&path), "fs");
        if let Some(home) = &report.home {
            assert!(report.sandbox_hidden.contains(&home.join(".ssh")));
        }
        // Warden's config folder, and the server's own deny list.
        assert!(report.sandbox_hidden.contains(&dir.path().to_owned()));
        assert!(report.sandbox_hidden.contains(&"/srv/private".into()));
        assert!(
            !limits(Some(&path), "other")
                .sandbox_hidden
                .contains(&"/srv/private".into())
        );
    }

    #[test]
    fn json_values_become_toml() {
        let v =
            to_toml(&serde_json::json!({"search": {"max_results": 100, "ratio": 0.5}})).unwrap();
        assert_eq!(
            v.to_string(),
            "{ search = { max_results = 100, ratio = 0.5 } }"
        );
        assert_eq!(
            to_toml(&serde_json::json!(["/src", "/docs"]))
                .unwrap()
                .to_string(),
            r#"["/src", "/docs"]"#
        );
        assert!(to_toml(&Json::Null).is_err());
    }

    /// Each tool's policy comes from `policy::policy` over its pinned definition and the one
    /// seen since: the deciding list and entry, the `tools_allow` view, the selectors, and an
    /// "always" answer, current only while it matches the definitions.
    #[test]
    fn each_tools_policy_and_why() {
        use serde_json::json;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[servers.gh]\ntools_ask = [\"@destructive\"]\ntools_deny = [\"rm*\"]\n",
        )
        .unwrap();
        let config = Config::load(&path).unwrap();
        let read = json!({"name": "read", "annotations": {"readOnlyHint": true}});
        let write = json!({"name": "write"});
        let rm = json!({"name": "rm_rf", "annotations": {"readOnlyHint": true}});
        let mut file = warden_config::pins::PinFile::default();
        for t in [&read, &write, &rm] {
            file.record(t, true, 1);
        }
        // `read` changed since: it writes now, so the strictest definition decides.
        file.record(&json!({"name": "read"}), false, 2);
        // Answered "always" while each was as pinned.
        for t in ["write", "read"] {
            let hash = warden_config::pins::definitions_hash(&[&file.pinned[t]]);
            file.always.insert(t.into(), hash);
        }
        let pins = dir.path().join("gh.json");
        file.save(&pins).unwrap();
        let tools = tool_policies(Some(&config), "gh", &pins, &["called".to_owned()]);
        let row = |n: &str| tools.iter().find(|t| t.tool == n).unwrap().clone();
        let brief = |t: ToolPolicy| (t.policy, t.key, t.entry);
        let ask = Some("tools_ask".to_owned());
        let destructive = Some("@destructive".to_owned());
        assert_eq!(
            tools.iter().map(|t| t.tool.as_str()).collect::<Vec<_>>(),
            ["called", "read", "rm_rf", "write"]
        );
        assert_eq!(
            brief(row("write")),
            (PolicyKind::Ask, ask.clone(), destructive.clone())
        );
        assert_eq!(
            brief(row("read")),
            (PolicyKind::Ask, ask.clone(), destructive.clone())
        );
        assert_eq!(
            brief(row("rm_rf")),
            (
                PolicyKind::Deny,
                Some("tools_deny".into()),
                Some("rm*".into())
            )
        );
        // Never pinned: the spec's defaults, as the bridge assumes.
        let called = row("called");
        assert!(!called.known && called.allow_listed);
        assert_eq!(brief(called), (PolicyKind::Ask, ask, destructive));
        assert_eq!(row("rm_rf").selectors, ["@readonly", "@openworld"]);
        let (w, r) = (row("write"), row("read"));
        assert_eq!((w.always, w.always_current), (true, true));
        assert_eq!(
            (r.always, r.always_current),
            (true, false),
            "its definition changed"
        );
        assert!(!row("rm_rf").always);
        // Allowed by no list, or by the tools_allow entry that lists it.
        std::fs::write(&path, "[servers.gh]\ntools_allow = [\"wr*\", \"called\"]\n").unwrap();
        let config = Config::load(&path).unwrap();
        let tools = tool_policies(Some(&config), "gh", &pins, &[]);
        let row = |n: &str| tools.iter().find(|t| t.tool == n).unwrap().clone();
        assert_eq!(
            brief(row("write")),
            (
                PolicyKind::Allow,
                Some("tools_allow".into()),
                Some("wr*".into())
            )
        );
        let rm = row("rm_rf");
        assert!(!rm.allow_listed);
        assert_eq!(
            brief(rm),
            (PolicyKind::Deny, Some("tools_allow".into()), None)
        );
        std::fs::write(
            &path,
            "[servers.gh]\ntools_ask = [\"@write\"]\npin_tools = \"off\"\n",
        )
        .unwrap();
        let config = Config::load(&path).unwrap();
        let tools = tool_policies(Some(&config), "gh", &pins, &[]);
        assert!(
            tools
                .iter()
                .all(|t| !t.known && t.policy == PolicyKind::Ask),
            "pins unread, as the bridges do: {tools:?}"
        );
        let tools = tool_policies(None, "gh", &pins, &[]);
        assert!(
            tools
                .iter()
                .all(|t| (t.policy, &t.key) == (PolicyKind::Allow, &None)),
            "no lists: all allowed"
        );
    }
}
