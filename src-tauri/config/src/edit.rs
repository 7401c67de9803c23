//! Format-preserving edits of config.toml: one key of `[servers.NAME]` is set, everything
//! else (comments, order, spacing, other tables) stays byte for byte. The file (and its
//! directory) is created when missing; the new text is checked with the same loader the
//! bridges use, written to a uniquely named file beside it and renamed over it, so a
//! bridge's watcher never reads half a file. Each edit holds Warden's lock of the file
//! (`fsutil.rs`, in `$WARDEN_STATE_DIR/locks/`) from before it reads the file until it is
//! replaced, so that two edits at once (two `SetLimit` requests, the tray and the CLI) both
//! land.

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item, Table, Value};

use crate::Config;

#[derive(Debug, thiserror::Error)]
pub enum ConfigEditError {
    #[error("cannot read {}: {source}. Fix: make it readable, or set WARDEN_CONFIG to another file", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not valid TOML, so it was not changed: {message}Fix: correct the syntax, then try again", path.display())]
    Syntax { path: PathBuf, message: String },
    #[error("{} has `{what}` that is not a table; it was not changed. Fix: make it a table like [servers.NAME]", path.display())]
    Shape { path: PathBuf, what: String },
    #[error("the edit would make {} invalid ({problem}); it was not changed", path.display())]
    Invalid { path: PathBuf, problem: String },
    #[error("cannot write {}: {source}. Fix: check the permissions of its directory", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Whether the file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    Changed,
    Unchanged,
}

/// Sets `[servers.<server>] <key> = <value>` in `path`.
pub fn set_server_key(
    path: &Path,
    server: &str,
    key: &str,
    value: impl Into<Value>,
) -> Result<Edit, ConfigEditError> {
    let value = value.into();
    change(path, server, |path, text| {
        edit_text(path, text, server, key, value)
    })
}

/// Adds `add` to and takes `remove` out of the list `<key>` that `server` has in `path` when
/// the file is read (its own, else `[defaults]`'s, else none), and sets that list in
/// `[servers.<server>]`: read and written under the file's lock, so that two changes of one
/// list at once (two grants from the window) both land, where each sending a whole list
/// would drop the other's item.
pub fn edit_server_list(
    path: &Path,
    server: &str,
    key: &str,
    add: &[String],
    remove: &[String],
) -> Result<Edit, ConfigEditError> {
    edit_server_lists(path, server, |_| {
        Ok(vec![ListEdit {
            key: key.to_owned(),
            add: add.to_vec(),
            remove: remove.to_vec(),
        }])
    })
}

/// One list's items added and taken out ([`edit_server_lists`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListEdit {
    pub key: String,
    pub add: Vec<String>,
    pub remove: Vec<String>,
}

/// Several lists of `server` edited at once, in one write under the file's lock: `edits`
/// gets each list as the file holds it then (`lists(key)`: its own, else `[defaults]`'s,
/// else empty) and says what to add and take out of each (a tool's policy moves between
/// `tools_deny`, `tools_ask` and `tools_allow` atomically).
pub fn edit_server_lists(
    path: &Path,
    server: &str,
    edits: impl FnOnce(&dyn Fn(&str) -> Vec<String>) -> Result<Vec<ListEdit>, String>,
) -> Result<Edit, ConfigEditError> {
    change(path, server, |path, text| {
        let invalid = |problem: String| ConfigEditError::Invalid {
            path: path.to_owned(),
            problem,
        };
        let config = Config::parse(path, text).map_err(|e| invalid(e.to_string()))?;
        let list = |key: &str| -> Result<Option<Vec<String>>, ConfigEditError> {
            match config.raw_value(server, key) {
                None => Ok(None),
                Some((toml::Value::Array(a), ..)) => a
                    .iter()
                    .map(|v| v.as_str().map(str::to_owned))
                    .collect::<Option<_>>()
                    .map(Some)
                    .ok_or_else(|| invalid(format!("`{key}` is not a list of strings"))),
                Some((other, ..)) => Err(invalid(format!(
                    "`{key}` is {}, not a list",
                    other.type_str()
                ))),
            }
        };
        let edits = edits(&|key| list(key).ok().flatten().unwrap_or_default()).map_err(invalid)?;
        let mut text = text.to_owned();
        for e in edits {
            let had = list(&e.key)?;
            let mut items = had.clone().unwrap_or_default();
            items.retain(|i| !e.remove.contains(i));
            for a in &e.add {
                if !items.contains(a) {
                    items.push(a.clone());
                }
            }
            if had.is_none() && items.is_empty() {
                continue;
            }
            text = edit_text(
                path,
                &text,
                server,
                &e.key,
                Value::Array(items.into_iter().collect()),
            )?;
        }
        Ok(text)
    })
}

