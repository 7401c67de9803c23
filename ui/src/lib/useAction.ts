// One hook for what a component does when its buttons are pressed: whether an action runs
// (to disable them, or to say which one runs), and why the last one failed. A page no longer
// keeps its own busy and error states, nor their try/finally.
import { useCallback, useMemo, useState } from "preact/hooks";
import type { Reply } from "./tauri";

/** A failure `run` shows as it is (a request's error message). */
export class Failed extends Error {}

/** The answer of a reply; its error is thrown as `Failed`, for `run` to show. */
export function unwrap<T, E extends { message: string }>(reply: Reply<T, E>): T {
  if (reply.ok) return reply.value;
  throw new Failed(reply.error.message);
}

/** What `run` records of what `f` threw: a request's message as it is, else the value. */
export function failureMessage(e: unknown): string {
  return e instanceof Failed ? e.message : String(e);
}

export interface RunOptions {
  /** What runs, for `running` ("" when not given). */
  label?: string;
  /** Where the failure goes instead of `error` (a result panel, say). */
  onError?: (message: string) => void;
}

export interface Action {
  /** Whether an action runs now. */
  busy: boolean;
  /** The label of the action that runs now, or null. */
  running: string | null;
  /** Why the last action failed; null once one succeeds (or `setError(null)`). */
  error: string | null;
  setError: (message: string | null) => void;
  /** Runs `f`: busy meanwhile; what it throws is the error (or goes to `onError`), and the
   * error is cleared when it succeeds. Never rejects. */
  run: (f: () => Promise<unknown>, options?: RunOptions) => Promise<void>;
}

/** `run`'s steps, given where the hook keeps what runs and the error. */
export async function runAction(
  f: () => Promise<unknown>,
  options: RunOptions,
  set: { running: (label: string | null) => void; error: (message: string | null) => void },
): Promise<void> {
  set.running(options.label ?? "");
  try {
    await f();
    if (!options.onError) set.error(null);
  } catch (e) {
    const message = failureMessage(e);
    if (options.onError) options.onError(message);
    else set.error(message);
  } finally {
    set.running(null);
  }
}

export function useAction(): Action {
  const [running, setRunning] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback((f: () => Promise<unknown>, options: RunOptions = {}) => runAction(f, options, { running: setRunning, error: setError }), []);
  return useMemo(() => ({ busy: running !== null, running, error, setError, run }), [running, error, run]);
}
