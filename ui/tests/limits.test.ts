import { describe, expect, it } from "vitest";
import { limitValue } from "../src/dev/fixtures";
import { describeSource, fieldKind, isChanged, parseDraft, sameValue, toDraft } from "../src/lib/limits";

const limit = limitValue;

describe("fieldKind", () => {
  it("follows the default's type, and the choices the limits report lists", () => {
    expect(fieldKind(50000)).toBe("number");
    expect(fieldKind(false)).toBe("boolean");
    expect(fieldKind("off", ["off", "rg"])).toBe("choice");
    expect(fieldKind("none", ["none", "host"])).toBe("choice");
    expect(fieldKind("off", [])).toBe("text");
    expect(fieldKind([])).toBe("list");
    expect(fieldKind({})).toBe("table");
    expect(fieldKind("x")).toBe("text");
  });
});

describe("parseDraft", () => {
  it("numbers: whole, non-negative, separators allowed", () => {
    expect(parseDraft("number", "3")).toEqual({ ok: true, value: 3 });
    expect(parseDraft("number", " 50_000 ")).toEqual({ ok: true, value: 50000 });
    expect(parseDraft("number", "1,000")).toEqual({ ok: true, value: 1000 });
    expect(parseDraft("number", "-1").ok).toBe(false);
    expect(parseDraft("number", "1.5").ok).toBe(false);
    expect(parseDraft("number", "abc").ok).toBe(false);
    expect(parseDraft("number", "").ok).toBe(false);
    expect(parseDraft("number", "99999999999999999999").ok).toBe(false);
  });

  it("booleans and choices", () => {
    expect(parseDraft("boolean", "true")).toEqual({ ok: true, value: true });
    expect(parseDraft("boolean", "yes").ok).toBe(false);
    expect(parseDraft("choice", "rg", ["off", "rg"])).toEqual({ ok: true, value: "rg" });
    const bad = parseDraft("choice", "ripgrep", ["off", "rg"]);
    expect(bad).toEqual({ ok: false, error: 'Must be one of "off", "rg".' });
  });

  it("lists of strings", () => {
    expect(parseDraft("list", '["/src", "/work"]')).toEqual({ ok: true, value: ["/src", "/work"] });
    expect(parseDraft("list", "")).toEqual({ ok: true, value: [] });
    expect(parseDraft("list", '"/src"').ok).toBe(false);
    expect(parseDraft("list", "[1]").ok).toBe(false);
    const broken = parseDraft("list", "[/src]");
    expect(broken.ok).toBe(false);
    if (!broken.ok) expect(broken.error).toMatch(/^Not valid JSON/);
  });

  it("tables", () => {
    expect(parseDraft("table", '{"advanced-search": {"maxResults": 500}}')).toEqual({
      ok: true,
      value: { "advanced-search": { maxResults: 500 } },
    });
    expect(parseDraft("table", "[]").ok).toBe(false);
    expect(parseDraft("table", "null").ok).toBe(false);
  });

  it("round-trips what toDraft shows", () => {
    const cases: Array<[unknown, string[]]> = [
      [2, []], [true, []], ["rg", ["off", "rg"]], [["/a"], []], [{ t: { n: 1 } }, []],
    ];
    for (const [value, choices] of cases) {
      const kind = fieldKind(value as never, choices);
      expect(parseDraft(kind, toDraft(kind, value as never), choices)).toEqual({ ok: true, value });
    }
  });
});

describe("changes", () => {
  it("compares JSON values deeply, ignoring key order", () => {
    expect(sameValue({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })).toBe(true);
    expect(sameValue({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameValue([1], [1, 2])).toBe(false);
    expect(sameValue(null, {})).toBe(false);
  });

  it("a draft is a change only when it is valid and differs", () => {
    const l = limit({ key: "retries", value: 2, default: 2 });
    expect(isChanged(l, "2")).toBe(false);
    expect(isChanged(l, "3")).toBe(true);
    expect(isChanged(l, "x")).toBe(false);
    const choice = limit({ key: "fallback", value: "off", default: "off", choices: ["off", "rg"] });
    expect([isChanged(choice, "rg"), isChanged(choice, "ripgrep")]).toEqual([true, false]);
  });

  it("describes where a value comes from", () => {
    expect(describeSource("default", "ripgrep", null)).toBe("built-in default");
    expect(describeSource("defaults", "ripgrep", 2)).toBe("[defaults], line 2");
    expect(describeSource("server", "ripgrep", 9)).toBe("[servers.ripgrep], line 9");
    expect(describeSource("server", "my server", 9)).toBe('[servers."my server"], line 9');
  });
});
