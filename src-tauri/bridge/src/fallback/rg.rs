//! The `rg` process engine: an argv (never a shell), stdin null, no config file, output read
//! incrementally and the process killed once the cap is passed.

use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

use super::query::{Mode, Outcome, Query};

/// How much of rg's stderr is kept for an error result.
const STDERR_KEEP: usize = 64 * 1024;

/// Runs `query` with the rg binary `rg`, in `cwd` (the first root).
pub(super) async fn run(rg: &Path, cwd: &Path, query: &Query, cap: usize) -> Outcome {
    let mut cmd = Command::new(rg);
    cmd.args(argv(query))
        .current_dir(cwd)
        .env_remove("RIPGREP_CONFIG_PATH")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    tracing::debug!(rg = %rg.display(), args = ?argv(query), "running");
    let run = match capture(cmd, cap).await {
        Ok(run) => run,
        Err(e) => return Outcome::Failed(format!("Error: could not run {}: {e}", rg.display())),
    };
    let stderr = String::from_utf8_lossy(&run.stderr);
    if run.cut || matches!(run.status.code(), Some(0 | 1)) {
        if !stderr.is_empty() {
            tracing::debug!("rg stderr: {stderr}");
        }
        return Outcome::Output {
            bytes: run.stdout,
            cut: run.cut,
        };
    }
    // The text mcp-ripgrep gives (node reports a death by signal as code null).
    let code = run
        .status
        .code()
        .map_or_else(|| "null".to_owned(), |c| c.to_string());
    Outcome::Failed(format!(
        "Error: Command failed with exit code {code}\n{stderr}"
    ))
}

/// rg's arguments for `query`: the flags `mcp-ripgrep` passes, in long form, with every value
/// glued to its flag (`--glob=…`) and the path after `--`, so no value can become a flag.
fn argv(q: &Query) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["--no-config".into()];
    let mut flag = |on: bool, name: &str| {
        if on {
            args.push(name.into());
        }
    };
    flag(q.mode == Mode::Files, "--files");
    flag(q.mode == Mode::TypeList, "--type-list");
    flag(q.case_sensitive == Some(true), "--case-sensitive");
    flag(q.case_sensitive == Some(false), "--ignore-case");
    flag(q.fixed_strings, "--fixed-strings");
    flag(q.invert, "--invert-match");
    flag(q.word, "--word-regexp");
    flag(q.hidden, "--hidden");
    flag(q.follow, "--follow");
    flag(q.mode == Mode::FilesWithMatches, "--files-with-matches");
    flag(q.mode == Mode::Count, "--count");
    flag(q.mode == Mode::CountMatches, "--count-matches");
    if matches!(q.mode, Mode::Lines | Mode::FilesWithMatches) {
        flag(q.line_numbers, "--line-number");
        flag(!q.line_numbers, "--no-line-number");
    }
    let mut valued = |name: &str, value: Option<String>| {
        if let Some(value) = value {
            args.push(format!("{name}={value}").into());
        }
    };
    valued("--glob", q.glob.clone());
    valued("--type", q.file_type.clone());
    valued("--max-count", q.max_count.map(|n| n.to_string()));
    valued("--context", (q.context > 0).then(|| q.context.to_string()));
    let color = if q.colors { "always" } else { "never" };
    valued("--color", Some(color.to_owned()));
    if !matches!(q.mode, Mode::Files | Mode::TypeList) {
        valued("--regexp", Some(q.pattern.clone()));
    }
    if q.mode != Mode::TypeList {
        args.push("--".into());
        args.push(q.path.clone().into_os_string());
    }
    args
}

/// What a finished (or killed) process wrote.
#[derive(Debug)]
pub(super) struct Capture {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// stdout passed `cap` and the process was killed.
    pub cut: bool,
    pub status: ExitStatus,
}

/// Spawns `cmd` (stdout and stderr piped) and reads its stdout until EOF or until more than
/// `cap` bytes came, then kills it. stderr is drained, keeping its first [`STDERR_KEEP`] bytes.
pub(super) async fn capture(mut cmd: Command, cap: usize) -> io::Result<Capture> {
    let mut child = cmd.spawn()?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(io::Error::other("stdout and stderr must be piped"));
    };
    let stdout = async {
        let read = read_capped(stdout, cap).await;
        if !matches!(read, Ok((_, false))) {
            let _ = child.start_kill();
        }
        read
    };
    let stderr = async {
        let mut stderr = stderr;
        let mut kept = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            let n = stderr.read(&mut chunk).await?;
            if n == 0 {
                return Ok::<_, io::Error>(kept);
            }
            let room = STDERR_KEEP.saturating_sub(kept.len());
            kept.extend_from_slice(&chunk[..n.min(room)]);
        }
    };
    let (out, err) = tokio::join!(stdout, stderr);
    let status = child.wait().await?;
    let (stdout, cut) = out?;
    Ok(Capture {
        stdout,
        stderr: err?,
        cut,
        status,
    })
}

/// Reads until EOF, or until more than `cap` bytes (then `true`).
async fn read_capped(mut src: impl AsyncRead + Unpin, cap: usize) -> io::Result<(Vec<u8>, bool)> {
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = src.read(&mut chunk).await?;
        if n == 0 {
            return Ok((buf, false));
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > cap {
            return Ok((buf, true));
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use warden_config::testing::require_tool;

    #[test]
    fn user_values_never_stand_alone_and_the_path_follows_a_double_dash() {
        let q = Query {
            pattern: "-e".into(),
            path: "-x".into(),
            glob: Some("-g".into()),
            file_type: Some("--files".into()),
            line_numbers: true,
            ..Query::default()
        };
        let args: Vec<String> = argv(&q)
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        assert_eq!(
            args,
            [
                "--no-config",
                "--line-number",
                "--glob=-g",
                "--type=--files",
                "--color=never",
                "--regexp=-e",
                "--",
                "-x"
            ]
        );
    }

    #[tokio::test]
    async fn endless_output_is_cut_and_the_process_killed() {
        let Some(yes) = require_tool("yes") else {
            return;
        };
        let mut cmd = Command::new(yes);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let run = capture(cmd, 100_000).await.unwrap();
        assert!(run.cut);
        assert!(run.stdout.len() > 100_000 && run.stdout.len() <= 100_000 + 64 * 1024);
        assert_eq!(run.status.code(), None, "killed by a signal");
    }

    #[tokio::test]
    async fn failures_read_like_mcp_ripgrep() {
        let Some(rg) = require_tool("rg") else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let q = Query {
            pattern: "(".into(),
            path: ".".into(),
            ..Query::default()
        };
        let Outcome::Failed(text) = run(&rg, dir.path(), &q, 1000).await else {
            panic!("a bad regex must fail");
        };
        assert!(
            text.starts_with("Error: Command failed with exit code 2\nregex parse error"),
            "{text}"
        );
    }
}
