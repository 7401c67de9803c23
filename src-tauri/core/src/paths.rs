//! Where Warden keeps its files.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use directories::BaseDirs;

/// The user's home directory: `$HOME`, else the user database's entry.
pub fn home_dir() -> Option<PathBuf> {
    BaseDirs::new().map(|d| d.home_dir().to_owned())
}

/// The user's config directory (`$XDG_CONFIG_HOME`, by default `~/.config`, on Linux).
pub fn config_dir() -> Option<PathBuf> {
    BaseDirs::new().map(|d| d.config_dir().to_owned())
}

/// The user's runtime directory, the same for the bridges and the supervisor whatever
/// environment each got (MCP SDK clients start servers with only `HOME`, `LOGNAME`, `PATH`,
/// `SHELL`, `TERM` and `USER`): `/run/user/<uid>` of the real uid when it exists and belongs
/// to the user, else `$XDG_RUNTIME_DIR` when absolute; Linux only.
pub fn runtime_dir() -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt as _;
        let owner = |dir: &Path| {
            std::fs::metadata(dir)
                .ok()
                .filter(std::fs::Metadata::is_dir)
                .map(|m| m.uid())
        };
        choose_runtime_dir(real_uid(), owner, std::env::var_os("XDG_RUNTIME_DIR"))
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// [`runtime_dir`] as a pure function: `uid` is the real uid, `owner` the owner of a path
/// that exists and is a directory, `xdg_runtime_dir` the environment's value.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn choose_runtime_dir(
    uid: u32,
    owner: impl FnOnce(&Path) -> Option<u32>,
    xdg_runtime_dir: Option<OsString>,
) -> Option<PathBuf> {
    let run = PathBuf::from(format!("/run/user/{uid}"));
    if owner(&run) == Some(uid) {
        return Some(run);
    }
    xdg_runtime_dir
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
}

/// The real uid of this process (not the environment's `USER`).
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn real_uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// The home directory of the real uid in the user database (`getpwuid_r`), whatever `$HOME`
/// says; `None` without an entry (or with an empty home).
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn user_home() -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt as _;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    loop {
        // SAFETY: all-zero is a valid `passwd` (null pointers, zero ids).
        let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call and `buf.len()` is its size.
        let rc = unsafe {
            libc::getpwuid_r(
                real_uid(),
                &mut entry,
                buf.as_mut_ptr(),
                buf.len(),
                &mut found,
            )
        };
        if rc == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 4, 0);
            continue;
        }
        if rc != 0 || found.is_null() || entry.pw_dir.is_null() {
            return None;
        }
        // SAFETY: on success `pw_dir` points to a NUL-terminated string inside `buf`, copied
        // out before `buf` is dropped.
        let dir = unsafe { std::ffi::CStr::from_ptr(entry.pw_dir) };
        let dir = std::ffi::OsStr::from_bytes(dir.to_bytes());
        return (!dir.is_empty()).then(|| PathBuf::from(dir));
    }
}

/// `$WARDEN_STATE_DIR`, else the user's state directory (`$XDG_STATE_HOME/warden`, by default
/// `~/.local/state/warden`, on Linux), else the local data directory (macOS, Windows), else a
/// directory under the temp dir.
pub fn state_dir() -> PathBuf {
    std::env::var_os("WARDEN_STATE_DIR")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            let base = BaseDirs::new()?;
            Some(
                base.state_dir()
                    .unwrap_or(base.data_local_dir())
                    .join("warden"),
            )
        })
        .unwrap_or_else(|| std::env::temp_dir().join("warden"))
}

/// The desktop app's own log (its host's, with what its window's process printed), capped
/// in size: the file to attach to a bug report.
pub fn app_log() -> PathBuf {
    state_dir().join(APP_LOG)
}

/// The name of [`app_log`] in the state dir.
pub const APP_LOG: &str = "warden-app.log";

/// The JSONL event log of one server.
pub fn event_log(server: &str) -> PathBuf {
    state_dir()
        .join("logs")
        .join(format!("{}.jsonl", file_stem(server)))
}

/// A server name made safe as a file name: anything but `[A-Za-z0-9._-]` becomes `_`.
pub fn file_stem(server: &str) -> String {
    let stem: String = server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match stem.trim_start_matches('.') {
        "" => "_".to_owned(),
        s => s.to_owned(),
    }
}

