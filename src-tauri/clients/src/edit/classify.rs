//! What each entry of a file is to wrap and unwrap ([`Class`]: wrapped, unwrapped, or left
//! alone and why), and what is read from that: the entries as listed, the servers as their
//! client starts them, and the spans tests check.

use std::ops::Range;

use crate::dialect::{self, Dialect};
use crate::doc::{Body, DocError, EntryRef, Located, RemoteBody, Scalar};
use crate::model::{ClientId, EntryState, ServerEntry};
use crate::{remote, risk};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Class {
    Skip(String),
    Unwrapped {
        command: String,
        args: Vec<String>,
    },
    Wrapped {
        bridge: String,
        server: Option<String>,
        /// Index of `--` in the args list (Split) or in the command list (Joined).
        dashes: usize,
        /// The `--secret-env` variables, in order.
        secret_env: Vec<String>,
        /// The `--pass-env` variables, in order (none in entries wrapped by earlier versions).
        pass_env: Vec<String>,
        command: String,
        args: Vec<String>,
    },
    /// A remote server the bridge can reach (Streamable HTTP), not wrapped: its URL and its
    /// headers as the bridge's `NAME=ENVVAR`.
    Remote {
        url: String,
        headers: Vec<String>,
    },
    /// A remote server run through `warden bridge --remote URL`.
    WrappedRemote {
        bridge: String,
        server: Option<String>,
        url: String,
        headers: Vec<String>,
        secret_env: Vec<String>,
    },
}

/// `warden` or `warden.exe`, whatever the directory.
pub(crate) fn is_warden(command: &str) -> bool {
    let name = command.rsplit(['/', '\\']).next().unwrap_or(command);
    name.eq_ignore_ascii_case("warden") || name.eq_ignore_ascii_case("warden.exe")
}

fn values(items: &[Scalar]) -> Vec<String> {
    items.iter().map(|s| s.value.clone()).collect()
}

/// The bridge's arguments before `--` that wrap and unwrap read.
struct BridgeArgs {
    server: Option<String>,
    dashes: usize,
    secret_env: Vec<String>,
    pass_env: Vec<String>,
}

/// `bridge [--server NAME] [--secret-env VAR]... [--pass-env VAR]... -- COMMAND [ARGS]`
/// starting at `items[0]` (the bridge's options in any order).
fn bridge_args(items: &[String]) -> Option<BridgeArgs> {
    if items.first().map(String::as_str) != Some("bridge") {
        return None;
    }
    let dashes = items.iter().position(|a| a == "--")?;
    if dashes + 1 >= items.len() {
        return None;
    }
    let mut server = None;
    let mut secret_env = Vec::new();
    let mut pass_env = Vec::new();
    for (i, a) in items[..dashes].iter().enumerate() {
        let next = || items.get(i + 1).filter(|_| i + 1 < dashes).cloned();
        if a == "--server" {
            server = next();
        } else if let Some(s) = a.strip_prefix("--server=") {
            server = Some(s.to_owned());
        } else if a == "--secret-env" {
            secret_env.extend(next());
        } else if let Some(s) = a.strip_prefix("--secret-env=") {
            secret_env.push(s.to_owned());
        } else if a == "--pass-env" {
            pass_env.extend(next());
        } else if let Some(s) = a.strip_prefix("--pass-env=") {
            pass_env.push(s.to_owned());
        }
    }
    Some(BridgeArgs {
        server,
        dashes,
        secret_env,
        pass_env,
    })
}

/// A remote entry: bridged when its URL, transport and headers allow, else why not.
fn classify_remote(r: &RemoteBody) -> Class {
    if let Some(why) = remote::transport_problem(r.transport.as_deref(), &r.url) {
        return Class::Skip(why);
    }
    if let Err(why) = remote::check_url(&r.url) {
        return Class::Skip(format!("remote server: {why}; the entry stays as it is"));
    }
    let headers = r.headers.clone().and_then(|h| remote::header_args(&h));
    match headers {
        Ok(headers) => Class::Remote {
            url: r.url.clone(),
            headers,
        },
        Err(why) => Class::Skip(format!("remote server: {why}")),
    }
}

/// A wrapped remote server's class, from the bridge's arguments (after `bridge`).
fn wrapped_remote(bridge: &str, argv: &[String]) -> Option<Class> {
    let r = remote::parse_bridge_args(argv)?;
    Some(Class::WrappedRemote {
        bridge: bridge.to_owned(),
        server: r.server,
        url: r.url,
        headers: r.headers,
        secret_env: r.secret_env,
    })
}

