use super::*;

fn argv_risks(command: &str, args: &[&str]) -> Vec<Risk> {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    risks(command, &args)
}

/// The details of the runner options flagged in `command args`.
fn widening(command: &str, args: &[&str]) -> Vec<String> {
    argv_risks(command, args)
        .into_iter()
        .filter(|r| r.kind == RiskKind::RunnerOption)
        .map(|r| r.detail)
        .collect()
}

/// Whether `option` of a container runner (`docker run -i --rm OPTION... IMAGE`) is
/// flagged, with `shown` in its detail.
fn container_flags(runner: &str, option: &[&str], shown: &str) -> bool {
    let mut args = vec!["run", "-i", "--rm"];
    args.extend(option);
    args.extend(["mcp/srv:1.2.3", "--verbose"]);
    matches!(widening(runner, &args).as_slice(), [d] if d.starts_with(&format!("{runner} {shown}:")))
}

#[test]
fn container_privileged_is_flagged() {
    assert!(container_flags("docker", &["--privileged"], "--privileged"));
}

#[test]
fn container_volume_is_flagged_in_each_spelling() {
    let all = [
        container_flags("docker", &["-v", "/:/host"], "-v /:/host"),
        container_flags("podman", &["--volume=/:/host"], "--volume /:/host"),
        container_flags("nerdctl", &["-v/:/host"], "-v /:/host"),
    ];
    assert_eq!(all, [true; 3]);
}

#[test]
fn container_mount_is_flagged() {
    let m = "type=bind,src=/,dst=/host";
    assert!(container_flags(
        "docker",
        &["--mount", m],
        &format!("--mount {m}")
    ));
}

#[test]
fn container_host_namespaces_are_flagged_in_one_or_two_words() {
    let all = [
        container_flags("docker", &["--network=host"], "--network host"),
        container_flags("docker", &["--network", "host"], "--network host"),
        container_flags("docker", &["--net=host"], "--net host"),
        container_flags("podman", &["--pid=host"], "--pid host"),
        container_flags("docker", &["--ipc", "host"], "--ipc host"),
        container_flags("podman", &["--userns=host"], "--userns host"),
    ];
    assert_eq!(all, [true; 6]);
}

#[test]
fn container_network_other_than_host_is_not_flagged() {
    assert!(widening("docker", &["run", "-i", "--network", "none", "img:1"]).is_empty());
}

#[test]
fn container_capabilities_devices_confinement_and_entrypoint_are_flagged() {
    let all = [
        container_flags("docker", &["--cap-add", "SYS_ADMIN"], "--cap-add SYS_ADMIN"),
        container_flags("docker", &["--device=/dev/kvm"], "--device /dev/kvm"),
        container_flags(
            "docker",
            &["--security-opt", "seccomp=unconfined"],
            "--security-opt seccomp=unconfined",
        ),
        container_flags(
            "docker",
            &["--entrypoint", "/bin/sh"],
            "--entrypoint /bin/sh",
        ),
    ];
    assert_eq!(all, [true; 4]);
}

#[test]
fn container_options_after_the_image_are_the_servers_own() {
    let args = [
        "run",
        "-i",
        "--rm",
        "-e",
        "TOKEN",
        "img:1",
        "-v",
        "--privileged",
    ];
    assert!(widening("docker", &args).is_empty());
}

#[test]
fn container_env_setting_a_loader_variable_is_flagged() {
    let r = argv_risks("docker", &["run", "-i", "-e", "LD_PRELOAD=/x.so", "img:1"]);
    assert_eq!(
        r.iter().map(|r| r.kind).collect::<Vec<_>>(),
        [RiskKind::LoaderEnv]
    );
}

#[test]
fn npx_registry_call_and_package_are_flagged() {
    let d = widening(
        "npx",
        &[
            "--registry=https://npm.evil.test",
            "-c",
            "srv --x",
            "-p",
            "other@1.0.0",
            "-y",
            "srv@1.2.3",
        ],
    );
    assert_eq!(
        d.iter()
            .map(|d| d.split(':').next().unwrap_or_default())
            .collect::<Vec<_>>(),
        [
            "npx --registry https",
            "npx -c srv --x",
            "npx -p other@1.0.0"
        ]
    );
}

#[test]
fn npx_options_after_the_package_are_the_servers_own() {
    assert!(widening("npx", &["-y", "srv@1.2.3", "-p", "8080", "-c", "x"]).is_empty());
}

#[test]
fn uvx_index_from_with_and_find_links_are_flagged() {
    let d = widening(
        "uvx",
        &[
            "--index-url",
            "https://a.test/simple",
            "-i",
            "https://b.test/simple",
            "--extra-index-url=https://c.test/simple",
            "--from",
            "git+https://d.test/x",
            "--with",
            "requests==2.0",
            "-f",
            "/tmp/wheels",
            "--find-links",
            "https://e.test/links",
            "srv==1.0.0",
        ],
    );
    assert_eq!(d.len(), 7, "{d:#?}");
}

#[test]
fn uv_tool_run_options_are_flagged_like_uvx() {
    let d = widening("uv", &["tool", "run", "--with", "x==1", "srv==1.0.0"]);
    assert_eq!(
        d,
        ["uv --with x==1: installs more packages beside the server"]
    );
}

#[test]
fn uvx_python_option_is_not_flagged() {
    assert!(widening("uvx", &["-p", "3.12", "srv==1.0.0"]).is_empty());
}

#[test]
fn loader_variables_are_flagged_by_name_and_prefix() {
    let names = [
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "DYLD_INSERT_LIBRARIES",
        "PATH",
        "HOME",
        "XDG_CONFIG_HOME",
        "WARDEN_NO_LANDLOCK",
        "NODE_OPTIONS",
        "NODE_PATH",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "PYTHONHOME",
        "BASH_ENV",
        "ENV",
        "PERL5OPT",
        "PERL5LIB",
        "RUBYOPT",
        "JAVA_TOOL_OPTIONS",
        "npm_config_registry",
        "UV_INDEX_URL",
        "PIP_INDEX_URL",
        "GIT_SSH_COMMAND",
    ];
    let unflagged: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| steering_env(n).is_none())
        .collect();
    assert!(unflagged.is_empty(), "{unflagged:?}");
}

#[test]
fn ordinary_variables_are_not_flagged() {
    let names = [
        "API_URL",
        "GITHUB_TOKEN",
        "PYTHONUNBUFFERED",
        "PYTHONIOENCODING",
        "LOG_LEVEL",
        "HOMEPAGE",
        "ENVIRONMENT",
    ];
    let flagged: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| steering_env(n).is_some())
        .collect();
    assert!(flagged.is_empty(), "{flagged:?}");
}

#[test]
fn entry_env_loader_variable_is_a_risk_of_the_entry() {
    let env = ["API_URL".to_owned(), "LD_PRELOAD".to_owned()];
    let r = entry_risks("node", &["server.js".to_owned()], &env);
    assert_eq!(
        r.iter()
            .map(|r| (r.kind, r.detail.starts_with("LD_PRELOAD")))
            .collect::<Vec<_>>(),
        [(RiskKind::LoaderEnv, true)]
    );
}

#[test]
fn document_set_loader_variable_is_high_risk() {
    let r = document_env_risk("NODE_OPTIONS");
    assert!(
        matches!(&r, Some(Risk { kind: RiskKind::LoaderEnvByDocument, detail }) if detail.starts_with("HIGH RISK")),
        "{r:?}"
    );
}
