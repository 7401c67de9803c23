//! Errors at the UI boundary, shared by the supervisor's API and the desktop app's.

use serde::{Deserialize, Serialize};

/// Errors at the UI boundary: a small code enum and a message for a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// No such server or session.
    NotFound,
    /// The request cannot be carried out as asked (e.g. a probe without a command).
    Invalid,
    /// config.toml could not be read, parsed or written.
    Config,
    /// Something failed on the way (I/O, a process).
    Io,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            message: message.into(),
        }
    }
}
