//! The IDE configs as the supervisor hosts them: the config watcher (its reports become
//! events and history; the auto-rewrite switch) and the requests on the configs, run off the
//! async threads. The work itself is in [`clients_api`] and [`warden_clients`].

use std::path::PathBuf;
use std::sync::{Arc, MutexGuard, PoisonError};

use super::api::{
    AddAnswer, ApiError, ApiEvent, ClientChangeKind, ClientsReport, ErrorCode, FileChangeView,
    HistoryEntry, RestoreView, SetAnswer, SetFileView, op,
};
use super::clients_api;
use super::service::{Supervisor, blocking};
use super::switches;
use super::{flows, probe};
use warden_clients::sets::{self, ApplyOptions, Overview, RemoveOptions, SetOutcome};
use warden_clients::{self as clients, Backup};
use warden_wire::events::Event;

impl Supervisor {
    pub(super) fn watcher(&self) -> MutexGuard<'_, Option<warden_clients::ClientWatcher>> {
        self.watcher.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts the IDE config watcher; its reports become events and history.
    pub(super) fn start_client_watch(self: &Arc<Self>) {
        let Some(warden) = self.opts.warden_bin.clone() else {
            tracing::warn!("not watching IDE configs: the path of the warden binary is unknown");
            return;
        };
        let env = match clients_api::env() {
            Ok(env) => env,
            Err(e) => {
                tracing::warn!("not watching IDE configs: {}", e.message);
                return;
            }
        };
        let mut opts = warden_clients::WatchOptions::new(warden);
        (opts.auto_rewrite, opts.without_asking) =
            switches::auto_rewrite(self.opts.auto_rewrite_file.as_deref());
        let me = Arc::downgrade(self);
        let started = warden_clients::ClientWatcher::start(env, opts, move |report| {
            if let Some(me) = me.upgrade() {
                me.on_client_report(report);
            }
        });
        match started {
            Ok(w) => *self.watcher() = Some(w),
            Err(e) => tracing::warn!("not watching IDE configs: {e}"),
        }
    }

    /// The auto-rewrite switch: the running watcher's, else the saved one.
    pub fn auto_rewrite(&self) -> bool {
        match self.watcher().as_ref() {
            Some(w) => w.auto_rewrite(),
            None => switches::auto_rewrite(self.opts.auto_rewrite_file.as_deref()).0,
        }
    }

    fn on_client_report(&self, report: warden_clients::WatchReport) {
        let (event, line) = clients_api::watch_event(report);
        let ApiEvent::Client { client, change, .. } = &event else {
            return;
        };
        let kind = match change {
            ClientChangeKind::NewServers => "client_new_servers",
            ClientChangeKind::Awaiting => "client_awaiting",
            ClientChangeKind::Wrapped => "client_wrapped",
            ClientChangeKind::Reverted => "client_reverted",
            ClientChangeKind::GaveUp => "client_gave_up",
            ClientChangeKind::Failed => "client_failed",
        };
        let entry = HistoryEntry {
            server: format!("client:{client}"),
            session: None,
            event: Event::new(kind).detail(line),
            command: None,
        };
        self.record(&mut self.lock(), entry);
        self.emit(event);
    }

    pub(super) fn set_auto_rewrite(
        &self,
        on: bool,
        without_asking: bool,
    ) -> Result<(bool, bool), ApiError> {
        let without_asking = on && without_asking;
        if let Some(path) = &self.opts.auto_rewrite_file {
            switches::save_auto_rewrite(path, on, without_asking)?;
        }
        match self.watcher().as_ref() {
            Some(w) => {
                w.set_without_asking(without_asking);
                w.set_auto_rewrite(on);
                Ok((on, without_asking))
            }
            None => Err(ApiError::new(
                ErrorCode::Invalid,
                "the IDE config watcher is not running here (start the tray app, or `warden daemon --watch-clients`); the switch was saved for its next start",
            )),
        }
    }

