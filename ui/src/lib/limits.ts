// The limits form: which input each key gets, the text shown in it, and turning what the
// user typed back into a JSON value. Validation here checks the type only; the supervisor
// checks ranges (the same way the bridges do) and its message is shown next to the field.
import type { JsonValue, LimitSource, LimitValue } from "../bindings/api";

export type FieldKind = "number" | "boolean" | "choice" | "text" | "list" | "table";

/** The input a key gets: a choice where the limits report lists the strings it takes
 * (`LimitValue.choices`, from the Rust key table), else by its default's type. */
export function fieldKind(defaultValue: JsonValue, choices: readonly string[] = []): FieldKind {
  if (choices.length > 0) return "choice";
  if (typeof defaultValue === "boolean") return "boolean";
  if (typeof defaultValue === "number") return "number";
  if (Array.isArray(defaultValue)) return "list";
  if (defaultValue !== null && typeof defaultValue === "object") return "table";
  return "text";
}

/** What the input shows for a value: checkboxes take "true"/"false", lists and tables JSON. */
export function toDraft(kind: FieldKind, value: JsonValue): string {
  switch (kind) {
    case "boolean":
      return value === true ? "true" : "false";
    case "number":
      return typeof value === "number" ? String(value) : "";
    case "choice":
    case "text":
      return typeof value === "string" ? value : JSON.stringify(value);
    case "list":
    case "table":
      return JSON.stringify(value, null, 2);
  }
}

export type Parsed = { ok: true; value: JsonValue } | { ok: false; error: string };

/** The value a draft stands for, or why it cannot be one. */
export function parseDraft(kind: FieldKind, draft: string, choices: readonly string[] = []): Parsed {
  const text = draft.trim();
  switch (kind) {
    case "boolean":
      if (text === "true") return { ok: true, value: true };
      if (text === "false") return { ok: true, value: false };
      return { ok: false, error: "Must be true or false." };
    case "number": {
      if (text === "") return { ok: false, error: "Enter a whole number, 0 or more." };
      if (!/^\d+$/.test(text.replace(/[_,]/g, ""))) {
        return { ok: false, error: "Enter a whole number, 0 or more." };
      }
      const n = Number(text.replace(/[_,]/g, ""));
      if (!Number.isSafeInteger(n)) return { ok: false, error: "Too large." };
      return { ok: true, value: n };
    }
    case "choice": {
      if (choices.includes(text)) return { ok: true, value: text };
      return { ok: false, error: `Must be one of ${choices.map((c) => `"${c}"`).join(", ")}.` };
    }
    case "text":
      return { ok: true, value: draft };
    case "list": {
      const v = parseJson(text === "" ? "[]" : text);
      if (!v.ok) return v;
      if (!Array.isArray(v.value)) {
        return { ok: false, error: 'Must be a JSON list of strings, e.g. ["/home/me/src"].' };
      }
      if (!v.value.every((x) => typeof x === "string")) {
        return { ok: false, error: "Every item must be a string in quotes." };
      }
      return v;
    }
    case "table": {
      const v = parseJson(text === "" ? "{}" : text);
      if (!v.ok) return v;
      if (v.value === null || typeof v.value !== "object" || Array.isArray(v.value)) {
        return { ok: false, error: 'Must be a JSON object, e.g. { "advanced-search": { "maxResults": 500 } }.' };
      }
      return v;
    }
  }
}

function parseJson(text: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) as JsonValue };
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return { ok: false, error: `Not valid JSON: ${why}` };
  }
}

/** Deep equality of JSON values (object key order ignored). */
export function sameValue(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameValue(x, b[i] ?? null));
  }
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object" && !Array.isArray(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return (
      ka.length === kb.length &&
      ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && sameValue(a[k] ?? null, b[k] ?? null))
    );
  }
  return false;
}

/** Whether a draft is a valid value that differs from the effective one (so Save applies). */
export function isChanged(limit: LimitValue, draft: string): boolean {
  const choices = limit.choices ?? [];
  const p = parseDraft(fieldKind(limit.default, choices), draft, choices);
  return p.ok && !sameValue(p.value, limit.value);
}

/** "built-in default", "[defaults], line 3", "[servers.ripgrep], line 9". */
export function describeSource(source: LimitSource, server: string, line: number | null): string {
  const at = line === null ? "" : `, line ${line}`;
  switch (source) {
    case "default":
      return "built-in default";
    case "defaults":
      return `[defaults]${at}`;
    case "server":
      return `[servers.${tomlKey(server)}]${at}`;
  }
}

/** A server name as a TOML table key: bare when it can be, quoted otherwise. */
export function tomlKey(name: string): string {
  return /^[A-Za-z0-9_-]+$/.test(name) ? name : JSON.stringify(name);
}

/** A value as config.toml would show it, for the "default" column. */
export function showValue(value: JsonValue): string {
  if (typeof value === "string") return JSON.stringify(value);
  return JSON.stringify(value);
}
