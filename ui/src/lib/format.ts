// Numbers as people read them: durations, sizes, ages, counts, times of day.

import type { ProbeReport } from "../bindings/api";

const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/** 850 → "850 ms", 1234 → "1.2 s", 42000 → "42 s", 125000 → "2 min 5 s", 5400000 → "1 h 30 min". */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  const neg = ms < 0 ? "-" : "";
  const v = Math.abs(ms);
  // Each threshold sits half a display step below the next unit, so rounding never shows
  // "1000 ms" or "60 min".
  if (v < SEC - 0.5) return `${neg}${Math.round(v)} ms`;
  if (v < 10 * SEC - 50) return `${neg}${(Math.round(v / 100) / 10).toFixed(1)} s`;
  if (v < MIN - SEC / 2) return `${neg}${Math.round(v / SEC)} s`;
  if (v < HOUR - SEC / 2) return `${neg}${pair(v, MIN, "min", SEC, "s")}`;
  if (v < DAY - MIN / 2) return `${neg}${pair(v, HOUR, "h", MIN, "min")}`;
  return `${neg}${pair(v, DAY, "d", HOUR, "h")}`;
}

function pair(v: number, big: number, bigUnit: string, small: number, smallUnit: string): string {
  let whole = Math.floor(v / big);
  let rest = Math.round((v - whole * big) / small);
  if (rest * small >= big) {
    whole += 1;
    rest = 0;
  }
  return rest === 0 ? `${whole} ${bigUnit}` : `${whole} ${bigUnit} ${rest} ${smallUnit}`;
}

const UNITS = ["KiB", "MiB", "GiB", "TiB"];

/** 512 → "512 B", 3565158 → "3.4 MiB" (binary units, as docs/config.md writes them). */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return "—";
  if (Math.abs(bytes) < 1024) return `${Math.round(bytes)} B`;
  let v = bytes;
  let unit = "B";
  for (const u of UNITS) {
    if (Math.abs(v) < 1024) break;
    v /= 1024;
    unit = u;
  }
  const text = Math.abs(v) >= 100 || Number.isInteger(v) ? v.toFixed(0) : v.toFixed(1);
  return `${text.replace(/\.0$/, "")} ${unit}`;
}

/** How long ago: "just now", "5 s ago", "2 min 5 s ago". */
export function formatAge(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  if (ms < SEC) return "just now";
  return `${formatMs(ms)} ago`;
}

/** 12345 → "12,345". */
export function formatCount(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return "—";
  return Math.round(n).toLocaleString("en-US");
}

function two(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

/** Wall-clock ms → "14:03:07" (local time). */
export function formatClock(tsMs: number): string {
  const d = new Date(tsMs);
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** Wall-clock ms → "2026-03-14 14:03:07" (local time). */
export function formatDateTime(tsMs: number): string {
  const d = new Date(tsMs);
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${formatClock(tsMs)}`;
}

/** A key's value in the unit its name says (`*_ms`, `*_bytes`), else null. */
export function humanizeLimit(key: string, value: unknown): string | null {
  if (typeof value !== "number") return null;
  if (key.endsWith("_ms")) return formatMs(value);
  if (key.endsWith("_bytes")) return value === 0 ? "off" : formatBytes(value);
  return null;
}

// Text Warden did not write (a registry document, a client's file, a server's stdout or
// stderr, a tool definition), shown by one rule: the twin of src-tauri/wire/src/text.rs, tested
// against the same cases (src-tauri/wire/tests/fixtures/text/printable.json). React escapes
// HTML; this escapes what HTML does not: control characters (C0, DEL, C1) and the characters
// that reorder or break text (bidi embeddings, overrides, isolates and marks, U+2028/U+2029)
// are shown as `\x1b`, `\u{202e}`, so a name cannot look like another or hide what follows.

/** Shown for a line break inside a single-line field. */
export const NEWLINE = "⏎";

function isFormat(cp: number): boolean {
  return (
    cp === 0x061c ||
    cp === 0x200e ||
    cp === 0x200f ||
    cp === 0x2028 ||
    cp === 0x2029 ||
    (cp >= 0x202a && cp <= 0x202e) ||
    (cp >= 0x2066 && cp <= 0x2069)
  );
}

function escapeText(text: string, keepLines: boolean): string {
  let out = "";
  const chars = Array.from(text);
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    const cp = c.codePointAt(0) ?? 0;
    if (c === "\r" && chars[i + 1] === "\n") continue; // a CRLF is one line break
    if (c === "\n") out += keepLines ? "\n" : NEWLINE;
    else if (c === "\t") out += keepLines ? "\t" : "\\t";
    else if (c === "\r") out += "\\r";
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, "0")}`;
    // C1 controls, bidi and line separators, and lone surrogates (JSON can carry them).
    else if ((cp >= 0x80 && cp <= 0x9f) || isFormat(cp) || (cp >= 0xd800 && cp <= 0xdfff)) out += `\\u{${cp.toString(16)}}`;
    else out += c;
  }
  return out;
}

/** `text` as one line: line breaks shown as ⏎, control and bidi characters escaped. */
export function printableLine(text: string): string {
  return escapeText(text, false);
}

/** `text` with its line breaks (and tabs) kept, control and bidi characters escaped. */
export function printableLines(text: string): string {
  return escapeText(text, true);
}

/** One shell argument: bare when it holds only `A-Za-z0-9@%+=:,./_-`, else single-quoted. */
export function shellArg(a: string): string {
  return /^[A-Za-z0-9@%+=:,./_-]+$/.test(a) ? a : `'${printableLine(a.replace(/'/g, "'\\''"))}'`;
}

/** A command line, each argument as {@link shellArg} shows it. */
export function shellArgv(argv: readonly string[]): string {
  return argv.map(shellArg).join(" ");
}

/** The protocol era a probe spoke with a server, as a phrase: "modern MCP (2026-07-28)",
 *  "legacy MCP (2025-11-25)"; "" when the server answered neither handshake. */
export function formatEra(probe: Pick<ProbeReport, "era" | "protocol_version">): string {
  if (!probe.era) return "";
  return `${probe.era} MCP${probe.protocol_version ? ` (${printableLine(probe.protocol_version)})` : ""}`;
}
