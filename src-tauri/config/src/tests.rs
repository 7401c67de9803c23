#![allow(clippy::unwrap_used)]
use super::*;

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(Path::new("/home/me/.config/warden/config.toml"), text)
}

#[test]
fn every_default_parses_and_applies() {
    for key in KEYS {
        let value = toml::from_str::<BTreeMap<String, Value>>(&format!("v = {}", key.default))
            .unwrap()
            .remove("v")
            .unwrap();
        (key.apply)(&mut Limits::default(), &value)
            .unwrap_or_else(|e| panic!("default of {}: {e}", key.name));
    }
    let l = Limits::default();
    assert_eq!(l.idle_timeout, Duration::from_secs(50));
    assert_eq!(l.max_message_bytes, 256 << 20);
    assert!(l.stderr_is_activity);
    cross_check(&l, "x").unwrap();
}

#[test]
fn layers_resolve_in_order() {
    let c = parse(
        "[defaults]\nidle_timeout_ms = 20000\nretries = 1\n[servers.rg]\nidle_timeout_ms = 9000\n",
    )
    .unwrap();
    let set = Overrides::parse(&["retries=0", "fallback=rg"]).unwrap();
    let rg = c.limits_for("rg", &set).unwrap();
    assert_eq!(rg.idle_timeout, Duration::from_millis(9000));
    assert_eq!(rg.retries, 0);
    assert_eq!(rg.fallback, Fallback::Rg);
    let other = c.limits_for("other", &Overrides::default()).unwrap();
    assert_eq!(other.idle_timeout, Duration::from_millis(20000));
    assert_eq!(other.retries, 1);
}

#[test]
fn bad_value_names_file_line_key_and_fix() {
    let err = parse("[defaults]\nretries = 1\n\n[servers.rg]\nidle_timeout_ms = 5\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("config.toml:5"), "{err}");
    assert!(err.contains("servers.rg.idle_timeout_ms"), "{err}");
    assert!(err.contains("out of range"), "{err}");
    assert!(err.contains("Fix:"), "{err}");
    let err = parse("[defaults]\ndebug = \"yes\"\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains(":2") && err.contains("true or false"), "{err}");
}

#[test]
fn syntax_error_says_where() {
    let err = parse("[defaults]\nidle_timeout_ms = = 3\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("line 2"), "{err}");
}

#[test]
fn unknown_keys_warn_with_a_suggestion() {
    let c = parse("[defaults]\nidle_timout_ms = 3000\n[ui]\ntheme = 1\n").unwrap();
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("did you mean `idle_timeout_ms`"))
    );
}

#[test]
fn cross_field_rules() {
    let c = parse("[defaults]\nidle_timeout_ms = 90000\nmax_timeout_ms = 60000\n").unwrap();
    let err = c
        .limits_for("x", &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("max_timeout_ms") && err.contains("below idle_timeout_ms"),
        "{err}"
    );
}

#[test]
fn set_errors() {
    assert!(matches!(
        Overrides::parse(&["idle_timeout_ms"]),
        Err(ConfigError::BadSet { .. })
    ));
    let err = Overrides::parse(&["idle_timout_ms=5"])
        .unwrap_err()
        .to_string();
    assert!(err.contains("did you mean `idle_timeout_ms`"), "{err}");
    let err = Overrides::parse(&["max_message_bytes=12"])
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("--set: `max_message_bytes`"), "{err}");
}

#[test]
#[cfg_attr(windows, ignore = "POSIX paths in the test")]
fn clamp_and_roots() {
    let c = parse("[servers.rg]\nclamp = { \"advanced-search\" = { maxResults = 500 } }\nfallback_roots = [\"/src\"]\n").unwrap();
    let l = c.limits_for("rg", &Overrides::default()).unwrap();
    assert_eq!(l.clamp["advanced-search"]["maxResults"], 500.0);
    assert_eq!(l.fallback_roots, vec![PathBuf::from("/src")]);
    assert!(parse("[defaults]\nfallback_roots = [\"rel/dir\"]\n").is_err());
}

#[test]
fn tool_filters_are_globs_and_deny_wins() {
    let c = parse("[servers.fs]\ntools_allow = [\"read_*\", \"list_{dir,files}\"]\ntools_deny = [\"read_secret*\"]\n").unwrap();
    let l = c.limits_for("fs", &Overrides::default()).unwrap();
    let hidden: Vec<_> = ["read_file", "list_dir", "write_file", "read_secrets"]
        .into_iter()
        .filter(|t| {
            matches!(
                crate::policy::policy(t, None, &l),
                crate::policy::Policy::Deny(_)
            )
        })
        .collect();
    assert_eq!(hidden, ["write_file", "read_secrets"]);
    assert!(
        crate::policy::policy("anything", None, &Limits::default()) == crate::policy::Policy::Allow,
        "no lists: every tool is visible"
    );
    let err = parse("[defaults]\ntools_deny = [\"[a\"]\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("tools_deny") && err.contains("bad glob"),
        "{err}"
    );
}

