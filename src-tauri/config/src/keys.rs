//! Every config key: its default, the reason for the default, its range and how to apply it.
//! This table is the single source for validation, `--set`, and the documentation.

use std::path::PathBuf;
use std::time::Duration;

use toml::Value;

use super::{Fallback, Limits, PinMode, SandboxMode, ToolGlobs};

pub struct KeyDef {
    pub name: &'static str,
    /// The default, as TOML.
    pub default: &'static str,
    /// What it means and why the default is what it is.
    pub doc: &'static str,
    /// What to write instead of a bad value.
    pub fix: &'static str,
    pub apply: fn(&mut Limits, &Value) -> Result<(), String>,
}

const DAY_MS: i64 = 86_400_000;
const GIB: i64 = 1 << 30;

fn int(v: &Value, min: i64, max: i64, unit: &str) -> Result<i64, String> {
    match v {
        Value::Integer(n) if (min..=max).contains(n) => Ok(*n),
        Value::Integer(n) => Err(format!("= {n} is out of range ({min} to {max}{unit})")),
        other => Err(format!(
            "must be a whole number{unit}, not {}",
            other.type_str()
        )),
    }
}

fn ms(v: &Value, min: i64, max: i64) -> Result<Duration, String> {
    int(v, min, max, " ms").map(|n| Duration::from_millis(n.unsigned_abs()))
}

fn names(v: &Value, what: &str) -> Result<Vec<String>, String> {
    let list = v
        .as_array()
        .ok_or_else(|| format!("must be a list of {what}, not {}", v.type_str()))?;
    list.iter()
        .map(|item| {
            item.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("must list {what} as strings, not {}", item.type_str()))
        })
        .collect()
}

/// A list of absolute paths; `~/` is the home directory.
/// One printable word (no space), or empty for none.
fn word(v: &Value) -> Result<Option<String>, String> {
    match v.as_str() {
        Some(w) if w.chars().all(|c| c.is_ascii_graphic()) => {
            Ok((!w.is_empty()).then(|| w.to_owned()))
        }
        Some(_) => Err("holds a space or a character that is not printable ASCII".to_owned()),
        None => Err(format!("must be a string, not {v}")),
    }
}

fn paths(v: &Value) -> Result<Vec<PathBuf>, String> {
    let list = v
        .as_array()
        .ok_or_else(|| format!("must be a list of paths, not {}", v.type_str()))?;
    let mut out = Vec::with_capacity(list.len());
    for item in list {
        let s = item
            .as_str()
            .ok_or_else(|| format!("must list paths as strings, not {}", item.type_str()))?;
        let path = match s.strip_prefix("~/") {
            Some(rest) => crate::paths::home_dir().unwrap_or_default().join(rest),
            None if s == "~" => crate::paths::home_dir().unwrap_or_default(),
            None => PathBuf::from(s),
        };
        if !path.is_absolute() {
            return Err(format!("lists {s:?}, which is not an absolute path"));
        }
        out.push(path);
    }
    Ok(out)
}

fn boolean(v: &Value) -> Result<bool, String> {
    v.as_bool()
        .ok_or_else(|| format!("must be true or false, not {}", v.type_str()))
}

