//! What deserves a look in a server's command before Warden wraps it on its own: it runs as
//! root (`sudo`), it is a shell command line (a pipeline, `curl … | sh`), or it fetches a
//! package at whatever version is current (`npx pkg`, `pkg@latest`, `uvx pkg`).
//!
//! Read from the argv only: nothing is run or fetched.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum RiskKind {
    /// Runs as another user (root) through sudo, doas, pkexec, su or runas.
    Sudo,
    /// A shell runs a command line (`sh -c`, `bash -c`, `cmd /c`, `powershell -Command`).
    Shell,
    /// A package runner fetches a package without an exact version.
    Unpinned,
}

/// One thing to look at, with the part of the command it is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Risk {
    pub kind: RiskKind,
    pub detail: String,
}

const ELEVATE: &[&str] = &["sudo", "doas", "pkexec", "su", "runas"];
const SHELLS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "cmd",
    "powershell",
    "pwsh",
];
const SHELL_FLAGS: &[&str] = &["-c", "-lc", "-ic", "/c", "/k", "-command"];

/// The program's name without directory and Windows extension, lower case.
fn program(arg: &str) -> String {
    let base = arg
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(arg)
        .to_ascii_lowercase();
    for ext in [".exe", ".cmd", ".bat"] {
        if let Some(stem) = base.strip_suffix(ext) {
            return stem.to_owned();
        }
    }
    base
}

/// Everything in `command args` that deserves a look, in the order met.
pub fn risks(command: &str, args: &[String]) -> Vec<Risk> {
    let argv: Vec<&str> = std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .collect();
    let mut out = Vec::new();
    scan(&argv, &mut out);
    out.dedup();
    out
}

fn scan(argv: &[&str], out: &mut Vec<Risk>) {
    let Some((first, rest)) = argv.split_first() else {
        return;
    };
    let name = program(first);
    if ELEVATE.contains(&name.as_str()) {
        out.push(Risk {
            kind: RiskKind::Sudo,
            detail: format!("runs as root through {name}"),
        });
        // What it elevates: the first word that is not one of its options.
        if let Some(i) = rest.iter().position(|a| !a.starts_with('-')) {
            scan(&rest[i..], out);
        }
        return;
    }
    if SHELLS.contains(&name.as_str()) {
        if let Some(i) = rest
            .iter()
            .position(|a| SHELL_FLAGS.contains(&a.to_ascii_lowercase().as_str()))
        {
            let line = rest[i + 1..].join(" ");
            shell_line(&name, &line, out);
        }
        return;
    }
    unpinned(&name, rest, out);
}

/// A shell command line: flagged as such, and what its words run is scanned too.
fn shell_line(shell: &str, line: &str, out: &mut Vec<Risk>) {
    let piped_into_shell = line.split('|').skip(1).any(|part| {
        part.split_whitespace()
            .next()
            .is_some_and(|w| SHELLS.contains(&program(w).as_str()))
    });
    let detail = if piped_into_shell {
        format!("{shell} runs a command line that pipes into a shell: {line}")
    } else {
        format!("{shell} runs a command line: {line}")
    };
    out.push(Risk {
        kind: RiskKind::Shell,
        detail,
    });
    for part in line.split(['|', ';', '&', '\n']) {
        let words: Vec<&str> = part
            .split_whitespace()
            .map(|w| w.trim_matches(['"', '\'', '(', ')', '`', '$']))
            .filter(|w| !w.is_empty())
            .collect();
        if !words.is_empty() {
            scan(&words, out);
        }
    }
}

/// `npx pkg`, `npx pkg@latest`, `uvx pkg`, `pipx run pkg`, `pnpm dlx pkg`...: the package
/// spec, flagged unless it names an exact version.
fn unpinned(name: &str, rest: &[&str], out: &mut Vec<Risk>) {
    let (python, rest) = match (name, rest.first().copied()) {
        ("npx" | "bunx" | "pnpx", _) => (false, rest),
        ("pnpm" | "yarn", Some("dlx")) | ("npm", Some("exec" | "x")) => (false, &rest[1..]),
        ("uvx", _) => (true, rest),
        ("pipx", Some("run")) => (true, &rest[1..]),
        ("uv", Some("tool")) if rest.get(1) == Some(&"run") => (true, &rest[2..]),
        _ => return,
    };
    let Some(spec) = package(python, rest) else {
        return;
    };
    if local(spec) || pinned(python, spec) {
        return;
    }
    let fix = if python {
        format!("{}==1.2.3", strip_version(true, spec))
    } else {
        format!("{}@1.2.3", strip_version(false, spec))
    };
    out.push(Risk {
        kind: RiskKind::Unpinned,
        detail: format!(
            "{name} fetches {spec} at whatever version is current at each start; pin one ({fix})"
        ),
    });
}

/// The package a runner starts: `--package X` / `-p X` / `--from X` when given, else the
/// first word that is not an option.
fn package<'a>(python: bool, rest: &[&'a str]) -> Option<&'a str> {
    let explicit: &[&str] = if python {
        &["--from"]
    } else {
        &["--package", "-p"]
    };
    let mut i = 0;
    while i < rest.len() {
        let a = rest[i];
        if explicit.contains(&a) {
            return rest.get(i + 1).copied();
        }
        if let Some(v) = explicit
            .iter()
            .find_map(|f| a.strip_prefix(f).and_then(|v| v.strip_prefix('=')))
        {
            return Some(v);
        }
        if a == "--" {
            return rest.get(i + 1).copied();
        }
        if !a.starts_with('-') {
            return Some(a);
        }
        i += 1;
    }
    None
}

fn local(spec: &str) -> bool {
    spec.starts_with(['.', '/', '~'])
        || spec.starts_with("file:")
        || spec.contains("://")
        || spec.starts_with("git+")
        || spec.starts_with("github:")
        || (spec.len() > 1 && spec.as_bytes()[1] == b':')
}

/// `pkg@1.2.3`, `@scope/pkg@1.2.3`; Python: `pkg==1.2.3` or `pkg@1.2.3`.
fn pinned(python: bool, spec: &str) -> bool {
    version(python, spec).is_some_and(|v| {
        let v = v.strip_prefix('v').unwrap_or(v);
        v.starts_with(|c: char| c.is_ascii_digit())
            && v.split(['-', '+'])
                .next()
                .is_some_and(|core| core.split('.').all(|n| n.parse::<u64>().is_ok()))
    })
}

fn version(python: bool, spec: &str) -> Option<&str> {
    if python {
        if let Some((_, v)) = spec.split_once("==") {
            return Some(v);
        }
    }
    // Not the `@` of a scope: one after the first character.
    spec.get(1..)?.split_once('@').map(|(_, v)| v)
}

fn strip_version(python: bool, spec: &str) -> &str {
    if python {
        if let Some((name, _)) = spec.split_once(['=', '<', '>', '~', '!']) {
            return name;
        }
    }
    match spec.get(1..).and_then(|s| s.find('@')) {
        Some(i) => &spec[..=i],
        None => spec,
    }
}
