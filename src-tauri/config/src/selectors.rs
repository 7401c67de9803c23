//! The annotation selectors of the tool lists (`@readonly`, `@write`, `@destructive`,
//! `@openworld`) and the hints of a tool's definition they match, read with the MCP spec's
//! defaults for absent hints. `ToolGlobs` (config) compiles them; `policy` decides with them.

use serde_json::Value;

/// An annotation selector of a policy list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selector {
    /// `readOnlyHint` true.
    ReadOnly,
    /// Not read-only.
    Write,
    /// Not read-only, and `destructiveHint` true (the default).
    Destructive,
    /// `openWorldHint` true (the default).
    OpenWorld,
}

impl Selector {
    pub const ALL: &[(&str, Selector)] = &[
        ("@readonly", Selector::ReadOnly),
        ("@write", Selector::Write),
        ("@destructive", Selector::Destructive),
        ("@openworld", Selector::OpenWorld),
    ];

    /// `Some` for a pattern that starts with `@`: the selector, or why it is not one.
    pub fn parse(pattern: &str) -> Option<Result<Selector, String>> {
        if !pattern.starts_with('@') {
            return None;
        }
        Some(
            Selector::ALL
                .iter()
                .find(|(s, _)| *s == pattern)
                .map(|(_, sel)| *sel)
                .ok_or_else(|| {
                    format!(
                        "has an unknown selector {pattern:?} (known: @readonly, @write, @destructive, @openworld)"
                    )
                }),
        )
    }

    pub fn as_str(self) -> &'static str {
        Selector::ALL
            .iter()
            .find(|(_, s)| *s == self)
            .map_or("", |(name, _)| name)
    }

    pub fn matches(self, h: Hints) -> bool {
        match self {
            Selector::ReadOnly => h.read_only,
            Selector::Write => !h.read_only,
            Selector::Destructive => !h.read_only && h.destructive,
            Selector::OpenWorld => h.open_world,
        }
    }
}

/// A tool's behaviour hints, with the spec's defaults for the absent ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub open_world: bool,
}

impl Hints {
    /// The hints of a tool definition (`annotations` of a `tools/list` entry or of a pin);
    /// `None` (a tool never listed) gets every default.
    pub fn of(def: Option<&Value>) -> Hints {
        let hint = |key: &str, default: bool| {
            def.and_then(|d| d.get("annotations"))
                .and_then(|a| a.get(key))
                .and_then(Value::as_bool)
                .unwrap_or(default)
        };
        Hints {
            read_only: hint("readOnlyHint", false),
            destructive: hint("destructiveHint", true),
            open_world: hint("openWorldHint", true),
        }
    }
}
