// Which events make `useApi` ask again: the kinds a page names, and the test it gives them.
import { describe, expect, it } from "vitest";
import type { ApiEvent, HistoryEntry } from "../src/bindings/api";
import { ON_APPROVALS, ON_CLIENTS, onLimits, type Refetch, refetches } from "../src/lib/useApi";

const entry = (kind: string): HistoryEntry =>
  ({ seq: 1, server: "rg", session: "s", event: { ts_ms: 1, kind } }) as unknown as HistoryEntry;

describe("useApi's refetch", () => {
  const on: Refetch = { client: true, config_changed: (e) => e.server === "rg", event: (e) => e.entry.event.kind.startsWith("approval_") };

  it("asks again on a named kind, and on a tested kind only when the test passes", () => {
    const client = { kind: "client", change: "wrapped", client: "cursor", path: "/p", servers: [], message: "" } as unknown as ApiEvent;
    expect(refetches(on, client)).toBe(true);
    expect(refetches(on, { kind: "config_changed", server: "rg" })).toBe(true);
    expect(refetches(on, { kind: "config_changed", server: "other" })).toBe(false);
    expect(refetches(on, { kind: "event", entry: entry("approval_asked") })).toBe(true);
    expect(refetches(on, { kind: "event", entry: entry("tool_call") })).toBe(false);
  });

  it("ignores kinds it does not name", () => {
    expect(refetches(on, { kind: "orphans", orphans: [] })).toBe(false);
    expect(refetches({}, { kind: "config_changed", server: "rg" })).toBe(false);
  });

  it("the pages' refetches: approvals on every approval event and only those, clients on client events, limits on their server's config", () => {
    const kinds = ["request", "approval_asked", "approval_given", "approval_declined", "approval_timeout"];
    expect(kinds.map((k) => refetches(ON_APPROVALS, { kind: "event", entry: entry(k) }))).toEqual([false, true, true, true, true]);
    const client = { kind: "client", change: "reverted", client: "cursor", path: "/p", servers: [], message: "" } as unknown as ApiEvent;
    expect(refetches(ON_CLIENTS, client)).toBe(true);
    expect(refetches(onLimits("ripgrep"), { kind: "config_changed", server: "ripgrep" })).toBe(true);
    expect(refetches(onLimits("ripgrep"), { kind: "config_changed", server: "git" })).toBe(false);
    expect(refetches(onLimits("ripgrep"), { kind: "event", entry: entry("approval_given") })).toBe(true);
  });
});
