import { describe, expect, it } from "vitest";
import type { HistoryEntry, LimitsReport } from "../src/bindings/api";
import { blocked, folderOf, sandboxSettings } from "../src/lib/sandbox";

const denied = (detail: string, ts_ms: number): HistoryEntry =>
  ({ server: "fs", session: null, command: null, event: { ts_ms, kind: "sandbox_denied", detail } }) as unknown as HistoryEntry;

const report = (keys: Record<string, unknown>): LimitsReport =>
  ({ server: "fs", config: null, keys: Object.entries(keys).map(([key, value]) => ({ key, value })) }) as unknown as LimitsReport;

describe("sandboxSettings", () => {
  it("reads the keys in force", () => {
    const s = sandboxSettings(report({ sandbox: "on", sandbox_network: "none", sandbox_write: ["/w"], sandbox_deny: [] }));
    expect(s).toEqual({ on: true, network: false, write: ["/w"], deny: [] });
  });
});

describe("blocked", () => {
  const settings = { on: true, network: false, write: ["/home/me/notes"], deny: [] };

  it("offers each refusal once, newest first, with the folder to grant", () => {
    const list = blocked([denied("/home/me/out/a.txt", 1), denied("network", 2), denied("/home/me/out/a.txt", 3)], settings);
    expect(list).toEqual([
      { kind: "path", ts_ms: 3, path: "/home/me/out/a.txt", folder: "/home/me/out" },
      { kind: "network", ts_ms: 2 },
    ]);
  });

  it("leaves out what the settings allow by now", () => {
    expect(blocked([denied("/home/me/notes/x", 1), denied("network", 2)], { ...settings, network: true })).toEqual([]);
  });
});

describe("folderOf", () => {
  it("is the parent of a file, the folder itself when it ends with /", () => {
    expect(folderOf("/a/b/c.txt")).toBe("/a/b");
    expect(folderOf("/a/b/")).toBe("/a/b");
    expect(folderOf("/x")).toBe("/");
  });
});