pub const KEYS: &[KeyDef] = &[
    KeyDef {
        name: "idle_timeout_ms",
        default: "50000",
        doc: "Fail a request that has had no response, progress or activity for this long. \
              50 s is below the 60 s after which common clients (TypeScript SDK hosts such as \
              Claude Desktop and Cline) give up on their own, so the user sees Warden's \
              explanation instead of a bare 'Request timed out'.",
        fix: "a duration in milliseconds from 100 to 86400000, e.g. 50000",
        apply: |l, v| ms(v, 100, DAY_MS).map(|x| l.idle_timeout = x),
    },
    KeyDef {
        name: "max_timeout_ms",
        default: "600000",
        doc: "Fail a request after this long even while it reports progress. Ten minutes lets \
              long indexing or build tools finish while still bounding a tool that reports \
              progress forever.",
        fix: "a duration in milliseconds from 1000 to 604800000 (a week), at least idle_timeout_ms",
        apply: |l, v| ms(v, 1000, 7 * DAY_MS).map(|x| l.max_timeout = x),
    },
    KeyDef {
        name: "startup_timeout_ms",
        default: "45000",
        doc: "Time a (re)started server has to answer its handshake. Covers npx/uvx cold starts \
              that download packages (often 10-40 s) while staying under the 60 s clients allow \
              for `initialize`.",
        fix: "a duration in milliseconds from 100 to 3600000, e.g. 45000",
        apply: |l, v| ms(v, 100, 3_600_000).map(|x| l.startup_timeout = x),
    },
    KeyDef {
        name: "stderr_is_activity",
        default: "true",
        doc: "Whether server stderr output resets the idle clock of its requests. On by \
              default: a server that is writing logs is alive (npm install chatter, build \
              output); turn it off for servers that log on a timer while stuck.",
        fix: "true or false",
        apply: |l, v| boolean(v).map(|x| l.stderr_is_activity = x),
    },
    KeyDef {
        name: "max_message_bytes",
        default: "268435456",
        doc: "Largest single message relayed in either direction. 256 MiB passes the largest \
              real results seen (a 97 MB ripgrep result) while bounding the memory one line \
              may take; larger lines are dropped while streaming and the request gets an error.",
        fix: "a size in bytes from 1024 to 4294967296 (4 GiB), e.g. 268435456",
        apply: |l, v| {
            int(v, 1024, 4 * GIB, " bytes")
                .map(|n| l.max_message_bytes = usize::try_from(n).unwrap_or(usize::MAX))
        },
    },
    KeyDef {
        name: "max_list_bytes",
        default: "67108864",
        doc: "Largest answer Warden holds whole to check it before the client sees it: the \
              answers to `initialize`, `server/discover`, `tools/list`, `prompts/list` and \
              `resources/list`, which the tool policy and pinning read. Such an answer is never \
              streamed past the checks, whatever its size; a larger one fails its request with \
              `W-LIST-TOO-LARGE` and the session goes on. 64 MiB is far above the largest real \
              tool lists (a few MB) while bounding what one listing may hold in memory.",
        fix: "a size in bytes from 1024 to 4294967296 (4 GiB), e.g. 67108864",
        apply: |l, v| {
            int(v, 1024, 4 * GIB, " bytes")
                .map(|n| l.max_list_bytes = usize::try_from(n).unwrap_or(usize::MAX))
        },
    },
    KeyDef {
        name: "retries",
        default: "2",
        doc: "How many times a safe request (list/read/get, ping, read-only or idempotent \
              tools) in flight when the server died is re-sent to the next one. Two rides out \
              a restart without hiding a server that keeps failing.",
        fix: "a whole number from 0 to 10",
        apply: |l, v| int(v, 0, 10, "").map(|n| l.retries = u32::try_from(n).unwrap_or(0)),
    },
    KeyDef {
        name: "backoff_ms",
        default: "250",
        doc: "First restart/retry delay; it doubles on each consecutive failure. 250 ms makes a \
              one-off crash nearly invisible.",
        fix: "a duration in milliseconds from 10 to 600000, e.g. 250",
        apply: |l, v| ms(v, 10, 600_000).map(|x| l.backoff = x),
    },
    KeyDef {
        name: "max_backoff_ms",
        default: "30000",
        doc: "Upper bound of the doubling restart/retry delay, so a crash-looping server is \
              retried twice a minute rather than hammered or abandoned.",
        fix: "a duration in milliseconds from 10 to 3600000, at least backoff_ms",
        apply: |l, v| ms(v, 10, 3_600_000).map(|x| l.max_backoff = x),
    },
    KeyDef {
        name: "circuit_failures",
        default: "5",
        doc: "Consecutive failures (crashes, start-up failures, timeouts) that open the circuit \
              breaker, after which requests fail at once instead of each waiting for a timeout.",
        fix: "a whole number from 1 to 1000, e.g. 5",
        apply: |l, v| {
            int(v, 1, 1000, "").map(|n| l.circuit_failures = u32::try_from(n).unwrap_or(1))
        },
    },
    KeyDef {
        name: "circuit_cooldown_ms",
        default: "30000",
        doc: "Time the breaker stays open before one trial request may half-open it.",
        fix: "a duration in milliseconds from 100 to 86400000, e.g. 30000",
        apply: |l, v| ms(v, 100, DAY_MS).map(|x| l.circuit_cooldown = x),
    },
    KeyDef {
        name: "busy_poll_us",
        default: "100",
        doc: "After relaying, the bridge keeps polling the client's and the server's pipes this \
              long before its thread sleeps. Waking a sleeping thread costs tens of µs on an idle \
              core (more in a VM), twice per round trip through a relay; an answer or a next \
              request that comes within the window skips that (Linux offers the same for \
              sockets, `busy_poll`). CPU is used only right after traffic, at most this long per \
              message, never while idle; 0 turns it off. A bridge that may run on one CPU only \
              (its affinity or its cgroup's quota) does not poll: there the server and the \
              client cannot answer while it spins.",
        fix: "a time in microseconds from 0 (off) to 1000, e.g. 100",
        apply: |l, v| {
            int(v, 0, 1000, " µs").map(|n| l.busy_poll = Duration::from_micros(n.unsigned_abs()))
        },
    },
    KeyDef {
        name: "debug",
        default: "false",
        doc: "Full message logging for this server into `logs/<server>-<hash>.debug.jsonl`, secrets \
              redacted; also on while the file `<config dir>/<server>/debug` exists. Off by \
              default: messages can be large and private.",
        fix: "true or false",
        apply: |l, v| boolean(v).map(|x| l.debug = x),
    },
    KeyDef {
        name: "fallback",
        default: "\"off\"",
        doc: "`\"rg\"` serves ripgrep tools locally when the server is down (circuit open); \
              `\"off\"` reports the failure. Off by default: only search servers can be \
              replaced by local search.",
        fix: "\"off\" or \"rg\"",
        apply: |l, v| {
            l.fallback = match v.as_str() {
                Some("off") => Fallback::Off,
                Some("rg") => Fallback::Rg,
                _ => return Err(format!("must be \"off\" or \"rg\", not {v}")),
            };
            Ok(())
        },
    },
    KeyDef {
        name: "force_fallback",
        default: "false",
        doc: "Serve from local ripgrep now, whatever the server's state (the one-click switch).",
        fix: "true or false",
        apply: |l, v| boolean(v).map(|x| l.force_fallback = x),
    },
    KeyDef {
        name: "fallback_roots",
        default: "[]",
        doc: "Absolute directories the ripgrep fallback may search. Empty means the bridge's \
              working directory, which is the project the client started the server in.",
        fix: "a list of absolute paths, e.g. [\"/home/me/src\"]",
        apply: |l, v| paths(v).map(|roots| l.fallback_roots = roots),
    },
    KeyDef {
        name: "clamp",
        default: "{}",
        doc: "Per-tool caps on numeric arguments, e.g. `{ \"advanced-search\" = { maxResults = 500 } }`: \
              a larger value is lowered to the cap and the call goes through.",
        fix: "a table of tool names to tables of argument caps, e.g. { search = { maxResults = 500 } }",
        apply: |l, v| {
            let tools = v
                .as_table()
                .ok_or_else(|| format!("must be a table, not {}", v.type_str()))?;
            let mut clamp = std::collections::BTreeMap::new();
            for (tool, caps) in tools {
                let caps = caps
                    .as_table()
                    .ok_or_else(|| format!("entry `{tool}` must be a table of argument = cap"))?;
                let mut out = std::collections::BTreeMap::new();
                for (arg, cap) in caps {
                    let cap = match cap {
                        Value::Integer(n) => *n as f64,
                        Value::Float(f) => *f,
                        other => {
                            return Err(format!(
                                "cap `{tool}.{arg}` must be a number, not {}",
                                other.type_str()
                            ));
                        }
                    };
                    if !cap.is_finite() || cap < 0.0 {
                        return Err(format!("cap `{tool}.{arg}` must be a finite number ≥ 0"));
                    }
                    out.insert(arg.clone(), cap);
                }
                clamp.insert(tool.clone(), out);
            }
            l.clamp = clamp;
            Ok(())
        },
    },
    KeyDef {
        name: "result_soft_cap_bytes",
        default: "0",
        doc: "Truncate a larger tool result's text content, with a visible note telling the \
              model how to narrow its query (0 = off). Off by default because the bridge has no \
              size cliff; set it for clients that break on large results (the TypeScript SDK \
              drops the connection above 10 MiB).",
        fix: "a size in bytes from 0 to 4294967296, e.g. 8388608",
        apply: |l, v| {
            int(v, 0, 4 * GIB, " bytes").map(|n| l.result_soft_cap_bytes = n.unsigned_abs())
        },
    },
    KeyDef {
        name: "idempotent_tools",
        default: "[]",
        doc: "Tools that are safe to call twice, so a call in flight when the server crashed \
              may be re-sent after the restart. Tools the server marks `readOnlyHint` or \
              `idempotentHint` count already; list others here. Empty by default: re-running a \
              tool that writes could do its work twice.",
        fix: "a list of tool names, e.g. [\"search\", \"read_file\"]",
        apply: |l, v| names(v, "tool names").map(|n| l.idempotent_tools = n),
    },
    KeyDef {
        name: "pin_tools",
        default: "\"warn\"",
        doc: "Tool pinning: each tool's definition (name, description, input schema, \
              annotations) is pinned the first time the server lists it. Later, a changed or \
              new tool is reported (`\"warn\"`: a `tool_changed` or `tool_new` event; nothing \
              breaks) or also held back from the client until approved with `warden tools \
              approve` (`\"block\"`: left out of `tools/list`, a call gets `tool_quarantined`). \
              `\"warn\"` by default: servers change tools in honest updates too, and a warning \
              never breaks a working setup; choose `\"block\"` for servers fetched at \
              whatever version is current (npx/uvx) that can act on your behalf.",
        fix: "\"off\", \"warn\" or \"block\"",
        apply: |l, v| {
            l.pin_tools = match v.as_str() {
                Some("off") => PinMode::Off,
                Some("warn") => PinMode::Warn,
                Some("block") => PinMode::Block,
                _ => return Err(format!("must be \"off\", \"warn\" or \"block\", not {v}")),
            };
            Ok(())
        },
    },
    KeyDef {
        name: "tools_allow",
        default: "[]",
        doc: "Tools the client may see and call without being asked: globs of tool names \
              (e.g. [\"search*\", \"read_file\"]) and annotation selectors (`@readonly`, \
              `@write`, `@destructive`, `@openworld`, read from the tool's pinned definition; a \
              tool without annotations counts as a destructive, open-world write). Any tool \
              neither this list nor `tools_ask` matches is left out of `tools/list` and a call \
              to it gets `tool_denied`. Empty (the default) allows every tool.",
        fix: "a list of globs of tool names or selectors, e.g. [\"search*\", \"@readonly\"]",
        apply: |l, v| ToolGlobs::new(names(v, "globs")?).map(|g| l.tools_allow = g),
    },
    KeyDef {
        name: "tools_ask",
        default: "[]",
        doc: "Tools whose every call waits for a yes (globs and selectors as in `tools_allow`, \
              e.g. [\"@destructive\"]): the bridge holds the call, never sending it to the \
              server until it is allowed, and asks the client (when it supports elicitation) \
              and the supervisor (`warden approvals`, when one runs); the first answer wins. \
              `warden approvals allow ID --always` stops the asking while the tool's definition \
              is unchanged. A no is `tool_declined`; no answer within `ask_timeout_ms`, or no one to ask, is \
              `tool_not_approved`. Wins over `tools_allow`. Empty by default: asking would \
              break clients that run unattended.",
        fix: "a list of globs of tool names or selectors, e.g. [\"@destructive\"]",
        apply: |l, v| ToolGlobs::new(names(v, "globs")?).map(|g| l.tools_ask = g),
    },
    KeyDef {
        name: "tools_deny",
        default: "[]",
        doc: "Tools the client never sees or calls (globs and selectors as in `tools_allow`), \
              e.g. [\"delete_*\", \"@destructive\"]; wins over `tools_ask` and `tools_allow`. \
              Empty by default.",
        fix: "a list of globs of tool names or selectors, e.g. [\"delete_*\", \"@destructive\"]",
        apply: |l, v| ToolGlobs::new(names(v, "globs")?).map(|g| l.tools_deny = g),
    },
    KeyDef {
        name: "ask_timeout_ms",
        default: "50000",
        doc: "How long a call of a `tools_ask` tool waits for an answer before it fails with \
              `tool_not_approved` (the server never sees it). 50 s is under the 60 s a client \
              gives a call; while it waits, a client that sent a progress token gets progress \
              notifications so its own clock does not run out first.",
        fix: "a duration in milliseconds from 100 to 3600000, e.g. 50000",
        apply: |l, v| ms(v, 100, 3_600_000).map(|x| l.ask_timeout = x),
    },
    KeyDef {
        name: "sandbox",
        default: "\"off\"",
        doc: "\"on\" runs the server in a sandbox (Linux: bubblewrap; where user namespaces are \
              refused, Landlock, reported as degraded): the whole file system read-only but for \
              `sandbox_write` and a folder of its own (its package caches and temp files), \
              your keys, /run and the paths of `sandbox_deny` hidden, no UNIX socket, a cleared \
              environment (`--pass-env` names what else it gets), no network unless \
              `sandbox_network` grants the host's or a list of destinations. A sandbox that cannot be set up never falls back \
              to running the server unsandboxed. Off by default: a server that needs more than \
              it is granted fails, and that is for you to decide per server (docs/sandbox.md).",
        fix: "\"off\" or \"on\"",
        apply: |l, v| {
            l.sandbox = match v.as_str() {
                Some("off") => false,
                Some("on") => true,
                _ => return Err(format!("must be \"off\" or \"on\", not {v}")),
            };
            Ok(())
        },
    },
    KeyDef {
        name: "sandbox_write",
        default: "[]",
        doc: "Folders a sandboxed server may write, besides a folder of its own under Warden's \
              state (its npm and uv caches, its temp files); `~` is your home. Everything else \
              it may only read (your ~/.npm and ~/.cache/uv included); a hidden path inside a \
              granted folder stays hidden.",
        fix: "a list of absolute paths, e.g. [\"~/projects/notes\"]",
        apply: |l, v| paths(v).map(|p| l.sandbox_write = p),
    },
    KeyDef {
        name: "sandbox_deny",
        default: "[]",
        doc: "Paths a sandboxed server may not read, besides the defaults (~/.ssh, ~/.aws, \
              ~/.gnupg, ~/.kube, ~/.docker, ~/.netrc, ~/.config/gh, the keyrings folder, \
              /run with the session's runtime folder and its sockets, Warden's own config and \
              state).",
        fix: "a list of absolute paths, e.g. [\"~/private\"]",
        apply: |l, v| paths(v).map(|p| l.sandbox_deny = p),
    },
    KeyDef {
        name: "sandbox_network",
        default: "\"none\"",
        doc: "A sandboxed server's network: \"none\" (its own empty network: no connection \
              anywhere, not even to this machine's services), \"host\" (the host's network, \
              DNS and certificates as outside), or a list of the destinations it may reach \
              through Warden's proxy, each checked by name as the server asks for it: \
              \"api.github.com\", \"*.githubusercontent.com\" (names under it), \
              \"registry.example:8443\", an address with or without a port \
              (\"127.0.0.1:8080\", \"[::1]:9000\"), and the presets \"@npm\" and \"@pypi\" \
              (their registries, and the mirror npm's or uv's and pip's own configuration \
              names). An entry without a port allows 80 and 443. A listed name that resolves \
              to a loopback, link-local or cloud-metadata address is refused; list the address \
              itself to allow it. A refusal is a `network_denied` event. None by default: a \
              server that must fetch (an npx first start, an API) needs a list or \"host\".",
        fix: super::network::FIX,
        apply: |l, v| super::network::parse(v).map(|n| l.sandbox_network = n),
    },
    KeyDef {
        name: "sandbox_mode",
        default: "\"auto\"",
        doc: "Which sandbox `sandbox = \"on\"` uses: \"auto\" (bubblewrap where it may create \
              its namespaces, else Landlock on Linux 6.12+, reported as degraded), \"bwrap\" or \
              \"landlock\" (only that one; the server is refused where it cannot be made). \
              docs/sandbox.md says what each mode blocks.",
        fix: "\"auto\", \"bwrap\" or \"landlock\"",
        apply: |l, v| {
            l.sandbox_mode = match v.as_str() {
                Some("auto") => SandboxMode::Auto,
                Some("bwrap") => SandboxMode::Bwrap,
                Some("landlock") => SandboxMode::Landlock,
                _ => {
                    return Err(format!(
                        "must be \"auto\", \"bwrap\" or \"landlock\", not {v}"
                    ));
                }
            };
            Ok(())
        },
    },
    KeyDef {
        name: "oauth_client_id",
        default: "\"\"",
        doc: "A remote server's sign-in: the client id Warden gives its authorization server, \
              when you registered Warden there yourself (a public client, redirect \
              `http://127.0.0.1/callback` on any port); `oauth_issuer` must name that \
              authorization server. Empty (the default): a Client ID Metadata Document when \
              `[oauth] client_metadata_url` names one and the server takes it, else Warden \
              registers itself at each sign-in (dynamic registration).",
        fix: "a client id string, e.g. \"warden-desktop\"",
        apply: |l, v| word(v).map(|id| l.oauth_client_id = id),
    },
    KeyDef {
        name: "oauth_issuer",
        default: "\"\"",
        doc: "With `oauth_client_id`: the issuer (authorization server) where that client id \
              was registered, e.g. \"https://github.com/login/oauth\". The id is given to no \
              other issuer, so an entry of the same name that points elsewhere (planted in a \
              project's file, say) cannot take it, and your consent, to its own server.",
        fix: "the issuer's URL as its metadata names it, e.g. \"https://auth.example.com\"",
        apply: |l, v| word(v).map(|iss| l.oauth_issuer = iss),
    },
];

