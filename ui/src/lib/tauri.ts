// The only module that talks to Tauri. Everything else calls these functions, so the
// pages can be rendered against a mock (src/dev/mock.ts) or tested without a window.
import { invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import type { ApiEvent, Request, Response } from "../bindings/api";
import type { AppEvent, AppRequest, AppResponse, RegistryAnswer, RegistryRequest } from "../bindings/app";

/** Turns a rejected invoke (command missing, IPC down) into an answer of the `error` kind. */
function failure(e: unknown): { kind: "error"; code: "io"; message: string } {
  const text = e instanceof Error ? e.message : typeof e === "string" ? e : JSON.stringify(e);
  return { kind: "error", code: "io", message: `The app did not answer: ${text}` };
}

/** One request to the supervisor. Never rejects: failures come back as `kind: "error"`. */
export async function api(request: Request): Promise<Response> {
  try {
    return await invoke<Response>("api", { request });
  } catch (e) {
    return failure(e);
  }
}

/** One request to the desktop app (tray state, start at login, open files). Never rejects. */
export async function app(request: AppRequest): Promise<AppResponse> {
  try {
    return await invoke<AppResponse>("app", { request });
  } catch (e) {
    return failure(e);
  }
}

/** The MCP Registry (the window's own command: the sidecar fetches, the window plans). Never rejects. */
export async function registry(request: RegistryRequest): Promise<RegistryAnswer> {
  try {
    return await invoke<RegistryAnswer>("registry", { request });
  } catch (e) {
    return { kind: "error", message: failure(e).message };
  }
}

/** The supervisor's live events. Resolves to the function that stops listening. */
export function onApiEvent(cb: (e: ApiEvent) => void): Promise<() => void> {
  return listen<ApiEvent>("warden://event", (e) => cb(e.payload));
}

/** The app's own events (tray state). Resolves to the function that stops listening. */
export function onAppEvent(cb: (e: AppEvent) => void): Promise<() => void> {
  return listen<AppEvent>("warden://app", (e) => cb(e.payload));
}
