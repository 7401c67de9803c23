#![allow(clippy::unwrap_used)]
use super::*;

/// Effects that log each step; `fail` names the steps that fail.
#[derive(Default)]
struct Log {
    log: Vec<String>,
    network: Vec<FirstStartNetwork>,
    fail_key: Option<&'static str>,
    fail_files: bool,
    fail_start: bool,
}

impl Effects for Log {
    async fn set_key(&mut self, key: &'static str, value: KeyValue) -> Result<(), String> {
        let shown = format!("{key}={value}");
        self.log.push(shown.clone());
        if self.fail_key == Some(shown.as_str()) {
            return Err("read-only file".into());
        }
        Ok(())
    }
    async fn store_secret(&mut self, var: &str, _: &str) -> Result<(), String> {
        self.log.push(format!("secret {var}"));
        Ok(())
    }
    async fn write_files(&mut self, opts: &AddOptions) -> Result<Vec<FileChange>, ClientError> {
        if opts.dry_run {
            return Ok(Vec::new());
        }
        self.log.push("files".into());
        if self.fail_files {
            return Err(ClientError::NoClient);
        }
        let file = warden_clients::ConfigFile::infer(
            std::path::Path::new("/home/u/.cursor/mcp.json"),
            Some(ClientId::Cursor),
        )
        .unwrap();
        let mut change = FileChange::new(&file);
        change.written = true;
        Ok(vec![change])
    }
    async fn first_start(
        &mut self,
        entry: &NewEntry,
        _: &[String],
        network: bool,
        _: &FileChange,
    ) -> ProbeReport {
        self.log.push(
            if network {
                "probe with the network"
            } else {
                "probe"
            }
            .into(),
        );
        ProbeReport {
            server: Some(entry.name.clone()),
            ok: !self.fail_start,
            error: self.fail_start.then(|| "timed out".to_owned()),
            ..ProbeReport::default()
        }
    }
    fn progress(&mut self, step: AddStep) {
        if let AddStep::Network { state } = step {
            self.network.push(state);
        }
    }
}

fn add(sandbox: Option<AddSandbox>, argv: &[&str]) -> Add {
    Add {
        entry: NewEntry {
            name: "s".into(),
            command: argv[0].into(),
            args: argv[1..].iter().map(|a| (*a).to_owned()).collect(),
            ..NewEntry::default()
        },
        clients: vec![ClientId::Cursor],
        secrets: BTreeMap::new(),
        warden: Some("/bin/warden".into()),
        sandbox,
        ask_destructive: false,
        start: true,
    }
}

const OFF: AddSandbox = AddSandbox {
    registry: true,
    first_start: false,
    keep: false,
};
const FIRST: AddSandbox = AddSandbox {
    first_start: true,
    ..OFF
};

fn run(a: &Add, fx: &mut Log) -> Result<Done, AddError> {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(commit(a, fx))
}

fn keys(c: AddSandbox, preset: Option<&str>) -> Vec<(&'static str, String)> {
    sandbox_keys(&c, preset)
        .into_iter()
        .map(|(k, v)| (k, v.to_string().trim().to_owned()))
        .collect()
}

#[test]
fn the_keys_write_the_network_off_unless_asked() {
    assert_eq!(
        keys(OFF, None),
        [
            ("sandbox", "\"on\"".into()),
            ("sandbox_network", "\"none\"".into())
        ]
    );
}

#[test]
fn the_network_for_the_first_start_is_never_in_config_and_kept_only_when_asked() {
    let kept = AddSandbox {
        keep: true,
        ..FIRST
    };
    assert_eq!(
        (
            keys(FIRST, None)[1].1.as_str(),
            network_for_first_start_only(&FIRST, None),
            keys(kept, None)[1].1.as_str(),
            network_for_first_start_only(&kept, None),
        ),
        ("\"none\"", true, "\"host\"", false)
    );
}

