import { describe, expect, it } from "vitest";
import type { LimitValue } from "../src/bindings/api";
import { describeSource, fieldKind, isChanged, parseDraft, sameValue, toDraft } from "../src/lib/limits";

function limit(over: Partial<LimitValue> & { key: string }): LimitValue {
  return { value: 0, default: 0, source: "default", line: null, doc: "", fix: "", ...over };
}

describe("fieldKind", () => {
  it("follows the default's type, and the key for choices", () => {
    expect(fieldKind("idle_timeout_ms", 50000)).toBe("number");
    expect(fieldKind("debug", false)).toBe("boolean");
    expect(fieldKind("fallback", "off")).toBe("choice");
    expect(fieldKind("sandbox", "off")).toBe("choice");
    expect(fieldKind("sandbox_network", "none")).toBe("choice");
    expect(fieldKind("sandbox_write", [])).toBe("list");
    expect(fieldKind("fallback_roots", [])).toBe("list");
    expect(fieldKind("idempotent_tools", [])).toBe("list");
    expect(fieldKind("clamp", {})).toBe("table");
    expect(fieldKind("something_new", "x")).toBe("text");
  });
});

describe("parseDraft", () => {
  it("numbers: whole, non-negative, separators allowed", () => {
    expect(parseDraft("retries", "number", "3")).toEqual({ ok: true, value: 3 });
    expect(parseDraft("idle_timeout_ms", "number", " 50_000 ")).toEqual({ ok: true, value: 50000 });
    expect(parseDraft("idle_timeout_ms", "number", "1,000")).toEqual({ ok: true, value: 1000 });
    expect(parseDraft("retries", "number", "-1").ok).toBe(false);
    expect(parseDraft("retries", "number", "1.5").ok).toBe(false);
    expect(parseDraft("retries", "number", "abc").ok).toBe(false);
    expect(parseDraft("retries", "number", "").ok).toBe(false);
    expect(parseDraft("retries", "number", "99999999999999999999").ok).toBe(false);
  });

  it("booleans and choices", () => {
    expect(parseDraft("debug", "boolean", "true")).toEqual({ ok: true, value: true });
    expect(parseDraft("debug", "boolean", "yes").ok).toBe(false);
    expect(parseDraft("fallback", "choice", "rg")).toEqual({ ok: true, value: "rg" });
    const bad = parseDraft("fallback", "choice", "ripgrep");
    expect(bad).toEqual({ ok: false, error: 'Must be one of "off", "rg".' });
  });

  it("lists of strings", () => {
    expect(parseDraft("fallback_roots", "list", '["/src", "/work"]')).toEqual({ ok: true, value: ["/src", "/work"] });
    expect(parseDraft("fallback_roots", "list", "")).toEqual({ ok: true, value: [] });
    expect(parseDraft("fallback_roots", "list", '"/src"').ok).toBe(false);
    expect(parseDraft("fallback_roots", "list", "[1]").ok).toBe(false);
    const broken = parseDraft("fallback_roots", "list", "[/src]");
    expect(broken.ok).toBe(false);
    if (!broken.ok) expect(broken.error).toMatch(/^Not valid JSON/);
  });

  it("tables", () => {
    expect(parseDraft("clamp", "table", '{"advanced-search": {"maxResults": 500}}')).toEqual({
      ok: true,
      value: { "advanced-search": { maxResults: 500 } },
    });
    expect(parseDraft("clamp", "table", "[]").ok).toBe(false);
    expect(parseDraft("clamp", "table", "null").ok).toBe(false);
  });

  it("round-trips what toDraft shows", () => {
    const cases: Array<[string, unknown]> = [
      ["retries", 2], ["debug", true], ["fallback", "rg"], ["fallback_roots", ["/a"]], ["clamp", { t: { n: 1 } }],
    ];
    for (const [key, value] of cases) {
      const kind = fieldKind(key, value as never);
      expect(parseDraft(key, kind, toDraft(kind, value as never))).toEqual({ ok: true, value });
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
  });

  it("describes where a value comes from", () => {
    expect(describeSource("default", "ripgrep", null)).toBe("built-in default");
    expect(describeSource("defaults", "ripgrep", 2)).toBe("[defaults], line 2");
    expect(describeSource("server", "ripgrep", 9)).toBe("[servers.ripgrep], line 9");
    expect(describeSource("server", "my server", 9)).toBe('[servers."my server"], line 9');
  });
});
