//! `warden auth`: the sign-ins to remote servers. `list` reads the OS keychain (what may be
//! shown: never a token); `login` and `logout` are handed to `warden-remote` (`--sign-in`,
//! `--sign-out`), which holds the HTTP and OAuth code, so `warden` itself links none.

use std::collections::BTreeMap;
use std::process::ExitCode;

use clap::Subcommand;
use serde_json::{Value, json};
use warden_clients::{self as clients, ClientEnv};
use warden_config::keychain::{self, SigninSummary};
use warden_wire::say;

use crate::output::fail;

#[derive(Subcommand)]
pub enum AuthCommand {
    /// The remote servers in the clients' files (entries `warden bridge --remote URL`) and
    /// their sign-ins: signed in (until when), expired (renewed without the browser when it
    /// can be), or none.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Sign in to a remote server now: a browser opens, and every client's bridge uses the
    /// sign-in. NAME is the server's name in the clients' files, or its URL.
    Login { name: String },
    /// Sign out of a remote server: its tokens are revoked where the server offers
    /// revocation, and the keychain forgets them. The next call signs in again.
    Logout { name: String },
}

pub fn run(command: AuthCommand) -> ExitCode {
    let env = match ClientEnv::from_process() {
        Ok(env) => env,
        Err(e) => return fail(e.coded()),
    };
    match command {
        AuthCommand::List { json } => list(&remotes(&env), json),
        AuthCommand::Login { name } => hand_over(&env, &name, "--sign-in"),
        AuthCommand::Logout { name } => hand_over(&env, &name, "--sign-out"),
    }
}

/// A remote server as the clients' files give it.
struct Remote {
    url: String,
    clients: Vec<&'static str>,
}

/// The remote servers of every client's file, by name (a name given two URLs is listed
/// twice).
fn remotes(env: &ClientEnv) -> BTreeMap<String, Vec<Remote>> {
    let mut out: BTreeMap<String, Vec<Remote>> = BTreeMap::new();
    for listing in clients::list(env).iter().filter(|l| l.file.active) {
        for entry in &listing.servers {
            let Some(url) = entry.remote() else { continue };
            let client = listing.file.client.as_str();
            let same = out.entry(entry.name.clone()).or_default();
            match same.iter_mut().find(|r| r.url == url) {
                Some(r) if !r.clients.contains(&client) => r.clients.push(client),
                Some(_) => {}
                None => same.push(Remote {
                    url: url.to_owned(),
                    clients: vec![client],
                }),
            }
        }
    }
    out
}

/// A URL as lists show it: without its query, which may hold a key.
fn shown(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or(url)
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `signed_in`, `expired` or `none`, and how a person reads it.
fn state(kept: Option<&SigninSummary>) -> (&'static str, String) {
    match kept {
        None => ("none", "needs sign-in".to_owned()),
        Some(k) => match k.expires_at {
            None => ("signed_in", format!("signed in at {}", k.issuer)),
            Some(at) if at > now() => (
                "signed_in",
                format!(
                    "signed in at {}, expires in {}{}",
                    k.issuer,
                    span(at - now()),
                    if k.refreshable {
                        " (renewed without the browser)"
                    } else {
                        ""
                    }
                ),
            ),
            Some(_) if k.refreshable => (
                "expired",
                format!(
                    "expired; renewed without the browser at the next call ({})",
                    k.issuer
                ),
            ),
            Some(_) => ("expired", "expired: needs sign-in".to_owned()),
        },
    }
}

fn span(secs: u64) -> String {
    match secs {
        0..120 => format!("{secs} s"),
        120..7200 => format!("{} min", secs / 60),
        7200..172_800 => format!("{} h", secs / 3600),
        _ => format!("{} days", secs / 86_400),
    }
}

fn list(remotes: &BTreeMap<String, Vec<Remote>>, as_json: bool) -> ExitCode {
    let mut rows = Vec::new();
    for (name, each) in remotes {
        for r in each {
            let kept = keychain::signin_summary(&r.url);
            let (state, said) = match &kept {
                Ok(k) => state(k.as_ref()),
                Err(e) => ("unknown", format!("unknown: {e}")),
            };
            let k = kept.ok().flatten();
            rows.push((
                json!({
                    "name": name,
                    "url": shown(&r.url),
                    "clients": r.clients,
                    "signin": state,
                    "issuer": k.as_ref().map(|k| &k.issuer),
                    "expires_at": k.as_ref().and_then(|k| k.expires_at),
                    "refreshable": k.as_ref().is_some_and(|k| k.refreshable),
                }),
                format!(
                    "{name}  {}  ({})\n  {said}",
                    shown(&r.url),
                    r.clients.join(", ")
                ),
            ));
        }
    }
    if as_json {
        crate::clients_cmd::print_json(&Value::Array(rows.into_iter().map(|r| r.0).collect()));
    } else if rows.is_empty() {
        println!(
            "No remote servers in the clients' files. Add one with `warden servers add NAME --url URL --client ID`."
        );
    } else {
        for (_, line) in rows {
            say!("{line}");
        }
    }
    ExitCode::SUCCESS
}

/// Runs `warden-remote --server NAME FLAG -- URL` in this process's place.
fn hand_over(env: &ClientEnv, name: &str, flag: &str) -> ExitCode {
    // Names first: an entry named like a URL must not send the sign-in elsewhere than the URL
    // its entry (and the window) shows.
    let all = remotes(env);
    let (server, url) = if !all.contains_key(name) && name.contains("://") {
        (
            crate::remote_host(name).unwrap_or("remote").to_owned(),
            name.to_owned(),
        )
    } else {
        match all.get(name).map(Vec::as_slice) {
            Some([one]) => (name.to_owned(), one.url.clone()),
            Some(many) if !many.is_empty() => {
                let urls: Vec<&str> = many.iter().map(|r| shown(&r.url)).collect();
                return fail(format!(
                    "`{name}` is a remote server at more than one URL in the clients' files ({}). Fix: give the URL instead of the name",
                    urls.join(", ")
                ));
            }
            _ => {
                let known: Vec<&str> = all.keys().map(String::as_str).collect();
                return fail(format!(
                    "no remote server `{name}` in the clients' files (remote servers: {}). Fix: give its name as `warden auth list` shows it, or its URL",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ));
            }
        }
    };
    crate::hand_over(
        "warden-remote",
        "WARDEN_REMOTE_BIN",
        vec![
            format!("--server={server}").into(),
            flag.into(),
            "--".into(),
            url.into(),
        ],
    )
}