#[test]
fn missing_file_means_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let c = Config::load(&dir.path().join("nope.toml")).unwrap();
    assert_eq!(
        c.limits_for("x", &Overrides::default()).unwrap(),
        Limits::default()
    );
}

#[test]
fn docs_config_md_is_up_to_date() {
    warden_wire::assert_generated(
        "docs/config.md",
        &reference_markdown(),
        "cargo test -p warden-config --lib -- config",
    );
}

#[test]
#[cfg_attr(windows, ignore = "the fixture's roots are POSIX paths")]
fn the_checked_in_v0_1_config_keeps_loading() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/config/config-v0.1.toml");
    let c = Config::load(&path).unwrap();
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let rg = c.limits_for("ripgrep", &Overrides::default()).unwrap();
    assert_eq!(rg.fallback, Fallback::Rg);
    assert_eq!(rg.idle_timeout, Duration::from_millis(45000));
    assert_eq!(rg.clamp["search"]["maxResults"], 200.0);
    assert_eq!(rg.idempotent_tools, ["search", "count-matches"]);
    let ev = c
        .limits_for("everything server", &Overrides::default())
        .unwrap();
    assert_eq!(ev.idle_timeout, Duration::from_millis(20000));
}

#[test]
fn an_oauth_metadata_url_must_be_https_with_a_path() {
    let c = parse("[oauth]\nclient_metadata_url = \"https://example.com/warden.json\"\n").unwrap();
    assert_eq!(
        c.oauth_metadata_url.as_deref(),
        Some("https://example.com/warden.json")
    );
    for bad in [
        "http://example.com/warden.json",
        "https://example.com",
        "https:///x",
    ] {
        let e = parse(&format!("[oauth]\nclient_metadata_url = \"{bad}\"\n"));
        assert!(e.is_err(), "{bad} was taken");
    }
}

#[test]
fn an_oauth_client_id_is_one_printable_word() {
    let c = parse("[servers.github]\noauth_client_id = \"warden-desktop\"\noauth_issuer = \"https://auth.example\"\n").unwrap();
    let limits = c.limits_for("github", &Overrides::default()).unwrap();
    assert_eq!(limits.oauth_client_id.as_deref(), Some("warden-desktop"));
    assert!(parse("[servers.github]\noauth_client_id = \"a b\"\n").is_err());
}

#[test]
fn an_oauth_client_id_without_its_issuer_is_refused() {
    let c = parse("[servers.github]\noauth_client_id = \"warden-desktop\"\n").unwrap();
    let e = c
        .limits_for("github", &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("oauth_issuer"), "{e}");
}

#[test]
fn registry_url_is_read_and_checked() {
    let c = parse("[registry]\nurl = \"https://mirror.example/\"\nmirror = 1\n").unwrap();
    assert_eq!(c.registry_url.as_deref(), Some("https://mirror.example"));
    assert!(
        c.warnings.iter().any(|w| w.contains("registry.mirror")),
        "{:?}",
        c.warnings
    );
    assert_eq!(parse("").unwrap().registry_url, None);
    let e = parse("[registry]\nurl = \"ftp://x\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(":2: `registry.url`") && e.contains("Fix:"),
        "{e}"
    );
    let e = parse("registry = 5\n").unwrap_err().to_string();
    assert!(e.contains("`registry` must be a table"), "{e}");
}

#[test]
fn sets_are_read_with_their_servers() {
    let c = parse("[sets.web]\nservers = [\"github\", \"postgres\"]\n").unwrap();
    assert_eq!(
        c.sets.get("web"),
        Some(&vec!["github".to_owned(), "postgres".to_owned()])
    );
}

#[test]
fn a_set_without_servers_is_refused_with_its_line_and_fix() {
    let e = parse("[defaults]\n\n[sets.web]\nmembers = [\"github\"]\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(":3: `sets.web`") && e.contains("servers = [\"github\""),
        "{e}"
    );
}

#[test]
fn a_set_listing_a_name_twice_is_refused() {
    let e = parse("[sets.web]\nservers = [\"a\", \"a\"]\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("`sets.web.servers` lists \"a\" twice"), "{e}");
}

#[test]
fn a_set_that_is_not_a_table_is_refused() {
    let e = parse("[sets]\nweb = 5\n").unwrap_err().to_string();
    assert!(e.contains("`sets.web` must be a table"), "{e}");
}
