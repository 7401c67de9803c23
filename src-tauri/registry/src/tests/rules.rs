//! One test per rule, on documents written here.

use serde_json::json;

use super::*;

/// A server with one package.
fn one(package: serde_json::Value) -> ServerJson {
    doc(json!({"name": "io.example/srv", "version": "1.0.0", "packages": [package]}))
}

fn npm(version: &str) -> ServerJson {
    one(
        json!({"registryType": "npm", "identifier": "srv", "version": version,
               "transport": {"type": "stdio"}}),
    )
}

fn oci(extra: serde_json::Value) -> ServerJson {
    let mut p = json!({"registryType": "oci", "identifier": "ghcr.io/ex/srv:1.0.0",
                       "runtimeHint": "docker", "transport": {"type": "stdio"}});
    p.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    one(p)
}

fn default_plan(doc: &ServerJson) -> Result<InstallPlan, RegistryError> {
    plan(doc, &PlanOptions::default())
}

#[test]
fn a_version_range_is_refused() {
    let err = default_plan(&npm("^1.2.3")).unwrap_err();
    assert!(
        matches!(&err, RegistryError::VersionNotExact { version, .. } if version == "^1.2.3"),
        "{err:?}"
    );
}

#[test]
fn latest_as_a_version_is_refused_saying_so() {
    let message = default_plan(&npm("latest")).unwrap_err().to_string();
    assert!(
        message.contains("`latest`") && message.contains("exact version"),
        "{message}"
    );
}

#[test]
fn a_partial_npm_version_is_refused() {
    let err = default_plan(&npm("1.2")).unwrap_err();
    assert!(
        matches!(err, RegistryError::VersionNotExact { .. }),
        "{err:?}"
    );
}

#[test]
fn a_package_without_a_version_is_refused_as_unpinned() {
    let doc = one(json!({"registryType": "pypi", "identifier": "srv"}));
    let err = default_plan(&doc).unwrap_err();
    assert!(matches!(err, RegistryError::Unpinned { .. }), "{err:?}");
}

#[test]
fn an_image_tagged_latest_is_refused() {
    let doc = one(json!({"registryType": "oci", "identifier": "ghcr.io/ex/srv:latest"}));
    let err = default_plan(&doc).unwrap_err();
    assert!(
        matches!(err, RegistryError::VersionNotExact { .. }),
        "{err:?}"
    );
}

#[test]
fn an_image_without_a_tag_gets_the_package_version() {
    let doc = one(
        json!({"registryType": "oci", "identifier": "ghcr.io/ex/srv",
                         "version": "2.0.1", "transport": {"type": "stdio"}}),
    );
    let plan = default_plan(&doc).unwrap();
    assert_eq!(
        argv(&plan),
        ["docker", "run", "-i", "--rm", "ghcr.io/ex/srv:2.0.1"]
    );
}

#[test]
fn an_image_by_digest_is_kept_as_it_is() {
    let doc = one(
        json!({"registryType": "oci", "identifier": "ghcr.io/ex/srv@sha256:abc1",
                         "transport": {"type": "stdio"}}),
    );
    let plan = default_plan(&doc).unwrap();
    assert_eq!(
        (
            plan.args.last().unwrap().as_str(),
            plan.package.version.as_str()
        ),
        ("ghcr.io/ex/srv@sha256:abc1", "sha256:abc1")
    );
}

#[test]
fn run_i_rm_repeated_in_oci_runtime_arguments_is_dropped() {
    let doc = oci(json!({"runtimeArguments": [
        {"type": "positional", "value": "run"},
        {"type": "named", "name": "-i"},
        {"type": "named", "name": "--rm"},
        {"type": "named", "name": "-v", "value": "/data:/data"}
    ]}));
    let plan = default_plan(&doc).unwrap();
    assert_eq!(
        argv(&plan),
        [
            "docker",
            "run",
            "-i",
            "--rm",
            "-v",
            "/data:/data",
            "ghcr.io/ex/srv:1.0.0"
        ]
    );
}

