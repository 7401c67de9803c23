// One hook for a page's data: asks the supervisor once, and again whenever one of the events
// it names arrives (optionally only those a test picks), so no page keeps its own counter of
// events to refetch on.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { ApiEvent, ApiEventKind, Request } from "../bindings/api";
import { type Answer, ask, onApiEvent } from "./tauri";

/** The events to ask again on: a kind, or a kind with a test of the event. */
export type Refetch = { [K in ApiEventKind]?: true | ((e: Extract<ApiEvent, { kind: K }>) => boolean) };

/** The clients' files changed (the IDE config watcher saw or did something). */
export const ON_CLIENTS: Refetch = { client: true };
/** A held call was asked, answered, declined or timed out. */
export const ON_APPROVALS: Refetch = { event: (e) => e.entry.event.kind.startsWith("approval_") };
/** `server`'s limits: config.toml changed for it, or an "always" answer was given (the tool
 * policy reads the pin file too). */
export function onLimits(server: string): Refetch {
  return { config_changed: (e) => e.server === server, event: ON_APPROVALS.event };
}

/** Whether `event` is one of those `on` names. */
export function refetches(on: Refetch, event: ApiEvent): boolean {
  const test = on[event.kind] as true | ((e: ApiEvent) => boolean) | undefined;
  return test === true || (typeof test === "function" && test(event));
}

export interface Api<R extends Request> {
  /** The latest good answer (`null` until the first one); kept when a later ask fails. */
  data: Answer<R> | null;
  /** Why the latest ask failed (`null` once one succeeds). */
  error: string | null;
  /** Asks again now (after an action of the page). */
  reload: () => Promise<void>;
}

/** `request`'s answer, asked again on the events `on` names; `null` asks nothing. */
export function useApi<R extends Request>(request: R | null, on: Refetch = {}): Api<R> {
  const [answer, setAnswer] = useState<{ data: Answer<R> | null; error: string | null }>({ data: null, error: null });
  const key = request === null ? null : JSON.stringify(request);
  const current = useRef({ request, on });
  current.current = { request, on };

  const reload = useCallback(async () => {
    const r = current.current.request;
    if (r === null) return;
    const a = await ask(r);
    // A newer request took its place meanwhile: its answer is the one to show.
    if (JSON.stringify(current.current.request) !== JSON.stringify(r)) return;
    if (a.ok) setAnswer({ data: a.value, error: null });
    else setAnswer((was) => ({ data: was.data, error: a.error.message }));
  }, []);

  useEffect(() => {
    setAnswer({ data: null, error: null });
    void reload();
  }, [key, reload]);

  useEffect(() => {
    let stop: (() => void) | null = null;
    let gone = false;
    void onApiEvent((e) => {
      if (refetches(current.current.on, e)) void reload();
    }).then((f) => {
      if (gone) f();
      else stop = f;
    });
    return () => {
      gone = true;
      stop?.();
    };
  }, [reload]);

  return { ...answer, reload };
}
