//! What deserves a look in a server's command before Warden wraps it on its own: it runs as
//! root (`sudo`), it is a shell command line (a pipeline, `curl … | sh`), it fetches a
//! package at whatever version is current (`npx pkg`, `pkg@latest`, `uvx pkg`), its runner is
//! told to give it more (`docker run --privileged`, `-v /:/host`, `npx --registry URL`,
//! `uvx --index-url URL`), or its environment steers what programs load or where they look
//! (`LD_PRELOAD`, `PATH`, `NODE_OPTIONS`: [`STEERING_ENV`], the one list of them).
//!
//! Read from the argv and the variables' names only: nothing is run or fetched.

use serde::{Deserialize, Serialize};

mod env;
pub use env::{STEERING_ENV, document_env_risk, env_risks, steering_env};

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
    /// A runner's option gives the server more than the runner would on its own: a
    /// container's host access (`--privileged`, `-v`, `--network host`...) or packages from
    /// elsewhere (`npx --registry`, `uvx --index-url`, `--from`, `--with`...).
    RunnerOption,
    /// A variable of its environment steers what programs load or where they look
    /// (`LD_PRELOAD`, `PATH`, `NODE_OPTIONS`, `PYTHONPATH`...).
    LoaderEnv,
    /// Such a variable set by the server's own document (its fixed value or its default),
    /// not by you: high risk.
    LoaderEnvByDocument,
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
    runner_options(&name, rest, out);
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
    if python && let Some((_, v)) = spec.split_once("==") {
        return Some(v);
    }
    // Not the `@` of a scope: one after the first character.
    spec.get(1..)?.split_once('@').map(|(_, v)| v)
}

fn strip_version(python: bool, spec: &str) -> &str {
    if python && let Some((name, _)) = spec.split_once(['=', '<', '>', '~', '!']) {
        return name;
    }
    match spec.get(1..).and_then(|s| s.find('@')) {
        Some(i) => &spec[..=i],
        None => spec,
    }
}

/// [`risks`] of `command args`, then [`env_risks`] of the `env` names: what an entry of a
/// client's file (or one about to be added) deserves a look for.
pub fn entry_risks<'a>(
    command: &str,
    args: &[String],
    env: impl IntoIterator<Item = &'a String>,
) -> Vec<Risk> {
    let mut out = risks(command, args);
    out.extend(env_risks(env));
    out
}

/// Container runners whose options are read.
const CONTAINER_RUNNERS: &[&str] = &["docker", "podman", "nerdctl"];

/// The options of a container runner's `run` that give the container more of the host:
/// (option, the value it is flagged for (`None`: any), what it does). `--net` is docker's
/// old spelling of `--network`.
const CONTAINER_WIDENING: &[(&str, Option<&str>, &str)] = &[
    (
        "--privileged",
        None,
        "gives the container every capability and the host's devices: root in it is root on the host",
    ),
    ("-v", None, "mounts a host path into the container"),
    ("--volume", None, "mounts a host path into the container"),
    (
        "--mount",
        None,
        "mounts a host path or volume into the container",
    ),
    (
        "--network",
        Some("host"),
        "shares the host's network: the container reaches this machine's services",
    ),
    (
        "--net",
        Some("host"),
        "shares the host's network: the container reaches this machine's services",
    ),
    (
        "--pid",
        Some("host"),
        "shares the host's processes: the container sees them and can signal them",
    ),
    (
        "--ipc",
        Some("host"),
        "shares the host's IPC (shared memory, semaphores) with the container",
    ),
    (
        "--userns",
        Some("host"),
        "turns user namespace remapping off: root in the container is root on the host",
    ),
    (
        "--cap-add",
        None,
        "gives the container a capability it has not by default",
    ),
    ("--device", None, "gives the container a device of the host"),
    (
        "--security-opt",
        None,
        "changes the container's confinement (seccomp, AppArmor, SELinux)",
    ),
    (
        "--entrypoint",
        None,
        "runs another program in the image than its own entrypoint",
    ),
];