#[test]
fn run_i_rm_dropping_is_flagged() {
    let doc = oci(json!({"runtimeArguments": [{"type": "positional", "value": "run -i --rm"}]}));
    let plan = default_plan(&doc).unwrap();
    assert!(
        plan.has_warning(WarningKind::RunnerFlagsDropped),
        "{plan:?}"
    );
}

#[test]
fn a_docker_tty_flag_is_dropped_and_flagged() {
    let doc = oci(json!({"runtimeArguments": [{"type": "named", "name": "-it"}]}));
    let plan = default_plan(&doc).unwrap();
    assert_eq!(
        (plan.args.len(), plan.has_warning(WarningKind::TtyDropped)),
        (4, true)
    );
}

#[test]
fn an_mcpb_only_server_is_refused_as_unsupported() {
    let doc = one(
        json!({"registryType": "mcpb", "identifier": "https://ex.com/srv.mcpb",
                         "fileSha256": "00", "transport": {"type": "stdio"}}),
    );
    let err = default_plan(&doc).unwrap_err();
    assert!(
        matches!(&err, RegistryError::UnsupportedPackage { package, .. } if package.registry_type == "mcpb"),
        "{err:?}"
    );
}

#[test]
fn an_unknown_package_type_is_refused_saying_which_types_run() {
    let doc = one(json!({"registryType": "cargo", "identifier": "srv", "version": "1.0.0"}));
    let message = default_plan(&doc).unwrap_err().to_string();
    assert!(
        message.contains("`cargo`") && message.contains("npm (npx), pypi (uvx)"),
        "{message}"
    );
}

#[test]
fn automatic_choice_prefers_npm_over_an_earlier_pypi() {
    let doc = doc(
        json!({"name": "io.example/srv", "version": "1.0.0", "packages": [
            {"registryType": "pypi", "identifier": "srv", "version": "1.0.0", "transport": {"type": "stdio"}},
            {"registryType": "npm", "identifier": "srv", "version": "1.0.0", "transport": {"type": "stdio"}}
        ]}),
    );
    assert_eq!(default_plan(&doc).unwrap().package.index, 1);
}

#[test]
fn a_chosen_index_out_of_range_is_refused() {
    let opts = PlanOptions {
        package: Some(3),
        ..PlanOptions::default()
    };
    let err = plan(&npm("1.0.0"), &opts).unwrap_err();
    assert!(
        matches!(err, RegistryError::NoSuchPackage { count: 1, .. }),
        "{err:?}"
    );
}

#[test]
fn a_package_served_over_http_is_refused_as_not_stdio() {
    let doc = one(
        json!({"registryType": "npm", "identifier": "srv", "version": "1.0.0",
                         "transport": {"type": "streamable-http", "url": "http://localhost:{port}/mcp"}}),
    );
    let err = default_plan(&doc).unwrap_err();
    assert!(matches!(err, RegistryError::NotStdio { .. }), "{err:?}");
}

#[test]
fn a_package_without_transport_is_assumed_stdio_and_flagged() {
    let doc = one(json!({"registryType": "npm", "identifier": "srv", "version": "1.0.0"}));
    let plan = default_plan(&doc).unwrap();
    assert!(plan.has_warning(WarningKind::NoTransport), "{plan:?}");
}

#[test]
fn runtime_arguments_for_a_foreign_runtime_hint_are_refused() {
    let doc = one(
        json!({"registryType": "pypi", "identifier": "srv", "version": "1.0.0",
                         "runtimeHint": "python", "transport": {"type": "stdio"},
                         "runtimeArguments": [{"type": "named", "name": "-m", "value": "srv"}]}),
    );
    let err = default_plan(&doc).unwrap_err();
    assert!(
        matches!(err, RegistryError::ForeignRuntimeArguments { .. }),
        "{err:?}"
    );
}

#[test]
fn nuget_package_arguments_follow_a_double_dash() {
    let doc = one(
        json!({"registryType": "nuget", "identifier": "Knapcode.SampleMcpServer",
                         "version": "0.4.0-beta", "transport": {"type": "stdio"},
                         "packageArguments": [{"type": "positional", "value": "mcp"},
                                              {"type": "positional", "value": "start"}]}),
    );
    let plan = default_plan(&doc).unwrap();
    assert_eq!(
        argv(&plan),
        [
            "dnx",
            "Knapcode.SampleMcpServer@0.4.0-beta",
            "--yes",
            "--",
            "mcp",
            "start"
        ]
    );
}

