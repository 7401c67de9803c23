import { describe, expect, it } from "vitest";
import cases from "../../src-tauri/wire/tests/fixtures/text/printable.json";
import { printableLine, printableLines, shellArg, shellArgv } from "../src/lib/format";

// The same table of cases as src-tauri/wire/src/text.rs: one rule, in Rust and here.
describe("the printable-text rule", () => {
  it.each(cases.line)("line %j → %j", (input, shown) => {
    expect(printableLine(input)).toBe(shown);
  });
  it.each(cases.lines)("lines %j → %j", (input, shown) => {
    expect(printableLines(input)).toBe(shown);
  });
  it.each(cases.arg)("arg %j → %j", (input, shown) => {
    expect(shellArg(input)).toBe(shown);
  });
  it.each(cases.argv)("argv %j → %j", (input, shown) => {
    expect(shellArgv(input as string[])).toBe(shown);
  });
  it("escapes a lone surrogate, which only JavaScript strings can hold", () => {
    expect(printableLine("a\ud800b")).toBe("a\\u{d800}b");
  });
});