/// Options of a container runner's `run` that take a value and widen nothing (read past).
const CONTAINER_VALUES: &[&str] = &[
    "-e",
    "--env",
    "--env-file",
    "--name",
    "-w",
    "--workdir",
    "-u",
    "--user",
    "--cap-drop",
    "-p",
    "--publish",
    "-l",
    "--label",
    "--label-file",
    "--platform",
    "-m",
    "--memory",
    "--cpus",
    "--add-host",
    "--dns",
    "--dns-search",
    "--dns-option",
    "-h",
    "--hostname",
    "--tmpfs",
    "--ulimit",
    "--log-driver",
    "--log-opt",
    "--restart",
    "--runtime",
    "--gpus",
    "--group-add",
    "--volumes-from",
    "--shm-size",
    "--pull",
    "--stop-signal",
    "--stop-timeout",
    "--cidfile",
    "--ip",
    "--ip6",
    "--mac-address",
    "--expose",
    "--uts",
    "--cgroupns",
    "--cgroup-parent",
    "--cpuset-cpus",
    "--cpu-shares",
    "-c",
    "--memory-swap",
    "--pids-limit",
    "-a",
    "--attach",
    "--detach-keys",
    "--network-alias",
    "--sysctl",
    "--storage-opt",
    "--health-cmd",
    "--health-interval",
    "--oom-score-adj",
    "--device-cgroup-rule",
    "--arch",
    "--os",
    "--variant",
    "--pod",
    "--secret",
    "--annotation",
    "--blkio-weight",
];

/// `npx` (`npm exec`) options before the package: (option, takes a value, what it does).
const NPX_WIDENING: &[(&str, &str)] = &[
    (
        "--registry",
        "fetches packages from another registry than npm's",
    ),
    (
        "-c",
        "runs a shell command line instead of the package's own command",
    ),
    (
        "--call",
        "runs a shell command line instead of the package's own command",
    ),
    (
        "-p",
        "installs a package of its choosing for the command it runs",
    ),
    (
        "--package",
        "installs a package of its choosing for the command it runs",
    ),
];
const NPX_VALUES: &[&str] = &["--cache", "--userconfig", "--workspace", "-w"];

/// `uvx` (`uv tool run`) options before the package.
const UVX_WIDENING: &[(&str, &str)] = &[
    (
        "--index-url",
        "fetches packages from another index than PyPI",
    ),
    ("-i", "fetches packages from another index than PyPI"),
    (
        "--index",
        "fetches packages from another index besides PyPI",
    ),
    (
        "--default-index",
        "fetches packages from another index than PyPI",
    ),
    (
        "--extra-index-url",
        "fetches packages from another index besides PyPI, whose package of the same name can be taken instead",
    ),
    (
        "--from",
        "installs the command from another package (or a URL or a path) than its name says",
    ),
    ("--with", "installs more packages beside the server"),
    ("-w", "installs more packages beside the server"),
    (
        "--find-links",
        "fetches packages from a folder or a page of links",
    ),
    ("-f", "fetches packages from a folder or a page of links"),
];
const UVX_VALUES: &[&str] = &[
    "--python",
    "-p",
    "--directory",
    "--with-editable",
    "--with-requirements",
    "--constraints",
    "--overrides",
    "--index-strategy",
    "--keyring-provider",
    "--resolution",
    "--prerelease",
    "--exclude-newer",
    "--cache-dir",
    "--link-mode",
    "--refresh-package",
    "--reinstall-package",
    "--upgrade-package",
    "--config-setting",
    "-C",
    "--config-file",
    "--python-preference",
];

/// `a` as an option and its value written in the same word: `--opt=value`, or `-vVALUE`
/// (`-v=VALUE`) for a one-letter option that takes one.
fn split_option<'a>(a: &'a str, takes_value: &dyn Fn(&str) -> bool) -> (&'a str, Option<&'a str>) {
    if a.starts_with("--") {
        return match a.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (a, None),
        };
    }
    match (a.get(..2), a.get(2..)) {
        (Some(flag), Some(value)) if !value.is_empty() && takes_value(flag) => {
            (flag, Some(value.strip_prefix('=').unwrap_or(value)))
        }
        _ => (a, None),
    }
}