#[test]
fn npx_runtime_arguments_go_before_the_package() {
    let doc = one(
        json!({"registryType": "npm", "identifier": "srv", "version": "1.0.0",
                         "runtimeHint": "npx", "transport": {"type": "stdio"},
                         "runtimeArguments": [{"type": "named", "name": "--node-options=", "value": "--max-old-space-size=512"}],
                         "packageArguments": [{"type": "named", "name": "--mode", "value": "stdio"}]}),
    );
    let plan = default_plan(&doc).unwrap();
    assert_eq!(
        argv(&plan),
        [
            "npx",
            "-y",
            "--node-options=--max-old-space-size=512",
            "srv@1.0.0",
            "--mode",
            "stdio"
        ]
    );
}

#[test]
fn a_named_argument_without_value_or_description_is_a_bare_flag() {
    let doc = one(
        json!({"registryType": "npm", "identifier": "srv", "version": "1.0.0",
                         "transport": {"type": "stdio"},
                         "packageArguments": [{"type": "named", "name": "--stdio"}]}),
    );
    assert_eq!(
        default_plan(&doc).unwrap().args,
        ["-y", "srv@1.0.0", "--stdio"]
    );
}

#[test]
fn a_required_named_argument_without_value_is_a_required_input() {
    let doc = one(
        json!({"registryType": "npm", "identifier": "srv", "version": "1.0.0",
                         "transport": {"type": "stdio"},
                         "packageArguments": [{"type": "named", "name": "--workspace", "isRequired": true}]}),
    );
    let err = default_plan(&doc).unwrap_err();
    assert_eq!(missing_keys(&err), ["workspace"]);
}

#[test]
fn an_argument_variable_is_filled_from_the_users_value() {
    let doc = one(
        json!({"registryType": "npm", "identifier": "srv", "version": "1.0.0",
                         "transport": {"type": "stdio"},
                         "packageArguments": [{"type": "named", "name": "--mount",
                             "value": "src={source},dst=/data",
                             "variables": {"source": {"isRequired": true}}}]}),
    );
    let plan = plan(&doc, &inputs(&[("source", "/home/u")])).unwrap();
    assert_eq!(plan.args[2..], ["--mount", "src=/home/u,dst=/data"]);
}

#[test]
fn an_argument_variable_default_is_used_when_nobody_gives_one() {
    let doc = one(
        json!({"registryType": "npm", "identifier": "srv", "version": "1.0.0",
                         "transport": {"type": "stdio"},
                         "packageArguments": [{"type": "positional", "value": "--host={host}",
                             "variables": {"host": {"default": "localhost"}}}]}),
    );
    assert_eq!(default_plan(&doc).unwrap().args[2], "--host=localhost");
}

#[test]
fn a_placeholder_without_a_variable_stays_and_is_flagged() {
    let doc = one(
        json!({"registryType": "npm", "identifier": "srv", "version": "1.0.0",
                         "transport": {"type": "stdio"},
                         "packageArguments": [{"type": "positional", "value": "{unknown}"}]}),
    );
    let plan = default_plan(&doc).unwrap();
    assert_eq!(
        (
            plan.args[2].as_str(),
            plan.has_warning(WarningKind::Placeholder)
        ),
        ("{unknown}", true)
    );
}

#[test]
fn a_value_outside_the_choices_is_refused() {
    let doc = one(
        json!({"registryType": "npm", "identifier": "srv", "version": "1.0.0",
                         "transport": {"type": "stdio"},
                         "environmentVariables": [{"name": "MODE", "choices": ["a", "b"]}]}),
    );
    let err = plan(&doc, &inputs(&[("MODE", "c")])).unwrap_err();
    assert!(matches!(err, RegistryError::NotAChoice { .. }), "{err:?}");
}

