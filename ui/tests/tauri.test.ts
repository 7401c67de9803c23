// The Tauri seam: command names, argument name and event names the Rust app uses.
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";

beforeAll(() => {
  // @tauri-apps/api talks to `window.__TAURI_INTERNALS__`, which the mocks install.
  vi.stubGlobal("window", globalThis);
});

afterEach(async () => {
  const { clearMocks } = await import("@tauri-apps/api/mocks");
  clearMocks();
});

describe("lib/tauri", () => {
  it("sends requests as `api` / `app` with a `request` argument", async () => {
    const { mockIPC } = await import("@tauri-apps/api/mocks");
    const { api, app } = await import("../src/lib/tauri");
    const calls: Array<[string, unknown]> = [];
    mockIPC((cmd, payload) => {
      calls.push([cmd, payload]);
      if (cmd === "api") return { kind: "auto_rewrite", on: true, without_asking: false };
      if (cmd === "app") return { kind: "autostart", on: false };
      return undefined;
    });
    await expect(api({ op: "auto_rewrite", on: true, without_asking: false })).resolves.toEqual({ kind: "auto_rewrite", on: true, without_asking: false });
    await expect(app({ op: "autostart", on: null })).resolves.toEqual({ kind: "autostart", on: false });
    expect(calls).toEqual([
      ["api", { request: { op: "auto_rewrite", on: true, without_asking: false } }],
      ["app", { request: { op: "autostart", on: null } }],
    ]);
  });

  it("turns a failed invoke into an error answer instead of rejecting", async () => {
    const { mockIPC } = await import("@tauri-apps/api/mocks");
    const { api } = await import("../src/lib/tauri");
    mockIPC(() => {
      throw new Error("command api not found");
    });
    const r = await api({ op: "status" });
    expect(r.kind).toBe("error");
    if (r.kind === "error") expect(r.message).toContain("command api not found");
  });

  it("delivers the payloads of warden://event and warden://app", async () => {
    const { mockIPC } = await import("@tauri-apps/api/mocks");
    const { emit } = await import("@tauri-apps/api/event");
    const { onApiEvent, onAppEvent } = await import("../src/lib/tauri");
    mockIPC(() => undefined, { shouldMockEvents: true });
    const api: unknown[] = [];
    const app: unknown[] = [];
    const stopApi = await onApiEvent((e) => api.push(e));
    const stopApp = await onAppEvent((e) => app.push(e));
    await emit("warden://event", { kind: "config_changed", server: "ripgrep" });
    await emit("warden://app", { kind: "state", tray: "idle" });
    expect(api).toEqual([{ kind: "config_changed", server: "ripgrep" }]);
    expect(app).toEqual([{ kind: "state", tray: "idle" }]);
    stopApi();
    stopApp();
  });
});
