//! How a server under bubblewrap with a `sandbox_network` list reaches the bridge's proxy,
//! its only way out of its own (empty) network namespace.
//!
//! bubblewrap runs Warden's own binary first ([`HELPER`]): inside the namespace it binds
//! 127.0.0.1:[`PORT_INSIDE`], sends that listening socket to the bridge over a socket the
//! bridge gave it (inherited, one end of a socket pair: [`super::Net`]), closes that socket and
//! execs the server (same pid, nothing of the helper stays). The bridge's proxy then accepts
//! the server's connections on the listener from outside: a socket keeps the namespace it was
//! made in, and the proxy connects to destinations in the host's. No process of Warden's
//! stays in the sandbox, no UNIX socket path is bound into it, and the server's system-call
//! filter (no `socket(AF_UNIX)`) is in force from the helper on: it needs none (it sends on
//! the inherited socket).

use std::ffi::OsString;
use std::io::{IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::net::{Ipv4Addr, TcpListener};
use std::os::fd::{AsFd, FromRawFd as _, OwnedFd, RawFd};
use std::os::unix::process::CommandExt as _;

use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};

/// The port the proxy listens on inside the server's network namespace (its own: no other
/// program listens there).
pub const PORT_INSIDE: u16 = 3128;

/// The first argument that makes `warden` the sandbox's helper: `warden HELPER FD -- COMMAND...`.
pub const HELPER: &str = "__sandbox-net";

/// The helper's part, in the sandbox: `args` are what follows [`HELPER`]. Returns only on
/// failure (the server was not exec'd).
#[allow(unsafe_code)]
pub fn helper(args: &[OsString]) -> std::io::Error {
    let bad = || std::io::Error::other(format!("usage: warden {HELPER} FD -- COMMAND..."));
    let (Some(fd), Some(sep)) = (args.first(), args.get(1)) else {
        return bad();
    };
    let Some(fd) = fd.to_str().and_then(|s| s.parse::<RawFd>().ok()) else {
        return bad();
    };
    let command = &args[2..];
    if sep != "--" || command.is_empty() || fd < 3 {
        return bad();
    }
    // SAFETY: the fd was inherited for this use (the bridge cleared its close-on-exec flag for
    // this process alone) and nothing else in this process holds it.
    let channel = unsafe { OwnedFd::from_raw_fd(fd) };
    let listener = match TcpListener::bind((Ipv4Addr::LOCALHOST, PORT_INSIDE)) {
        Ok(l) => l,
        Err(e) => return e,
    };
    if let Err(e) = send_listener(&channel, &listener) {
        return e;
    }
    drop(listener);
    drop(channel);
    std::process::Command::new(&command[0])
        .args(&command[1..])
        .exec()
}

fn send_listener(channel: &OwnedFd, listener: &TcpListener) -> std::io::Result<()> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds = [listener.as_fd()];
    control.push(SendAncillaryMessage::ScmRights(&fds));
    rustix::net::sendmsg(
        channel,
        &[IoSlice::new(b"L")],
        &mut control,
        SendFlags::empty(),
    )?;
    Ok(())
}

/// The listener the helper sends (blocking); `None` when the sandbox ended before it did.
pub fn receive_listener(channel: &OwnedFd) -> std::io::Result<Option<OwnedFd>> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut byte = [0u8; 1];
    loop {
        match rustix::net::recvmsg(
            channel,
            &mut [IoSliceMut::new(&mut byte)],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        ) {
            Ok(got) if got.bytes == 0 => return Ok(None),
            Ok(_) => break,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(mut fds) = message
            && let Some(fd) = fds.next()
        {
            return Ok(Some(fd));
        }
    }
    Ok(None)
}
