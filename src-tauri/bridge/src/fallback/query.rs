//! One validated search call (`Query`) and what an engine made of it (`Outcome`): what
//! `mod.rs` builds from a tool call and both engines (`rg.rs`, `builtin.rs`) take.

use std::path::PathBuf;

/// What rg is asked to print.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Mode {
    /// Matching lines (with context): `path:line:text`.
    #[default]
    Lines,
    /// `-l`: paths of files with a match.
    FilesWithMatches,
    /// `-c`: matching lines per file.
    Count,
    /// `--count-matches`: matches per file.
    CountMatches,
    /// `--files`: the files that would be searched.
    Files,
    /// `--type-list`.
    TypeList,
}

/// One tool call, validated; both engines take this.
#[derive(Debug, Clone, Default)]
pub(super) struct Query {
    pub(super) mode: Mode,
    pub(super) pattern: String,
    /// As the client wrote it (`~` expanded); relative paths are relative to the first root.
    pub(super) path: PathBuf,
    /// `Some(true)`: `-s`; `Some(false)`: `-i`; `None`: rg's default (case sensitive).
    pub(super) case_sensitive: Option<bool>,
    pub(super) fixed_strings: bool,
    pub(super) word: bool,
    pub(super) invert: bool,
    pub(super) hidden: bool,
    pub(super) follow: bool,
    pub(super) glob: Option<String>,
    pub(super) file_type: Option<String>,
    pub(super) max_count: Option<u64>,
    pub(super) context: u64,
    pub(super) line_numbers: bool,
    pub(super) colors: bool,
}

impl Query {
    pub(super) fn no_output_text(&self) -> &'static str {
        match self.mode {
            Mode::Files => "No files found",
            Mode::TypeList => "Failed to get file types",
            _ => "No matches found",
        }
    }

    pub(super) fn narrowing_hint(&self) -> &'static str {
        match self.mode {
            Mode::Files => "a filePattern glob (e.g. \"*.rs\"), a fileType, or a smaller path",
            Mode::Count | Mode::CountMatches => {
                "a more specific pattern, a filePattern glob (e.g. \"*.rs\"), or a smaller path"
            }
            _ => {
                "a more specific pattern, a filePattern glob (e.g. \"*.rs\"), a smaller path, \
                 or maxResults"
            }
        }
    }
}

/// What an engine produced.
#[derive(Debug)]
pub(super) enum Outcome {
    /// rg's standard output; `cut` when the search was stopped past the output cap.
    Output { bytes: Vec<u8>, cut: bool },
    /// The search failed; the whole error text of the result.
    Failed(String),
}
