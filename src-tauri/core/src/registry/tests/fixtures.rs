//! One test per case of shared/fixtures/registry/README.md.

use super::*;

#[test]
fn playwright_npm_is_pinned_with_npx_yes() {
    let Some(doc) = server("playwright-mcp.server.json") else {
        return;
    };
    let plan = plan(&doc, &PlanOptions::default()).unwrap();
    assert_eq!(argv(&plan), ["npx", "-y", "@playwright/mcp@0.0.79"]);
}

#[test]
fn playwright_plan_has_no_warnings_env_or_inputs() {
    let Some(doc) = server("playwright-mcp.server.json") else {
        return;
    };
    let plan = plan(&doc, &PlanOptions::default()).unwrap();
    assert_eq!(
        (
            plan.warnings.len(),
            plan.env.len(),
            plan.optional_inputs.len()
        ),
        (0, 0, 0)
    );
}

#[test]
fn playwright_entry_name_is_the_part_after_the_slash() {
    let Some(doc) = server("playwright-mcp.server.json") else {
        return;
    };
    assert_eq!(entry_name(&doc.name, None), "playwright-mcp");
}

#[test]
fn with_package_asks_for_the_positional_and_the_secret() {
    let Some(doc) = server("registry-example-with-package.json") else {
        return;
    };
    let err = plan(&doc, &PlanOptions::default()).unwrap_err();
    assert_eq!(missing_keys(&err), ["API_KEY", "config_path"]);
}

#[test]
fn with_package_refusal_names_the_env_flags_to_pass() {
    let Some(doc) = server("registry-example-with-package.json") else {
        return;
    };
    let message = plan(&doc, &PlanOptions::default()).unwrap_err().to_string();
    assert!(
        message.contains("`--env API_KEY=VALUE`") || message.contains("--env API_KEY=VALUE"),
        "{message}"
    );
    assert!(message.contains("--env config_path=VALUE"), "{message}");
}

#[test]
fn with_package_given_inputs_puts_them_after_the_package() {
    let Some(doc) = server("registry-example-with-package.json") else {
        return;
    };
    let opts = inputs(&[("API_KEY", "k-123"), ("config_path", "/home/u/w.json")]);
    let plan = plan(&doc, &opts).unwrap();
    assert_eq!(
        argv(&plan),
        [
            "npx",
            "-y",
            "@modelcontextprotocol/server-weather@1.0.0",
            "/home/u/w.json",
            "--port",
            "8080"
        ]
    );
}

#[test]
fn with_package_secret_env_is_marked_secret_and_required() {
    let Some(doc) = server("registry-example-with-package.json") else {
        return;
    };
    let opts = inputs(&[("API_KEY", "k-123"), ("config_path", "/w.json")]);
    let plan = plan(&doc, &opts).unwrap();
    let key = env(&plan, "API_KEY");
    assert_eq!(
        (key.secret, key.required, key.value.as_deref(), key.source),
        (true, true, Some("k-123"), ValueSource::User)
    );
}

#[test]
fn with_remote_is_refused_as_not_local_stdio() {
    let Some(doc) = server("registry-example-with-remote.json") else {
        return;
    };
    let err = plan(&doc, &PlanOptions::default()).unwrap_err();
    assert!(matches!(err, RegistryError::RemoteOnly { .. }), "{err:?}");
}

#[test]
fn with_remote_message_says_how_to_add_it_directly() {
    let Some(doc) = server("registry-example-with-remote.json") else {
        return;
    };
    let message = plan(&doc, &PlanOptions::default()).unwrap_err().to_string();
    for part in [
        "not a local stdio server",
        "https://{host}/mcp",
        "Authorization (secret)",
        "add it to your client directly",
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }
}

#[test]
fn github_template_without_a_version_is_refused() {
    let Some(doc) = server("github-mcp-server.server.json") else {
        return;
    };
    let err = plan(&doc, &PlanOptions::default()).unwrap_err();
    assert!(matches!(err, RegistryError::Template { .. }), "{err:?}");
}