/// Removes `<key>` from `[servers.<server>]` in `path`, so the server gets `[defaults]` or
/// the built-in default again. Nothing else changes.
pub fn remove_server_key(path: &Path, server: &str, key: &str) -> Result<Edit, ConfigEditError> {
    change(path, server, |path, text| {
        remove_text(path, text, server, key)
    })
}

/// Reads `path`, applies `edit`, checks the result with the bridges' loader (the file and
/// `server`'s resolved limits), and replaces the file.
fn change(
    path: &Path,
    server: &str,
    edit: impl FnOnce(&Path, &str) -> Result<String, ConfigEditError>,
) -> Result<Edit, ConfigEditError> {
    // Editors and dotfile managers link config files; edit the file the link points to.
    let path = crate::fsutil::real_path(path);
    let _lock = crate::fsutil::lock(&crate::paths::state_dir(), &path).map_err(|source| {
        ConfigEditError::Write {
            path: path.clone(),
            source,
        }
    })?;
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(ConfigEditError::Read { path, source }),
    };
    let new = edit(&path, &text)?;
    if new == text {
        return Ok(Edit::Unchanged);
    }
    let checked =
        Config::parse(&path, &new).and_then(|c| c.limits_for(server, &Default::default()));
    if let Err(e) = checked {
        return Err(ConfigEditError::Invalid {
            path,
            problem: e.to_string(),
        });
    }
    crate::fsutil::replace(&path, new.as_bytes(), None).map_err(|source| {
        ConfigEditError::Write {
            path: path.clone(),
            source,
        }
    })?;
    Ok(Edit::Changed)
}

fn parse(path: &Path, text: &str) -> Result<DocumentMut, ConfigEditError> {
    text.parse()
        .map_err(|e: toml_edit::TomlError| ConfigEditError::Syntax {
            path: path.to_owned(),
            message: e.to_string(),
        })
}

/// The new text; `text` is not touched outside the one key.
pub fn edit_text(
    path: &Path,
    text: &str,
    server: &str,
    key: &str,
    value: Value,
) -> Result<String, ConfigEditError> {
    let mut doc = parse(path, text)?;
    let shape = |what: &str| ConfigEditError::Shape {
        path: path.to_owned(),
        what: what.to_owned(),
    };
    // Comments at the very end belong before a table added at the end.
    let trailing = doc.trailing().as_str().unwrap_or("").to_owned();
    let mut created = false;
    let root = doc.as_table_mut();
    if !root.contains_key("servers") {
        let mut servers = Table::new();
        // `[servers.NAME]` alone, without an empty `[servers]` header.
        servers.set_implicit(true);
        root.insert("servers", Item::Table(servers));
    }
    let servers = root.get_mut("servers").ok_or_else(|| shape("servers"))?;
    match servers {
        Item::Table(servers) => {
            if !servers.contains_key(server) {
                servers.insert(server, Item::Table(Table::new()));
                created = true;
            }
            match servers.get_mut(server) {
                Some(Item::Table(t)) => {
                    if created && !trailing.is_empty() {
                        t.decor_mut().set_prefix(trailing);
                    }
                    set(t, key, value)
                }
                Some(Item::Value(Value::InlineTable(t))) => {
                    let existing = t.get_mut(key).map(|v| {
                        let decor = v.decor().clone();
                        (v, decor)
                    });
                    match existing {
                        Some((v, decor)) => {
                            *v = value;
                            *v.decor_mut() = decor;
                        }
                        None => {
                            t.insert(key, value);
                        }
                    }
                }
                _ => return Err(shape(&format!("servers.{server}"))),
            }
        }
        Item::Value(Value::InlineTable(servers)) => {
            if !servers.contains_key(server) {
                servers.insert(server, Value::InlineTable(Default::default()));
            }
            match servers.get_mut(server) {
                Some(Value::InlineTable(t)) => match t.get_mut(key) {
                    Some(v) => {
                        let decor = v.decor().clone();
                        *v = value;
                        *v.decor_mut() = decor;
                    }
                    None => {
                        t.insert(key, value);
                    }
                },
                _ => return Err(shape(&format!("servers.{server}"))),
            }
        }
        _ => return Err(shape("servers")),
    }
    if created {
        doc.set_trailing("");
    }
    Ok(doc.to_string())
}

