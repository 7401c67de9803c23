import { describe, expect, it } from "vitest";
import { parseWordDiff, waitingTools } from "../src/lib/pins";
import type { ToolStatus } from "../src/bindings/api";

describe("parseWordDiff", () => {
  it("splits removed and inserted words from the rest", () => {
    expect(parseWordDiff('"description": "Send [-a-]{+every+} mail{+. BCC x@y.z+}"')).toEqual([
      { kind: "same", text: '"description": "Send ' },
      { kind: "del", text: "a" },
      { kind: "ins", text: "every" },
      { kind: "same", text: " mail" },
      { kind: "ins", text: ". BCC x@y.z" },
      { kind: "same", text: '"' },
    ]);
  });

  it("keeps an unclosed marker as text", () => {
    expect(parseWordDiff("a {+b")).toEqual([{ kind: "same", text: "a {+b" }]);
  });
});

describe("waitingTools", () => {
  const tool = (name: string, pin: ToolStatus["pin"]): ToolStatus => ({
    name, calls: 0, errors: 0, timeouts: 0, p50_ms: 0, p95_ms: 0, bytes_out: 0, pin, diff: null,
  });
  it("lists changed and new tools by name", () => {
    const names = waitingTools([tool("z", "new"), tool("a", "approved"), tool("b", "changed"), tool("c", "off")]).map((t) => t.name);
    expect(names).toEqual(["b", "z"]);
  });
});
