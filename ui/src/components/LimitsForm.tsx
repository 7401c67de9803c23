import { useState } from "preact/hooks";
import type { JsonValue, LimitsReport, LimitValue } from "../bindings/api";
import { humanizeLimit } from "../lib/format";
import { describeSource, fieldKind, isChanged, parseDraft, showValue, toDraft } from "../lib/limits";
import { ask } from "../lib/tauri";
import { useAction } from "../lib/useAction";

type FieldNote = { ok: boolean; message: string };

export function LimitsForm({ server, report, onSaved }: { server: string; report: LimitsReport; onSaved: () => Promise<void> }) {
  // Only keys the user touched have a draft; the others show the effective value, so a
  // reload (config_changed) never throws away typing in another field.
  const [drafts, setDrafts] = useState<Record<string, string>>({});
  const [notes, setNotes] = useState<Record<string, FieldNote>>({});
  // Each field's outcome is its own note; the action says which key is being saved.
  const action = useAction();

  const send = (key: string, value: JsonValue | null) =>
    action.run(async () => {
      const a = await ask({ op: "set_limit", server, key, value });
      if (!a.ok) {
        setNotes((n) => ({ ...n, [key]: { ok: false, message: a.error.message } }));
        return;
      }
      const r = a.value;
      setNotes((n) => ({ ...n, [key]: { ok: r.ok, message: r.message } }));
      if (r.ok) {
        setDrafts((d) => {
          const next = { ...d };
          delete next[key];
          return next;
        });
      }
      await onSaved();
    }, { label: key });

  return (
    <div class="limits">
      <p class="muted small">
        {report.config ? (
          <>
            Saved into <code>[servers.{server}]</code> of <code>{report.config}</code>; running bridges apply it to new
            requests without a restart.
          </>
        ) : (
          "No config.toml path is known; saving will tell you why."
        )}
      </p>
      {report.error && (
        <p class="error-text" role="alert" data-testid="limits-file-error">
          config.toml cannot be used, so these are the defaults: {report.error}
        </p>
      )}
      {report.warnings.length > 0 && (
        <ul class="warnings" data-testid="limits-warnings">
          {report.warnings.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      )}
      {report.keys.map((limit) => (
        <LimitField
          key={limit.key}
          server={server}
          limit={limit}
          draft={drafts[limit.key]}
          note={notes[limit.key]}
          busy={action.running === limit.key}
          onDraft={(v) => {
            setDrafts((d) => ({ ...d, [limit.key]: v }));
            setNotes((n) => {
              const next = { ...n };
              delete next[limit.key];
              return next;
            });
          }}
          onSave={(v) => void send(limit.key, v)}
          onReset={() => void send(limit.key, null)}
        />
      ))}
    </div>
  );
}

function LimitField(props: {
  server: string;
  limit: LimitValue;
  draft: string | undefined;
  note: FieldNote | undefined;
  busy: boolean;
  onDraft: (v: string) => void;
  onSave: (v: JsonValue) => void;
  onReset: () => void;
}) {
  const { limit, server } = props;
  const choices = limit.choices ?? [];
  const kind = fieldKind(limit.default, choices);
  const text = props.draft ?? toDraft(kind, limit.value);
  const parsed = parseDraft(kind, text, choices);
  const changed = isChanged(limit, text);
  const id = `limit-${limit.key}`;
  const helpId = `${id}-help`;
  const errId = `${id}-error`;
  const human = parsed.ok ? humanizeLimit(limit.key, parsed.value) : null;
  const save = () => {
    if (parsed.ok && changed) props.onSave(parsed.value);
  };

  let input;
  switch (kind) {
    case "boolean":
      input = (
        <input
          id={id}
          type="checkbox"
          data-testid={id}
          checked={text === "true"}
          aria-describedby={helpId}
          onChange={(e) => props.onDraft(e.currentTarget.checked ? "true" : "false")}
        />
      );
      break;
    case "choice":
      input = (
        <select id={id} data-testid={id} value={text} aria-describedby={helpId} onChange={(e) => props.onDraft(e.currentTarget.value)}>
          {choices.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      );
      break;
    case "number":
      input = (
        <input
          id={id}
          type="number"
          min={0}
          step={1}
          inputMode="numeric"
          data-testid={id}
          value={text}
          aria-invalid={!parsed.ok}
          aria-describedby={`${helpId} ${errId}`}
          onInput={(e) => props.onDraft(e.currentTarget.value)}
          onKeyDown={(e) => e.key === "Enter" && save()}
        />
      );
      break;
    case "text":
      input = (
        <input
          id={id}
          type="text"
          data-testid={id}
          value={text}
          aria-describedby={helpId}
          onInput={(e) => props.onDraft(e.currentTarget.value)}
          onKeyDown={(e) => e.key === "Enter" && save()}
        />
      );
      break;
    case "list":
    case "table":
      input = (
        <textarea
          id={id}
          data-testid={id}
          rows={Math.min(8, Math.max(2, text.split("\n").length))}
          spellcheck={false}
          value={text}
          aria-invalid={!parsed.ok}
          aria-describedby={`${helpId} ${errId}`}
          onInput={(e) => props.onDraft(e.currentTarget.value)}
        />
      );
      break;
  }

  return (
    <div class={`limit ${changed ? "changed" : ""}`} data-testid={`limit-row-${limit.key}`} data-source={limit.source}>
      <div class="limit-head">
        <label for={id} class="limit-key">
          <code>{limit.key}</code>
        </label>
        <span class={`source source-${limit.source}`} data-testid={`source-${limit.key}`}>
          {describeSource(limit.source, server, limit.line)}
        </span>
        <span class="muted small">default {showValue(limit.default)}</span>
      </div>
      <div class="limit-input">
        {input}
        {kind === "boolean" && <label for={id}>{text === "true" ? "on" : "off"}</label>}
        {human && <span class="muted small unit">= {human}</span>}
        {changed && (
          <button type="button" data-testid={`save-${limit.key}`} disabled={props.busy} onClick={save}>
            Save
          </button>
        )}
        {limit.source === "server" && (
          <button type="button" class="secondary" data-testid={`reset-${limit.key}`} disabled={props.busy} onClick={props.onReset}
            title={`Remove ${limit.key} from [servers.${server}]`}>
            Reset to default
          </button>
        )}
      </div>
      <div id={errId}>
        {!parsed.ok && <p class="error-text small" data-testid={`invalid-${limit.key}`}>{parsed.error}</p>}
        {props.note && (
          <p class={props.note.ok ? "ok-text small" : "error-text small"} role={props.note.ok ? "status" : "alert"} data-testid={`limit-message-${limit.key}`}>
            {props.note.message}
          </p>
        )}
      </div>
      <p id={helpId} class="help small">
        {limit.doc}
      </p>
    </div>
  );
}