#[test]
fn the_package_runners_have_their_presets() {
    let preset =
        |argv: &[&str]| runner_preset(&argv.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>());
    assert_eq!(
        [
            preset(&["npx", "-y", "@scope/server@1.2.3"]),
            preset(&["/usr/local/bin/uvx", "mcp-server-time==1.0"]),
            preset(&["C:\\tools\\npx.cmd", "x"]),
            preset(&["/opt/bin/my-server"]),
        ],
        [Some("@npm"), Some("@pypi"), Some("@npm"), None]
    );
}

#[test]
fn the_preset_is_the_network_kept_instead_of_the_whole_network_for_the_first_start() {
    assert_eq!(
        (
            keys(FIRST, Some("@npm")),
            network_for_first_start_only(&FIRST, Some("@npm")),
            keys(
                AddSandbox {
                    registry: false,
                    ..FIRST
                },
                Some("@npm")
            )[1]
            .1
            .as_str(),
            keys(
                AddSandbox {
                    keep: true,
                    ..FIRST
                },
                Some("@npm")
            )[1]
            .1
            .as_str(),
        ),
        (
            vec![
                ("sandbox", "\"on\"".into()),
                ("sandbox_network", "[\"@npm\"]".into())
            ],
            false,
            "\"none\"",
            "\"host\"",
        )
    );
}

#[test]
fn the_keys_are_set_before_the_clients_files_with_the_network_off() {
    let mut fx = Log::default();
    run(&add(Some(OFF), &["server"]), &mut fx).unwrap();
    assert_eq!(
        fx.log,
        [
            "sandbox=\"on\"",
            "sandbox_network=\"none\"",
            "files",
            "probe"
        ]
    );
}

#[test]
fn nothing_is_written_to_the_clients_files_when_a_key_cannot_be_set() {
    let mut fx = Log {
        fail_key: Some("sandbox=\"on\""),
        ..Log::default()
    };
    let e = run(&add(Some(FIRST), &["server"]), &mut fx).unwrap_err();
    assert_eq!(
        (fx.log, e.message(), fx.network),
        (
            vec!["sandbox=\"on\"".to_owned()],
            "Nothing was written to the clients' files: the sandbox could not be set in config.toml (sandbox): read-only file".to_owned(),
            vec![]
        )
    );
}

#[test]
fn the_first_start_alone_gets_the_network_whatever_it_gave() {
    let mut fx = Log {
        fail_start: true,
        ..Log::default()
    };
    let done = run(&add(Some(FIRST), &["server"]), &mut fx).unwrap();
    assert_eq!(
        (fx.log, fx.network, done.probe.map(|p| p.ok)),
        (
            vec![
                "sandbox=\"on\"".to_owned(),
                "sandbox_network=\"none\"".into(),
                "files".into(),
                "probe with the network".into(),
            ],
            vec![FirstStartNetwork::Allowed, FirstStartNetwork::Taken],
            Some(false)
        )
    );
}

#[test]
fn no_network_is_allowed_when_the_files_fail_and_the_error_says_the_keys_stay() {
    let mut fx = Log {
        fail_files: true,
        ..Log::default()
    };
    let e = run(&add(Some(FIRST), &["server"]), &mut fx).unwrap_err();
    assert!(
        fx.log == ["sandbox=\"on\"", "sandbox_network=\"none\"", "files"]
            && e.message()
                .starts_with("The clients' files were not written: ")
            && e.message().contains(". The keys set in config.toml stay")
            && fx.network.is_empty(),
        "{:?} {} {:?}",
        fx.log,
        e.message(),
        fx.network
    );
}

#[test]
fn without_a_first_start_there_is_no_network_to_give() {
    let mut a = add(Some(FIRST), &["server"]);
    a.start = false;
    let mut fx = Log::default();
    let done = run(&a, &mut fx).unwrap();
    assert_eq!(
        (fx.log, fx.network, done.network),
        (
            vec![
                "sandbox=\"on\"".to_owned(),
                "sandbox_network=\"none\"".into(),
                "files".into()
            ],
            vec![],
            None
        )
    );
}

