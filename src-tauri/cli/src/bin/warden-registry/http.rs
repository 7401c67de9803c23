//! One HTTP GET to an MCP Registry (ureq with rustls: no OpenSSL).
//!
//! Only `warden-registry` links this, so the HTTP and TLS stack is never in `warden`, whose
//! start-up time, idle memory and size every IDE pays for each server it runs (scripts/test.sh
//! checks `warden`'s symbols).

use std::time::Duration;

use warden_wire::codes::Code;

use crate::Failure;
use crate::net::{check_url, describe as describe_error, snippet};

/// The whole exchange, connection to last byte: a registry that does not answer in this time
/// is reported, not waited for.
const TIMEOUT: Duration = Duration::from_secs(10);
/// A page of the list is tens of KiB; this only bounds a runaway answer.
const MAX_BODY: u64 = 32 << 20;

const WHAT_TO_DO: &str = "Fix: check the network connection and try again, or use another registry with WARDEN_REGISTRY_URL or `url` in the [registry] table of config.toml";

/// The body at `url` (https, or http to this machine), or why not, with its code.
pub(crate) fn get(url: &str) -> Result<Vec<u8>, Failure> {
    let uri = check_url(url).map_err(|why| {
        Failure::new(
            Code::RegistryUnreachable,
            format!("{why}. Fix: set WARDEN_REGISTRY_URL or `url` in the [registry] table of config.toml to an https URL"),
        )
    })?;
    let agent = crate::net::agent(&uri, Some(TIMEOUT), None, 10, "application/json");
    let unreachable = |e: ureq::Error| {
        Failure::new(
            Code::RegistryUnreachable,
            format!(
                "the MCP Registry at {url} could not be reached: {}. {WHAT_TO_DO}",
                describe_error(&e, TIMEOUT)
            ),
        )
    };
    let mut response = agent.get(uri).call().map_err(unreachable)?;
    let status = response.status().as_u16();
    let body = response
        .body_mut()
        .with_config()
        .limit(MAX_BODY)
        .read_to_vec();
    if status == 404 {
        return Err(Failure::new(
            Code::RegistryNotFound,
            format!(
                "the registry has no such server or version ({url} answered 404 Not Found). Fix: find the exact name with `warden registry search TERM`"
            ),
        ));
    }
    if !(200..300).contains(&status) {
        let detail = body
            .ok()
            .map(|b| snippet(&b))
            .filter(|s| !s.is_empty())
            .map(|s| format!(": {s}"))
            .unwrap_or_default();
        return Err(Failure::new(
            Code::RegistryUnreachable,
            format!("the MCP Registry at {url} answered HTTP {status}{detail}. {WHAT_TO_DO}"),
        ));
    }
    body.map_err(|e| match e {
        ureq::Error::Timeout(_) => unreachable(e),
        e => Failure::new(
            Code::RegistryInvalid,
            format!(
                "the MCP Registry's answer from {url} could not be read to its end: {}. Fix: try again; if it persists, check that the registry URL is an MCP Registry's",
                describe_error(&e, TIMEOUT)
            ),
        ),
    })
}
