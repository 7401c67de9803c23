//! Reading the registry's JSON: one server (bare or wrapped) or a page of a list.

use super::document::{ResponseMeta, ServerJson, ServerList, ServerResponse};
use super::error::RegistryError;

pub use warden_config::OFFICIAL_URL;

/// One server: a bare `server.json` (`install --file`) or the API's `{server, _meta}`
/// (`GET /v0.1/servers/{name}/versions/{version}`); a bare document gets empty `_meta`.
pub fn parse_server(json: &str) -> Result<ServerResponse, RegistryError> {
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| malformed("the server document", &e))?;
    let wrapped = value
        .get("server")
        .is_some_and(serde_json::Value::is_object)
        && value.get("name").is_none();
    if wrapped {
        serde_json::from_value(value).map_err(|e| malformed("the registry's answer", &e))
    } else if value.is_object() {
        let server = serde_json::from_value::<ServerJson>(value)
            .map_err(|e| malformed("the server document", &e))?;
        Ok(ServerResponse {
            server,
            meta: ResponseMeta::default(),
        })
    } else {
        Err(RegistryError::Malformed {
            what: "the server document".into(),
            detail: "it is not a JSON object (a list of servers is read with parse_list)".into(),
        })
    }
}

/// A page of `GET /v0.1/servers` (or `.../versions`).
pub fn parse_list(json: &str) -> Result<ServerList, RegistryError> {
    serde_json::from_str(json).map_err(|e| malformed("the registry's list of servers", &e))
}

fn malformed(what: &str, e: &serde_json::Error) -> RegistryError {
    RegistryError::Malformed {
        what: what.to_owned(),
        detail: e.to_string(),
    }
}
