import { describe, expect, it } from "vitest";
import { formatAge, formatBytes, formatClock, formatCount, formatEra, formatMs, humanizeLimit } from "../src/lib/format";

describe("formatMs", () => {
  it.each([
    [0, "0 ms"],
    [850, "850 ms"],
    [999.6, "1.0 s"],
    [1234, "1.2 s"],
    [9960, "10 s"],
    [42_000, "42 s"],
    [59_600, "1 min"],
    [125_000, "2 min 5 s"],
    [120_000, "2 min"],
    [3_599_800, "1 h"],
    [5_400_000, "1 h 30 min"],
    [90_000_000, "1 d 1 h"],
    [-1500, "-1.5 s"],
  ])("%d → %s", (ms, text) => {
    expect(formatMs(ms)).toBe(text);
  });

  it("shows a dash for missing values", () => {
    expect(formatMs(null)).toBe("—");
    expect(formatMs(Number.NaN)).toBe("—");
  });
});

describe("formatBytes", () => {
  it.each([
    [0, "0 B"],
    [512, "512 B"],
    [1024, "1 KiB"],
    [1536, "1.5 KiB"],
    [3_565_158, "3.4 MiB"],
    [268_435_456, "256 MiB"],
    [5 * 1024 ** 3, "5 GiB"],
  ])("%d → %s", (b, text) => {
    expect(formatBytes(b)).toBe(text);
  });
});

describe("ages, counts, clock", () => {
  it("formats ages", () => {
    expect(formatAge(200)).toBe("just now");
    expect(formatAge(5000)).toBe("5.0 s ago");
    expect(formatAge(65_000)).toBe("1 min 5 s ago");
  });

  it("groups thousands", () => {
    expect(formatCount(1234567)).toBe("1,234,567");
    expect(formatCount(undefined)).toBe("—");
  });

  it("formats a local time of day", () => {
    const ts = new Date(2026, 2, 14, 9, 5, 7).getTime();
    expect(formatClock(ts)).toBe("09:05:07");
  });
});

describe("humanizeLimit", () => {
  it("reads the unit from the key's name", () => {
    expect(humanizeLimit("idle_timeout_ms", 50_000)).toBe("50 s");
    expect(humanizeLimit("max_message_bytes", 268_435_456)).toBe("256 MiB");
    expect(humanizeLimit("result_soft_cap_bytes", 0)).toBe("off");
    expect(humanizeLimit("retries", 2)).toBeNull();
    expect(humanizeLimit("idle_timeout_ms", "x")).toBeNull();
  });
});

describe("formatEra", () => {
  it("names the era and the version a probe spoke, and nothing when it spoke none", () => {
    expect([
      formatEra({ era: "modern", protocol_version: "2026-07-28" }),
      formatEra({ era: "legacy", protocol_version: "2025-11-25\u202e" }),
      formatEra({ protocol_version: null }),
    ]).toEqual(["modern MCP (2026-07-28)", "legacy MCP (2025-11-25\\u{202e})", ""]);
  });
});
