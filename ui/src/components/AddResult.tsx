// The Add flow's last two steps: each file's exact change before anything is written, then
// what was written and whether the server starts.
import type { FileChangeView, ProbeReport, Risk } from "../bindings/api";
import { formatEra, printableLine } from "../lib/format";
import { ChangeList, ResultPanel, type Result } from "./Changes";
import { FailureCode } from "./common";

export function AddChanges({ changes }: { changes: { changes: FileChangeView[]; risks: Risk[] } }) {
  return (
    <>
      <p class="muted small">Nothing has been written yet. These are the exact changes, one file each; each file is backed up first.</p>
      {changes.risks.length > 0 && (
        <ul class="risks small" data-testid="add-risks">
          {changes.risks.map((r, i) => (
            <li key={i} data-kind={r.kind}>
              <span class={`tag risk-${r.kind}`}>{r.kind}</span> {printableLine(r.detail)}
            </li>
          ))}
        </ul>
      )}
      <ChangeList changes={changes.changes} secretsLabel="Into the OS keychain (service mcp-warden)" />
    </>
  );
}

export function AddDone(props: { result: Result | null; probe: ProbeReport | "running" | null; onCloseResult: () => void }) {
  return (
    <>
      {props.result && <ResultPanel result={props.result} onClose={props.onCloseResult} />}
      <ProbeResult probe={props.probe} />
    </>
  );
}

function ProbeResult({ probe }: { probe: ProbeReport | "running" | null }) {
  if (probe === null) return null;
  if (probe === "running")
    return (
      <p class="muted" role="status" data-testid="add-probe" data-state="running">
        Starting it once to check (a package runner may download it first)…
      </p>
    );
  return (
    <div class={`outcome ${probe.ok ? "ok" : "bad"}`} data-testid="add-probe" data-state={probe.ok ? "ok" : "failed"}>
      {probe.ok ? (
        <>
          <strong>It starts:</strong> answered in {probe.cold_start_ms ?? "?"} ms with {probe.tools ?? 0} tools
          {probe.tool_names.length > 0 && <span class="muted"> ({probe.tool_names.slice(0, 8).join(", ")}{probe.tool_names.length > 8 ? ", …" : ""})</span>}
          {probe.era && <>, in {formatEra(probe)}</>}; their
          definitions are pinned.
        </>
      ) : (
        <>
          <strong>It does not start yet</strong> {probe.code && <FailureCode code={probe.code} />}: {probe.error}. The entry stays; fix what the
          message says (a missing key, say), then probe it again from its page.
        </>
      )}
    </div>
  );
}
