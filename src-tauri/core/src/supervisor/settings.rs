//! The limits form: every config key of a server with its effective value, where it comes
//! from and its default; and the conversion of the UI's JSON values into TOML for
//! [`config_edit`](super::config_edit).

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::api::{LimitSource, LimitValue, LimitsReport};
use crate::config::{Config, KEYS, Origin};

/// The report for `server` from the config file at `path` (`None`: defaults only).
pub fn limits(path: Option<&Path>, server: &str) -> LimitsReport {
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
            }
        })
        .collect();
    let home = crate::paths::home_dir();
    LimitsReport {
        server: server.to_owned(),
        config: path.map(Path::to_owned),
        keys,
        sandbox_hidden: sandbox_hidden(path, config.as_ref(), server),
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
    crate::bridge::sandbox::Places::of_this_process(path, server, &[]).listed_hidden(&limits)
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
}
