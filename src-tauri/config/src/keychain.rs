//! Servers' secrets in the OS keychain, through the keyring crate: the Secret Service on
//! Linux and the BSDs (gnome-keyring, KeePassXC, KWallet), Keychain on macOS, Credential
//! Manager on Windows. One entry per value: service `mcp-warden`, account `SERVER/VAR`.
//!
//! `warden clients wrap --move-secrets` stores values here; `warden bridge --secret-env VAR`
//! reads them into the server's environment; unwrap reads them back into the client's file.
//! Values never reach a log, an event or an error message.
//!
//! Each call runs on a thread of its own and is given 20 s ([`WAIT`]): a locked keychain that waits
//! for a password prompt nobody sees must not hang a bridge or a command. A call without an answer
//! by then fails as [`KeychainError::Unavailable`].

use std::time::Duration;

/// The keychain service every entry is filed under.
pub const SERVICE: &str = "mcp-warden";

/// How long one keychain call may take: a locked keychain that waits for a password prompt
/// nobody sees must not hang a bridge or a command.
const WAIT: Duration = Duration::from_secs(20);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeychainError {
    /// No keychain answered (none running, locked, refused).
    #[error("no OS keychain answered: {0}")]
    Unavailable(String),
    /// The keychain has no such entry.
    #[error("the OS keychain has no entry {SERVICE}/{0}")]
    Missing(String),
}

/// The account of `var` for `server`.
pub fn account(server: &str, var: &str) -> String {
    format!("{server}/{var}")
}

/// Runs one keychain call with a time limit.
fn call<T: Send + 'static>(
    account: String,
    f: impl FnOnce(&keyring::Entry) -> keyring::Result<T> + Send + 'static,
) -> Result<T, KeychainError> {
    call_in(SERVICE, account, f)
}

fn call_in<T: Send + 'static>(
    service: &'static str,
    account: String,
    f: impl FnOnce(&keyring::Entry) -> keyring::Result<T> + Send + 'static,
) -> Result<T, KeychainError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let acct = account.clone();
    std::thread::spawn(move || {
        let _ = tx.send(keyring::Entry::new(service, &acct).and_then(|e| f(&e)));
    });
    match rx.recv_timeout(WAIT) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(keyring::Error::NoEntry)) => Err(KeychainError::Missing(account)),
        Ok(Err(e)) => Err(KeychainError::Unavailable(e.to_string())),
        Err(_) => Err(KeychainError::Unavailable(format!(
            "no answer within {} s (is it locked, waiting for a password prompt?)",
            WAIT.as_secs()
        ))),
    }
}

/// The value of `var` for `server`.
pub fn get(server: &str, var: &str) -> Result<String, KeychainError> {
    call(account(server, var), |e| e.get_password())
}

/// Stores the value of `var` for `server` (replacing one stored before).
pub fn set(server: &str, var: &str, value: &str) -> Result<(), KeychainError> {
    let value = value.to_owned();
    call(account(server, var), move |e| e.set_password(&value))
}

/// The keychain service of remote servers' sign-ins: apart from servers' secrets, so that no
/// `--secret-env` can read a sign-in's tokens into a server's environment.
pub const SIGNIN_SERVICE: &str = "mcp-warden-signin";

/// The keychain account of the sign-in to the remote server at `url` (as its entries give it),
/// which also names the lock held while signing in: a hash, so the URL (whose query may hold a
/// key) is not written out.
pub fn signin_account(url: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(url.trim().as_bytes());
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// A sign-in's tokens (JSON) kept under `account`.
pub fn get_signin(account: &str) -> Result<String, KeychainError> {
    call_in(SIGNIN_SERVICE, account.to_owned(), |e| e.get_password())
}

/// Keeps a sign-in's tokens under `account` (replacing those kept before).
pub fn set_signin(account: &str, value: &str) -> Result<(), KeychainError> {
    let value = value.to_owned();
    call_in(SIGNIN_SERVICE, account.to_owned(), move |e| {
        e.set_password(&value)
    })
}

/// Forgets the sign-in kept under `account` (one that is not there is forgotten already).
pub fn delete_signin(account: &str) -> Result<(), KeychainError> {
    match call_in(SIGNIN_SERVICE, account.to_owned(), |e| {
        e.delete_credential()
    }) {
        Ok(()) | Err(KeychainError::Missing(_)) => Ok(()),
        Err(e) => Err(e),
    }
}

/// What may be shown of a kept sign-in: never a token.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SigninSummary {
    pub issuer: String,
    pub resource: String,
    /// When the access token expires (seconds since the epoch), if it does.
    pub expires_at: Option<u64>,
    /// It can be renewed without the browser.
    pub refreshable: bool,
}

/// The sign-in to the remote server at `url`, as far as it may be shown; `Ok(None)` when there
/// is none.
pub fn signin_summary(url: &str) -> Result<Option<SigninSummary>, KeychainError> {
    #[derive(serde::Deserialize)]
    struct Kept {
        issuer: String,
        resource: String,
        expires_at: Option<u64>,
        refresh: Option<serde_json::Value>,
    }
    match get_signin(&signin_account(url)) {
        Ok(text) => Ok(serde_json::from_str::<Kept>(&text)
            .ok()
            .map(|k| SigninSummary {
                issuer: k.issuer,
                resource: k.resource,
                expires_at: k.expires_at,
                refreshable: k.refresh.is_some_and(|r| !r.is_null()),
            })),
        Err(KeychainError::Missing(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether a keychain answers at all (an entry that does not exist is an answer).
pub fn check() -> Result<(), KeychainError> {
    match get("warden", "probe") {
        Ok(_) | Err(KeychainError::Missing(_)) => Ok(()),
        Err(e) => Err(e),
    }
}