/// Runner options that widen what the server gets, read up to what the runner starts.
fn runner_options(name: &str, rest: &[&str], out: &mut Vec<Risk>) {
    if CONTAINER_RUNNERS.contains(&name) {
        container_options(name, rest, out);
        return;
    }
    let (rest, widening, values): (&[&str], &[(&str, &str)], &[&str]) =
        match (name, rest.first().copied()) {
            ("npx", _) => (rest, NPX_WIDENING, NPX_VALUES),
            ("npm", Some("exec" | "x")) => (&rest[1..], NPX_WIDENING, NPX_VALUES),
            ("uvx", _) => (rest, UVX_WIDENING, UVX_VALUES),
            ("uv", Some("tool")) if rest.get(1) == Some(&"run") => {
                (&rest[2..], UVX_WIDENING, UVX_VALUES)
            }
            _ => return,
        };
    let takes_value = |f: &str| values.contains(&f) || widening.iter().any(|(o, _)| *o == f);
    let mut i = 0;
    while let Some(a) = rest.get(i).copied() {
        if a == "--" || !a.starts_with('-') {
            return;
        }
        let (flag, inline) = split_option(a, &takes_value);
        if let Some((_, what)) = widening.iter().find(|(o, _)| *o == flag) {
            let shown = match inline.or_else(|| rest.get(i + 1).copied()) {
                Some(v) => format!("{flag} {v}"),
                None => flag.to_owned(),
            };
            out.push(Risk {
                kind: RiskKind::RunnerOption,
                detail: format!("{name} {shown}: {what}"),
            });
        }
        i += if inline.is_none() && takes_value(flag) {
            2
        } else {
            1
        };
    }
}

/// `docker run` (`create`, `exec`, `container run`...) options that give the container more
/// of the host, and variables given to it (`-e NAME=VALUE`) that steer loading or paths.
fn container_options(name: &str, rest: &[&str], out: &mut Vec<Risk>) {
    // The subcommand: past the runner's own options (`docker --context X run`).
    let global_values = [
        "-H",
        "--host",
        "--context",
        "-c",
        "--config",
        "-l",
        "--log-level",
    ];
    let mut i = 0;
    while let Some(a) = rest.get(i) {
        if !a.starts_with('-') {
            break;
        }
        i += if global_values.contains(a) { 2 } else { 1 };
    }
    if rest.get(i) == Some(&"container") {
        i += 1;
    }
    if !matches!(rest.get(i).copied(), Some("run" | "create" | "exec")) {
        return;
    }
    let rest = &rest[i + 1..];
    let takes_value = |f: &str| {
        CONTAINER_VALUES.contains(&f)
            || (f != "--privileged" && CONTAINER_WIDENING.iter().any(|(o, _, _)| *o == f))
    };
    let mut i = 0;
    while let Some(a) = rest.get(i).copied() {
        if a == "--" || !a.starts_with('-') {
            return;
        }
        let (flag, inline) = split_option(a, &takes_value);
        let value = inline.or_else(|| {
            takes_value(flag)
                .then(|| rest.get(i + 1).copied())
                .flatten()
        });
        for (option, only, what) in CONTAINER_WIDENING {
            if *option != flag || only.is_some_and(|o| Some(o) != value) {
                continue;
            }
            let shown = match value {
                Some(v) if *option != "--privileged" => format!("{flag} {v}"),
                _ => flag.to_owned(),
            };
            out.push(Risk {
                kind: RiskKind::RunnerOption,
                detail: format!("{name} {shown}: {what}"),
            });
        }
        // `-e NAME=VALUE` sets it here; `-e NAME` passes on the server's own (flagged as such).
        if matches!(flag, "-e" | "--env")
            && let Some((var, _)) = value.and_then(|v| v.split_once('='))
            && let Some(what) = steering_env(var)
        {
            out.push(Risk {
                kind: RiskKind::LoaderEnv,
                detail: format!(
                    "{name} {flag} {var}: sets {var} in the container, which steers {what}"
                ),
            });
        }
        i += if inline.is_none() && takes_value(flag) {
            2
        } else {
            1
        };
    }
}

#[cfg(test)]
mod tests;