#[test]
fn an_env_default_is_the_value_when_nobody_gives_one() {
    let doc = one(
        json!({"registryType": "npm", "identifier": "srv", "version": "1.0.0",
                         "transport": {"type": "stdio"},
                         "environmentVariables": [{"name": "LEVEL", "default": "info"}]}),
    );
    let plan = default_plan(&doc).unwrap();
    let level = env(&plan, "LEVEL");
    assert_eq!(
        (level.value.as_deref(), level.source),
        (Some("info"), ValueSource::Default)
    );
}

#[test]
fn an_optional_env_without_value_stays_unset() {
    let doc = one(
        json!({"registryType": "npm", "identifier": "srv", "version": "1.0.0",
                         "transport": {"type": "stdio"},
                         "environmentVariables": [{"name": "DEBUG"}]}),
    );
    let plan = default_plan(&doc).unwrap();
    assert_eq!(env(&plan, "DEBUG").source, ValueSource::Unset);
}

#[test]
fn a_value_nobody_declared_becomes_an_extra_env_and_is_flagged() {
    let plan = plan(&npm("1.0.0"), &inputs(&[("HTTPS_PROXY", "http://p:3128")])).unwrap();
    let extra = env(&plan, "HTTPS_PROXY");
    assert_eq!(
        (
            extra.declared,
            plan.has_warning(WarningKind::UndeclaredInput)
        ),
        (false, true)
    );
}

#[test]
fn a_secret_in_the_arguments_is_flagged() {
    let doc = one(
        json!({"registryType": "npm", "identifier": "srv", "version": "1.0.0",
                         "transport": {"type": "stdio"},
                         "packageArguments": [{"type": "named", "name": "--token", "value": "{t}",
                             "variables": {"t": {"isSecret": true, "isRequired": true}}}]}),
    );
    let plan = plan(&doc, &inputs(&[("t", "s3cret")])).unwrap();
    assert!(plan.has_warning(WarningKind::SecretInArguments), "{plan:?}");
}

#[test]
fn a_version_template_takes_the_documents_own_version() {
    let doc = doc(
        json!({"name": "io.example/srv", "version": "3.1.4", "packages": [
            {"registryType": "oci", "identifier": "ghcr.io/ex/srv:${VERSION}", "transport": {"type": "stdio"}}
        ]}),
    );
    assert_eq!(default_plan(&doc).unwrap().args[3], "ghcr.io/ex/srv:3.1.4");
}

#[test]
fn an_unknown_argument_type_is_refused_as_malformed() {
    let doc = one(
        json!({"registryType": "npm", "identifier": "srv", "version": "1.0.0",
                         "transport": {"type": "stdio"},
                         "packageArguments": [{"type": "flag", "name": "--x"}]}),
    );
    let err = default_plan(&doc).unwrap_err();
    assert!(matches!(err, RegistryError::Malformed { .. }), "{err:?}");
}

#[test]
fn a_name_without_namespace_is_refused_as_malformed() {
    let doc = doc(json!({"name": "srv", "version": "1.0.0"}));
    let err = default_plan(&doc).unwrap_err();
    assert!(matches!(err, RegistryError::Malformed { .. }), "{err:?}");
}

#[test]
fn a_document_that_is_not_json_is_refused_as_malformed() {
    let err = parse_server("{\"name\": ").unwrap_err();
    assert!(matches!(err, RegistryError::Malformed { .. }), "{err:?}");
}

#[test]
fn an_object_where_a_string_belongs_is_refused_as_malformed() {
    let text = r#"{"name": "io.example/srv", "version": {"x": 1}}"#;
    let err = parse_server(text).unwrap_err();
    assert!(matches!(err, RegistryError::Malformed { .. }), "{err:?}");
}

#[test]
fn numbers_and_nulls_are_read_leniently() {
    let text = r#"{"name": "io.example/srv", "version": "1.0.0", "remotes": null,
        "packages": [{"registryType": "npm", "identifier": "srv", "version": "1.0.0",
                      "transport": {"type": "stdio"}, "unknownField": [1],
                      "environmentVariables": [{"name": "PORT", "default": 8080, "isSecret": null}]}]}"#;
    let doc = parse_server(text).unwrap().server;
    let plan = default_plan(&doc).unwrap();
    assert_eq!(env(&plan, "PORT").value.as_deref(), Some("8080"));
}

