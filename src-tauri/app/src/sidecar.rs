//! The bundled `warden` CLI (the sidecar). Every IDE entry Warden wraps runs it, so the host
//! checks at start, through `tauri-plugin-shell`'s sidecar API, that it is there and of the
//! app's version. The plugin runs the program itself with `--version`: never a shell.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tauri::{AppHandle, Runtime};
use tauri_plugin_shell::ShellExt;
use tauri_plugin_shell::process::{Command, CommandEvent};

/// The sidecar's name beside the app's executable (`bundle.externalBin` in
/// src-tauri/app/tauri.bundle.json; bundles drop the target-triple suffix).
pub const NAME: &str = "warden";
const TIMEOUT: Duration = Duration::from_secs(10);

/// The `warden` the wrapped IDE entries run: `$WARDEN_BIN` as given, else the sidecar beside
/// this executable (`target/debug/warden` in a dev build), canonical when it is there.
pub fn path() -> PathBuf {
    if let Some(p) = given() {
        return p;
    }
    let beside = crate::desktop::beside_me(NAME);
    std::fs::canonicalize(&beside).unwrap_or(beside)
}

/// `$WARDEN_BIN`, when set.
pub fn given() -> Option<PathBuf> {
    std::env::var_os("WARDEN_BIN")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
}

/// What a run of a sidecar did.
#[derive(Debug)]
pub struct Run {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `warden --version` through the shell plugin (the sidecar, or `$WARDEN_BIN`: never a
/// shell) and judges it against the app's version.
pub async fn check<R: Runtime>(app: &AppHandle<R>) -> Result<(), String> {
    check_at(app, given()).await
}

/// [`check`] of the CLI at `at`, or of the sidecar when `None`.
pub async fn check_at<R: Runtime>(app: &AppHandle<R>, at: Option<PathBuf>) -> Result<(), String> {
    let shown = at.clone().unwrap_or_else(path);
    let command = match at {
        Some(p) => Ok(app.shell().command(p)),
        None => app.shell().sidecar(NAME),
    };
    let run = match command {
        Ok(command) => run(command.arg("--version"), TIMEOUT).await,
        Err(e) => Err(std::io::Error::other(e.to_string())),
    };
    judge(&shown, run, env!("CARGO_PKG_VERSION"))
}

/// Runs `command` to its end, `timeout` at most (then it is killed).
async fn run(command: Command, timeout: Duration) -> Result<Run, std::io::Error> {
    let (mut events, child) = command.spawn().map_err(|e| match e {
        tauri_plugin_shell::Error::Io(e) => e,
        e => std::io::Error::other(e.to_string()),
    })?;
    let (mut stdout, mut stderr, mut code) = (String::new(), String::new(), None);
    let ran = tokio::time::timeout(timeout, async {
        while let Some(event) = events.recv().await {
            match event {
                CommandEvent::Stdout(line) => stdout.push_str(&String::from_utf8_lossy(&line)),
                CommandEvent::Stderr(line) => stderr.push_str(&String::from_utf8_lossy(&line)),
                CommandEvent::Terminated(end) => code = end.code,
                _ => {}
            }
        }
    })
    .await;
    if ran.is_err() {
        let _ = child.kill();
        return Err(std::io::Error::new(
            ErrorKind::TimedOut,
            format!("no end in {} s", timeout.as_secs()),
        ));
    }
    Ok(Run {
        success: code == Some(0),
        stdout,
        stderr,
    })
}

/// The MCP Registry's program beside the app (`bundle.externalBin`): it does the HTTP.
pub const REGISTRY: &str = "warden-registry";
/// A search is one GET, a plan two, each given 10 s by the program itself.
const REGISTRY_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs `warden-registry ARGS` through the shell plugin (the sidecar, or
/// `$WARDEN_REGISTRY_BIN`: never a shell): its stdout, or its message (which has its code).
pub async fn registry<R: Runtime>(app: &AppHandle<R>, args: &[String]) -> Result<String, String> {
    let fix = "Fix: reinstall MCP Warden (warden-registry belongs beside warden-app), or set WARDEN_REGISTRY_BIN to it";
    let command = match std::env::var_os("WARDEN_REGISTRY_BIN").filter(|p| !p.is_empty()) {
        Some(p) => Ok(app.shell().command(p)),
        None => app.shell().sidecar(REGISTRY),
    }
    .map_err(|e| format!("cannot run {REGISTRY}: {e}. {fix}"))?;
    let ran = run(command.args(args), REGISTRY_TIMEOUT)
        .await
        .map_err(|e| format!("cannot run {REGISTRY}: {e}. {fix}"))?;
    if ran.success {
        return Ok(ran.stdout);
    }
    let said = ran.stderr.lines().rev().find(|l| !l.trim().is_empty());
    Err(said.map_or_else(
        || format!("{REGISTRY} failed without saying why. {fix}"),
        |l| l.trim().trim_start_matches("warden: ").to_owned(),
    ))
}

/// Whether the CLI at `path`, whose `--version` did `run`, serves an app of `version`; the
/// error says what is wrong and what to do.
pub fn judge(path: &Path, run: Result<Run, std::io::Error>, version: &str) -> Result<(), String> {
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

    fn ran(success: bool, stdout: &str, stderr: &str) -> Result<Run, std::io::Error> {
        Ok(Run {
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

/// The check as the host runs it: through the shell plugin, on a Tauri app (the mock runtime
/// here), against a CLI that is missing and one of another version.
#[cfg(test)]
mod through_the_plugin {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn check(cli: PathBuf) -> Result<(), String> {
        let app = tauri::test::mock_builder()
            .plugin(tauri_plugin_shell::init())
            .build(tauri::test::mock_context(tauri::test::noop_assets()))
            .unwrap();
        tauri::async_runtime::block_on(check_at(app.handle(), Some(cli)))
    }

    #[test]
    fn a_missing_cli_is_named_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let e = check(dir.path().join("warden")).unwrap_err();
        assert!(
            e.starts_with("The warden CLI is missing at ") && e.contains("Fix: reinstall"),
            "{e}"
        );
    }

    /// A shell script stands in for the CLI (Unix).
    #[cfg(unix)]
    #[test]
    fn a_cli_of_another_version_is_named() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("warden");
        std::fs::write(&old, "#!/bin/sh\necho 'warden 0.0.9'\n").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = check(old).unwrap_err();
        let version = env!("CARGO_PKG_VERSION");
        assert!(
            e.contains(&format!("is version 0.0.9, this app {version}")),
            "{e}"
        );
    }
}
