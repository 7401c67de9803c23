// The only module that talks to Tauri. Everything else calls these functions, so the
// pages can be rendered against a mock (src/dev/mock.ts) or tested without a window.
//
// Each request's answer is declared once in Rust (`pairs!` in src-tauri/supervisor/src/api/)
// and generated into the bindings' `Answers` maps: `ask` returns exactly the answer its request
// gets, or the error every request may get, so a page never narrows an answer by hand.
import { invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import { type Answers, type ApiEvent, CHANNELS, type Request } from "../bindings/api";
import type { AppAnswers, AppEvent, AppRequest, RegistryAnswers, RegistryRequest } from "../bindings/app";

/** The answer to request `R`: the one its `op` is declared with, or `kind: "error"`. */
export type Answer<R extends Request> = Answers[R["op"]];
export type AppAnswer<R extends AppRequest> = AppAnswers[R["op"]];
export type RegistryAnswerOf<R extends RegistryRequest> = RegistryAnswers[R["op"]];

/** What a rejected invoke (command missing, IPC down) says. */
function failed(e: unknown): string {
  const text = e instanceof Error ? e.message : typeof e === "string" ? e : JSON.stringify(e);
  return `The app did not answer: ${text}`;
}

/** One request of `command`; a rejected invoke comes back as an `error` answer. */
async function call<T>(command: string, request: unknown, error: (message: string) => T): Promise<T> {
  try {
    return await invoke<T>(command, { request });
  } catch (e) {
    return error(failed(e));
  }
}

/** One request to the supervisor. Never rejects: failures come back as `kind: "error"`. */
export function ask<R extends Request>(request: R): Promise<Answer<R>> {
  return call("api", request, (message) => ({ kind: "error", code: "io", message }) as Answer<R>);
}

/** One request to the desktop app (tray state, start at login, open files). Never rejects. */
export function askApp<R extends AppRequest>(request: R): Promise<AppAnswer<R>> {
  return call("app", request, (message) => ({ kind: "error", code: "io", message }) as AppAnswer<R>);
}

/** The MCP Registry (the window's own command: the sidecar fetches, the window plans). Never rejects. */
export function askRegistry<R extends RegistryRequest>(request: R): Promise<RegistryAnswerOf<R>> {
  return call("registry", request, (message) => ({ kind: "error", message }) as RegistryAnswerOf<R>);
}

/** The supervisor's live events. Resolves to the function that stops listening. */
export function onApiEvent(cb: (e: ApiEvent) => void): Promise<() => void> {
  return listen<ApiEvent>(CHANNELS.api, (e) => cb(e.payload));
}

/** The app's own events (tray state). Resolves to the function that stops listening. */
export function onAppEvent(cb: (e: AppEvent) => void): Promise<() => void> {
  return listen<AppEvent>(CHANNELS.app, (e) => cb(e.payload));
}
