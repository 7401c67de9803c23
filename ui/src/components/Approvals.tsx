// The calls a bridge holds until someone answers (`tools_ask`, docs/behaviour.md): on top of
// every page, each with Allow, Always allow and Deny. The list is re-read when the sessions'
// held calls change (their heartbeats) and when an `approval_*` event arrives (asked, given,
// declined, timed out), so an answer given in the client or with `warden approvals` takes it
// away here too.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { PendingApproval } from "../bindings/api";
import { formatClock, printableLine, printableLines } from "../lib/format";
import { ask } from "../lib/tauri";
import { unwrap, useAction } from "../lib/useAction";
import { ON_APPROVALS, useApi } from "../lib/useApi";
import { useStore } from "./context";
import { ErrorText } from "./common";

/** A pending call and the local time its question runs out. */
type Pending = PendingApproval & { until_ms: number };

export function Approvals() {
  const { state } = useStore();
  const [answered, setAnswered] = useState<string[]>([]);
  const action = useAction();
  const held = state.sessions.flatMap((s) => s.approvals).join(" ");
  const { data: list, error: listError, reload } = useApi({ op: "approvals" }, ON_APPROVALS);
  const seen = useRef(held);
  useEffect(() => {
    if (seen.current === held) return;
    seen.current = held;
    void reload();
  }, [held, reload]);

  const pending: Pending[] = useMemo(() => {
    if (!list) return [];
    const now = Date.now();
    return list.approvals.filter((a) => !answered.includes(a.id)).map((a) => ({ ...a, until_ms: now + a.left_ms }));
  }, [list, answered]);
  // A new list of held calls clears the error of an earlier answer.
  const { setError } = action;
  useEffect(() => setError(null), [list, setError]);
  const error = action.error ?? listError;

  const answer = (a: Pending, allow: boolean, always: boolean) =>
    action.run(async () => {
      unwrap(await ask({ op: "approval_answer", id: a.id, allow, always }));
      setAnswered((ids) => [...ids, a.id]);
    });

  if (pending.length === 0 && error === null) return null;
  return (
    <section class="card approvals" data-testid="approvals" aria-labelledby="approvals-title">
      <div class="card-head">
        <h2 id="approvals-title">Waiting for your answer</h2>
      </div>
      {error && <ErrorText message={error} testid="approvals-error" />}
      <ul>
        {pending.map((a) => (
          <li key={a.id} data-testid={`approval-${a.tool}`}>
            <strong>{printableLine(a.server)}</strong> wants to run <code>{printableLine(a.tool)}</code>
            {a.args !== "{}" && <pre class="small">{printableLines(a.args)}</pre>}
            <div class="muted small">
              Refused at {formatClock(a.until_ms)} unless you answer{a.client_asked ? "; its client was asked too, and the first answer counts" : ""}.
            </div>
            <button type="button" data-testid="approval-allow" disabled={action.busy} onClick={() => void answer(a, true, false)}>
              Allow
            </button>{" "}
            <button type="button" class="secondary" data-testid="approval-always" disabled={action.busy} onClick={() => void answer(a, true, true)}>
              Always allow
            </button>{" "}
            <button type="button" class="secondary" data-testid="approval-deny" disabled={action.busy} onClick={() => void answer(a, false, false)}>
              Deny
            </button>
            <span class="muted small"> (Always: this tool of {printableLine(a.server)}, while its definition stays as pinned)</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
