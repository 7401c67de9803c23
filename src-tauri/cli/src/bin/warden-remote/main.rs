//! `warden-remote`: a remote MCP server (Streamable HTTP, or the deprecated HTTP+SSE) as a
//! stdio server. `warden bridge --server NAME --remote URL` runs it as its server process, so
//! everything the bridge does for a local server (timeouts, retries, the breaker, health and
//! figures, pins, `tools_allow`, `tools_deny`, `tools_ask`, debug logging) applies to a remote
//! one, while `warden` itself links no HTTP or TLS code. Run on its own it is a plain relay.
//!
//! Each message from stdin is one POST to URL; the answer (JSON, or a stream of server-sent
//! events) goes to stdout a message per line. A 2025-11-25 session's `Mcp-Session-Id` and
//! protocol version go on every later request, and its server-to-client stream (GET) is read
//! when the server offers one; 2026-07-28 requests carry their own version and `Mcp-Method` /
//! `Mcp-Name`. A server with no Streamable HTTP (its first POST answered 400, 404 or 405, or a
//! URL ending in `/sse`) is spoken to over HTTP+SSE ([`legacy`]): a GET stream whose `endpoint`,
//! held to the server's origin, takes a POST per message. A request the server could not
//! answer gets a JSON-RPC error with a stable code (`W-REMOTE-UNREACHABLE`, `W-REMOTE-TLS`,
//! `W-AUTH-REQUIRED`). A server that answers 401 is signed in to ([`auth`]): once per server
//! across every client, tokens in the OS keychain.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;

mod auth;
mod legacy;
#[path = "../../net.rs"]
mod net;
mod relay;
mod sse;

/// A remote MCP server (Streamable HTTP, or the deprecated HTTP+SSE) as a stdio MCP server.
#[derive(Parser)]
#[command(name = "warden-remote", version)]
struct Args {
    /// The server's name (in messages).
    #[arg(long)]
    server: String,
    /// Send header NAME with the value of the environment variable ENVVAR (repeatable), e.g.
    /// `--header Authorization=GITHUB_AUTH` with GITHUB_AUTH="Bearer …". Values never appear in
    /// arguments or messages.
    #[arg(long = "header", value_name = "NAME=ENVVAR")]
    headers: Vec<String>,
    /// Sign in now (a browser opens), keep the sign-in for every client, and exit
    /// (`warden auth login`).
    #[arg(long, conflicts_with = "sign_out")]
    sign_in: bool,
    /// Revoke the kept sign-in where the server offers revocation, forget it, and exit
    /// (`warden auth logout`).
    #[arg(long)]
    sign_out: bool,
    /// The server's URL: https, or http to this machine.
    url: String,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let relay = match relay::Relay::new(&args.server, &args.url, &args.headers) {
        Ok(relay) => relay,
        Err(why) => {
            eprintln!("warden-remote: {why}");
            return ExitCode::from(2);
        }
    };
    if args.sign_in {
        relay.sign_in()
    } else if args.sign_out {
        relay.sign_out()
    } else {
        relay::run(Arc::new(relay))
    }
}
