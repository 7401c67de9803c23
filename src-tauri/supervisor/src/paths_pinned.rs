//! The platform paths on Linux are the ones Warden used before it moved from `dirs` to
//! `directories`: configs, backups and history must stay where users have them. Each case
//! runs `report` in a child process of this test binary with its own environment (the
//! crates read it at call time, and other tests in this process read it too).

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

const VARS: &[&str] = &[
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
    "WARDEN_CONFIG",
    "WARDEN_STATE_DIR",
    "WARDEN_SOCKET",
    "TMPDIR",
];
const MARK: &str = "warden-paths: ";

#[test]
#[ignore = "run by `linux_paths_are_pinned` in a child process with a controlled environment"]
fn report() {
    let client_home = warden_clients::ClientEnv::from_process()
        .map(|e| e.home)
        .ok();
    let paths = json!({
        "config": warden_config::default_path(),
        "state": warden_config::paths::state_dir(),
        "socket": warden_control::socket::socket_path(),
        "home": warden_config::paths::home_dir(),
        "client_home": client_home,
    });
    println!("{MARK}{paths}");
}

/// The paths a child process sees with only `set` of [`VARS`] set (and `TMPDIR=/t`).
fn paths_with(set: &[(&str, &str)]) -> Value {
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
    cmd.args(["paths_pinned::report", "--exact", "--ignored"])
        .args(["--nocapture", "--test-threads=1"]);
    for var in VARS {
        cmd.env_remove(var);
    }
    cmd.env("TMPDIR", "/t").envs(set.iter().copied());
    let out = cmd.output().expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.split_once(MARK))
        .map(|(_, paths)| paths);
    serde_json::from_str(line.unwrap_or_else(|| panic!("no paths in: {stdout}")))
        .expect("paths as JSON")
}

/// `/run/user/<uid>` when this machine has it for the user: it comes before any
/// environment (`runtime_dir_prefers_the_users_run_dir_then_an_absolute_xdg_runtime_dir`).
fn own_run_dir() -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt as _;
    let uid = warden_config::paths::real_uid();
    let dir = PathBuf::from(format!("/run/user/{uid}"));
    std::fs::metadata(&dir)
        .is_ok_and(|m| m.is_dir() && m.uid() == uid)
        .then_some(dir)
}

/// The socket with `$XDG_RUNTIME_DIR` set to `run` (or unset).
fn socket(run: Option<&str>) -> PathBuf {
    match own_run_dir().or_else(|| run.map(PathBuf::from)) {
        Some(dir) => dir.join("warden/control.sock"),
        None => format!(
            "/t/warden-{}/control.sock",
            warden_config::paths::real_uid()
        )
        .into(),
    }
}

/// What Warden used with `home` as the home directory and no XDG variables.
fn defaults(home: &Path) -> Value {
    json!({
        "config": home.join(".config/warden/config.toml"),
        "state": home.join(".local/state/warden"),
        "socket": socket(None),
        "home": home,
        "client_home": home,
    })
}

#[test]
fn linux_paths_are_pinned() {
    let home = Path::new("/h/me");
    assert_eq!(paths_with(&[("HOME", "/h/me")]), defaults(home));
    // Empty or relative XDG variables are ignored. (One change: a relative
    // XDG_RUNTIME_DIR was used as is with `dirs`; the XDG spec says to ignore it, as
    // `directories` does, and a socket path relative to each process's working
    // directory could not connect bridges and supervisor anyway.)
    for value in ["", "rel/dir"] {
        let xdg = [
            ("XDG_CONFIG_HOME", value),
            ("XDG_STATE_HOME", value),
            ("XDG_DATA_HOME", value),
            ("XDG_RUNTIME_DIR", value),
        ];
        let set = [&[("HOME", "/h/me")][..], &xdg].concat();
        assert_eq!(
            paths_with(&set),
            defaults(home),
            "XDG variables set to {value:?}"
        );
    }
    // The state dir never falls back to XDG_DATA_HOME on Linux.
    let set = [("HOME", "/h/me"), ("XDG_DATA_HOME", "/x/data")];
    assert_eq!(paths_with(&set), defaults(home));

    let set = [
        ("HOME", "/h/me"),
        ("XDG_CONFIG_HOME", "/x/config"),
        ("XDG_STATE_HOME", "/x/state"),
        ("XDG_DATA_HOME", "/x/data"),
        ("XDG_RUNTIME_DIR", "/run/user/7"),
    ];
    let mut want = defaults(home);
    want["config"] = json!("/x/config/warden/config.toml");
    want["state"] = json!("/x/state/warden");
    want["socket"] = json!(socket(Some("/run/user/7")));
    assert_eq!(paths_with(&set), want);

    let set = [
        ("HOME", "/h/me"),
        ("XDG_RUNTIME_DIR", "/run/user/7"),
        ("WARDEN_CONFIG", "/c/warden.toml"),
        ("WARDEN_STATE_DIR", "/s"),
        ("WARDEN_SOCKET", "/k/ctl.sock"),
    ];
    let mut want = defaults(home);
    want["config"] = json!("/c/warden.toml");
    want["state"] = json!("/s");
    want["socket"] = json!("/k/ctl.sock");
    assert_eq!(paths_with(&set), want);

    // Without $HOME (or with it empty), the user database says where home is.
    let home = warden_config::paths::user_home().expect("a user database entry for this uid");
    assert_eq!(paths_with(&[]), defaults(&home));
    assert_eq!(paths_with(&[("HOME", "")]), defaults(&home));
}
