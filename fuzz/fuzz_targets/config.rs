//! config.toml loader: arbitrary text → `Config::parse`, then the limits of every server,
//! with and without `--set` overrides taken from the input too.
//!
//! Invariants:
//! - no panic;
//! - every error renders (Display) as a non-empty message, and a syntax error exactly when
//!   the `toml` crate itself refuses the text;
//! - every value is validated at load time: once `Config::parse` accepted a file, the
//!   limits of any server only fail on the cross-key checks (origin "default"), never on a
//!   value of the file;
//! - line numbers in messages point into the file.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use warden_config::{Config, ConfigError, Origin, Overrides};

fn check_error(e: &ConfigError) -> String {
    let shown = e.to_string();
    assert!(!shown.trim().is_empty(), "empty message for {e:?}");
    shown
}

fuzz_target!(|data: &[u8]| {
    let Ok(all) = std::str::from_utf8(data) else {
        return;
    };
    // Lines after a `\0--set\0` marker are `--set` items (KEY=VALUE), the rest is the file.
    let (text, sets) = all.split_once("\0--set\0").unwrap_or((all, ""));
    let path = Path::new("/fuzz/warden/config.toml");
    let lines = text.matches('\n').count() + 1;
    let toml_ok = toml::from_str::<toml::Table>(text).is_ok();
    let config = match Config::parse(path, text) {
        Ok(c) => c,
        Err(e) => {
            let shown = check_error(&e);
            match &e {
                ConfigError::Syntax { .. } => {
                    assert!(!toml_ok, "TOML the toml crate reads: {shown}")
                }
                ConfigError::Invalid {
                    origin: Origin::File { line, .. },
                    ..
                } => assert!(
                    *line >= 1 && *line <= lines,
                    "line {line} of {lines}: {shown}"
                ),
                other => panic!("unexpected error kind from parse: {other:?}"),
            }
            return;
        }
    };
    assert!(toml_ok, "Config::parse accepted what toml refuses");
    for w in &config.warnings {
        assert!(!w.trim().is_empty());
    }
    let items: Vec<&str> = sets.split('\n').filter(|s| !s.is_empty()).collect();
    let overrides = match Overrides::parse(&items) {
        Ok(o) => Some(o),
        Err(e) => {
            check_error(&e);
            None
        }
    };
    let names: Vec<String> = config
        .server_names()
        .map(str::to_owned)
        .chain(["not-configured".to_owned()])
        .collect();
    for name in &names {
        for o in [Some(Overrides::default()), overrides.clone()]
            .into_iter()
            .flatten()
        {
            match config.limits_for(name, &o) {
                Ok(limits) => {
                    assert!(limits.max_timeout >= limits.idle_timeout);
                    assert!(limits.max_backoff >= limits.backoff);
                    assert!(limits.max_message_bytes >= 1024);
                }
                Err(e) => {
                    let shown = check_error(&e);
                    assert!(
                        matches!(
                            e,
                            ConfigError::Invalid {
                                origin: Origin::Default,
                                ..
                            }
                        ),
                        "a value of the file or --set failed only now: {shown}"
                    );
                }
            }
        }
    }
});
