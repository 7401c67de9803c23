//! One test per case of tests/fixtures/registry/README.md, on the project's own documents.

use super::*;

#[test]
fn minimal_npm_is_pinned_with_npx_yes() {
    let doc = server("notes-server.server.json");
    let plan = plan(&doc, &PlanOptions::default()).unwrap();
    assert_eq!(argv(&plan), ["npx", "-y", "@example/notes-mcp@0.4.2"]);
}

#[test]
fn minimal_npm_plan_has_no_warnings_env_or_inputs() {
    let doc = server("notes-server.server.json");
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
fn minimal_npm_entry_name_is_the_part_after_the_slash() {
    let doc = server("notes-server.server.json");
    assert_eq!(entry_name(&doc.name, None), "notes-server");
}

#[test]
fn with_package_asks_for_the_positional_and_the_secret() {
    let doc = server("calendar-sync.server.json");
    let err = plan(&doc, &PlanOptions::default()).unwrap_err();
    assert_eq!(missing_keys(&err), ["CALENDAR_TOKEN", "calendar_dir"]);
}

#[test]
fn with_package_refusal_names_the_env_flags_to_pass() {
    let doc = server("calendar-sync.server.json");
    let message = plan(&doc, &PlanOptions::default()).unwrap_err().to_string();
    assert!(message.contains("--env CALENDAR_TOKEN=VALUE"), "{message}");
    assert!(message.contains("--env calendar_dir=VALUE"), "{message}");
}

#[test]
fn with_package_given_inputs_puts_them_after_the_package() {
    let doc = server("calendar-sync.server.json");
    let opts = inputs(&[("CALENDAR_TOKEN", "k-123"), ("calendar_dir", "/home/u/cal")]);
    let plan = plan(&doc, &opts).unwrap();
    assert_eq!(
        argv(&plan),
        [
            "npx",
            "-y",
            "@example/calendar-sync-mcp@2.3.0",
            "/home/u/cal",
            "--port",
            "7411"
        ]
    );
}

#[test]
fn with_package_secret_env_is_marked_secret_and_required() {
    let doc = server("calendar-sync.server.json");
    let opts = inputs(&[("CALENDAR_TOKEN", "k-123"), ("calendar_dir", "/cal")]);
    let plan = plan(&doc, &opts).unwrap();
    let key = env(&plan, "CALENDAR_TOKEN");
    assert_eq!(
        (key.secret, key.required, key.value.as_deref(), key.source),
        (true, true, Some("k-123"), ValueSource::User)
    );
}

/// `warden install` takes the remote-only path (`plan_remote`): the URL's `{region}` filled
/// with its default, the secret header sent from a variable named after it, asked for.
#[test]
fn with_remote_plans_the_bridge_with_its_header_from_a_variable() {
    let doc = server("ticket-desk.server.json");
    let err = plan_remote(&doc, &PlanOptions::default()).unwrap_err();
    match &err {
        RegistryError::MissingInputs { inputs, .. } => {
            assert_eq!(inputs.len(), 1, "{inputs:?}");
            assert_eq!(
                (inputs[0].key.as_str(), inputs[0].secret),
                ("MCP_HEADER_AUTHORIZATION", true)
            );
        }
        other => panic!("{other:?}"),
    }
    let plan = plan_remote(&doc, &inputs(&[("MCP_HEADER_AUTHORIZATION", "Bearer t-1")])).unwrap();
    assert_eq!(
        (
            plan.url.as_str(),
            plan.version.as_deref(),
            plan.transport.as_str()
        ),
        (
            "https://eu.tickets.example.com/mcp",
            Some("5.0.1"),
            "streamable-http"
        )
    );
    assert_eq!(plan.headers, ["Authorization=MCP_HEADER_AUTHORIZATION"]);
    let auth = &plan.env[0];
    assert_eq!(
        (auth.name.as_str(), auth.secret, auth.value.as_deref()),
        ("MCP_HEADER_AUTHORIZATION", true, Some("Bearer t-1"))
    );
    let plan = plan_remote(
        &doc,
        &inputs(&[("MCP_HEADER_AUTHORIZATION", "x"), ("region", "us")]),
    )
    .unwrap();
    assert_eq!(plan.url, "https://us.tickets.example.com/mcp");
}

#[test]
fn with_remote_is_refused_as_not_local_stdio() {
    let doc = server("ticket-desk.server.json");
    let err = plan(&doc, &PlanOptions::default()).unwrap_err();
    assert!(matches!(err, RegistryError::RemoteOnly { .. }), "{err:?}");
}

#[test]
fn with_remote_message_says_how_to_add_it_directly() {
    let doc = server("ticket-desk.server.json");
    let message = plan(&doc, &PlanOptions::default()).unwrap_err().to_string();
    for part in [
        "not a local stdio server",
        "https://{region}.tickets.example.com/mcp",
        "Authorization (secret)",
        "add it to your client directly",
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }
}

#[test]
fn template_oci_template_without_a_version_is_refused() {
    let doc = server("issue-tracker.server.json");
    let err = plan(&doc, &PlanOptions::default()).unwrap_err();
    assert!(matches!(err, RegistryError::Template { .. }), "{err:?}");
}

#[test]
fn template_oci_template_refusal_says_to_give_a_version() {
    let doc = server("issue-tracker.server.json");
    let message = plan(&doc, &PlanOptions::default()).unwrap_err().to_string();
    assert!(
        message.contains("${VERSION}") && message.contains("NAME@VERSION"),
        "{message}"
    );
}

#[test]
fn template_oci_template_with_a_version_is_filled_and_the_optional_token_left_out() {
    let doc = server("issue-tracker.server.json");
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
            "127.0.0.1:9300:9300",
            "-e",
            "TRACKER_CALLBACK_PORT=9300",
            "ghcr.io/example/issue-tracker-mcp:0.20.1"
        ]
    );
}