pub(super) fn classify(body: &Body) -> Class {
    match body {
        Body::Skip(r) => Class::Skip(r.clone()),
        Body::Remote(r) => classify_remote(r),
        Body::Split { command, args, .. } => {
            let argv = args.as_ref().map(|a| values(&a.items)).unwrap_or_default();
            if !is_warden(&command.value) {
                return Class::Unwrapped {
                    command: command.value.clone(),
                    args: argv,
                };
            }
            match bridge_args(&argv) {
                Some(b) => Class::Wrapped {
                    bridge: command.value.clone(),
                    server: b.server,
                    dashes: b.dashes,
                    secret_env: b.secret_env,
                    pass_env: b.pass_env,
                    command: argv[b.dashes + 1].clone(),
                    args: argv[b.dashes + 2..].to_vec(),
                },
                None => wrapped_remote(&command.value, &argv).unwrap_or_else(|| {
                    Class::Skip("runs warden itself, not a server to wrap".to_owned())
                }),
            }
        }
        Body::Joined { command } => {
            let argv = values(&command.items);
            let Some((first, rest)) = argv.split_first() else {
                return Class::Skip("the command list is empty".to_owned());
            };
            if !is_warden(first) {
                return Class::Unwrapped {
                    command: first.clone(),
                    args: rest.to_vec(),
                };
            }
            match bridge_args(rest) {
                Some(b) => Class::Wrapped {
                    bridge: first.clone(),
                    server: b.server,
                    dashes: b.dashes + 1,
                    secret_env: b.secret_env,
                    pass_env: b.pass_env,
                    command: rest[b.dashes + 1].clone(),
                    args: rest[b.dashes + 2..].to_vec(),
                },
                None => wrapped_remote(first, rest).unwrap_or_else(|| {
                    Class::Skip("runs warden itself, not a server to wrap".to_owned())
                }),
            }
        }
    }
}

pub(super) fn summaries(located: &[Located]) -> Vec<(EntryRef, Class)> {
    located
        .iter()
        .map(|l| (l.id.clone(), classify(&l.body)))
        .collect()
}

/// A stdio server as its client starts it, for probes: the name the bridge reports (its
/// `--server`, else the entry's), the original command, the `env` strings, and the variables
/// the bridge reads from the keychain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub name: String,
    pub command: Vec<String>,
    /// The whole command line the client runs: `command`, or the bridge's when wrapped.
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub secret_env: Vec<String>,
    /// The entry's `cwd`, as written (a relative one is the client's workspace's).
    pub cwd: Option<String>,
    /// From a project's file (the clients run those only in projects the user trusts).
    pub project: bool,
}

/// A remote server of a file (wrapped or not), as `warden bridge --remote` reaches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteLaunch {
    pub name: String,
    pub url: String,
    /// The bridge's `--header NAME=ENVVAR`s.
    pub headers: Vec<String>,
    pub env: Vec<(String, String)>,
    pub secret_env: Vec<String>,
}

/// The remote servers of a file that the bridge can reach.
pub(crate) fn remote_launches(dialect: Dialect, text: &str) -> Result<Vec<RemoteLaunch>, DocError> {
    Ok(dialect::locate(dialect, text)?
        .into_iter()
        .filter_map(|l| {
            let (name, url, headers, secret_env) = match classify(&l.body) {
                Class::Remote { url, headers } => (l.id.name, url, headers, Vec::new()),
                Class::WrappedRemote {
                    server,
                    url,
                    headers,
                    secret_env,
                    ..
                } => (server.unwrap_or(l.id.name), url, headers, secret_env),
                _ => return None,
            };
            Some(RemoteLaunch {
                name,
                url,
                headers,
                env: l.env.into_iter().map(|(k, v)| (k, v.value)).collect(),
                secret_env,
            })
        })
        .collect())
}

