// The server page's Sandbox section: the grants as config.toml has them, what the sandbox
// refused lately (`sandbox_denied` events), and the grant that allows each.
import type { HistoryEntry, JsonValue, LimitsReport } from "../bindings/api";

export interface SandboxSettings {
  on: boolean;
  network: boolean;
  write: string[];
  deny: string[];
}

function value(report: LimitsReport, key: string): JsonValue | undefined {
  return report.keys.find((k) => k.key === key)?.value;
}

function strings(v: JsonValue | undefined): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/** The server's sandbox keys, as in force. */
export function sandboxSettings(report: LimitsReport): SandboxSettings {
  return {
    on: value(report, "sandbox") === "on",
    network: value(report, "sandbox_network") === "host",
    write: strings(value(report, "sandbox_write")),
    deny: strings(value(report, "sandbox_deny")),
  };
}

/** One thing the sandbox refused, and the key that would allow it. */
export type Blocked =
  | { kind: "network"; ts_ms: number }
  | { kind: "path"; ts_ms: number; path: string; folder: string };

/** The folder to grant for a refused path: the path itself when it ends with `/`, else its parent. */
export function folderOf(path: string): string {
  if (path.endsWith("/")) return path.replace(/\/+$/, "") || "/";
  const cut = path.lastIndexOf("/");
  return cut <= 0 ? "/" : path.slice(0, cut);
}

/**
 * The refusals (newest first, each once) that the settings do not allow yet: a path not under
 * a granted folder, the network while it is off.
 */
export function blocked(timeline: HistoryEntry[], settings: SandboxSettings): Blocked[] {
  const seen = new Set<string>();
  const out: Blocked[] = [];
  for (const e of [...timeline].reverse()) {
    if (e.event.kind !== "sandbox_denied" || !e.event.detail) continue;
    const detail = e.event.detail;
    if (seen.has(detail)) continue;
    seen.add(detail);
    if (detail === "network") {
      if (!settings.network) out.push({ kind: "network", ts_ms: e.event.ts_ms });
      continue;
    }
    const folder = folderOf(detail);
    const granted = settings.write.some((w) => folder === w || folder.startsWith(`${w.replace(/\/+$/, "")}/`));
    if (!granted) out.push({ kind: "path", ts_ms: e.event.ts_ms, path: detail, folder });
  }
  return out;
}
