//! The supervisor's side of the IDE and agent config files: listing, wrap/unwrap with a
//! diff preview, backups and restore, and the watcher with its auto-rewrite switch, as
//! API types. The work itself is [`warden_clients`]'s.

use std::path::Path;

use super::api::{
    ApiError, ApiEvent, AwaitingServer, ClientChangeKind, ClientFile, ClientsReport, ErrorCode,
    FileChangeView, RestoreView,
};
use warden_clients::{
    self as clients, ClientEnv, ClientError, ClientWatcher, FileChange, Filter, Scope,
    UnwrapOptions, WatchReport, WrapOptions,
};

pub(super) fn api_error(e: &ClientError) -> ApiError {
    let code = match e {
        ClientError::Parse { .. } | ClientError::NotUtf8 { .. } | ClientError::Changed { .. } => {
            ErrorCode::Invalid
        }
        ClientError::UnknownFile { .. } => ErrorCode::NotFound,
        _ => ErrorCode::Io,
    };
    ApiError::new(code, e.coded())
}

pub(super) fn env() -> Result<ClientEnv, ApiError> {
    ClientEnv::from_process().map_err(|e| api_error(&e))
}

/// Every detected file with its servers.
pub(super) fn report(
    env: &ClientEnv,
    watcher: Option<&ClientWatcher>,
    warden: Option<&Path>,
) -> ClientsReport {
    let given_up = watcher.map(ClientWatcher::given_up).unwrap_or_default();
    let listing = clients::list(env);
    let auto_rewrite = watcher.is_some_and(ClientWatcher::auto_rewrite);
    let without_asking = watcher.is_some_and(ClientWatcher::without_asking);
    let awaiting = if auto_rewrite && !without_asking {
        clients::awaiting(env, &listing)
            .into_iter()
            .filter(|(f, _)| !given_up.contains(&f.path))
            .map(|(f, server)| AwaitingServer {
                client: f.client,
                client_name: f.client.display_name().to_owned(),
                path: f.path,
                server,
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut kept = clients::stashed(env);
    let files = listing
        .into_iter()
        .map(|l| {
            let f = &l.file;
            let (mine, others) = kept.drain(..).partition(|(k, _)| k.path == f.path);
            kept = others;
            ClientFile {
                client: f.client,
                client_name: f.client.display_name().to_owned(),
                path: f.path.clone(),
                format: f.format.to_string(),
                project: match &f.scope {
                    Scope::User => None,
                    Scope::Project(dir) => Some(dir.clone()),
                },
                active: f.active,
                exists: f.path.exists(),
                servers: l.servers,
                kept_aside: mine.into_iter().map(|(_, e)| e).collect(),
                error: l.error.map(|e| e.coded()),
                notices: clients::notices_for(f, env),
                given_up: given_up.contains(&f.path),
            }
        })
        .collect();
    ClientsReport {
        files,
        auto_rewrite,
        without_asking,
        awaiting,
        probe_ide: None,
        watching: watcher.is_some(),
        warden: warden.map(Path::to_owned),
        sandbox_works: warden_bridge::sandbox::works(),
    }
}

/// Wraps or unwraps the servers of one file (or of every active file); `wrote` is told each
/// file's new text.
pub(super) fn edit(
    env: &ClientEnv,
    warden: Option<&Path>,
    wrap: bool,
    filter: Filter,
    dry_run: bool,
    move_secrets: bool,
    wrote: &dyn Fn(&Path, &str),
) -> Result<Vec<FileChangeView>, ApiError> {
    let changes = if wrap {
        let warden = warden.ok_or_else(no_warden)?;
        clients::wrap(
            env,
            &WrapOptions {
                warden: warden.to_owned(),
                filter,
                dry_run,
                move_secrets,
            },
        )
    } else {
        clients::unwrap(env, &UnwrapOptions { filter, dry_run })
    };
    views(changes, wrote)
}

/// Why nothing can be wrapped.
pub(super) fn no_warden() -> ApiError {
    ApiError::new(
        ErrorCode::Invalid,
        "the path of the warden binary is not known, so nothing can be wrapped: start the app or `warden daemon` from its installed location",
    )
}

/// The changes as the API shows them, after telling the watcher what was written (`wrote`).
pub(super) fn views(
    changes: Result<Vec<FileChange>, ClientError>,
    wrote: &dyn Fn(&Path, &str),
) -> Result<Vec<FileChangeView>, ApiError> {
    let changes = changes.map_err(|e| api_error(&e))?;
    for c in &changes {
        if let Some(text) = &c.new_text {
            wrote(&c.file.path, text);
        }
    }
    Ok(changes.into_iter().map(FileChangeView::from).collect())
}

pub(super) fn backups(env: &ClientEnv) -> Result<Vec<clients::Backup>, ApiError> {
    let mut all = clients::backups(&env.state_dir).map_err(|e| api_error(&e))?;
    all.sort_by_key(|b| std::cmp::Reverse(b.created_unix_ms));
    Ok(all)
}

pub(super) fn restore(env: &ClientEnv, id: &str, dry_run: bool) -> Result<RestoreView, ApiError> {
    let r = clients::restore(env, id, dry_run).map_err(|e| api_error(&e))?;
    Ok(RestoreView {
        backup: r.backup,
        written: r.written,
        previous: r.previous,
        diff: r.diff,
    })
}

/// A watcher report as an API event, and the line for the history.
pub(super) fn watch_event(report: WatchReport) -> (ApiEvent, String) {
    let names = |servers: &[clients::EntryRef]| -> Vec<String> {
        servers.iter().map(|e| e.name.clone()).collect()
    };
    let (change, file, servers, message) = match report {
        WatchReport::NewServers {
            file,
            servers,
            awaiting,
        } => {
            let (kind, what) = if awaiting {
                (
                    ClientChangeKind::Awaiting,
                    "await your approval before Warden wraps them; review their commands",
                )
            } else {
                (
                    ClientChangeKind::NewServers,
                    "run without the bridge; wrap them",
                )
            };
            let message = format!(
                "{}: new stdio server(s) {} {what} on the Clients page",
                file.client.display_name(),
                names(&servers).join(", ")
            );
            (kind, file, names(&servers), message)
        }
        WatchReport::Wrapped {
            file,
            servers,
            notices,
            ..
        } => {
            let mut message = format!(
                "{}: wrapped {}",
                file.client.display_name(),
                names(&servers).join(", ")
            );
            for n in notices {
                message.push_str(". ");
                message.push_str(&n.message);
            }
            (ClientChangeKind::Wrapped, file, names(&servers), message)
        }
        WatchReport::Reverted {
            file,
            servers,
            count,
        } => {
            let message = format!(
                "{} put back the original command of {} (revert {count})",
                file.client.display_name(),
                names(&servers).join(", ")
            );
            (ClientChangeKind::Reverted, file, names(&servers), message)
        }
        WatchReport::GaveUp {
            file,
            servers,
            message,
            ..
        } => (ClientChangeKind::GaveUp, file, names(&servers), message),
        WatchReport::Failed { file, error } => (ClientChangeKind::Failed, file, Vec::new(), error),
    };
    let line = message.clone();
    (
        ApiEvent::Client {
            change,
            client: file.client,
            path: file.path,
            servers,
            message,
        },
        line,
    )
}
