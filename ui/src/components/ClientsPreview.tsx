// The Clients page's preview of a wrap, unwrap or restore: each file's diff before anything is
// written, and what the result says about secrets.
import type { FileChangeView, RestoreView } from "../bindings/api";
import { Dialog } from "./Dialog";
import { DiffView } from "./DiffView";
import { ChangeList } from "./Changes";

export type Pending =
  | { kind: "edit"; title: string; wrap: boolean; file: string | null; server: string | null; moveSecrets: boolean; changes: FileChangeView[] }
  | { kind: "restore"; title: string; id: string; view: RestoreView };

export function secretsLine(c: FileChangeView, wrap: boolean): string {
  return wrap
    ? `Moved into the OS keychain (the file keeps a placeholder): ${c.secrets.join(", ")}. The backup taken before this change still holds them in plain text.`
    : `Written back from the OS keychain: ${c.secrets.join(", ")}.`;
}

export function PreviewDialog(props: {
  pending: Pending;
  busy: boolean;
  onApply: () => void;
  onCancel: () => void;
  onMoveSecrets: (on: boolean) => void;
}) {
  const p = props.pending;
  const diffs = p.kind === "edit" ? p.changes.filter((c) => c.diff !== "") : p.view.diff !== "" ? [p.view] : [];
  const nothing = diffs.length === 0;
  return (
    <Dialog title={p.title} onClose={props.onCancel} testid="diff-preview" wide>
      <p class="muted small">Nothing has been written yet. This is the exact change:</p>
      {p.kind === "edit" && p.wrap && (
        <label class="check small">
          <input
            type="checkbox"
            data-testid="move-secrets"
            checked={p.moveSecrets}
            disabled={props.busy}
            onChange={(e) => props.onMoveSecrets(e.currentTarget.checked)}
          />
          Also move secrets (env values named like TOKEN, KEY, SECRET, PASSWORD…) into the OS keychain; the bridge puts
          them back into the server's environment, and Unwrap writes them back into the file.
        </label>
      )}
      {p.kind === "edit" && (
        <ChangeList changes={p.changes} secretsLabel={p.wrap ? "Into the OS keychain (service mcp-warden)" : "Back from the OS keychain"} />
      )}
      {p.kind === "restore" && (
        <section class="change">
          <h3 class="small">
            <code>{p.view.backup.original}</code>
          </h3>
          {p.view.diff !== "" && <DiffView diff={p.view.diff} testid="diff" />}
        </section>
      )}
      {nothing && <p data-testid="nothing-to-change">Nothing to change: the file already looks like this.</p>}
      <div class="dialog-actions">
        <button type="button" class="secondary" data-testid="cancel" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" data-testid="confirm-apply" data-autofocus disabled={props.busy || nothing} onClick={props.onApply}>
          Apply
        </button>
      </div>
    </Dialog>
  );
}
