//! Secret values on their way into the OS keychain, for `warden servers add --secret-env` and
//! `warden install --env` (one file, compiled into both programs):
//!
//! - `KEY` alone: the value is typed without echo when stdin is a terminal, else read as one
//!   line of stdin (`printf '%s\n' "$TOKEN" | warden servers add ... --secret-env KEY`), so it
//!   never is an argument, which `ps` shows every user and the shell keeps in its history;
//! - `KEY=VALUE` still works, with a warning saying so;
//! - a keychain item that another client's entry still reads is not overwritten with another
//!   value unless `--replace-secret` (or a yes on a terminal): `W-SECRET-IN-USE`.

use std::io::{BufRead as _, IsTerminal as _, Write as _};

use warden_clients::{self as clients, ClientEnv};
use warden_config::keychain;
use warden_wire::codes::Code;

/// `KEY` or `KEY=VALUE`: the key, and the value if given.
pub fn parse(s: &str) -> Result<(String, Option<String>), String> {
    let (key, value) = match s.split_once('=') {
        Some((k, v)) => (k.trim(), Some(v.to_owned())),
        None => (s.trim(), None),
    };
    if key.is_empty() {
        return Err(format!("{s:?} is not KEY or KEY=VALUE"));
    }
    Ok((key.to_owned(), value))
}

/// Says that a secret value given as an argument is visible to others.
pub fn warn_visible(flag: &str, key: &str) {
    eprintln!(
        "warden: warning: the value of {key} was given on the command line, where other users see it (`ps`) and your shell keeps it (its history). Next time give `{flag} {key}` alone: it is asked for without echo on a terminal, or read as one line of stdin."
    );
}

/// The value of `key`: typed without echo when stdin is a terminal, else one line of stdin.
/// `what` names it in the prompt (e.g. `GITHUB_TOKEN for gh`).
pub fn read(key: &str, what: &str) -> Result<String, String> {
    let value = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(format!("{what} (secret, not shown): "))
            .map_err(|e| format!("cannot read the value of {key}: {e}"))?
    } else {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| format!("cannot read the value of {key} from stdin: {e}"))?;
        line.trim_end_matches(['\r', '\n']).to_owned()
    };
    if value.is_empty() {
        return Err(format!(
            "no value for {key}: type it when asked, or give it as one line of stdin"
        ));
    }
    Ok(value)
}

/// Whether `value` may be stored as `server`/`var`: refused (with the message, coded
/// `W-SECRET-IN-USE`) when the keychain holds another value there that an entry of a client's
/// file still reads, unless `replace` or a yes on a terminal.
pub fn may_store(
    env: &ClientEnv,
    server: &str,
    var: &str,
    value: &str,
    replace: bool,
) -> Result<(), String> {
    // A keychain that does not answer is reported by the store that follows, as it is when
    // no item is in use.
    let files = clients::secret_in_use(env, server, var, value).unwrap_or_default();
    if files.is_empty() || replace {
        return Ok(());
    }
    let readers: Vec<String> = files
        .iter()
        .map(|f| format!("{} ({})", f.path.display(), f.client))
        .collect();
    let why = format!(
        "the OS keychain holds another value as {} {}, which the entry of server `{server}` in {} still reads (`--secret-env {var}`): storing this one would change what that server gets",
        keychain::SERVICE,
        keychain::account(server, var),
        readers.join(", ")
    );
    if std::io::stdin().is_terminal() {
        eprint!("warden: {why}. Replace it? [y/N] ");
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        let _ = std::io::stdin().lock().read_line(&mut answer);
        if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            return Ok(());
        }
    }
    Err(format!(
        "{why}. Fix: add --replace-secret to give that entry the new value too, or choose another server name [{}]",
        Code::SecretInUse.as_str()
    ))
}
