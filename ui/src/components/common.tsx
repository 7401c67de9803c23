import type { ComponentChildren } from "preact";
import type { CommandOutcome, Health } from "../bindings/api";
import { printableLines, shellArgv } from "../lib/format";

export function HealthBadge({ name, health }: { name: string; health: Health }) {
  return (
    <span class={`badge health-${health}`} data-testid={`health-${name}`} data-health={health}>
      {health}
    </span>
  );
}

/** A stable failure code (`W-SPAWN-NOT-FOUND` …); docs/errors.md says what causes it and the fix. */
export function FailureCode({ code, testid }: { code: string; testid?: string }) {
  return (
    <code class="tag bad failure-code" data-testid={testid} title="Stable failure code: docs/errors.md has its cause and fix">
      {code}
    </code>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <h2>{title}</h2>
      {children}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted loading" role="status">
      Loading {what}…
    </p>
  );
}

export function ErrorText({ message, testid }: { message: string; testid?: string }) {
  return (
    <p class="error-text" role="alert" data-testid={testid}>
      {printableLines(message)}
    </p>
  );
}

/** What the last command did: the result of an action, its message and each session's ack. */
export type OutcomeView =
  | { kind: "command"; title: string; outcome: CommandOutcome }
  | { kind: "error"; title: string; message: string }
  | { kind: "info"; title: string; message: string };

export function Outcome({ view }: { view: OutcomeView | null }) {
  if (!view) return <div data-testid="outcome" class="outcome empty-outcome" role="status" aria-live="polite" />;
  const ok = view.kind === "info" || (view.kind === "command" && view.outcome.ok);
  return (
    <div data-testid="outcome" class={`outcome ${ok ? "ok" : "bad"}`} role="status" aria-live="polite" data-ok={ok ? "true" : "false"}>
      <strong>{view.title}: </strong>
      {view.kind === "command" ? view.outcome.message : view.message}
      {view.kind === "command" && view.outcome.config && (
        <div class="small muted">config: {view.outcome.config}</div>
      )}
      {view.kind === "command" && view.outcome.sessions.length > 0 && (
        <ul class="acks">
          {view.outcome.sessions.map((a) => (
            <li key={a.session} data-testid="ack" data-ok={a.ok ? "true" : "false"}>
              <span class={a.ok ? "ok-mark" : "bad-mark"} aria-hidden="true">
                {a.ok ? "✓" : "✗"}
              </span>{" "}
              session pid {a.pid}: {a.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function CommandLine({ command }: { command: string[] | null }) {
  if (!command || command.length === 0) return null;
  return <code class="cmd">{shellArgv(command)}</code>;
}
