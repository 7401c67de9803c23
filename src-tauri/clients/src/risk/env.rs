//! The variables of a server's environment that steer what programs load or where they
//! look ([`STEERING_ENV`], the one list of them), and the risks of setting them.

use super::{Risk, RiskKind};

/// Environment variables that steer what a program loads or where it looks, and what each
/// does: exact names, or prefixes ending in `*`; matched whatever their case (npm reads its
/// `npm_config_*` so, and Windows' names have no case). The one list of them.
pub const STEERING_ENV: &[(&str, &str)] = &[
    (
        "LD_*",
        "the dynamic loader: libraries put into every program it starts (LD_PRELOAD) or where they are looked for",
    ),
    (
        "DYLD_*",
        "macOS's dynamic loader: libraries put into every program it starts or where they are looked for",
    ),
    (
        "PATH",
        "where programs are looked for: another program can run under a known name",
    ),
    (
        "HOME",
        "the home folder, where programs read their configuration and keys",
    ),
    ("XDG_*", "where programs read their configuration and data"),
    (
        "WARDEN_*",
        "Warden's own settings (its config, its state, the sandbox)",
    ),
    (
        "NODE_OPTIONS",
        "options of every node started, such as a module it loads first (--require)",
    ),
    ("NODE_PATH", "where node looks for modules"),
    (
        "NODE_EXTRA_CA_CERTS",
        "certificates node trusts: its connections can be intercepted",
    ),
    (
        "PYTHON*",
        "Python's start-up: modules it imports first or where it looks for them (PYTHONPATH, PYTHONSTARTUP, PYTHONHOME)",
    ),
    (
        "BASH_ENV",
        "a script every bash that runs a script reads first",
    ),
    ("ENV", "a script every POSIX shell reads first"),
    (
        "PERL5OPT",
        "options of every perl started, such as a module it loads first",
    ),
    ("PERL5LIB", "where perl looks for modules"),
    ("PERLLIB", "where perl looks for modules"),
    (
        "RUBYOPT",
        "options of every ruby started, such as a library it loads first",
    ),
    ("RUBYLIB", "where ruby looks for libraries"),
    (
        "JAVA_TOOL_OPTIONS",
        "options of every JVM started, such as an agent it loads first",
    ),
    (
        "_JAVA_OPTIONS",
        "options of every JVM started, such as an agent it loads first",
    ),
    (
        "JDK_JAVA_OPTIONS",
        "options of every `java` started, such as an agent it loads first",
    ),
    ("CLASSPATH", "where Java looks for classes"),
    (
        "DOTNET_STARTUP_HOOKS",
        "assemblies every .NET program loads first",
    ),
    (
        "NPM_CONFIG_*",
        "npm's settings: the registry packages come from, scripts it runs",
    ),
    (
        "UV_*",
        "uv's settings: the index packages come from, the Python it runs",
    ),
    ("PIP_*", "pip's settings: the index packages come from"),
    (
        "GIT_*",
        "git's settings: programs it runs (GIT_SSH_COMMAND), the configuration it reads",
    ),
    (
        "SSL_CERT_FILE",
        "certificates OpenSSL trusts: connections can be intercepted",
    ),
    (
        "SSL_CERT_DIR",
        "certificates OpenSSL trusts: connections can be intercepted",
    ),
];

/// `PYTHON*` variables that only change output, encoding or hashing: not flagged.
const PYTHON_HARMLESS: &[&str] = &[
    "PYTHONUNBUFFERED",
    "PYTHONIOENCODING",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUTF8",
    "PYTHONHASHSEED",
    "PYTHONFAULTHANDLER",
    "PYTHONNOUSERSITE",
    "PYTHONLEGACYWINDOWSSTDIO",
];

/// What setting `name` in a server's environment steers, if it is one of [`STEERING_ENV`].
pub fn steering_env(name: &str) -> Option<&'static str> {
    let upper = name.trim().to_ascii_uppercase();
    if PYTHON_HARMLESS.contains(&upper.as_str()) {
        return None;
    }
    STEERING_ENV.iter().find_map(|(pattern, what)| {
        let hit = match pattern.strip_suffix('*') {
            Some(prefix) => upper.starts_with(prefix),
            None => upper == *pattern,
        };
        hit.then_some(*what)
    })
}

/// The variables among `names` (an entry's `env`) that steer loading or paths, flagged.
pub fn env_risks<'a>(names: impl IntoIterator<Item = &'a String>) -> Vec<Risk> {
    names
        .into_iter()
        .filter_map(|name| {
            steering_env(name).map(|what| Risk {
                kind: RiskKind::LoaderEnv,
                detail: format!("{name} is set in its environment; it steers {what}"),
            })
        })
        .collect()
}

/// `name` set by the server's own document (a fixed value or a default), flagged as high
/// risk when it steers loading or paths: a document has no business choosing those for you.
pub fn document_env_risk(name: &str) -> Option<Risk> {
    steering_env(name).map(|what| Risk {
        kind: RiskKind::LoaderEnvByDocument,
        detail: format!(
            "HIGH RISK: the server's document itself sets {name}, which steers {what}; install it only if you trust the publisher with that"
        ),
    })
}