/// The new text without `[servers.<server>] <key>`; unchanged when it is not there.
pub fn remove_text(
    path: &Path,
    text: &str,
    server: &str,
    key: &str,
) -> Result<String, ConfigEditError> {
    let mut doc = parse(path, text)?;
    let table = doc
        .get_mut("servers")
        .and_then(|s| s.get_mut(server))
        .and_then(Item::as_table_like_mut);
    if let Some(t) = table {
        t.remove(key);
    }
    Ok(doc.to_string())
}

fn set(table: &mut Table, key: &str, value: Value) {
    match table.get_mut(key) {
        Some(Item::Value(v)) => {
            // Keep the comment after the value and the spacing around it.
            let decor = v.decor().clone();
            *v = value;
            *v.decor_mut() = decor;
        }
        Some(item) => *item = Item::Value(value),
        None => {
            table.insert(key, Item::Value(value));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn edit(text: &str, server: &str, key: &str, on: bool) -> String {
        edit_text(Path::new("c.toml"), text, server, key, on.into()).unwrap()
    }

    #[test]
    fn keeps_comments_layout_and_other_tables() {
        let text = "# my settings\n[defaults]\nidle_timeout_ms = 50000 # below the client's 60 s\n\n\
                    [servers.rg]   # ripgrep\nretries = 2\nforce_fallback = false  # flipped by the tray\n\n\
                    [servers.other]\ndebug = true\n";
        let out = edit(text, "rg", "force_fallback", true);
        assert_eq!(
            out,
            text.replace("force_fallback = false", "force_fallback = true")
        );
        let out = edit(&out, "rg", "debug", true);
        assert_eq!(
            out,
            text.replace(
                "force_fallback = false  # flipped by the tray\n",
                "force_fallback = true  # flipped by the tray\ndebug = true\n"
            )
        );
        // A new server gets its own table at the end; nothing else moves.
        let out = edit(text, "new one", "debug", true);
        assert!(out.starts_with(text), "{out}");
        assert!(
            out.ends_with("\n[servers.\"new one\"]\ndebug = true\n"),
            "{out}"
        );
        let cfg = Config::parse(Path::new("c.toml"), &out).unwrap();
        assert!(
            cfg.limits_for("new one", &Default::default())
                .unwrap()
                .debug
        );
    }

    #[test]
    fn creates_what_is_missing_and_handles_inline_tables() {
        assert_eq!(
            edit("", "rg", "force_fallback", true),
            "[servers.rg]\nforce_fallback = true\n"
        );
        assert_eq!(
            edit("# only a comment\n", "rg", "debug", false),
            "# only a comment\n[servers.rg]\ndebug = false\n"
        );
        assert_eq!(
            edit(
                "servers = { rg = { debug = false } } # inline\n",
                "rg",
                "debug",
                true
            ),
            "servers = { rg = { debug = true } } # inline\n"
        );
        assert_eq!(
            edit("[servers]\nrg = { retries = 1 }\n", "rg", "debug", true),
            "[servers]\nrg = { retries = 1 , debug = true }\n"
        );
        let err = edit_text(
            Path::new("c.toml"),
            "servers = 3\n",
            "rg",
            "debug",
            true.into(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("not a table"), "{err}");
        let err = edit_text(
            Path::new("c.toml"),
            "[servers\n",
            "rg",
            "debug",
            true.into(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("not valid TOML, so it was not changed"),
            "{err}"
        );
    }

    #[test]
    fn removing_a_key_keeps_everything_else() {
        let text = "[servers.rg]  # ripgrep\nretries = 5 # more\ndebug = true\n\n[servers.other]\nretries = 1\n";
        let out = remove_text(Path::new("c.toml"), text, "rg", "retries").unwrap();
        assert_eq!(
            out,
            "[servers.rg]  # ripgrep\ndebug = true\n\n[servers.other]\nretries = 1\n"
        );
        // Absent keys and servers: nothing changes.
        assert_eq!(
            remove_text(Path::new("c.toml"), text, "rg", "backoff_ms").unwrap(),
            text
        );
        assert_eq!(
            remove_text(Path::new("c.toml"), text, "nope", "retries").unwrap(),
            text
        );
    }

    #[test]
    fn writes_atomically_and_refuses_to_write_an_invalid_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("config.toml");
        assert_eq!(
            set_server_key(&path, "rg", "debug", true).unwrap(),
            Edit::Changed
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[servers.rg]\ndebug = true\n"
        );
        assert_eq!(
            set_server_key(&path, "rg", "debug", true).unwrap(),
            Edit::Unchanged
        );
        // A value the loader refuses is never written.
        let before = std::fs::read_to_string(&path).unwrap();
        let err = set_server_key(&path, "rg", "debug", "yes")
            .unwrap_err()
            .to_string();
        assert!(err.contains("would make"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file is left behind");
    }
}
