//! Tool policy: whether a tool is allowed, asked about or denied, from `tools_allow`,
//! `tools_ask` and `tools_deny`.
//!
//! Each list holds tool-name globs and annotation selectors (`@readonly`, `@write`,
//! `@destructive`, `@openworld`). Annotations are read from the tool's definition with the
//! MCP spec's defaults for absent hints (`readOnlyHint` false, `destructiveHint` true,
//! `openWorldHint` true), so a tool that says nothing counts as a destructive, open-world
//! write. Deny wins over ask, ask over allow; a non-empty `tools_allow` denies what neither
//! it nor `tools_ask` lists.

use serde_json::Value;

use crate::Limits;
pub use crate::selectors::{Hints, Selector};

/// Why a tool is asked about or denied: the list and the entry of it that decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    /// `tools_deny`, `tools_ask` or `tools_allow`.
    pub key: &'static str,
    /// The glob or selector that matched; `None` for a tool `tools_allow` does not list.
    pub entry: Option<String>,
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.entry {
            Some(e) => write!(f, "{} has {e:?}", self.key),
            None => write!(f, "{} does not list it", self.key),
        }
    }
}

/// What happens to a call of a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Policy {
    Allow,
    Ask(Reason),
    Deny(Reason),
}

impl Policy {
    fn rank(&self) -> u8 {
        match self {
            Policy::Allow => 0,
            Policy::Ask(_) => 1,
            Policy::Deny(_) => 2,
        }
    }

    /// The stricter of two policies (the first on a tie).
    pub fn stricter(self, other: Policy) -> Policy {
        if other.rank() > self.rank() {
            other
        } else {
            self
        }
    }
}

/// The policy of tool `name` with definition `def` (`None`: not known, every default hint).
pub fn policy(name: &str, def: Option<&Value>, limits: &Limits) -> Policy {
    let hints = Hints::of(def);
    let reason = |key, entry: Option<&str>| Reason {
        key,
        entry: entry.map(str::to_owned),
    };
    if let Some(e) = limits.tools_deny.matching(name, hints) {
        return Policy::Deny(reason("tools_deny", Some(e)));
    }
    if let Some(e) = limits.tools_ask.matching(name, hints) {
        return Policy::Ask(reason("tools_ask", Some(e)));
    }
    if limits.tools_allow.is_empty() || limits.tools_allow.matching(name, hints).is_some() {
        return Policy::Allow;
    }
    Policy::Deny(reason("tools_allow", None))
}

