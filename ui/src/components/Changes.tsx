// What a change of client files did or would do: the per-file diffs before, the result after.
import type { FileChangeView, Notice, NoticeKind } from "../bindings/api";
import { DiffView } from "./DiffView";
import { ErrorText } from "./common";

export type Result = { title: string; ok: boolean; lines: string[]; notices: Notice[] };

export const NOTICE_LABEL: Record<NoticeKind, string> = {
  restart: "Needs restart",
  reload: "Needs reload",
  approval: "Needs approval",
  allowlist: "Needs allowlisting",
  note: "Note",
};

/** The result of a write: each file's change and backup, what failed, what to do now. */
/** What a request that failed says, as a result panel. */
export function errorResult(title: string, message: string): Result {
  return { title, ok: false, lines: [message], notices: [] };
}

export function changeResult(title: string, changes: FileChangeView[], secretsLine?: (c: FileChangeView) => string): Result {
  const lines: string[] = [];
  const notices: Notice[] = [];
  let ok = true;
  for (const c of changes) {
    if (c.error) {
      ok = false;
      lines.push(`${c.path}: ${c.error}`);
    } else if (c.written) {
      lines.push(`${c.path}: ${c.changed.length > 0 ? c.changed.join(", ") : "changed"}${c.backup ? ` (backup ${c.backup})` : ""}.`);
      if (c.secrets.length > 0 && secretsLine) lines.push(secretsLine(c));
      notices.push(...c.notices);
    } else if (c.diff === "") {
      lines.push(`${c.path}: nothing to change.`);
    }
    for (const s of c.skipped) lines.push(`${c.path}: ${skippedText(c, s.name, s.reason)}`);
  }
  if (changes.length === 0) lines.push("Nothing matched.");
  return { title, ok, lines, notices };
}

/** A skipped entry, or a note on an entry that did change (a value that stays in the file). */
export function skippedText(c: FileChangeView, name: string, reason: string): string {
  return c.changed.includes(name) ? `${name}: ${reason}` : `${name} left alone: ${reason}`;
}

/** Each file's change, previewed: what changes, the keychain items, the exact diff. */
export function ChangeList({ changes, secretsLabel }: { changes: FileChangeView[]; secretsLabel?: string }) {
  return (
    <>
      {changes.map((c) => (
        <section key={c.path} class="change" data-testid="change" data-path={c.path}>
          <h3 class="small">
            <code>{c.path}</code>
          </h3>
          {c.error && <ErrorText message={c.error} />}
          {c.changed.length > 0 && <p class="small">Changes: {c.changed.join(", ")}</p>}
          {c.secrets.length > 0 && secretsLabel && (
            <p class="small" data-testid="secrets">
              {secretsLabel}: {c.secrets.join(", ")}
            </p>
          )}
          {c.skipped.length > 0 && (
            <ul class="small muted">
              {c.skipped.map((s, i) => (
                <li key={i}>{skippedText(c, s.name, s.reason)}</li>
              ))}
            </ul>
          )}
          {c.diff !== "" && <DiffView diff={c.diff} testid="diff" />}
          {c.notices.length > 0 && c.diff !== "" && (
            <div class="small">
              Afterwards: <NoticeList notices={c.notices} />
            </div>
          )}
        </section>
      ))}
    </>
  );
}

export function ResultPanel({ result, onClose }: { result: Result; onClose: () => void }) {
  return (
    <div class={`result ${result.ok ? "ok" : "bad"}`} data-testid="edit-result" role={result.ok ? "status" : "alert"}>
      <div class="result-head">
        <strong>{result.title}</strong>
        <button type="button" class="icon" aria-label="Dismiss" data-testid="dismiss-result" onClick={onClose}>
          ×
        </button>
      </div>
      <ul>
        {result.lines.map((l, i) => (
          <li key={i}>{l}</li>
        ))}
      </ul>
      {result.notices.length > 0 && (
        <div class="notices" data-testid="edit-notices">
          <strong>What to do now:</strong>
          <NoticeList notices={result.notices} />
        </div>
      )}
    </div>
  );
}

export function NoticeList({ notices }: { notices: Notice[] }) {
  return (
    <ul class="notice-list">
      {notices.map((n, i) => (
        <li key={i} data-testid="notice" data-kind={n.kind}>
          <span class={`tag notice-${n.kind}`}>{NOTICE_LABEL[n.kind]}</span> {n.message}
        </li>
      ))}
    </ul>
  );
}
