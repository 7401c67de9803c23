import { diffStat, parseDiff } from "../lib/diff";

export function DiffView({ diff, testid }: { diff: string; testid?: string }) {
  const lines = parseDiff(diff);
  const stat = diffStat(diff);
  return (
    <div class="diff-box">
      <div class="small muted">
        <span class="add-text">+{stat.added}</span> <span class="del-text">−{stat.removed}</span> lines
      </div>
      <pre class="diff" data-testid={testid}>
        {lines.map((l, i) => (
          <span key={i} class={`dl dl-${l.kind}`} data-kind={l.kind}>
            {l.text}
            {"\n"}
          </span>
        ))}
      </pre>
    </div>
  );
}
