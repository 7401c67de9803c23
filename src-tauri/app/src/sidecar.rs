//! The bundled `warden` CLI (the sidecar). Every IDE entry Warden wraps runs it, so the app
//! checks at start, through the shell plugin's sidecar API, that it is there and of the app's
//! version. The plugin runs the program itself with the given arguments: never a shell.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tauri::AppHandle;
use tauri_plugin_shell::ShellExt as _;
use tauri_plugin_shell::process::Command;

/// The sidecar's name in `bundle.externalBin` (bundles drop the target-triple suffix).
pub const NAME: &str = "warden";
const TIMEOUT: Duration = Duration::from_secs(10);

/// The `warden` the wrapped IDE entries run: `$WARDEN_BIN`, else the sidecar beside this
/// executable as the shell plugin resolves it (`target/debug/warden` in a dev build).
pub fn command(app: &AppHandle) -> Result<Command, String> {
    match std::env::var_os("WARDEN_BIN").filter(|p| !p.is_empty()) {
        Some(path) => Ok(app.shell().command(path)),
        None => app.shell().sidecar(NAME).map_err(|e| e.to_string()),
    }
}

/// The program `command` runs.
pub fn path(command: Command) -> PathBuf {
    std::process::Command::from(command).get_program().into()
}

/// What `warden --version` did.
#[derive(Debug)]
pub struct VersionRun {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `warden --version` and judges it against the app's version.
pub async fn check(app: &AppHandle) -> Result<(), String> {
    let shown = path(command(app)?);
    let output = tokio::time::timeout(TIMEOUT, command(app)?.arg("--version").output()).await;
    let run = match output {
        Err(_) => Err(std::io::Error::new(
            ErrorKind::TimedOut,
            format!("no answer to --version in {} s", TIMEOUT.as_secs()),
        )),
        Ok(Err(tauri_plugin_shell::Error::Io(e))) => Err(e),
        Ok(Err(e)) => Err(std::io::Error::other(e.to_string())),
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

    /// The webview may listen to events and run the bundled `warden` sidecar with
    /// `--version`, and nothing else: no other program, no argument, no shell, no opener
    /// (docs/ARCHITECTURE.md says why).
    #[test]
    fn the_capabilities_allow_events_and_the_sidecars_version_only() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src-tauri/app/capabilities");
        let mut granted = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let capability: serde_json::Value = serde_json::from_str(&text).unwrap();
            granted.extend(
                capability["permissions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .cloned(),
            );
        }
        let sidecar = serde_json::json!({
            "identifier": "shell:allow-execute",
            "allow": [{ "name": "src-tauri/app/binaries/warden", "sidecar": true, "args": ["--version"] }]
        });
        let (events, others): (Vec<_>, Vec<_>) = granted
            .into_iter()
            .partition(|p| p.as_str().is_some_and(|p| p.starts_with("core:event:")));
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(others, vec![sidecar]);
    }
}
