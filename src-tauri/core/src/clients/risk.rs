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
/// Programs that run the rest of their arguments as a command: looked through.
const WRAPPERS: &[&str] = &[
    "env", "nice", "nohup", "timeout", "stdbuf", "ionice", "chrt", "time", "exec",
];
/// Options of sudo and its kind that take a value (`sudo -u bob CMD`).
const ELEVATE_VALUES: &[&str] = &[
    "-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-c", "-l",
];

/// Whether `a` asks a shell to run the next argument as a command line: `-c`, a cluster with
/// `c` in it (`-ec`, `-lc`), `/c`, `/k` (cmd) or `-Command` (PowerShell).
fn shell_flag(a: &str) -> bool {
    let lower = a.to_ascii_lowercase();
    matches!(lower.as_str(), "/c" | "/k" | "-command")
        || (lower.starts_with('-')
            && !lower.starts_with("--")
            && lower.len() <= 6
            && lower[1..].chars().all(|c| c.is_ascii_alphabetic())
            && lower.contains('c'))
}

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
        // What it elevates: the first word that is not one of its options or their values.
        scan(command_after(rest, ELEVATE_VALUES), out);
        return;
    }
    if WRAPPERS.contains(&name.as_str()) {
        let rest = command_after(rest, &["-u", "-n", "-s", "-k", "-i", "-o", "-e", "-c"]);
        // `env K=V CMD`, `timeout 30 CMD`.
        let skip = rest
            .iter()
            .take_while(|a| a.contains('=') || a.starts_with(|c: char| c.is_ascii_digit()))
            .count();
        scan(&rest[skip..], out);
        return;
    }
    if SHELLS.contains(&name.as_str()) {
        if let Some(i) = rest.iter().position(|a| shell_flag(a)) {
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

/// `args` from the first word that is not an option (nor the value of one of `with_value`).
fn command_after<'a, 'b>(args: &'a [&'b str], with_value: &[&str]) -> &'a [&'b str] {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if *a == "--" {
            return &args[i + 1..];
        }
        if !a.starts_with('-') {
            return &args[i..];
        }
        i += if with_value.contains(a) { 2 } else { 1 };
    }
    &[]
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
    // Options whose value is not the package (`uvx --python 3.12 pkg`, `npx --cache DIR pkg`).
    let with_value: &[&str] = if python {
        &[
            "--python",
            "-p",
            "--index-url",
            "-i",
            "--extra-index-url",
            "--with",
            "-w",
            "--directory",
            "--index",
            "--default-index",
        ]
    } else {
        &[
            "--cache",
            "--registry",
            "--userconfig",
            "--call",
            "-c",
            "--workspace",
            "-w",
        ]
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
        i += if with_value.contains(&a) { 2 } else { 1 };
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
        // npm: `pkg@1` and `pkg@1.2` are ranges; only major.minor.patch is one version.
        let parts = if python { 1..=4 } else { 3..=3 };
        v.split(['-', '+']).next().is_some_and(|core| {
            let numbers: Vec<&str> = core.split('.').collect();
            parts.contains(&numbers.len()) && numbers.iter().all(|n| n.parse::<u64>().is_ok())
        })
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
