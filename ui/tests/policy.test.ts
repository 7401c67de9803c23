import { describe, expect, it } from "vitest";
import type { LimitsReport, ToolPolicy } from "../src/bindings/api";
import { policyEdits, policyList, policyReason, policyStuck } from "../src/lib/policy";

const report = (lists: Partial<Record<"tools_allow" | "tools_ask" | "tools_deny", unknown>>): LimitsReport =>
  ({
    server: "gh",
    config: null,
    keys: Object.entries({ tools_allow: [], tools_ask: [], tools_deny: [], ...lists }).map(([key, value]) => ({ key, value })),
  }) as unknown as LimitsReport;

const tool = (over: Partial<ToolPolicy> = {}): ToolPolicy => ({
  tool: "push",
  policy: "allow",
  key: null,
  entry: null,
  name_entry: "push",
  allow_listed: true,
  selectors: ["@write", "@destructive", "@openworld"],
  known: true,
  always: false,
  always_current: false,
  ...over,
});

describe("policyList", () => {
  it("reads the list in force, strings only", () => {
    expect(policyList(report({ tools_ask: ["@destructive", 3] }), "tools_ask")).toEqual(["@destructive"]);
    expect(policyList(report({ tools_ask: null }), "tools_ask")).toEqual([]);
  });
});

describe("policyEdits", () => {
  it("asks by adding the tool's own entry to tools_ask", () => {
    expect(policyEdits(tool(), "ask", report({}))).toEqual([{ key: "tools_ask", add: ["push"], remove: [] }]);
  });

  it("moves a tool denied by name to ask: out of tools_deny, into tools_ask", () => {
    const t = tool({ policy: "deny", key: "tools_deny", entry: "push" });
    expect(policyEdits(t, "ask", report({ tools_deny: ["push", "rm*"] }))).toEqual([
      { key: "tools_deny", add: [], remove: ["push"] },
      { key: "tools_ask", add: ["push"], remove: [] },
    ]);
  });

  it("denies: out of tools_ask by name, into tools_deny; nothing to add when it is there", () => {
    const t = tool({ policy: "ask", key: "tools_ask", entry: "push" });
    expect(policyEdits(t, "deny", report({ tools_ask: ["push"] }))).toEqual([
      { key: "tools_ask", add: [], remove: ["push"] },
      { key: "tools_deny", add: ["push"], remove: [] },
    ]);
    expect(policyEdits(t, "deny", report({ tools_deny: ["push"] }))).toEqual([]);
  });

  it("allows: its own entries out of tools_deny and tools_ask, into tools_allow only when that list leaves it out", () => {
    const t = tool({ policy: "deny", key: "tools_deny", entry: "push" });
    const r = report({ tools_deny: ["push"], tools_ask: ["push", "@destructive"] });
    expect(policyEdits(t, "allow", r)).toEqual([
      { key: "tools_deny", add: [], remove: ["push"] },
      { key: "tools_ask", add: [], remove: ["push"] },
    ]);
    const unlisted = tool({ policy: "deny", key: "tools_allow", entry: null, allow_listed: false });
    expect(policyEdits(unlisted, "allow", report({ tools_allow: ["read_*"] }))).toEqual([
      { key: "tools_allow", add: ["push"], remove: [] },
    ]);
  });

  it("never touches a glob or selector that covers other tools too", () => {
    const t = tool({ policy: "ask", key: "tools_ask", entry: "@destructive" });
    expect(policyEdits(t, "allow", report({ tools_ask: ["@destructive", "p*"] }))).toEqual([]);
  });

  it("uses the escaped entry the supervisor gives for a name that is a glob or a selector", () => {
    const t = tool({ tool: "@readonly", name_entry: "\\@readonly" });
    expect(policyEdits(t, "deny", report({}))).toEqual([{ key: "tools_deny", add: ["\\@readonly"], remove: [] }]);
    // An entry written by hand with the bare name is taken out too.
    const asked = { ...t, policy: "ask" as const, key: "tools_ask", entry: "\\@readonly" };
    expect(policyEdits(asked, "allow", report({ tools_ask: ["\\@readonly"] }))).toEqual([
      { key: "tools_ask", add: [], remove: ["\\@readonly"] },
    ]);
  });
});

describe("policyReason and policyStuck", () => {
  it("names the list and what matched: the name, a glob, a selector, or nothing", () => {
    expect(policyReason(tool())).toBe("no list names it");
    expect(policyReason(tool({ policy: "deny", key: "tools_deny", entry: "push" }))).toBe("tools_deny names it");
    expect(policyReason(tool({ policy: "deny", key: "tools_deny", entry: "p*" }))).toBe('tools_deny has the glob "p*"');
    expect(policyReason(tool({ policy: "ask", key: "tools_ask", entry: "@destructive" }))).toBe("tools_ask has the annotation selector @destructive");
    expect(policyReason(tool({ policy: "deny", key: "tools_allow", entry: null }))).toBe("tools_allow is in use and does not list it");
    expect(policyReason(tool({ key: "tools_allow", entry: "@readonly", known: false }))).toContain("spec's defaults");
  });

  it("says why a moved tool stayed where it was, from the supervisor's answer", () => {
    expect(policyStuck(tool({ policy: "ask" }), "ask")).toBeNull();
    const stuck = policyStuck(tool({ policy: "ask", key: "tools_ask", entry: "@destructive" }), "allow");
    expect(stuck).toBe("push is still ask: tools_ask has the annotation selector @destructive, which covers other tools too: change that entry in Limits below.");
  });
});
