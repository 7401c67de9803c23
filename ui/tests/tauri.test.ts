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
  it("sends requests as `api` / `app` / `registry` with a `request` argument", async () => {
    const { mockIPC } = await import("@tauri-apps/api/mocks");
    const { ask, askApp, askRegistry } = await import("../src/lib/tauri");
    const calls: Array<[string, unknown]> = [];
    mockIPC((cmd, payload) => {
      calls.push([cmd, payload]);
      if (cmd === "api") return { kind: "auto_rewrite", on: true, without_asking: false };
      if (cmd === "app") return { kind: "autostart", on: false };
      if (cmd === "registry") return { kind: "found", servers: [] };
      return undefined;
    });
    await expect(ask({ op: "auto_rewrite", on: true, without_asking: false })).resolves.toEqual({ ok: true, value: { kind: "auto_rewrite", on: true, without_asking: false } });
    await expect(askApp({ op: "autostart", on: null })).resolves.toEqual({ ok: true, value: { kind: "autostart", on: false } });
    await expect(askRegistry({ op: "search", term: "" })).resolves.toEqual({ ok: true, value: { kind: "found", servers: [] } });
    expect(calls).toEqual([
      ["api", { request: { op: "auto_rewrite", on: true, without_asking: false } }],
      ["app", { request: { op: "autostart", on: null } }],
      ["registry", { request: { op: "search", term: "" } }],
    ]);
  });

  it("turns a failed invoke into a failure instead of rejecting", async () => {
    const { mockIPC } = await import("@tauri-apps/api/mocks");
    const { ask, askRegistry } = await import("../src/lib/tauri");
    mockIPC(() => {
      throw new Error("command api not found");
    });
    const r = await ask({ op: "status" });
    expect(r.ok).toBe(false);
    if (!r.ok) expect([r.error.code, r.error.message]).toEqual(["io", expect.stringContaining("command api not found")]);
    const g = await askRegistry({ op: "search", term: "x" });
    expect(g).toEqual({ ok: false, error: { message: "The app did not answer: command api not found" } });
  });

  it("turns an error answer into a failure with its code and message", async () => {
    const { mockIPC } = await import("@tauri-apps/api/mocks");
    const { ask, askApp, askRegistry } = await import("../src/lib/tauri");
    mockIPC((cmd) =>
      cmd === "registry" ? { kind: "error", message: "offline" } : { kind: "error", code: "not_found", message: "no server gh" },
    );
    await expect(ask({ op: "limits", server: "gh" })).resolves.toEqual({ ok: false, error: { code: "not_found", message: "no server gh" } });
    await expect(askApp({ op: "state" })).resolves.toEqual({ ok: false, error: { code: "not_found", message: "no server gh" } });
    await expect(askRegistry({ op: "search", term: "x" })).resolves.toEqual({ ok: false, error: { message: "offline" } });
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

  it("types each answer by its request, as the Rust table pairs them", async () => {
    const { mockIPC } = await import("@tauri-apps/api/mocks");
    const { ask } = await import("../src/lib/tauri");
    mockIPC(() => ({ kind: "client_edit", changes: [] }));
    // `server_switch` is answered by `client_edit` (not by a `server_switch` kind).
    const r = await ask({ op: "server_switch", server: "rg", clients: [], file: null, scope: null, enabled: false, dry_run: true });
    expect(r.ok).toBe(true);
    if (r.ok) {
      const kind: "client_edit" = r.value.kind;
      expect(kind).toBe("client_edit");
      expect(r.value.changes).toEqual([]);
      // @ts-expect-error: a switch's answer has no removal plan (that is `server_remove`'s).
      expect(r.value.plan).toBeUndefined();
    }
  });
});