/// The keys whose value is one of a few strings, and those strings: the window offers them as
/// a choice (carried in the limits report, `LimitValue::choices`). A test checks that each
/// key's `apply` takes every one of them.
pub const CHOICES: &[(&str, &[&str])] = &[
    ("fallback", &["off", "rg"]),
    ("pin_tools", &["off", "warn", "block"]),
    ("sandbox", &["off", "on"]),
    ("sandbox_network", &["none", "host"]),
];

/// The strings `key` takes, when it takes one of a few (else empty).
pub fn choices(key: &str) -> &'static [&'static str] {
    CHOICES
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(&[], |(_, c)| *c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every choice the window offers is a value its key takes, and the key refuses a string
    /// that is none of them.
    #[test]
    fn each_choice_is_a_value_its_key_takes() {
        for (key, choices) in CHOICES {
            let def = KEYS.iter().find(|d| d.name == *key);
            let def = def.unwrap_or_else(|| panic!("{key} is not a key"));
            for c in *choices {
                let mut l = Limits::default();
                let took = (def.apply)(&mut l, &Value::String((*c).to_owned()));
                assert!(took.is_ok(), "{key} = {c:?}: {took:?}");
            }
            let mut l = Limits::default();
            let refused = (def.apply)(&mut l, &Value::String("neither".into()));
            assert!(refused.is_err(), "{key} took \"neither\"");
        }
        assert_eq!(choices("pin_tools"), ["off", "warn", "block"]);
        assert!(choices("debug").is_empty());
    }
}