#[test]
fn github_template_refusal_says_to_give_a_version() {
    let Some(doc) = server("github-mcp-server.server.json") else {
        return;
    };
    let message = plan(&doc, &PlanOptions::default()).unwrap_err().to_string();
    assert!(
        message.contains("${VERSION}") && message.contains("NAME@VERSION"),
        "{message}"
    );
}

#[test]
fn github_template_with_a_version_is_filled_and_the_optional_token_left_out() {
    let Some(doc) = server("github-mcp-server.server.json") else {
        return;
    };
    let opts = PlanOptions {
        version: Some("0.20.1".into()),
        ..PlanOptions::default()
    };
    let plan = plan(&doc, &opts).unwrap();
    assert_eq!(
        argv(&plan),
        [
            "docker",
            "run",
            "-i",
            "--rm",
            "-p",
            "127.0.0.1:8085:8085",
            "-e",
            "GITHUB_OAUTH_CALLBACK_PORT=8085",
            "ghcr.io/github/github-mcp-server:0.20.1"
        ]
    );
}

#[test]
fn github_left_out_token_is_reported_as_an_optional_secret_input() {
    let Some(doc) = server("github-mcp-server.server.json") else {
        return;
    };
    let opts = PlanOptions {
        version: Some("0.20.1".into()),
        ..PlanOptions::default()
    };
    let plan = plan(&doc, &opts).unwrap();
    let optional: Vec<(&str, bool)> = plan
        .optional_inputs
        .iter()
        .map(|i| (i.key.as_str(), i.secret))
        .collect();
    assert_eq!(optional, [("token", true)]);
}

#[test]
fn github_template_filling_is_flagged() {
    let Some(doc) = server("github-mcp-server.server.json") else {
        return;
    };
    let opts = PlanOptions {
        version: Some("0.20.1".into()),
        ..PlanOptions::default()
    };
    let plan = plan(&doc, &opts).unwrap();
    assert!(plan.has_warning(WarningKind::TemplateFilled), "{plan:?}");
}

#[test]
fn github_token_given_goes_to_a_secret_env_not_the_argv() {
    let Some(doc) = server("github-mcp-server.server.json") else {
        return;
    };
    let mut opts = inputs(&[("token", "ghp_secret")]);
    opts.version = Some("0.20.1".into());
    let plan = plan(&doc, &opts).unwrap();
    assert_eq!(
        argv(&plan),
        [
            "docker",
            "run",
            "-i",
            "--rm",
            "-p",
            "127.0.0.1:8085:8085",
            "-e",
            "GITHUB_OAUTH_CALLBACK_PORT=8085",
            "-e",
            "GITHUB_PERSONAL_ACCESS_TOKEN",
            "ghcr.io/github/github-mcp-server:0.20.1"
        ]
    );
}

#[test]
fn github_token_env_is_secret_with_the_value() {
    let Some(doc) = server("github-mcp-server.server.json") else {
        return;
    };
    let mut opts = inputs(&[("token", "ghp_secret")]);
    opts.version = Some("0.20.1".into());
    let plan = plan(&doc, &opts).unwrap();
    let token = env(&plan, "GITHUB_PERSONAL_ACCESS_TOKEN");
    assert_eq!(
        (token.secret, token.value.as_deref()),
        (true, Some("ghp_secret"))
    );
}

#[test]
fn serena_subcommand_moves_after_the_package() {
    let Some(doc) = server("serena.server.json") else {
        return;
    };
    let plan = plan(&doc, &PlanOptions::default()).unwrap();
    assert_eq!(
        argv(&plan),
        [
            "uvx",
            "-p",
            "3.13",
            "serena-agent==1.5.3",
            "start-mcp-server",
            "--project-from-cwd",
            "--context",
            "desktop-app"
        ]
    );
}

#[test]
fn serena_move_is_flagged() {
    let Some(doc) = server("serena.server.json") else {
        return;
    };
    let plan = plan(&doc, &PlanOptions::default()).unwrap();
    assert!(
        plan.has_warning(WarningKind::RuntimeArgumentsMoved),
        "{plan:?}"
    );
}

