// The tool policy on the server page (`tools_allow`, `tools_ask`, `tools_deny`; docs/behaviour.md).
// Whether a tool is allowed, asked about or denied, and why, is decided by the supervisor with
// the bridges' own code (`ToolPolicy` of the limits report), and a move the user asks for is
// its `SetToolPolicy` (the lists edited by the tool's own entry): nothing here judges a tool
// or edits a list. This words the reason, and why a moved tool stayed where it was.
import type { PolicyKind, ToolPolicy } from "../bindings/api";

export const POLICY_LABEL: Record<PolicyKind, string> = { allow: "Allow", ask: "Ask", deny: "Deny" };

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
