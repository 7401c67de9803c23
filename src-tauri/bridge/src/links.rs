//! The plumbing between the bridge's tasks: the queued lines, the queues, and [`Links`], which
//! runs the router and sends what it produced where it goes.

use std::collections::VecDeque;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;
use tokio::sync::{Notify, mpsc};

use super::router::{Out, Router};
use super::sink::Sink;

/// Lines queued towards one side before the pump feeding it waits (backpressure).
const QUEUE: usize = 64;
/// Bytes of a streamed line in flight towards the client (read, not yet written), in KiB: as
/// much as the pipe the bridge asks for holds, so the memory of a huge line stays bounded
/// (peak RSS after 100 MB: 11 MB, was 16-27 MB with 64 queued parts) at the same rate.
pub(super) const PART_BUDGET_KIB: u32 = 1024;

/// A queued line, tagged with the server generation it was routed for (0 for the client).
pub(super) type Tagged = (u64, Line);

pub(super) enum Line {
    /// A whole line (the newline is added when written).
    Data(Bytes),
    /// Part of a line relayed as it arrives; nothing else is written until its `End`. Its
    /// share of the in-flight budget is given back once it is written.
    Part(Bytes, Option<tokio::sync::OwnedSemaphorePermit>),
    End,
    /// Write what is queued, say so on the first channel, and write nothing until the second
    /// one closes: the server pump splices the rest of a streamed line into the client's pipe
    /// meanwhile (Linux).
    #[cfg(target_os = "linux")]
    Lease(
        tokio::sync::oneshot::Sender<()>,
        tokio::sync::oneshot::Receiver<()>,
    ),
    /// Write what is queued, then close.
    Finish,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Client,
    Server,
}

/// Where router output goes. The side a pump feeds gets its bounded queue; the other side
/// gets the unbounded side queue.
#[derive(Clone)]
pub(super) struct Links {
    router: Arc<Mutex<Router>>,
    pub(super) to_client: mpsc::Sender<Tagged>,
    to_server: mpsc::Sender<Tagged>,
    pub(super) side_client: mpsc::UnboundedSender<Tagged>,
    pub(super) side_server: mpsc::UnboundedSender<Tagged>,
    life: mpsc::UnboundedSender<Out>,
    pub(super) sink: Arc<Sink>,
    pub(super) wake: Arc<Notify>,
    /// A request from the client began: the supervisor's connection sends a heartbeat soon,
    /// so status and the window show a call within a prompt of its start.
    pub(super) started: Arc<Notify>,
    /// The pid of the running server process (0 while none runs).
    pub(super) server_pid: Arc<AtomicU32>,
    /// The current server process's sandbox: 0 none, 1 bubblewrap, 2 Landlock.
    pub(super) sandbox: Arc<std::sync::atomic::AtomicU8>,
    /// The end of the server's stderr over all generations, and how often it grew (the
    /// heartbeat sends it when that changed).
    pub(super) recent_stderr: Arc<Mutex<(u64, VecDeque<u8>)>>,
    /// The in-flight budget of streamed parts ([`PART_BUDGET_KIB`]).
    pub(super) part_budget: Arc<tokio::sync::Semaphore>,
    /// The client's pipe, for splicing streamed lines into (Linux, when it is a pipe or a
    /// socket).
    #[cfg(target_os = "linux")]
    pub(super) cut_to: Option<super::splice::Target>,
}

impl Links {
    pub(super) fn router(&self) -> MutexGuard<'_, Router> {
        self.router.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends what the router produced for server generation `generation` through the side
    /// queues, which never wait.
    pub(super) fn send_now(&self, out: Out, generation: u64) {
        match out {
            Out::Client(line) => {
                self.sink.debug("warden", &line);
                let _ = self.side_client.send((0, Line::Data(line)));
            }
            Out::Server(line) => {
                self.sink.debug("warden", &line);
                let _ = self.side_server.send((generation, Line::Data(line)));
            }
            Out::Event(event) => self.sink.event(event),
            Out::WakeWatchdog => self.wake.notify_one(),
            Out::KillServer | Out::StartServer | Out::GaveUp => {
                let _ = self.life.send(out);
            }
            // Written off the relay by the sink's thread, before the session ends.
            Out::Pins(record) => self.sink.pins(*record),
        }
    }

    /// Runs `f` on the router and dispatches its output at once (side queues).
    pub(super) fn route_now(&self, f: impl FnOnce(&mut Router, &mut Vec<Out>)) {
        let mut outs = Vec::new();
        let generation = {
            let mut router = self.router();
            f(&mut router, &mut outs);
            router.generation()
        };
        for out in outs {
            self.send_now(out, generation);
        }
    }

    /// Runs `f` on the router for the pump of `side`: lines towards the other side go
    /// through its bounded queue, so a slow reader slows this pump down (backpressure).
    pub(super) async fn route(&self, side: Side, f: impl FnOnce(&mut Router, &mut Vec<Out>)) {
        let mut outs = Vec::new();
        let generation = {
            let mut router = self.router();
            f(&mut router, &mut outs);
            router.generation()
        };
        for out in outs.drain(..) {
            match (side, out) {
                (Side::Server, Out::Client(line)) => {
                    let _ = self.to_client.send((0, Line::Data(line))).await;
                }
                (Side::Client, Out::Server(line)) => {
                    let _ = self.to_server.send((generation, Line::Data(line))).await;
                }
                (_, other) => self.send_now(other, generation),
            }
        }
    }
}

/// The queues the server writer of the current generation drains.
pub(super) struct ServerQueues {
    pub(super) data: mpsc::Receiver<Tagged>,
    pub(super) side: mpsc::UnboundedReceiver<Tagged>,
}

/// The receiving ends of the queues in [`Links`].
pub(super) struct Receivers {
    pub(super) client: mpsc::Receiver<Tagged>,
    pub(super) side_client: mpsc::UnboundedReceiver<Tagged>,
    /// Drained by the server writer of the current generation.
    pub(super) server: Arc<tokio::sync::Mutex<ServerQueues>>,
    /// The router's orders for the server process (kill, start).
    pub(super) life: mpsc::UnboundedReceiver<Out>,
}

impl Links {
    /// The links around `router`, while server process `server_pid` runs.
    pub(super) fn new(router: Router, sink: Arc<Sink>, server_pid: u32) -> (Links, Receivers) {
        let (to_client, client) = mpsc::channel(QUEUE);
        let (to_server, data) = mpsc::channel(QUEUE);
        let (side_client, side_client_rx) = mpsc::unbounded_channel();
        let (side_server, side) = mpsc::unbounded_channel();
        let (life, life_rx) = mpsc::unbounded_channel();
        let links = Links {
            router: Arc::new(Mutex::new(router)),
            to_client,
            to_server,
            side_client,
            side_server,
            life,
            sink,
            wake: Arc::default(),
            started: Arc::default(),
            server_pid: Arc::new(AtomicU32::new(server_pid)),
            sandbox: Arc::default(),
            recent_stderr: Arc::default(),
            part_budget: Arc::new(tokio::sync::Semaphore::new(PART_BUDGET_KIB as usize)),
            #[cfg(target_os = "linux")]
            cut_to: None,
        };
        let receivers = Receivers {
            client,
            side_client: side_client_rx,
            server: Arc::new(tokio::sync::Mutex::new(ServerQueues { data, side })),
            life: life_rx,
        };
        (links, receivers)
    }
}
