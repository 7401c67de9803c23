//! Setting a tool's policy (allow, ask, deny), the one workflow behind the server page's
//! buttons (`SetToolPolicy`): the lists change by the tool's own entry
//! ([`warden_config::policy::name_entry`], which names that tool and no other) in one write of
//! config.toml, so no bridge ever reads the tool out of one list and not yet into the other.
//! A glob or selector that covers the tool (and others) is left as it is: the report after
//! the edit says what decides then.

use crate::api::{PolicyKind, ToolPolicy};
use warden_config::edit::ListEdit;

/// The edits that move `t` to `to`: out of the lists that would decide otherwise (its own
/// entries only), into the list of `to` (`tools_allow` only when that list is in use and
/// does not let the tool through). `list(key)` is the list as config.toml holds it.
pub fn edits(t: &ToolPolicy, to: PolicyKind, list: &dyn Fn(&str) -> Vec<String>) -> Vec<ListEdit> {
    // Its own entry only: a name that is a glob or a selector (`*`, `@destructive`) is not
    // its entry, so a server cannot name a tool to have such an entry taken out.
    let own = [t.name_entry.clone()];
    let mut out = Vec::new();
    let take = |out: &mut Vec<ListEdit>, key: &str| {
        let have = list(key);
        let remove: Vec<String> = own.iter().filter(|e| have.contains(e)).cloned().collect();
        if !remove.is_empty() {
            out.push(ListEdit {
                key: key.to_owned(),
                add: Vec::new(),
                remove,
            });
        }
    };
    let put = |out: &mut Vec<ListEdit>, key: &str| {
        if !list(key).contains(&t.name_entry) {
            out.push(ListEdit {
                key: key.to_owned(),
                add: vec![t.name_entry.clone()],
                remove: Vec::new(),
            });
        }
    };
    match to {
        PolicyKind::Deny => {
            take(&mut out, "tools_ask");
            put(&mut out, "tools_deny");
        }
        PolicyKind::Ask => {
            take(&mut out, "tools_deny");
            put(&mut out, "tools_ask");
        }
        PolicyKind::Allow => {
            take(&mut out, "tools_deny");
            take(&mut out, "tools_ask");
            if !t.allow_listed {
                put(&mut out, "tools_allow");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn tool() -> ToolPolicy {
        ToolPolicy {
            tool: "push".into(),
            policy: PolicyKind::Allow,
            key: None,
            entry: None,
            name_entry: "push".into(),
            allow_listed: true,
            selectors: vec!["@write".into(), "@destructive".into(), "@openworld".into()],
            known: true,
            always: false,
            always_current: false,
        }
    }

    fn run(
        t: &ToolPolicy,
        to: PolicyKind,
        lists: &[(&str, &[&str])],
    ) -> Vec<(String, Vec<String>, Vec<String>)> {
        let lists: BTreeMap<String, Vec<String>> = lists
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.iter().map(|s| (*s).to_owned()).collect()))
            .collect();
        edits(t, to, &|k| lists.get(k).cloned().unwrap_or_default())
            .into_iter()
            .map(|e| (e.key, e.add, e.remove))
            .collect()
    }

    fn e(key: &str, add: &[&str], remove: &[&str]) -> (String, Vec<String>, Vec<String>) {
        let v = |s: &[&str]| s.iter().map(|x| (*x).to_owned()).collect();
        (key.to_owned(), v(add), v(remove))
    }

    fn with(policy: PolicyKind, key: &str, entry: Option<&str>) -> ToolPolicy {
        ToolPolicy {
            policy,
            key: Some(key.into()),
            entry: entry.map(str::to_owned),
            ..tool()
        }
    }

    #[test]
    fn ask_adds_the_tools_own_entry_to_tools_ask() {
        assert_eq!(
            run(&tool(), PolicyKind::Ask, &[]),
            [e("tools_ask", &["push"], &[])]
        );
    }

    #[test]
    fn a_tool_denied_by_name_moves_to_ask_out_of_tools_deny_into_tools_ask() {
        let t = with(PolicyKind::Deny, "tools_deny", Some("push"));
        assert_eq!(
            run(&t, PolicyKind::Ask, &[("tools_deny", &["push", "rm*"])]),
            [
                e("tools_deny", &[], &["push"]),
                e("tools_ask", &["push"], &[])
            ]
        );
    }

    #[test]
    fn deny_takes_it_out_of_tools_ask_by_name_and_adds_nothing_when_it_is_there() {
        let t = with(PolicyKind::Ask, "tools_ask", Some("push"));
        assert_eq!(
            (
                run(&t, PolicyKind::Deny, &[("tools_ask", &["push"])]),
                run(&t, PolicyKind::Deny, &[("tools_deny", &["push"])]),
            ),
            (
                vec![
                    e("tools_ask", &[], &["push"]),
                    e("tools_deny", &["push"], &[])
                ],
                vec![]
            )
        );
    }

    #[test]
    fn allow_takes_its_own_entries_out_and_adds_to_tools_allow_only_when_that_list_leaves_it_out() {
        let t = with(PolicyKind::Deny, "tools_deny", Some("push"));
        let unlisted = ToolPolicy {
            allow_listed: false,
            ..with(PolicyKind::Deny, "tools_allow", None)
        };
        assert_eq!(
            (
                run(
                    &t,
                    PolicyKind::Allow,
                    &[
                        ("tools_deny", &["push"]),
                        ("tools_ask", &["push", "@destructive"])
                    ]
                ),
                run(
                    &unlisted,
                    PolicyKind::Allow,
                    &[("tools_allow", &["read_*"])]
                ),
            ),
            (
                vec![
                    e("tools_deny", &[], &["push"]),
                    e("tools_ask", &[], &["push"])
                ],
                vec![e("tools_allow", &["push"], &[])]
            )
        );
    }

    #[test]
    fn a_glob_or_selector_that_covers_other_tools_too_is_never_touched() {
        let t = with(PolicyKind::Ask, "tools_ask", Some("@destructive"));
        assert_eq!(
            run(
                &t,
                PolicyKind::Allow,
                &[("tools_ask", &["@destructive", "p*"])]
            ),
            []
        );
    }

    /// A hostile server's tool named `@destructive`, allowed: the selector `tools_ask` holds
    /// (which asks about every destructive tool) stays.
    #[test]
    fn a_tool_named_like_a_selector_or_glob_never_takes_that_entry_out() {
        let named = |n: &str| ToolPolicy {
            tool: n.into(),
            name_entry: format!("\\{n}"),
            policy: PolicyKind::Ask,
            key: Some("tools_ask".into()),
            entry: Some(n.into()),
            ..tool()
        };
        assert_eq!(
            (
                run(
                    &named("@destructive"),
                    PolicyKind::Allow,
                    &[("tools_ask", &["@destructive"])]
                ),
                run(&named("*"), PolicyKind::Allow, &[("tools_ask", &["*"])]),
            ),
            (vec![], vec![])
        );
    }

    #[test]
    fn a_name_that_is_a_glob_or_selector_moves_by_its_escaped_entry() {
        let t = ToolPolicy {
            tool: "@readonly".into(),
            name_entry: "\\@readonly".into(),
            ..tool()
        };
        let asked = ToolPolicy {
            policy: PolicyKind::Ask,
            key: Some("tools_ask".into()),
            entry: Some("\\@readonly".into()),
            ..t.clone()
        };
        assert_eq!(
            (
                run(&t, PolicyKind::Deny, &[]),
                run(
                    &asked,
                    PolicyKind::Allow,
                    &[("tools_ask", &["\\@readonly"])]
                ),
            ),
            (
                vec![e("tools_deny", &["\\@readonly"], &[])],
                vec![e("tools_ask", &[], &["\\@readonly"])]
            )
        );
    }
}