    /// `Clients`: the detected IDE configs and the watcher's state.
    pub(super) async fn clients(self: &Arc<Self>) -> Result<ClientsReport, ApiError> {
        let sup = Arc::clone(self);
        blocking(move || {
            let env = clients_api::env()?;
            Ok(ClientsReport {
                probe_ide: sup.probe_ide(),
                ..clients_api::report(&env, sup.watcher().as_ref(), sup.opts.warden_bin.as_deref())
            })
        })
        .await
    }

    /// `ClientEdit`: wraps or unwraps IDE config entries (and tells the watcher what was
    /// written, so a client's revert right after is seen).
    pub(super) async fn edit_clients(
        self: &Arc<Self>,
        wrap: bool,
        file: Option<PathBuf>,
        server: Option<String>,
        dry_run: bool,
        move_secrets: bool,
    ) -> Result<Vec<FileChangeView>, ApiError> {
        let sup = Arc::clone(self);
        blocking(move || {
            let env = clients_api::env()?;
            let filter = clients::Filter {
                client: None,
                file,
                server,
            };
            let wrote = |path: &std::path::Path, text: &str| sup.wrote(path, text);
            let warden = sup.opts.warden_bin.as_deref();
            clients_api::edit(&env, warden, wrap, filter, dry_run, move_secrets, &wrote)
        })
        .await
    }

    /// `KeepUnwrapped`: auto-rewrite leaves `server` of `file` as it is.
    pub(super) async fn keep_unwrapped(
        &self,
        file: PathBuf,
        server: String,
    ) -> Result<Vec<String>, ApiError> {
        blocking(move || {
            let missing = format!(
                "{} has no unwrapped server named {server}; reload the Clients page",
                file.display()
            );
            let filter = clients::Filter {
                client: None,
                file: Some(file),
                server: Some(server),
            };
            let kept = clients::keep_unwrapped(&clients_api::env()?, &filter)
                .map_err(|e| clients_api::api_error(&e))?;
            if kept.is_empty() {
                return Err(ApiError::new(ErrorCode::NotFound, missing));
            }
            Ok(kept)
        })
        .await
    }

    pub(super) async fn backups(&self) -> Result<Vec<Backup>, ApiError> {
        blocking(|| clients_api::backups(&clients_api::env()?)).await
    }

    pub(super) async fn restore(&self, id: String, dry_run: bool) -> Result<RestoreView, ApiError> {
        blocking(move || clients_api::restore(&clients_api::env()?, &id, dry_run)).await
    }

    /// `ServerAdd`: the add workflow (`flows::add`), its preview in a dry run; each step is
    /// an `AddProgress` event as it happens.
    pub(super) async fn add_server(
        self: &Arc<Self>,
        mut add: flows::add::Add,
        wrap: bool,
        dry_run: bool,
    ) -> Result<AddAnswer, ApiError> {
        add.warden = match (wrap, self.opts.warden_bin.clone()) {
            (false, _) => None,
            (true, Some(w)) => Some(w),
            (true, None) => return Err(clients_api::no_warden()),
        };
        if !wrap && (add.sandbox.is_some() || add.ask_destructive) {
            return Err(ApiError::new(
                ErrorCode::Invalid,
                "the sandbox and asking before destructive tools work through the bridge: keep the entry wrapped, or add it without them",
            ));
        }
        let env = clients_api::env()?;
        if !dry_run {
            secrets_free(&env, &add)?;
        }
        let sup = Arc::clone(self);
        let server = add.entry.name.clone();
        let wrote = |path: &std::path::Path, text: &str| sup.wrote(path, text);
        let progress = |step| {
            sup.emit(ApiEvent::AddProgress {
                server: server.clone(),
                step,
            })
        };
        let config_changed = || {
            sup.emit(ApiEvent::ConfigChanged {
                server: server.clone(),
            })
        };
        let mut fx = flows::add::Real {
            env: &env,
            server: &server,
            config: sup.opts.config.as_deref(),
            timeout: probe::PREWARM_TIMEOUT.max(sup.opts.probe_timeout),
            wrote: &wrote,
            progress: &progress,
            config_changed: &config_changed,
        };
        let refused = |e: &clients::ClientError| clients_api::api_error(e);
        if dry_run {
            let plan = flows::add::plan(&add, &mut fx)
                .await
                .map_err(|e| refused(&e))?;
            return Ok(AddAnswer {
                changes: plan.changes.into_iter().map(FileChangeView::from).collect(),
                risks: plan.risks,
                preset: plan.preset.map(str::to_owned),
                probe: None,
                network: None,
            });
        }
        let done = flows::add::commit(&add, &mut fx)
            .await
            .map_err(|e| match &e {
                flows::add::AddError::Files { error, keys: false } => refused(error),
                other => ApiError::new(ErrorCode::Io, other.message()),
            })?;
        if let Some(report) = &done.probe {
            self.note_probe(report);
        }
        Ok(AddAnswer {
            changes: done.changes.into_iter().map(FileChangeView::from).collect(),
            risks: add.risks(),
            preset: add.preset().map(str::to_owned),
            probe: done.probe,
            network: done.network,
        })
    }