#[test]
fn the_network_is_kept_when_asked_and_no_key_is_written_without_a_sandbox() {
    let mut kept = Log::default();
    run(
        &add(
            Some(AddSandbox {
                keep: true,
                ..FIRST
            }),
            &["server"],
        ),
        &mut kept,
    )
    .unwrap();
    let mut plain = Log {
        fail_files: true,
        ..Log::default()
    };
    let e = run(&add(None, &["server"]), &mut plain).unwrap_err();
    assert_eq!(
        (kept.log, plain.log, e.message(), plain.network),
        (
            vec![
                "sandbox=\"on\"".to_owned(),
                "sandbox_network=\"host\"".into(),
                "files".into(),
                "probe".into()
            ],
            vec!["files".to_owned()],
            ClientError::NoClient.coded(),
            vec![]
        )
    );
}

#[test]
fn nothing_is_taken_away_after_the_first_start_when_the_preset_is_written() {
    let mut fx = Log::default();
    run(&add(Some(OFF), &["uvx", "mcp-server-time"]), &mut fx).unwrap();
    assert_eq!(
        (fx.log, fx.network),
        (
            vec![
                "sandbox=\"on\"".to_owned(),
                "sandbox_network=[\"@pypi\"]".into(),
                "files".into(),
                "probe".into()
            ],
            vec![]
        )
    );
}

#[test]
fn tools_ask_for_destructive_tools_is_written_after_the_sandbox_keys_before_the_files() {
    let log = |sandbox| {
        let mut a = add(sandbox, &["server"]);
        a.ask_destructive = true;
        a.start = false;
        let mut fx = Log::default();
        run(&a, &mut fx).unwrap();
        fx.log
    };
    assert_eq!(
        (log(Some(OFF)), log(None)),
        (
            vec![
                "sandbox=\"on\"".to_owned(),
                "sandbox_network=\"none\"".into(),
                "tools_ask=+[\"@destructive\"]".into(),
                "files".into()
            ],
            vec!["tools_ask=+[\"@destructive\"]".to_owned(), "files".into()]
        )
    );
}

#[test]
fn secrets_go_to_the_keychain_after_the_keys_and_before_the_files() {
    let mut a = add(Some(OFF), &["server"]);
    a.secrets = BTreeMap::from([("TOKEN".to_owned(), "t".to_owned())]);
    a.start = false;
    let mut fx = Log::default();
    run(&a, &mut fx).unwrap();
    assert_eq!(
        fx.log,
        [
            "sandbox=\"on\"",
            "sandbox_network=\"none\"",
            "secret TOKEN",
            "files"
        ]
    );
}

/// A client's file changed between the write and the first start (another program's `env`
/// in the entry): the entry is not started on the file's word.
#[test]
fn an_entry_that_does_not_read_back_as_written_is_not_started() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.json");
    let argv = [
        "/nonexistent/warden",
        "bridge",
        "--server",
        "s",
        "--pass-env",
        "X",
        "--",
        "srv",
    ];
    let written = |x: &str| {
        serde_json::json!({"mcpServers": {"s": {
            "command": argv[0], "args": argv[1..], "env": {"X": x}
        }}})
        .to_string()
    };
    std::fs::write(&path, written("tampered")).unwrap();
    let file = warden_clients::ConfigFile::infer(&path, Some(ClientId::Cursor)).unwrap();
    let env = warden_clients::ClientEnv::with_home(dir.path(), warden_clients::Os::Linux);
    let (wrote, progress, changed) = (|_: &Path, _: &str| {}, |_: AddStep| {}, || {});
    let mut fx = Real {
        env: &env,
        server: "s",
        config: None,
        timeout: std::time::Duration::from_secs(5),
        wrote: &wrote,
        progress: &progress,
        config_changed: &changed,
    };
    let entry = NewEntry {
        name: "s".into(),
        command: "srv".into(),
        env: BTreeMap::from([("X".to_owned(), "mine".to_owned())]),
        ..NewEntry::default()
    };
    let argv: Vec<String> = argv.iter().map(|a| (*a).to_owned()).collect();
    let report = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(fx.first_start(&entry, &argv, false, &FileChange::new(&file)));
    assert!(
        report
            .error
            .as_deref()
            .is_some_and(|e| e.contains("is not as it was written")),
        "{report:?}"
    );
}