#[test]
fn template_oci_left_out_token_is_reported_as_an_optional_secret_input() {
    let doc = server("issue-tracker.server.json");
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
    assert_eq!(optional, [("api_token", true)]);
}

#[test]
fn template_oci_template_filling_is_flagged() {
    let doc = server("issue-tracker.server.json");
    let opts = PlanOptions {
        version: Some("0.20.1".into()),
        ..PlanOptions::default()
    };
    let plan = plan(&doc, &opts).unwrap();
    assert!(plan.has_warning(WarningKind::TemplateFilled), "{plan:?}");
}

#[test]
fn template_oci_token_given_goes_to_a_secret_env_not_the_argv() {
    let doc = server("issue-tracker.server.json");
    let mut opts = inputs(&[("api_token", "tok_secret")]);
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
            "127.0.0.1:9300:9300",
            "-e",
            "TRACKER_CALLBACK_PORT=9300",
            "-e",
            "TRACKER_API_TOKEN",
            "ghcr.io/example/issue-tracker-mcp:0.20.1"
        ]
    );
}

#[test]
fn template_oci_token_env_is_secret_with_the_value() {
    let doc = server("issue-tracker.server.json");
    let mut opts = inputs(&[("api_token", "tok_secret")]);
    opts.version = Some("0.20.1".into());
    let plan = plan(&doc, &opts).unwrap();
    let token = env(&plan, "TRACKER_API_TOKEN");
    assert_eq!(
        (token.secret, token.value.as_deref()),
        (true, Some("tok_secret"))
    );
}

#[test]
fn uvx_subcommand_moves_after_the_package() {
    let doc = server("code-indexer.server.json");
    let plan = plan(&doc, &PlanOptions::default()).unwrap();
    assert_eq!(
        argv(&plan),
        [
            "uvx",
            "--python",
            "3.12",
            "code-indexer-mcp==3.1.0",
            "serve",
            "--watch",
            "--profile",
            "editor"
        ]
    );
}

#[test]
fn uvx_move_is_flagged() {
    let doc = server("code-indexer.server.json");
    let plan = plan(&doc, &PlanOptions::default()).unwrap();
    assert!(
        plan.has_warning(WarningKind::RuntimeArgumentsMoved),
        "{plan:?}"
    );
}

#[test]
fn uvx_profile_default_gives_way_to_the_users_value() {
    let doc = server("code-indexer.server.json");
    let plan = plan(&doc, &inputs(&[("profile", "review")])).unwrap();
    assert_eq!(plan.args[plan.args.len() - 2..], ["--profile", "review"]);
}

