//! What every command prints when it fails: one line on stderr, `warden: ` first, through
//! the printable-text rule (a message can carry a server's or a file's text).

use std::process::ExitCode;

/// Prints `message` as `warden: MESSAGE` and gives the failure exit code.
pub fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("warden: {}", warden_wire::text::lines(&message.to_string()));
    ExitCode::FAILURE
}
