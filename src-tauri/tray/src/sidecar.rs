//! The bundled `warden` CLI (the sidecar). Every IDE entry Warden wraps runs it, so the tray
//! checks at start that it is there and of the app's version. It runs the program itself with
//! `--version`: never a shell.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The sidecar's name beside the app's executables (bundles drop the target-triple suffix).
pub const NAME: &str = "warden";
const TIMEOUT: Duration = Duration::from_secs(10);

/// The `warden` the wrapped IDE entries run: `$WARDEN_BIN` as given, else the one beside this
/// executable (`target/debug/warden` in a dev build), canonical when it is there.
pub fn path() -> PathBuf {
    if let Some(p) = std::env::var_os("WARDEN_BIN").filter(|p| !p.is_empty()) {
        return p.into();
    }
    let beside = warden_core::desktop::beside_me(NAME);
    std::fs::canonicalize(&beside).unwrap_or(beside)
}

/// What `warden --version` did.
#[derive(Debug)]
pub struct VersionRun {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `warden --version` and judges it against the app's version.
pub async fn check() -> Result<(), String> {
    let shown = path();
    let mut command = tokio::process::Command::new(&shown);
    command.arg("--version").kill_on_drop(true);
    let run = match tokio::time::timeout(TIMEOUT, command.output()).await {
        Err(_) => Err(std::io::Error::new(
            ErrorKind::TimedOut,
            format!("no answer to --version in {} s", TIMEOUT.as_secs()),
        )),
        Ok(Err(e)) => Err(e),
        Ok(Ok(out)) => Ok(VersionRun {
            success: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }),
    };
    judge(&shown, run, env!("CARGO_PKG_VERSION"))
}

/// Whether the CLI at `path`, whose `--version` did `run`, serves an app of `version`; the
/// error says what is wrong and what to do.
pub fn judge(
    path: &Path,
    run: Result<VersionRun, std::io::Error>,
    version: &str,
) -> Result<(), String> {
    let at = path.display();
    let why = "every IDE server Warden wraps starts through it";
    let fix = "reinstall MCP Warden (from source: `cargo build -p warden-cli`, which puts `warden` beside `warden-app`)";
    let run = match run {
        Ok(run) => run,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(format!(
                "The warden CLI is missing at {at}; {why}. Fix: {fix}."
            ));
        }
        Err(e) => {
            return Err(format!(
                "The warden CLI at {at} cannot be run ({e}); {why}. Fix: {fix}."
            ));
        }
    };
    if !run.success {
        let said = run.stderr.lines().next().unwrap_or("no message");
        return Err(format!(
            "`{at} --version` failed ({said}); {why}. Fix: {fix}."
        ));
    }
    // clap prints `warden 0.1.0`.
    let found = run
        .stdout
        .split_whitespace()
        .nth(1)
        .filter(|_| run.stdout.starts_with("warden "));
    match found {
        Some(v) if v == version => Ok(()),
        Some(v) => Err(format!(
            "The warden CLI at {at} is version {v}, this app {version}; {why}. Fix: {fix}."
        )),
        None => Err(format!(
            "{at} is not the warden CLI (`--version` printed {:?}); {why}. Fix: {fix}.",
            run.stdout.trim()
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ran(success: bool, stdout: &str, stderr: &str) -> Result<VersionRun, std::io::Error> {
        Ok(VersionRun {
            success,
            stdout: stdout.into(),
            stderr: stderr.into(),
        })
    }

    #[test]
    fn the_same_version_passes_and_every_failure_says_what_is_wrong() {
        let at = Path::new("/opt/mcp-warden/warden");
        assert_eq!(judge(at, ran(true, "warden 0.1.0\n", ""), "0.1.0"), Ok(()));

        let missing = judge(at, Err(ErrorKind::NotFound.into()), "0.1.0").unwrap_err();
        assert!(
            missing.starts_with("The warden CLI is missing at /opt/mcp-warden/warden;"),
            "{missing}"
        );
        assert!(missing.contains("cargo build -p warden-cli"), "{missing}");

        let denied = judge(at, Err(ErrorKind::PermissionDenied.into()), "0.1.0").unwrap_err();
        assert!(
            denied.contains("cannot be run (permission denied)"),
            "{denied}"
        );

        let old = judge(at, ran(true, "warden 0.0.9\n", ""), "0.1.0").unwrap_err();
        assert!(old.contains("is version 0.0.9, this app 0.1.0"), "{old}");

        let failed = judge(at, ran(false, "", "error: boom\nmore\n"), "0.1.0").unwrap_err();
        assert!(
            failed.contains("--version` failed (error: boom)"),
            "{failed}"
        );

        let other = judge(at, ran(true, "ripgrep 14.1.0\n", ""), "0.1.0").unwrap_err();
        assert!(other.contains("is not the warden CLI"), "{other}");
    }
}
