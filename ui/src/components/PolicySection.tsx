import { useState } from "preact/hooks";
import type { LimitsReport, PolicyKind, ToolPolicy } from "../bindings/api";
import { printableLine } from "../lib/format";
import { POLICY_LABEL, policyReason, policyStuck } from "../lib/policy";
import { ask } from "../lib/tauri";
import { unwrap, useAction } from "../lib/useAction";
import { ErrorText } from "./common";

const KINDS: PolicyKind[] = ["allow", "ask", "deny"];

/**
 * Each tool's policy (docs/behaviour.md, "Tool policy"): allowed, asked about before each
 * call, or denied, and why — as the supervisor decides it with the bridges' own code, from
 * `tools_allow`, `tools_ask`, `tools_deny` and the tool's pinned definition. A tool is moved
 * by its own entry, across the three lists in one write of config.toml (`SetToolPolicy`); a
 * glob or selector that still decides is named. A tool allowed "always" (an answer kept
 * while its definition is unchanged) offers Ask again (`warden approvals forget`).
 */
export function PolicySection(props: { server: string; report: LimitsReport; onSaved: () => void }) {
  const action = useAction();
  const busy = action.busy;
  const [note, setNote] = useState<string | null>(null);
  const [moved, setMoved] = useState<{ tool: string; to: PolicyKind } | null>(null);
  const tools = props.report.tools;

  /** Runs `f`, then reads the report again whatever came of it. */
  const act = async (f: () => Promise<void>) => {
    await action.run(f);
    props.onSaved();
  };

  const move = (t: ToolPolicy, to: PolicyKind) =>
    act(async () => {
      setNote(null);
      setMoved({ tool: t.tool, to });
      unwrap(await ask({ op: "set_tool_policy", server: props.server, tool: t.tool, policy: to }));
    });

  const forget = (t: ToolPolicy) =>
    act(async () => {
      setMoved(null);
      const r = unwrap(await ask({ op: "approvals_forget", server: props.server, tool: t.tool }));
      setNote(r.message);
    });

  const now = moved && tools.find((t) => t.tool === moved.tool);
  const stuck = now ? policyStuck(now, moved.to) : null;

  return (
    <section class="card policy" data-testid="policy" aria-labelledby="policy-title">
      <div class="card-head">
        <h2 id="policy-title">Tool policy</h2>
      </div>
      <p class="small muted">
        Allow runs a call, Ask holds it until someone answers (the client, this window, the notification or{" "}
        <code>warden approvals</code>), Deny hides the tool. Deny wins over ask, ask over allow; a tool that has no
        annotations counts as destructive.
      </p>
      {action.error && <ErrorText message={action.error} testid="policy-error" />}
      {stuck && <p class="small bad-text" data-testid="policy-stuck">{printableLine(stuck)}</p>}
      {note && <p class="small muted" data-testid="policy-note">{printableLine(note)}</p>}
      {tools.length === 0 ? (
        <p class="muted" data-testid="policy-empty">No tool seen yet: the tools show once the server has listed them.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Tool</th>
                <th scope="col">Policy</th>
                <th scope="col">Why</th>
                <th scope="col">Change</th>
              </tr>
            </thead>
            <tbody>
              {tools.map((t) => (
                <tr key={t.tool} data-testid="policy-row" data-tool={t.tool} data-policy={t.policy}>
                  <td>
                    <strong>{printableLine(t.tool)}</strong>
                    {t.selectors.length > 0 && <div class="small muted">{t.selectors.join(" ")}</div>}
                  </td>
                  <td>
                    <span class={`tag ${t.policy === "deny" ? "bad" : t.policy === "ask" ? "warn" : "ok"}`} data-testid="policy-kind">
                      {POLICY_LABEL[t.policy]}
                    </span>
                    {t.always && (
                      <div class="small" data-testid="policy-always">
                        {t.always_current ? "Always allowed" : "Always allowed before its definition changed: asked again"}{" "}
                        <button type="button" class="link" data-testid={`policy-forget-${t.tool}`} disabled={busy} onClick={() => void forget(t)}>
                          Ask again
                        </button>
                      </div>
                    )}
                  </td>
                  <td class="small">{printableLine(policyReason(t))}</td>
                  <td>
                    <div role="group" aria-label={`Policy of ${printableLine(t.tool)}`}>
                      {KINDS.map((k) => (
                        <button
                          key={k}
                          type="button"
                          class={t.policy === k ? "toggle" : "secondary"}
                          aria-pressed={t.policy === k}
                          data-testid={`policy-${k}-${t.tool}`}
                          disabled={busy || t.policy === k}
                          onClick={() => void move(t, k)}
                        >
                          {POLICY_LABEL[k]}
                        </button>
                      ))}
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
