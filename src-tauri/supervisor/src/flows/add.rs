//! Adding a server, the one workflow `warden install` and the window's Add flow both run
//! (`ServerAdd`): a plan (the files' diffs, the entry's risks, the runner's preset), then the
//! commit, in this order:
//! 1. the sandbox's keys (and `@destructive` added to `tools_ask`) in `[servers.NAME]` of
//!    config.toml, with their final values: when one cannot be set, nothing else is written;
//! 2. the secrets into the OS keychain (`NAME/VAR`);
//! 3. the clients' files;
//! 4. the first start: the entry read back from the file, started only when its argv, `env`
//!    and `cwd` are as written, through the bridge and so the sandbox, the keychain and the
//!    pins. The network "for the first start only" is that start's alone: it runs with
//!    `--set sandbox_network=host` on its own command line, and config.toml never holds it, so
//!    no other session gets it and nothing has to be taken back (a failure, a panic or a quit
//!    leave no network open).
//!
//! Keys set before a failure stay in `[servers.NAME]`: they only limit a server of that name.
//! Each side effect is a method of [`Effects`], so the order is tested without a keychain or a
//! server (tests below); [`Real`] is the one the supervisor and the CLI use.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use crate::api::{AddSandbox, AddStep, FirstStartNetwork};
use crate::api::{FileChangeView, ProbeReport};
use crate::probe;
use warden_clients::{
    self as clients, AddOptions, ClientEnv, ClientError, ClientId, FileChange, NewEntry,
};
pub use warden_config::network::runner_preset;

/// A server to add, and what comes with it.
#[derive(Debug, Clone)]
pub struct Add {
    pub entry: NewEntry,
    pub clients: Vec<ClientId>,
    /// Values for the keychain (`NAME/VAR`); the entry's `secret_env` names them.
    pub secrets: BTreeMap<String, String>,
    /// `Some(warden)`: the entry runs through `warden bridge`; `None`: the plain command.
    pub warden: Option<PathBuf>,
    /// Only with `warden` (a plain command has no sandbox).
    pub sandbox: Option<AddSandbox>,
    /// `tools_ask = ["@destructive"]`: its calls of tools that may change or delete things
    /// wait for a yes (only with `warden`).
    pub ask_destructive: bool,
    /// Start it once after writing (the first start).
    pub start: bool,
}

/// What the preview shows before anything is written.
#[derive(Debug)]
pub struct Plan {
    pub changes: Vec<FileChange>,
    pub risks: Vec<clients::Risk>,
    /// The `sandbox_network` preset of its package runner (`@npm`, `@pypi`), if it has one.
    pub preset: Option<&'static str>,
}

/// What the commit did.
#[derive(Debug)]
pub struct Done {
    pub changes: Vec<FileChange>,
    /// The first start's report (none when not asked for, or a file was not written).
    pub probe: Option<ProbeReport>,
    /// The first start's network at the end (none when it was not allowed for it only).
    pub network: Option<FirstStartNetwork>,
}

/// Why the commit stopped; [`AddError::message`] says what was and was not written.
#[derive(Debug)]
pub enum AddError {
    /// A config.toml key could not be set: nothing else was written.
    Key { key: &'static str, error: String },
    /// The keychain did not take the secret `var`: no file was written (`keys`: config.toml
    /// keys were set before).
    Secret {
        var: String,
        error: String,
        keys: bool,
    },
    /// The clients' files were not written (`keys`: sandbox keys stay in config.toml).
    Files { error: ClientError, keys: bool },
}

impl AddError {
    pub fn message(&self) -> String {
        match self {
            AddError::Key { key, error } => format!(
                "Nothing was written to the clients' files: the sandbox could not be set in config.toml ({key}): {error}"
            ),
            AddError::Secret { var, error, keys } => format!(
                "cannot store {var} in the OS keychain: {error}. The clients' files were not written{}. Fix: start or unlock the keychain (on Linux a Secret Service such as gnome-keyring or KeePassXC), then try again",
                if *keys {
                    " (the keys set in config.toml stay; they only limit a server of this name)"
                } else {
                    ""
                }
            ),
            AddError::Files { error, keys: true } => format!(
                "The clients' files were not written: {}. The keys set in config.toml stay; they only limit a server of this name.",
                error.coded()
            ),
            AddError::Files { error, keys: false } => error.coded(),
        }
    }
}

/// A key's value: set, or items added to the list config.toml holds.
#[derive(Debug, Clone)]
pub enum KeyValue {
    Set(toml_edit::Value),
    Add(Vec<String>),
}

impl std::fmt::Display for KeyValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyValue::Set(v) => write!(f, "{}", v.to_string().trim()),
            KeyValue::Add(items) => write!(f, "+{items:?}"),
        }
    }
}