    /// `ServerSwitch`: `server` on or off in the files and scope of `sel`.
    pub(super) async fn switch_server(
        self: &Arc<Self>,
        server: String,
        sel: clients::Selection,
        enabled: bool,
        dry_run: bool,
    ) -> Result<Vec<FileChangeView>, ApiError> {
        let sup = Arc::clone(self);
        blocking(move || {
            let env = clients_api::env()?;
            let changes = clients::set_enabled(&env, &server, &sel, enabled, dry_run);
            clients_api::views(changes, &|path, text| sup.wrote(path, text))
        })
        .await
    }

    /// `ServerRemove`: the changes, and the plan that applies exactly them.
    pub(super) async fn remove_server(
        self: &Arc<Self>,
        server: String,
        of: Vec<clients::ClientId>,
        plan: Option<Vec<clients::PlannedFile>>,
        dry_run: bool,
    ) -> Result<(Vec<FileChangeView>, Vec<clients::PlannedFile>), ApiError> {
        let sup = Arc::clone(self);
        blocking(move || {
            let env = clients_api::env()?;
            let sel = clients::Selection::clients(&of);
            let changes = clients::remove(&env, &server, &sel, plan.as_deref(), dry_run);
            let plan = changes.as_deref().map(clients::plan_of).unwrap_or_default();
            let views = clients_api::views(changes, &|path, text| sup.wrote(path, text))?;
            Ok((views, plan))
        })
        .await
    }

    /// `Projects`: the sets of config.toml, the projects and what each client starts there.
    pub(super) async fn projects(&self) -> Result<Overview, ApiError> {
        let config = self.opts.config.clone();
        blocking(move || {
            let env = clients_api::env()?;
            let defs: Vec<(String, Vec<String>)> =
                load_sets(config.as_deref())?.into_iter().collect();
            Ok(sets::overview(&env, &defs))
        })
        .await
    }

    /// `SetApply`: the set's servers into the chosen clients' files; with a plan, exactly
    /// what the preview showed.
    pub(super) async fn apply_set(
        self: &Arc<Self>,
        a: op::SetApply,
    ) -> Result<SetAnswer, ApiError> {
        let this = self
            .opts
            .warden_bin
            .clone()
            .ok_or_else(clients_api::no_warden)?;
        absolute(a.project.as_deref())?;
        let config = self.opts.config.clone();
        let sup = Arc::clone(self);
        blocking(move || {
            let env = clients_api::env()?;
            let defs = load_sets(config.as_deref())?;
            let Some(servers) = defs.get(&a.set).cloned() else {
                let e = clients::ClientError::NoSuchSet {
                    set: a.set.clone(),
                    known: defs.keys().cloned().collect(),
                    config: config.unwrap_or_default(),
                };
                return Err(ApiError::new(ErrorCode::Invalid, e.coded()));
            };
            // A project's entries say plain `warden` when it is this one on PATH (resolved).
            let this = match a.project {
                Some(_) => std::fs::canonicalize(&this).unwrap_or(this),
                None => this,
            };
            let (warden, warning) = sets::bridge_command(&this, a.project.is_some());
            let opts = ApplyOptions {
                set: a.set,
                servers,
                clients: a.clients,
                project: a.project,
                warden,
                plan: a.plan,
                dry_run: a.dry_run,
            };
            let outcome = sets::apply(&env, &opts).map_err(|e| clients_api::api_error(&e))?;
            let applied = outcome.files.iter().any(|f| !f.change.changed.is_empty());
            Ok(sup.set_answer(outcome, warning.filter(|_| applied)))
        })
        .await
    }

