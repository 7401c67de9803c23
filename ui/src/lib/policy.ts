// The tool policy on the server page (`tools_allow`, `tools_ask`, `tools_deny`; docs/behaviour.md).
// Whether a tool is allowed, asked about or denied, and why, is decided by the supervisor with
// the bridges' own code (`ToolPolicy` of the limits report): nothing here judges a tool. This
// turns a move the user asks for ("ask before each call") into edits of the lists by the
// tool's own entry (`name_entry`, which names that tool and no other), and words the reason.
import type { LimitsReport, PolicyKind, ToolPolicy } from "../bindings/api";

export type PolicyKey = "tools_allow" | "tools_ask" | "tools_deny";

/** One `set_limit` list edit. */
export type PolicyEdit = { key: PolicyKey; add: string[]; remove: string[] };

export const POLICY_LABEL: Record<PolicyKind, string> = { allow: "Allow", ask: "Ask", deny: "Deny" };

/** The list `key` in force for the server (its own, else `[defaults]`'s, else the default). */
export function policyList(report: LimitsReport, key: PolicyKey): string[] {
  const v = report.keys.find((k) => k.key === key)?.value;
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/** The edits that move tool `t` to `to` by its own entry: out of the lists that would decide
 * otherwise (its own entries only), into the list of `to` — `tools_allow` only when that list
 * is in use and does not let the tool through. A glob or selector that covers the tool (and
 * others) is left as it is: the report after the edit says what decides then. */
export function policyEdits(t: ToolPolicy, to: PolicyKind, report: LimitsReport): PolicyEdit[] {
  const own = [t.name_entry, t.tool];
  const edits: PolicyEdit[] = [];
  const take = (key: PolicyKey) => {
    const remove = own.filter((e, i) => own.indexOf(e) === i && policyList(report, key).includes(e));
    if (remove.length > 0) edits.push({ key, add: [], remove });
  };
  const put = (key: PolicyKey) => {
    if (!policyList(report, key).includes(t.name_entry)) edits.push({ key, add: [t.name_entry], remove: [] });
  };
  switch (to) {
    case "deny":
      take("tools_ask");
      put("tools_deny");
      break;
    case "ask":
      take("tools_deny");
      put("tools_ask");
      break;
    case "allow":
      take("tools_deny");
      take("tools_ask");
      if (!t.allow_listed) put("tools_allow");
      break;
  }
  return edits;
}

/** Why the tool's policy is what it is, in words (the list and its entry, a name glob or an
 * annotation selector). Untrusted text: shown through printableLine. */
export function policyReason(t: ToolPolicy): string {
  let why: string;
  if (t.key === null) why = "no list names it";
  else if (t.entry === null) why = `${t.key} is in use and does not list it`;
  else if (t.entry.startsWith("@")) why = `${t.key} has the annotation selector ${t.entry}`;
  else if (t.entry === t.name_entry) why = `${t.key} names it`;
  else why = `${t.key} has the glob "${t.entry}"`;
  if (!t.known) why += "; its definition is not pinned, so it is shown as the spec's defaults judge it (a destructive, open-world write): a bridge judges it by what the server lists";
  return why;
}

/** After a move to `wanted`: why the tool is elsewhere, or null when it is where it was moved. */
export function policyStuck(t: ToolPolicy, wanted: PolicyKind): string | null {
  if (t.policy === wanted) return null;
  const entry = t.entry !== null && t.entry !== t.name_entry;
  return `${t.tool} is still ${POLICY_LABEL[t.policy].toLowerCase()}: ${policyReason(t)}${
    entry ? ", which covers other tools too: change that entry in Limits below" : ""
  }.`;
}