/// `name` on `$PATH` (absolute folders only), as `execvp` would find it: an executable file.
pub fn find_on_path(name: &std::ffi::OsStr) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

/// Whether `path` is a file its owner may run (any file elsewhere than Unix).
pub fn is_executable(path: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    path.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `/run/user/<uid>` when it is the user's; else an absolute `$XDG_RUNTIME_DIR`; else none.
    #[test]
    #[cfg_attr(windows, ignore = "a Linux runtime dir")]
    fn runtime_dir_prefers_the_users_run_dir_then_an_absolute_xdg_runtime_dir() {
        let xdg = || Some(OsString::from("/x/run"));
        let cases: [(Option<u32>, Option<OsString>, Option<&str>); 7] = [
            (Some(7), None, Some("/run/user/7")),
            (Some(7), xdg(), Some("/run/user/7")),
            (Some(0), xdg(), Some("/x/run")),
            (None, xdg(), Some("/x/run")),
            (None, Some("rel/run".into()), None),
            (None, Some("".into()), None),
            (Some(8), None, None),
        ];
        let got: Vec<Option<PathBuf>> = cases
            .iter()
            .map(|(owner, env, _)| {
                choose_runtime_dir(
                    7,
                    |p| {
                        assert_eq!(p, Path::new("/run/user/7"));
                        *owner
                    },
                    env.clone(),
                )
            })
            .collect();
        let want: Vec<Option<PathBuf>> = cases
            .iter()
            .map(|(_, _, want)| want.map(PathBuf::from))
            .collect();
        assert_eq!(got, want);
    }

    /// The home directory in /etc/passwd for the real uid, as `getent passwd $(id -u)` shows
    /// it on a machine whose users are all in /etc/passwd.
    #[cfg(unix)]
    #[test]
    fn user_home_is_the_user_databases() {
        let uid = real_uid().to_string();
        let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
        let home = passwd.lines().find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.len() == 7 && fields[2] == uid && !fields[5].is_empty())
                .then(|| PathBuf::from(fields[5]))
        });
        assert_eq!(user_home(), home);
    }

    #[test]
    fn stems_are_safe() {
        assert_eq!(file_stem("rg"), "rg");
        assert_eq!(file_stem("../../etc/passwd"), "_.._etc_passwd");
        assert_eq!(file_stem(""), "_");
        assert_eq!(file_stem("my server/ü"), "my_server__");
    }

    /// The platform paths on Linux are the ones Warden used before it moved from `dirs` to
    /// `directories`: configs, backups and history must stay where users have them. Each case
    /// runs [`report`] in a child process of this test binary with its own environment (the
    /// crates read it at call time, and other tests in this process read it too).
    #[cfg(target_os = "linux")]
    mod pinned {
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
            let client_home = crate::clients::ClientEnv::from_process()
                .map(|e| e.home)
                .ok();
            let paths = json!({
                "config": crate::config::default_path(),
                "state": super::state_dir(),
                "socket": crate::control::socket::socket_path(),
                "home": super::home_dir(),
                "client_home": client_home,
            });
            println!("{MARK}{paths}");
        }

        /// The paths a child process sees with only `set` of [`VARS`] set (and `TMPDIR=/t`).
        fn paths_with(set: &[(&str, &str)]) -> Value {
            let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
            cmd.args(["paths::tests::pinned::report", "--exact", "--ignored"])
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
            let uid = super::real_uid();
            let dir = PathBuf::from(format!("/run/user/{uid}"));
            std::fs::metadata(&dir)
                .is_ok_and(|m| m.is_dir() && m.uid() == uid)
                .then_some(dir)
        }

        /// The socket with `$XDG_RUNTIME_DIR` set to `run` (or unset).
        fn socket(run: Option<&str>) -> PathBuf {
            match own_run_dir().or_else(|| run.map(PathBuf::from)) {
                Some(dir) => dir.join("warden/control.sock"),
                None => format!("/t/warden-{}/control.sock", super::real_uid()).into(),
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
            let home = super::user_home().expect("a user database entry for this uid");
            assert_eq!(paths_with(&[]), defaults(&home));
            assert_eq!(paths_with(&[("HOME", "")]), defaults(&home));
        }
    }
}
