// The only module that talks to Tauri. Everything else calls these functions, so the
// pages can be rendered against a mock (src/dev/mock.ts) or tested without a window.
//
// Each request's answer is declared once in Rust (`pairs!` in src-tauri/supervisor/src/api/)
// and generated into the bindings' `Answers` maps: `ask` resolves to exactly the answer its
// request gets (`ok: true`), or to the error every request may get (`ok: false`), so a page
// never narrows an answer by hand, and this is the one place that reads `kind: "error"`.
import { invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import { type Answers, type ApiError, type ApiEvent, CHANNELS, type Request } from "../bindings/api";
import type { AppAnswers, AppEvent, AppRequest, RegistryAnswers, RegistryRequest } from "../bindings/app";

/** A request's outcome: its answer, or why it failed. */
export type Reply<T, E = ApiError> = { ok: true; value: T } | { ok: false; error: E };

/** What the registry sidecar says when it fails (it has no codes). */
export type RegistryError = { message: string };

/** What request `R` answers when it does not fail: the one its `op` is declared with. */
export type Answer<R extends Request> = Exclude<Answers[R["op"]], { kind: "error" }>;
export type AppAnswer<R extends AppRequest> = Exclude<AppAnswers[R["op"]], { kind: "error" }>;
export type RegistryAnswerOf<R extends RegistryRequest> = Exclude<RegistryAnswers[R["op"]], { kind: "error" }>;

/** What a rejected invoke (command missing, IPC down) says. */
function failed(e: unknown): string {
  const text = e instanceof Error ? e.message : typeof e === "string" ? e : JSON.stringify(e);
  return `The app did not answer: ${text}`;
}

/** Any answer's error, as the bindings declare it (`{ kind: "error" } & ApiError`; the
 * registry's has no code). */
type Wire = { kind: string; message?: string; code?: ApiError["code"] };

/** One request of `command`: its `kind: "error"` answer, or a rejected invoke, is the failure. */
async function call<T, E>(command: string, request: unknown, error: (code: ApiError["code"], message: string) => E): Promise<Reply<T, E>> {
  let answer: Wire;
  try {
    answer = await invoke<Wire>(command, { request });
  } catch (e) {
    return { ok: false, error: error("io", failed(e)) };
  }
  if (answer.kind === "error") return { ok: false, error: error(answer.code ?? "io", answer.message ?? "") };
  return { ok: true, value: answer as T };
}

/** One request to the supervisor. Never rejects: a failure comes back as `ok: false`. */
export function ask<R extends Request>(request: R): Promise<Reply<Answer<R>>> {
  return call("api", request, (code, message) => ({ code, message }));
}

/** One request to the desktop app (tray state, start at login, open files). Never rejects. */
export function askApp<R extends AppRequest>(request: R): Promise<Reply<AppAnswer<R>>> {
  return call("app", request, (code, message) => ({ code, message }));
}

/** The MCP Registry (the window's own command: the sidecar fetches, the window plans). Never rejects. */
export function askRegistry<R extends RegistryRequest>(request: R): Promise<Reply<RegistryAnswerOf<R>, RegistryError>> {
  return call("registry", request, (_code, message) => ({ message }));
}

/** The supervisor's live events. Resolves to the function that stops listening. */
export function onApiEvent(cb: (e: ApiEvent) => void): Promise<() => void> {
  return listen<ApiEvent>(CHANNELS.api, (e) => cb(e.payload));
}

/** The app's own events (tray state). Resolves to the function that stops listening. */
export function onAppEvent(cb: (e: AppEvent) => void): Promise<() => void> {
  return listen<AppEvent>(CHANNELS.app, (e) => cb(e.payload));
}