/// The workflow's side effects.
#[allow(async_fn_in_trait)]
pub trait Effects {
    /// Sets `key` of the server in config.toml (a list: adds these items to it).
    async fn set_key(&mut self, key: &'static str, value: KeyValue) -> Result<(), String>;
    /// Stores one secret in the OS keychain.
    async fn store_secret(&mut self, var: &str, value: &str) -> Result<(), String>;
    /// Writes the clients' files (or previews them).
    async fn write_files(&mut self, opts: &AddOptions) -> Result<Vec<FileChange>, ClientError>;
    /// Starts `entry` once, as the file `written` (just written) runs it, when it reads back
    /// as it was written (`argv` its command line); `network`: with the host network for this
    /// start only.
    async fn first_start(
        &mut self,
        entry: &NewEntry,
        argv: &[String],
        network: bool,
        written: &FileChange,
    ) -> ProbeReport;
    /// Says what is happening.
    fn progress(&mut self, step: AddStep);
}

/// Whether the choice is the runner's registry only.
fn registry_only(c: &AddSandbox, preset: Option<&str>) -> bool {
    preset.is_some() && c.registry && !c.keep
}

/// The config.toml keys the sandbox choice sets before the clients' files are written: their
/// final values (the network for the first start only is that start's own, not config's).
pub fn sandbox_keys(c: &AddSandbox, preset: Option<&str>) -> Vec<(&'static str, toml_edit::Value)> {
    let network: toml_edit::Value = match preset {
        Some(p) if registry_only(c, preset) => toml_edit::Value::Array([p].into_iter().collect()),
        _ if c.keep => "host".into(),
        _ => "none".into(),
    };
    vec![("sandbox", "on".into()), ("sandbox_network", network)]
}

/// Whether the first start (and it alone) gets the host network.
pub fn network_for_first_start_only(c: &AddSandbox, preset: Option<&str>) -> bool {
    c.first_start && !c.keep && !registry_only(c, preset)
}

impl Add {
    fn options(&self, dry_run: bool) -> AddOptions {
        AddOptions {
            clients: self.clients.clone(),
            entry: self.entry.clone(),
            warden: self.warden.clone(),
            dry_run,
        }
    }

    /// The `sandbox_network` preset of its package runner, if it has one.
    pub fn preset(&self) -> Option<&'static str> {
        runner_preset(&self.entry.argv(None))
    }

    /// What its command and environment's names risk (the consent screen's warnings).
    pub fn risks(&self) -> Vec<clients::Risk> {
        let names = self.entry.env.keys().chain(&self.entry.secret_env);
        clients::entry_risks(&self.entry.command, &self.entry.args, names)
    }

    /// The keys set before the files, in order (none without the bridge).
    fn keys(&self) -> Vec<(&'static str, KeyValue)> {
        if self.warden.is_none() {
            return Vec::new();
        }
        let mut keys: Vec<(&'static str, KeyValue)> = match &self.sandbox {
            Some(c) => sandbox_keys(c, self.preset())
                .into_iter()
                .map(|(k, v)| (k, KeyValue::Set(v)))
                .collect(),
            None => Vec::new(),
        };
        if self.ask_destructive {
            // Its calls of tools that may change or delete things wait for a yes; added to
            // the list in force, so a stricter one is kept.
            keys.push(("tools_ask", KeyValue::Add(vec!["@destructive".to_owned()])));
        }
        keys
    }

    /// Whether the first start gets the host network, for itself alone.
    fn first_start_network(&self) -> bool {
        self.start
            && self.warden.is_some()
            && self
                .sandbox
                .as_ref()
                .is_some_and(|c| network_for_first_start_only(c, self.preset()))
    }
}

/// The preview: the files' diffs (a name taken, or no client, is refused here), the risks
/// of the entry, the runner's preset. Writes nothing.
pub async fn plan(add: &Add, fx: &mut impl Effects) -> Result<Plan, ClientError> {
    Ok(Plan {
        changes: fx.write_files(&add.options(true)).await?,
        risks: add.risks(),
        preset: add.preset(),
    })
}

/// Writes it all, in the order of the module's header.
pub async fn commit(add: &Add, fx: &mut impl Effects) -> Result<Done, AddError> {
    // A refused add (a name taken, no client) stores nothing.
    fx.write_files(&add.options(true))
        .await
        .map_err(|error| AddError::Files { error, keys: false })?;
    let keys = add.keys();
    for (key, value) in &keys {
        fx.set_key(key, value.clone())
            .await
            .map_err(|error| AddError::Key { key, error })?;
    }
    let keys = !keys.is_empty();
    for (var, value) in &add.secrets {
        fx.store_secret(var, value)
            .await
            .map_err(|error| AddError::Secret {
                var: var.clone(),
                error,
                keys,
            })?;
    }
    let changes = fx
        .write_files(&add.options(false))
        .await
        .map_err(|error| AddError::Files { error, keys })?;
    fx.progress(AddStep::Written {
        changes: changes.iter().map(FileChangeView::without_diff).collect(),
    });
    let written = changes.iter().find(|c| c.written);
    let (Some(written), true) = (
        written,
        add.start && changes.iter().all(|c| c.error.is_none()),
    ) else {
        return Ok(Done {
            changes,
            probe: None,
            network: None,
        });
    };
    let network = add.first_start_network();
    if network {
        fx.progress(AddStep::Network {
            state: FirstStartNetwork::Allowed,
        });
    }
    fx.progress(AddStep::FirstStart);
    // As `clients::add` writes it (the same path, the same bridge arguments).
    let warden = add
        .warden
        .as_ref()
        .map(|w| w.to_string_lossy().into_owned());
    let argv = add.entry.argv(warden.as_deref());
    let probe = fx.first_start(&add.entry, &argv, network, written).await;
    let network = network.then_some(FirstStartNetwork::Taken);
    if let Some(state) = &network {
        fx.progress(AddStep::Network {
            state: state.clone(),
        });
    }
    Ok(Done {
        changes,
        probe: Some(probe),
        network,
    })
}