/// The list entry that names tool `name` and no other: its glob characters (and a leading
/// `@`, which would make it a selector) escaped with a backslash. A server's tool named `*`
/// or `@readonly` moved by name must not let other tools through.
pub fn name_entry(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(
            c,
            '\\' | '*' | '?' | '[' | ']' | '{' | '}' | '@' | '!' | ','
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A tool's policy as the server page shows it: the decision of [`policy_of_all`], and what
/// the page needs to explain and edit it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explained {
    pub policy: Policy,
    /// For an allowed tool: the `tools_allow` entry that lets it through (`None` when
    /// `tools_allow` is empty).
    pub allowed_by: Option<String>,
    /// `tools_allow` lets it through (it is empty, or an entry matches every definition).
    pub allow_listed: bool,
    /// The annotation selectors its newest definition matches.
    pub selectors: Vec<&'static str>,
}

/// [`policy_of_all`] with its reasons, for tool `name` with definitions `defs` (oldest first).
pub fn explain(name: &str, defs: &[&Value], limits: &Limits) -> Explained {
    let policy = policy_of_all(name, defs, limits);
    let hints: Vec<Hints> = if defs.is_empty() {
        vec![Hints::of(None)]
    } else {
        defs.iter().map(|d| Hints::of(Some(d))).collect()
    };
    let allow = &limits.tools_allow;
    let allowed: Vec<Option<&str>> = hints.iter().map(|h| allow.matching(name, *h)).collect();
    let allow_listed = allow.is_empty() || allowed.iter().all(Option::is_some);
    let allowed_by = (!allow.is_empty())
        .then(|| allowed.first().copied().flatten().map(str::to_owned))
        .flatten();
    let newest = hints.last().copied().unwrap_or(Hints::of(None));
    Explained {
        policy,
        allowed_by,
        allow_listed,
        selectors: Selector::ALL
            .iter()
            .filter(|(_, s)| s.matches(newest))
            .map(|(n, _)| *n)
            .collect(),
    }
}

/// The strictest policy over several definitions of one tool (its pin and what the server
/// lists now, when they differ): a server cannot loosen a policy by changing its annotations.
pub fn policy_of_all(name: &str, defs: &[&Value], limits: &Limits) -> Policy {
    if defs.is_empty() {
        return policy(name, None, limits);
    }
    defs.iter()
        .map(|d| policy(name, Some(d), limits))
        .reduce(Policy::stricter)
        .unwrap_or(Policy::Allow)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;
    use crate::ToolGlobs;

    fn limits(allow: &[&str], ask: &[&str], deny: &[&str]) -> Limits {
        let g = |l: &[&str]| ToolGlobs::new(l.iter().map(|s| (*s).to_owned()).collect()).unwrap();
        Limits {
            tools_allow: g(allow),
            tools_ask: g(ask),
            tools_deny: g(deny),
            ..Limits::default()
        }
    }

    fn def(annotations: Value) -> Value {
        json!({"name": "t", "annotations": annotations})
    }

    #[test]
    fn hints_follow_the_spec_defaults() {
        let none = Hints::of(None);
        assert_eq!(
            none,
            Hints {
                read_only: false,
                destructive: true,
                open_world: true
            }
        );
        assert_eq!(Hints::of(Some(&json!({"name": "t"}))), none);
        let ro = Hints::of(Some(&def(json!({"readOnlyHint": true}))));
        assert!(ro.read_only && ro.destructive && ro.open_world);
        // destructiveHint only means something for a tool that writes.
        assert!(!Selector::Destructive.matches(ro));
        assert!(Selector::ReadOnly.matches(ro) && !Selector::Write.matches(ro));
        let soft = Hints::of(Some(&def(
            json!({"destructiveHint": false, "openWorldHint": false}),
        )));
        assert!(Selector::Write.matches(soft));
        assert!(!Selector::Destructive.matches(soft) && !Selector::OpenWorld.matches(soft));
        // A hint of the wrong type counts as absent.
        let odd = Hints::of(Some(&def(json!({"readOnlyHint": "yes"}))));
        assert_eq!(odd, none);
    }

    #[test]
    fn policy_table() {
        let ro = def(json!({"readOnlyHint": true}));
        let write_soft = def(json!({"destructiveHint": false, "openWorldHint": false}));
        let bare = json!({"name": "t"});
        let deny = |key, entry: Option<&str>| {
            Policy::Deny(Reason {
                key,
                entry: entry.map(str::to_owned),
            })
        };
        let ask = |entry: &str| {
            Policy::Ask(Reason {
                key: "tools_ask",
                entry: Some(entry.to_owned()),
            })
        };
        #[rustfmt::skip]
        let cases: Vec<(Limits, &str, Option<&Value>, Policy)> = vec![
            // No lists: everything is allowed.
            (limits(&[], &[], &[]), "rm", Some(&bare), Policy::Allow),
            (limits(&[], &[], &[]), "rm", None, Policy::Allow),
            // Names, as before.
            (limits(&[], &[], &["rm*"]), "rm_rf", Some(&ro), deny("tools_deny", Some("rm*"))),
            (limits(&["read_*"], &[], &[]), "write", Some(&ro), deny("tools_allow", None)),
            (limits(&["read_*"], &[], &[]), "read_x", Some(&bare), Policy::Allow),
            // Selectors.
            (limits(&[], &["@destructive"], &[]), "t", Some(&bare), ask("@destructive")),
            (limits(&[], &["@destructive"], &[]), "t", None, ask("@destructive")),
            (limits(&[], &["@destructive"], &[]), "t", Some(&ro), Policy::Allow),
            (limits(&[], &["@destructive"], &[]), "t", Some(&write_soft), Policy::Allow),
            (limits(&[], &["@write"], &[]), "t", Some(&write_soft), ask("@write")),
            (limits(&[], &["@openworld"], &[]), "t", Some(&write_soft), Policy::Allow),
            (limits(&[], &[], &["@write"]), "t", Some(&ro), Policy::Allow),
            (limits(&[], &[], &["@write"]), "t", Some(&bare), deny("tools_deny", Some("@write"))),
            (limits(&["@readonly"], &[], &[]), "t", Some(&bare), deny("tools_allow", None)),
            (limits(&["@readonly"], &[], &[]), "t", Some(&ro), Policy::Allow),
            // Deny wins over ask, ask over allow.
            (limits(&["t"], &["t"], &["t"]), "t", Some(&ro), deny("tools_deny", Some("t"))),
            (limits(&["@readonly"], &["@readonly"], &[]), "t", Some(&ro), ask("@readonly")),
            // A tool `tools_ask` lists is asked about even when `tools_allow` leaves it out.
            (limits(&["@readonly"], &["@destructive"], &[]), "t", Some(&bare), ask("@destructive")),
            (limits(&["@readonly"], &["@destructive"], &[]), "t", Some(&write_soft), deny("tools_allow", None)),
        ];
        for (i, (l, name, d, want)) in cases.into_iter().enumerate() {
            assert_eq!(policy(name, d, &l), want, "case {i}");
        }
    }

    #[test]
    fn the_strictest_definition_decides() {
        let l = limits(&[], &["@destructive"], &[]);
        let pinned = def(json!({"readOnlyHint": true}));
        let now = json!({"name": "t"});
        assert_eq!(
            policy_of_all("t", &[&pinned, &now], &l),
            policy("t", Some(&now), &l)
        );
        assert_eq!(policy_of_all("t", &[&pinned], &l), Policy::Allow);
        assert!(matches!(policy_of_all("t", &[], &l), Policy::Ask(_)));
    }

    /// The page's explanation: the decision is `policy_of_all`'s, with the `tools_allow` entry
    /// that lets an allowed tool through and the selectors its definition matches.
    #[test]
    fn explained_for_the_server_page() {
        let ro = def(json!({"readOnlyHint": true}));
        let l = limits(&["@readonly", "get_*"], &[], &[]);
        let e = explain("t", &[&ro], &l);
        assert_eq!(e.policy, Policy::Allow);
        assert_eq!(e.allowed_by.as_deref(), Some("@readonly"));
        assert!(e.allow_listed);
        assert_eq!(e.selectors, ["@readonly", "@openworld"]);
        let e = explain("t", &[], &l);
        assert_eq!(e.policy, deny_allow());
        assert!(!e.allow_listed && e.allowed_by.is_none());
        assert_eq!(e.selectors, ["@write", "@destructive", "@openworld"]);
        // A pin that was read-only and a listing that is not: not let through.
        let bare = json!({"name": "t"});
        assert!(!explain("t", &[&ro, &bare], &l).allow_listed);
        // No tools_allow: everything is let through, by no entry.
        let e = explain("t", &[], &limits(&[], &[], &[]));
        assert!(e.allow_listed && e.allowed_by.is_none());
    }

    /// A tool's own entry matches it and nothing else, whatever its name holds.
    #[test]
    fn a_name_entry_names_one_tool() {
        let hints = Hints::of(None);
        for name in [
            "plain_name",
            "a*",
            "@readonly",
            "@nosuch",
            "x[1]",
            "{a,b}",
            "q?",
            "b\\s",
            "!x",
        ] {
            let entry = name_entry(name);
            let globs = ToolGlobs::new(vec![entry.clone()]).unwrap();
            assert_eq!(globs.matching(name, hints), Some(entry.as_str()), "{name}");
            for other in ["plain", "a", "ab", "x1", "a,b", "q", "b", "readonly", "x"] {
                assert_eq!(globs.matching(other, hints), None, "{name} {other}");
            }
        }
        assert_eq!(name_entry("get_file"), "get_file");
    }

    fn deny_allow() -> Policy {
        Policy::Deny(Reason {
            key: "tools_allow",
            entry: None,
        })
    }

    #[test]
    fn selectors_parse() {
        assert_eq!(
            Selector::parse("@readonly").unwrap().unwrap(),
            Selector::ReadOnly
        );
        assert!(Selector::parse("read*").is_none());
        let err = Selector::parse("@readOnly").unwrap().unwrap_err();
        assert!(err.contains("@readonly"), "{err}");
        for (name, sel) in Selector::ALL {
            assert_eq!(sel.as_str(), *name);
        }
    }
}