#[test]
fn serena_context_default_gives_way_to_the_users_value() {
    let Some(doc) = server("serena.server.json") else {
        return;
    };
    let plan = plan(&doc, &inputs(&[("context", "claude-code")])).unwrap();
    assert_eq!(
        plan.args[plan.args.len() - 2..],
        ["--context", "claude-code"]
    );
}

#[test]
fn seed_airtable_prefers_npm_and_needs_its_key() {
    let Some(doc) = seed(0) else {
        return;
    };
    let err = plan(&doc, &PlanOptions::default()).unwrap_err();
    assert_eq!(missing_keys(&err), ["AIRTABLE_API_KEY"]);
}

#[test]
fn seed_airtable_npm_with_its_key() {
    let Some(doc) = seed(0) else {
        return;
    };
    let plan = plan(&doc, &inputs(&[("AIRTABLE_API_KEY", "pat1.abc")])).unwrap();
    assert_eq!(argv(&plan), ["npx", "-y", "airtable-mcp-server@1.7.2"]);
}

#[test]
fn seed_airtable_oci_passes_the_env_into_the_container() {
    let Some(doc) = seed(0) else {
        return;
    };
    let mut opts = inputs(&[("AIRTABLE_API_KEY", "pat1.abc")]);
    opts.package = Some(1);
    let plan = plan(&doc, &opts).unwrap();
    assert_eq!(
        argv(&plan),
        [
            "docker",
            "run",
            "-i",
            "--rm",
            "-e",
            "AIRTABLE_API_KEY",
            "docker.io/domdomegg/airtable-mcp-server:1.7.2"
        ]
    );
}

#[test]
fn seed_airtable_mcpb_is_refused_naming_the_other_packages() {
    let Some(doc) = seed(1) else {
        return;
    };
    let opts = PlanOptions {
        package: Some(2),
        ..PlanOptions::default()
    };
    let message = plan(&doc, &opts).unwrap_err().to_string();
    for part in [
        "`mcpb`",
        "choose package 0 (npm airtable-mcp-server)",
        "Claude Desktop",
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }
}

#[test]
fn seed_nuget_runs_with_dnx_yes() {
    let Some(doc) = seed(2) else {
        return;
    };
    let plan = plan(&doc, &PlanOptions::default()).unwrap();
    assert_eq!(argv(&plan), ["dnx", "TimeMcpServer@1.0.8", "--yes"]);
}

#[test]
fn seed_pypi_with_runtime_hint_python_runs_with_uvx() {
    let Some(doc) = seed(3) else {
        return;
    };
    let plan = plan(&doc, &PlanOptions::default()).unwrap();
    assert_eq!(argv(&plan), ["uvx", "time-mcp-pypi==1.0.6"]);
}

#[test]
fn seed_pypi_runtime_hint_python_is_flagged() {
    let Some(doc) = seed(3) else {
        return;
    };
    let plan = plan(&doc, &PlanOptions::default()).unwrap();
    assert!(plan.has_warning(WarningKind::RuntimeHint), "{plan:?}");
}

#[test]
fn list_response_reads_servers_meta_and_cursor() {
    let Some(text) = fixture("registry-list-response.example.json") else {
        return;
    };
    let list = parse_list(&text).unwrap();
    let official = list.servers[0].meta.official.clone().unwrap();
    assert_eq!(
        (
            list.servers[0].server.name.as_str(),
            official.status,
            official.is_latest,
            list.next_cursor(),
            list.metadata.count
        ),
        (
            "io.modelcontextprotocol/filesystem",
            Some(ServerStatus::Active),
            true,
            Some("com.example/my-server:1.0.0"),
            Some(10)
        )
    );
}

#[test]
fn list_response_item_without_packages_is_refused_as_nothing_to_install() {
    let Some(text) = fixture("registry-list-response.example.json") else {
        return;
    };
    let list = parse_list(&text).unwrap();
    let err = plan(&list.servers[0].server, &PlanOptions::default()).unwrap_err();
    assert!(matches!(err, RegistryError::NoPackage { .. }), "{err:?}");
}
