import { describe, expect, it } from "vitest";
import type { ToolPolicy } from "../src/bindings/api";
import { policyReason, policyStuck } from "../src/lib/policy";

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