    /// `SetRemove`: the entries the set's apply added, taken out (from Warden's ledger alone,
    /// so config.toml is not read).
    pub(super) async fn remove_set(
        self: &Arc<Self>,
        r: op::SetRemove,
    ) -> Result<SetAnswer, ApiError> {
        absolute(r.project.as_deref())?;
        let sup = Arc::clone(self);
        blocking(move || {
            let env = clients_api::env()?;
            let opts = RemoveOptions {
                set: r.set,
                clients: r.clients,
                project: r.project,
                plan: r.plan,
                dry_run: r.dry_run,
            };
            let outcome = sets::remove(&env, &opts).map_err(|e| clients_api::api_error(&e))?;
            Ok(sup.set_answer(outcome, None))
        })
        .await
    }

    /// A set's outcome as the API shows it, after telling the watcher what was written.
    fn set_answer(&self, outcome: SetOutcome, warning: Option<String>) -> SetAnswer {
        let plan = outcome.plan();
        let files = outcome
            .files
            .into_iter()
            .map(|f| {
                if let Some(text) = &f.change.new_text {
                    self.wrote(&f.change.file.path, text);
                }
                SetFileView {
                    change: FileChangeView::from(&f.change),
                    kept: f.kept,
                    whole_file: f.whole_file,
                }
            })
            .collect();
        SetAnswer {
            files,
            skipped: outcome.skipped,
            plan,
            warning,
        }
    }

    /// Tells the watcher that Warden wrote `text` into `path` (not a change to process).
    fn wrote(&self, path: &std::path::Path, text: &str) {
        if let Some(w) = self.watcher().as_ref() {
            w.wrote(path, text);
        }
    }
}

/// A project's folder as the supervisor takes it: absolute (its own folder is no one's project).
fn absolute(project: Option<&std::path::Path>) -> Result<(), ApiError> {
    match project {
        Some(p) if !p.is_absolute() => Err(ApiError::new(
            ErrorCode::Invalid,
            format!(
                "{} is not an absolute path. Nothing was written. Fix: give the project's folder from the root (/home/you/code/app)",
                p.display()
            ),
        )),
        _ => Ok(()),
    }
}

/// The sets of config.toml at `path` (none without one).
fn load_sets(
    path: Option<&std::path::Path>,
) -> Result<std::collections::BTreeMap<String, Vec<String>>, ApiError> {
    match path.map(warden_config::Config::load) {
        None => Ok(Default::default()),
        Some(Ok(c)) => Ok(c.sets),
        Some(Err(e)) => Err(ApiError::new(
            ErrorCode::Config,
            format!("{e} [{}]", warden_wire::codes::Code::ConfigInvalid.as_str()),
        )),
    }
}

/// Refuses to replace a keychain item another client's entry of the same name reads (as
/// `warden install` asks before it does): that server would get the new value unasked.
fn secrets_free(env: &clients::ClientEnv, add: &flows::add::Add) -> Result<(), ApiError> {
    for (var, value) in &add.secrets {
        let files = clients::secret_in_use(env, &add.entry.name, var, value).unwrap_or_default();
        if let Some(f) = files.first() {
            return Err(ApiError::new(
                ErrorCode::Invalid,
                format!(
                    "the OS keychain holds another value of {var} for `{}`, which its entry in {} ({}) still reads: storing this one would change what that server gets. Nothing was written. Fix: add it under another name, or change the value with `warden install` or `warden servers add` on a terminal [W-SECRET-IN-USE]",
                    add.entry.name,
                    f.path.display(),
                    f.client
                ),
            ));
        }
    }
    Ok(())
}