#[test]
fn the_api_wrapper_shape_reads_server_and_status() {
    let text = r#"{"server": {"name": "io.example/srv", "version": "1.0.0"},
        "_meta": {"io.modelcontextprotocol.registry/official":
                  {"status": "deprecated", "statusMessage": "use io.example/srv2", "isLatest": true}}}"#;
    let answer = parse_server(text).unwrap();
    let official = answer.meta.official.unwrap();
    assert_eq!(
        (
            answer.server.name.as_str(),
            official.status,
            official.status_message.as_deref()
        ),
        (
            "io.example/srv",
            Some(ServerStatus::Deprecated),
            Some("use io.example/srv2")
        )
    );
}

#[test]
fn the_entry_name_is_as_when_given() {
    assert_eq!(entry_name("io.github.user/weather", Some("wx")), "wx");
}

#[test]
fn a_requested_version_must_be_exact() {
    for ok in ["0.0.79", "1.2.3-beta.1", "2025.10.1"] {
        assert_eq!(requested_version("io.example/srv", ok), Ok(()), "{ok}");
    }
    for bad in ["latest", "LATEST", "^1.2.3", "1.x", ">=1", "${VERSION}", ""] {
        let err = requested_version("io.example/srv", bad).unwrap_err();
        assert!(
            matches!(err, RegistryError::RequestedVersionNotExact { .. }),
            "{bad}: {err:?}"
        );
        assert!(
            err.to_string().contains("Fix: give one exact version"),
            "{err}"
        );
    }
}

fn risk_kinds(plan: &InstallPlan) -> Vec<warden_clients::RiskKind> {
    plan.risks.iter().map(|r| r.kind).collect()
}

fn npm_with_env(env: serde_json::Value) -> ServerJson {
    one(
        json!({"registryType": "npm", "identifier": "srv", "version": "1.0.0",
               "transport": {"type": "stdio"}, "environmentVariables": env}),
    )
}

#[test]
fn a_privileged_runtime_argument_is_a_risk_of_the_plan() {
    let d = oci(json!({"runtimeArguments": [{"type": "named", "name": "--privileged"}]}));
    let p = default_plan(&d).unwrap();
    assert_eq!(risk_kinds(&p), [warden_clients::RiskKind::RunnerOption]);
}

#[test]
fn a_loader_variable_the_document_defaults_is_high_risk() {
    let d = npm_with_env(json!([{"name": "LD_PRELOAD", "default": "/tmp/x.so"}]));
    let p = default_plan(&d).unwrap();
    assert_eq!(
        risk_kinds(&p),
        [warden_clients::RiskKind::LoaderEnvByDocument]
    );
}

#[test]
fn a_loader_variable_the_document_fixes_is_high_risk() {
    let d = npm_with_env(json!([{"name": "NODE_OPTIONS", "value": "--require /tmp/x.js"}]));
    let p = default_plan(&d).unwrap();
    assert_eq!(
        risk_kinds(&p),
        [warden_clients::RiskKind::LoaderEnvByDocument]
    );
}

#[test]
fn a_loader_variable_you_give_is_a_risk_but_not_a_high_one() {
    let d = npm_with_env(json!([{"name": "PYTHONPATH", "isRequired": true}]));
    let p = plan(&d, &inputs(&[("PYTHONPATH", "/opt/lib")])).unwrap();
    assert_eq!(risk_kinds(&p), [warden_clients::RiskKind::LoaderEnv]);
}

#[test]
fn a_loader_variable_left_unset_is_no_risk() {
    let d = npm_with_env(json!([{"name": "LD_LIBRARY_PATH", "description": "optional"}]));
    let p = default_plan(&d).unwrap();
    assert!(p.risks.is_empty(), "{:?}", p.risks);
}

#[test]
fn an_ordinary_variable_the_document_defaults_is_no_risk() {
    let d = npm_with_env(json!([{"name": "LOG_LEVEL", "default": "info"}]));
    let p = default_plan(&d).unwrap();
    assert!(p.risks.is_empty(), "{:?}", p.risks);
}

