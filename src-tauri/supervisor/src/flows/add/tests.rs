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
    fail_reset: bool,
}

impl Effects for Log {
    async fn set_key(&mut self, key: &'static str, value: toml_edit::Value) -> Result<(), String> {
        let shown = format!("{key}={}", value.to_string().trim());
        self.log.push(shown.clone());
        let reset = key == "sandbox_network" && value.as_str() == Some("none");
        if self.fail_key == Some(shown.as_str()) || (self.fail_reset && reset) {
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
    async fn first_start(&mut self, name: &str, _: &[String], _: &FileChange) -> ProbeReport {
        self.log.push("probe".into());
        ProbeReport {
            server: Some(name.to_owned()),
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
fn the_network_for_the_first_start_is_taken_away_after_it_and_kept_only_when_asked() {
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
        ("\"host\"", true, "\"host\"", false)
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
            "\"host\"",
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
fn the_network_for_the_first_start_only_is_taken_away_whatever_the_start_gave() {
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
                "sandbox_network=\"host\"".into(),
                "files".into(),
                "probe".into(),
                "sandbox_network=\"none\"".into()
            ],
            vec![FirstStartNetwork::Allowed, FirstStartNetwork::Taken],
            Some(false)
        )
    );
}

#[test]
fn the_network_is_taken_away_when_the_files_fail_and_the_error_says_the_keys_stay() {
    let mut fx = Log {
        fail_files: true,
        ..Log::default()
    };
    let e = run(&add(Some(FIRST), &["server"]), &mut fx).unwrap_err();
    assert!(
        fx.log
            == [
                "sandbox=\"on\"",
                "sandbox_network=\"host\"",
                "files",
                "sandbox_network=\"none\""
            ]
            && e.message()
                .starts_with("The clients' files were not written: ")
            && e.message()
                .contains(". The sandbox's keys stay in config.toml")
            && fx.network == [FirstStartNetwork::Allowed, FirstStartNetwork::Taken],
        "{:?} {} {:?}",
        fx.log,
        e.message(),
        fx.network
    );
}

#[test]
fn a_network_not_taken_away_is_said() {
    let mut fx = Log {
        fail_reset: true,
        ..Log::default()
    };
    run(&add(Some(FIRST), &["server"]), &mut fx).unwrap();
    assert_eq!(
        fx.network,
        [
            FirstStartNetwork::Allowed,
            FirstStartNetwork::Error("read-only file".into())
        ]
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
                "tools_ask=[\"@destructive\"]".into(),
                "files".into()
            ],
            vec!["tools_ask=[\"@destructive\"]".to_owned(), "files".into()]
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