/// The effects on the real things: config.toml, the OS keychain, the clients' files, and a
/// probe of the entry as the written file has it.
pub struct Real<'a> {
    pub env: &'a ClientEnv,
    pub server: &'a str,
    /// config.toml (none: keys cannot be set).
    pub config: Option<&'a Path>,
    /// Time the first start has for each step.
    pub timeout: std::time::Duration,
    /// Each file written, with its new text (the supervisor's watcher ignores its own writes).
    pub wrote: &'a (dyn Fn(&Path, &str) + Sync),
    /// Progress, as it happens.
    pub progress: &'a (dyn Fn(AddStep) + Sync),
    /// A config.toml key was changed (the supervisor tells the window).
    pub config_changed: &'a (dyn Fn() + Sync),
}

/// `work` off the async threads (the keychain and the files block).
async fn off_thread<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| format!("the step failed: {e}"))
}

impl Effects for Real<'_> {
    async fn set_key(&mut self, key: &'static str, value: KeyValue) -> Result<(), String> {
        let Some(path) = self.config.map(Path::to_owned) else {
            return Err(
                "no config file is known: set WARDEN_CONFIG (or use the default location)".into(),
            );
        };
        let server = self.server.to_owned();
        let edit = off_thread(move || match value {
            KeyValue::Set(v) => warden_config::edit::set_server_key(&path, &server, key, v),
            KeyValue::Add(items) => {
                warden_config::edit::edit_server_list(&path, &server, key, &items, &[])
            }
        })
        .await?;
        match edit {
            Ok(warden_config::edit::Edit::Changed) => {
                (self.config_changed)();
                Ok(())
            }
            Ok(warden_config::edit::Edit::Unchanged) => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }

    async fn store_secret(&mut self, var: &str, value: &str) -> Result<(), String> {
        let (server, var, value) = (self.server.to_owned(), var.to_owned(), value.to_owned());
        off_thread(move || {
            warden_config::keychain::set(&server, &var, &value).map_err(|e| e.to_string())
        })
        .await?
    }

    async fn write_files(&mut self, opts: &AddOptions) -> Result<Vec<FileChange>, ClientError> {
        let (env, opts) = (self.env.clone(), opts.clone());
        let changes = off_thread(move || clients::add(&env, &opts))
            .await
            .map_err(|e| ClientError::Io {
                action: "write",
                path: PathBuf::new(),
                fix: "try again",
                source: std::io::Error::other(e),
            })??;
        for c in &changes {
            if let Some(text) = &c.new_text {
                (self.wrote)(&c.file.path, text);
            }
        }
        Ok(changes)
    }

    async fn first_start(
        &mut self,
        entry: &NewEntry,
        argv: &[String],
        network: bool,
        written: &FileChange,
    ) -> ProbeReport {
        let name = &entry.name;
        // What the client will run, read back; started only when it is what was written (a
        // file another program changed in between is not run on its word).
        let as_written = |l: &clients::Launch| {
            l.argv == argv
                && l.cwd.is_none()
                && l.env.iter().cloned().collect::<BTreeMap<_, _>>() == entry.env
        };
        let launch = clients::launch_of(&written.file, name).filter(as_written);
        let Some(launch) = launch else {
            return ProbeReport {
                server: Some(name.clone()),
                command: argv.to_vec(),
                error: Some(format!(
                    "{name} in {} is not as it was written (another program may have changed the file), so it was not started. Fix: check the file, then `warden probe --server {name}`",
                    written.file.path.display()
                )),
                ..ProbeReport::default()
            };
        };
        let mut command = launch.argv;
        if network {
            // This start's own network: after `warden bridge`, before its other arguments.
            let at = command.len().min(2);
            command.splice(
                at..at,
                ["--set".to_owned(), "sandbox_network=host".to_owned()],
            );
        }
        probe::probe(
            Some(name.clone()),
            &command,
            &launch.env,
            None,
            self.timeout,
        )
        .await
    }

    fn progress(&mut self, step: AddStep) {
        (self.progress)(step);
    }
}

#[cfg(test)]
mod tests;