fn remote(remotes: serde_json::Value) -> ServerJson {
    doc(serde_json::json!({
        "name": "io.example/hosted", "version": "2.0.0", "remotes": remotes
    }))
}

#[test]
fn a_remote_reached_only_over_sse_is_planned_at_its_url() {
    let d = remote(serde_json::json!([{"type": "sse", "url": "https://h.example/sse"}]));
    let plan = plan_remote(&d, &PlanOptions::default()).unwrap();
    assert_eq!(plan.url, "https://h.example/sse");
}

#[test]
fn a_remote_over_a_transport_warden_does_not_speak_is_refused_naming_it() {
    let d = remote(serde_json::json!([{"type": "websocket", "url": "wss://h.example/ws"}]));
    let err = plan_remote(&d, &PlanOptions::default()).unwrap_err();
    assert!(err.to_string().contains("(websocket)"), "{err}");
}

#[test]
fn the_streamable_http_remote_is_chosen_over_an_earlier_sse_one() {
    let d = remote(serde_json::json!([
        {"type": "sse", "url": "https://h.example/sse"},
        {"type": "streamable-http", "url": "https://h.example/mcp"}
    ]));
    let plan = plan_remote(&d, &PlanOptions::default()).unwrap();
    assert_eq!(
        (plan.url.as_str(), plan.headers.len()),
        ("https://h.example/mcp", 0)
    );
}

#[test]
fn a_remote_over_plain_http_off_this_machine_is_refused() {
    let d = remote(serde_json::json!([{"type": "streamable-http", "url": "http://h.example/mcp"}]));
    let err = plan_remote(&d, &PlanOptions::default()).unwrap_err();
    assert!(
        matches!(err, RegistryError::RemoteUnusable { .. }),
        "{err:?}"
    );
}

#[test]
fn a_url_placeholder_without_a_variable_is_refused_not_written() {
    let d = remote(
        serde_json::json!([{"type": "streamable-http", "url": "https://{tenant}.h.example/mcp"}]),
    );
    let err = plan_remote(&d, &PlanOptions::default()).unwrap_err();
    assert!(
        matches!(err, RegistryError::RemoteUnusable { .. }),
        "{err:?}"
    );
}

#[test]
fn a_header_value_template_is_filled_and_an_optional_header_without_value_is_not_sent() {
    let d = remote(serde_json::json!([{
        "type": "streamable-http", "url": "https://h.example/mcp",
        "headers": [
            {"name": "Authorization", "value": "Bearer {token}", "isSecret": true,
             "variables": {"token": {"isRequired": true, "isSecret": true}}},
            {"name": "X-Trace", "description": "optional"}
        ]
    }]));
    let plan = plan_remote(&d, &inputs(&[("token", "t-9")])).unwrap();
    assert_eq!(plan.headers, ["Authorization=MCP_HEADER_AUTHORIZATION"]);
    assert_eq!(plan.env[0].value.as_deref(), Some("Bearer t-9"));
    assert!(plan.env[0].secret);
    assert_eq!(
        (plan.env[1].name.as_str(), plan.env[1].value.as_deref()),
        ("MCP_HEADER_X_TRACE", None)
    );
}

#[test]
fn a_header_is_sent_from_a_variable_named_after_it() {
    assert_eq!(header_env_name("X-API-Key"), "MCP_HEADER_X_API_KEY");
    assert_eq!(header_env_name("Authorization"), "MCP_HEADER_AUTHORIZATION");
}

/// A hostile document's header named `Browser` (or `Https-Proxy`, `LD_PRELOAD`) must not set
/// the variable the sign-in runs as the browser (or the relay's proxy, the loader).
#[test]
fn a_header_cannot_name_a_variable_that_steers_a_program() {
    let names = ["Browser", "Https-Proxy", "LD_PRELOAD", "Warden-Config"].map(header_env_name);
    assert!(
        names.iter().all(|n| n.starts_with("MCP_HEADER_")),
        "{names:?}"
    );
}