/// The stdio servers of a file as their client starts them.
pub(crate) fn launches(dialect: Dialect, text: &str) -> Result<Vec<Launch>, DocError> {
    Ok(dialect::locate(dialect, text)?
        .into_iter()
        .filter_map(|l| {
            let argv = match &l.body {
                Body::Skip(_) | Body::Remote(_) => Vec::new(),
                Body::Split { command, args, .. } => std::iter::once(command.value.clone())
                    .chain(args.as_ref().map(|a| values(&a.items)).unwrap_or_default())
                    .collect(),
                Body::Joined { command } => values(&command.items),
            };
            let (name, command, args, secret_env) = match classify(&l.body) {
                // A remote server is no process a probe could start.
                Class::Skip(_) | Class::Remote { .. } | Class::WrappedRemote { .. } => {
                    return None;
                }
                Class::Unwrapped { command, args } => (l.id.name, command, args, Vec::new()),
                Class::Wrapped {
                    server,
                    command,
                    args,
                    secret_env,
                    ..
                } => (server.unwrap_or(l.id.name), command, args, secret_env),
            };
            Some(Launch {
                name,
                command: std::iter::once(command).chain(args).collect(),
                argv,
                env: l.env.into_iter().map(|(k, v)| (k, v.value)).collect(),
                secret_env,
                cwd: l.cwd,
                project: false,
            })
        })
        .collect())
}

/// The entries of a file of `client`'s, as listed (`enabled` by that client's own switch).
pub(crate) fn entries(
    client: ClientId,
    dialect: Dialect,
    text: &str,
) -> Result<Vec<ServerEntry>, DocError> {
    Ok(dialect::locate(dialect, text)?
        .into_iter()
        .map(|l| {
            let class = classify(&l.body);
            let remote = matches!(class, Class::Remote { .. } | Class::WrappedRemote { .. });
            let state = match class {
                Class::Skip(reason) => EntryState::Skipped { reason },
                // Listed as skipped so that nothing wraps it unasked (auto-rewrite wraps only
                // unwrapped entries); `warden clients wrap` does when asked.
                Class::Remote { url, .. } => EntryState::Skipped {
                    reason: format!(
                        "remote server ({}); `warden clients wrap` runs it through the bridge when asked",
                        remote::shown(&url)
                    ),
                },
                Class::WrappedRemote {
                    bridge,
                    server,
                    url,
                    ..
                } => EntryState::Wrapped {
                    bridge,
                    server,
                    command: url,
                    args: Vec::new(),
                },
                Class::Unwrapped { command, args } => EntryState::Unwrapped { command, args },
                Class::Wrapped {
                    bridge,
                    server,
                    command,
                    args,
                    ..
                } => EntryState::Wrapped {
                    bridge,
                    server,
                    command,
                    args,
                },
            };
            let risks = match &state {
                _ if remote => Vec::new(),
                EntryState::Unwrapped { command, args }
                | EntryState::Wrapped { command, args, .. } => {
                    risk::entry_risks(command, args, &l.env_keys)
                }
                EntryState::Skipped { .. } => Vec::new(),
            };
            ServerEntry {
                name: l.id.name,
                scope: l.id.scope,
                state,
                env_keys: l.env_keys,
                risks,
                reverted: false,
                enabled: client.switch_on(&l.switch),
            }
        })
        .collect())
}

/// Where an entry's editable values are (for tests that check that nothing else changed).
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntrySpans {
    pub entry: EntryRef,
    /// The command value (absent for opencode's single list).
    pub command: Option<Range<usize>>,
    /// The args list, or opencode's command list.
    pub args: Option<Range<usize>>,
    /// Where wrap adds `args` when the entry has none.
    pub insert_at: Option<usize>,
    /// A remote entry, wrapped or not: its whole value (wrap and unwrap replace it).
    pub remote: Option<Range<usize>>,
}

#[doc(hidden)]
pub fn entry_spans(dialect: Dialect, text: &str) -> Result<Vec<EntrySpans>, DocError> {
    Ok(dialect::locate(dialect, text)?
        .into_iter()
        .map(|l| {
            let (command, args, insert_at) = match &l.body {
                Body::Skip(_) | Body::Remote(_) => (None, None, None),
                Body::Split {
                    command,
                    args,
                    insert,
                } => (
                    Some(command.span.clone()),
                    args.as_ref().map(|a| a.span.clone()),
                    insert.as_ref().map(|i| i.at),
                ),
                Body::Joined { command } => (None, Some(command.span.clone()), None),
            };
            let remote = match classify(&l.body) {
                Class::Remote { .. } | Class::WrappedRemote { .. } => {
                    l.whole.as_ref().map(|w| w.span.clone())
                }
                _ => None,
            };
            EntrySpans {
                entry: l.id,
                command,
                args,
                insert_at,
                remote,
            }
        })
        .collect())
}