#[test]
fn seed_multi_prefers_npm_and_needs_its_key() {
    let doc = seed(0);
    let err = plan(&doc, &PlanOptions::default()).unwrap_err();
    assert_eq!(missing_keys(&err), ["SHEETS_API_KEY"]);
}

#[test]
fn seed_multi_npm_with_its_key() {
    let doc = seed(0);
    let plan = plan(&doc, &inputs(&[("SHEETS_API_KEY", "key-1")])).unwrap();
    assert_eq!(argv(&plan), ["npx", "-y", "spreadsheet-bridge-mcp@2.0.0"]);
}

#[test]
fn seed_multi_oci_passes_the_env_into_the_container() {
    let doc = seed(0);
    let mut opts = inputs(&[("SHEETS_API_KEY", "key-1")]);
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
            "SHEETS_API_KEY",
            "docker.io/example/spreadsheet-bridge:2.0.0"
        ]
    );
}

#[test]
fn seed_multi_mcpb_is_refused_naming_the_other_packages() {
    let doc = seed(1);
    let opts = PlanOptions {
        package: Some(2),
        ..PlanOptions::default()
    };
    let message = plan(&doc, &opts).unwrap_err().to_string();
    for part in [
        "`mcpb`",
        "choose package 0 (npm spreadsheet-bridge-mcp)",
        "Claude Desktop",
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }
}

#[test]
fn seed_nuget_runs_with_dnx_yes() {
    let doc = seed(2);
    let plan = plan(&doc, &PlanOptions::default()).unwrap();
    assert_eq!(argv(&plan), ["dnx", "Example.ClockServer@1.2.0", "--yes"]);
}

#[test]
fn seed_pypi_with_runtime_hint_python_runs_with_uvx() {
    let doc = seed(3);
    let plan = plan(&doc, &PlanOptions::default()).unwrap();
    assert_eq!(argv(&plan), ["uvx", "example-clock-mcp==0.3.0"]);
}

#[test]
fn seed_pypi_runtime_hint_python_is_flagged() {
    let doc = seed(3);
    let plan = plan(&doc, &PlanOptions::default()).unwrap();
    assert!(plan.has_warning(WarningKind::RuntimeHint), "{plan:?}");
}

#[test]
fn list_response_reads_servers_meta_and_cursor() {
    let text = fixture("list-response.json");
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
            "io.example/archive-search",
            Some(ServerStatus::Active),
            true,
            Some("io.example/legacy-notes:0.1.0"),
            Some(2)
        )
    );
}

#[test]
fn list_response_item_without_packages_is_refused_as_nothing_to_install() {
    let text = fixture("list-response.json");
    let list = parse_list(&text).unwrap();
    let err = plan(&list.servers[0].server, &PlanOptions::default()).unwrap_err();
    assert!(matches!(err, RegistryError::NoPackage { .. }), "{err:?}");
}

#[test]
fn with_package_optional_env_keeps_its_default() {
    let doc = server("calendar-sync.server.json");
    let opts = inputs(&[("CALENDAR_TOKEN", "k-123"), ("calendar_dir", "/cal")]);
    let plan = plan(&doc, &opts).unwrap();
    let interval = env(&plan, "SYNC_INTERVAL");
    assert_eq!(
        (
            interval.secret,
            interval.required,
            interval.default.as_deref()
        ),
        (false, false, Some("300"))
    );
}

#[test]
fn seed_multi_second_version_pins_its_own_version() {
    let doc = seed(1);
    let plan = plan(&doc, &inputs(&[("SHEETS_API_KEY", "key-1")])).unwrap();
    assert_eq!(argv(&plan), ["npx", "-y", "spreadsheet-bridge-mcp@2.0.1"]);
}

#[test]
fn list_response_reads_a_deprecated_entry_with_its_message() {
    let list = parse_list(&fixture("list-response.json")).unwrap();
    let official = list.servers[1].meta.official.clone().unwrap();
    assert_eq!(
        (official.status, official.status_message.as_deref()),
        (
            Some(ServerStatus::Deprecated),
            Some("use io.example/notes-server")
        )
    );
}
