//! The signals that end a session.

/// SIGTERM, SIGINT and SIGHUP all mean: shut down cleanly.
pub(super) struct Signals {
    #[cfg(unix)]
    list: [Option<tokio::signal::unix::Signal>; 3],
}

impl Signals {
    pub(super) fn new() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let kinds = [
                SignalKind::terminate(),
                SignalKind::interrupt(),
                SignalKind::hangup(),
            ];
            Signals {
                list: kinds.map(|k| signal(k).ok()),
            }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    pub(super) async fn recv(&mut self) {
        #[cfg(unix)]
        {
            async fn one(s: &mut Option<tokio::signal::unix::Signal>) {
                match s {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending().await,
                }
            }
            let [a, b, c] = &mut self.list;
            tokio::select! {
                () = one(a) => {}
                () = one(b) => {}
                () = one(c) => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
