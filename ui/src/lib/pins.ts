// Tool pinning as the server page shows it: which tools wait for approval, and the word diff
// of each (`[-old-]{+new+}`, as `warden tools diff` prints it) split into runs to colour.
import type { ToolStatus } from "../bindings/api";

export interface DiffRun {
  kind: "same" | "del" | "ins";
  text: string;
}

/** The runs of a word diff; an unclosed marker is kept as plain text. */
export function parseWordDiff(diff: string): DiffRun[] {
  const runs: DiffRun[] = [];
  const push = (kind: DiffRun["kind"], text: string) => {
    if (!text) return;
    const last = runs[runs.length - 1];
    if (last && last.kind === kind) last.text += text;
    else runs.push({ kind, text });
  };
  let i = 0;
  while (i < diff.length) {
    const del = diff.indexOf("[-", i);
    const ins = diff.indexOf("{+", i);
    const next = [del, ins].filter((n) => n >= 0).sort((a, b) => a - b)[0];
    if (next === undefined) {
      push("same", diff.slice(i));
      break;
    }
    push("same", diff.slice(i, next));
    const isDel = next === del;
    const close = diff.indexOf(isDel ? "-]" : "+}", next + 2);
    if (close < 0) {
      push("same", diff.slice(next));
      break;
    }
    push(isDel ? "del" : "ins", diff.slice(next + 2, close));
    i = close + 2;
  }
  return runs;
}

/** Tools whose definition changed or is new since the server's tools were pinned. */
export function waitingTools(tools: ToolStatus[]): ToolStatus[] {
  return tools.filter((t) => t.pin === "changed" || t.pin === "new").sort((a, b) => a.name.localeCompare(b.name));
}
