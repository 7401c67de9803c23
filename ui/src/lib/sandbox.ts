// The server page's Sandbox section: the grants as config.toml has them, what the sandbox
// refused lately (`sandbox_denied` events), and the grant that allows each.
import type { HistoryEntry, JsonValue, LimitsReport } from "../bindings/api";

export interface SandboxSettings {
  on: boolean;
  /** The whole network (`sandbox_network = "host"`). */
  network: boolean;
  /** The destinations of a list (`sandbox_network = [...]`), reached through Warden's proxy; null when not a list. */
  hosts: string[] | null;
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
    hosts: Array.isArray(value(report, "sandbox_network")) ? strings(value(report, "sandbox_network")) : null,
    write: strings(value(report, "sandbox_write")),
    deny: strings(value(report, "sandbox_deny")),
  };
}

/** One thing the sandbox refused, and the key that would allow it. */
export type Blocked =
  | { kind: "network"; ts_ms: number }
  | { kind: "host"; ts_ms: number; host: string; port: number; entry: string }
  | { kind: "path"; ts_ms: number; path: string; folder: string };

/** The folder to grant for a refused path: the path itself when it ends with `/`, else its parent. */
export function folderOf(path: string): string {
  if (path.endsWith("/")) return path.replace(/\/+$/, "") || "/";
  const cut = path.lastIndexOf("/");
  return cut <= 0 ? "/" : path.slice(0, cut);
}

/**
 * The list entry that allows `host`:`port` (`sandbox_network`): the name alone for 80 and 443
 * (an entry without a port means both), else with its port; an IPv6 address in brackets.
 */
export function hostEntry(host: string, port: number): string {
  if (port === 80 || port === 443) return host;
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/** A list entry's name (or address) and its ports (80 and 443 when it names none). */
function parseEntry(raw: string): { name: string; ports: number[] } {
  const e = raw.trim().toLowerCase();
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(e);
  if (bracket) return { name: bracket[1] ?? "", ports: bracket[2] ? [Number(bracket[2])] : [80, 443] };
  const colons = e.split(":").length - 1;
  const withPort = colons === 1 ? /^(.*):(\d+)$/.exec(e) : null;
  if (withPort) return { name: withPort[1] ?? "", ports: [Number(withPort[2])] };
  return { name: e, ports: [80, 443] };
}

/** Whether a list entry allows `host`:`port`, as the proxy matches it (names without case). */
export function listed(hosts: string[], host: string, port: number): boolean {
  const h = host.toLowerCase();
  return hosts.some((raw) => {
    const { name, ports } = parseEntry(raw);
    if (!ports.includes(port)) return false;
    return name.startsWith("*.") ? h.endsWith(name.slice(1)) && h.length > name.length - 1 : h === name;
  });
}

/**
 * The refusals (newest first, each once) that the settings do not allow yet: a path not under
 * a granted folder, the network while it is off, a destination not on the list.
 */
export function blocked(timeline: HistoryEntry[], settings: SandboxSettings): Blocked[] {
  const seen = new Set<string>();
  const out: Blocked[] = [];
  for (const e of [...timeline].reverse()) {
    if (e.event.kind === "network_denied" && e.event.host && e.event.port !== undefined) {
      const { host, port } = e.event;
      const entry = hostEntry(host, port);
      if (seen.has(`net:${entry}`)) continue;
      seen.add(`net:${entry}`);
      if (settings.hosts && !listed(settings.hosts, host, port)) out.push({ kind: "host", ts_ms: e.event.ts_ms, host, port, entry });
      continue;
    }
    if (e.event.kind !== "sandbox_denied" || !e.event.detail) continue;
    const detail = e.event.detail;
    if (seen.has(detail)) continue;
    seen.add(detail);
    if (detail === "network") {
      // With a list, what it was refused is in the proxy's `network_denied` events.
      if (!settings.network && !settings.hosts) out.push({ kind: "network", ts_ms: e.event.ts_ms });
      continue;
    }
    const folder = folderOf(detail);
    const granted = settings.write.some((w) => folder === w || folder.startsWith(`${w.replace(/\/+$/, "")}/`));
    if (!granted) out.push({ kind: "path", ts_ms: e.event.ts_ms, path: detail, folder });
  }
  return out;
}

/** Where the supervisor's user lives and what the sandbox hides (`LimitsReport`). */
export interface SandboxPlaces {
  home: string | null;
  hidden: string[];
}

/** The places of a limits report (an older supervisor sends neither: nothing is offered then). */
export function sandboxPlaces(report: LimitsReport): SandboxPlaces {
  return { home: report.home ?? null, hidden: report.sandbox_hidden ?? [] };
}

/**
 * Whether "Allow <folder>" may be offered for `folder`, a path a sandboxed server printed:
 * only an absolute, normalised folder that is neither `/` nor the home folder, holds no
 * hidden path and lies in none, and is not (in) a dot folder of the home. `broad` says why
 * an offered grant is wide (a folder directly under the home, a top-level folder).
 */
export type Grantable = { ok: true; folder: string; broad: string | null } | { ok: false; folder: string; why: string };

const within = (path: string, folder: string) => path === folder || path.startsWith(`${folder}/`);

export function grantable(folder: string, places: SandboxPlaces): Grantable {
  const no = (why: string): Grantable => ({ ok: false, folder, why });
  if (/[\u0000-\u001f\u007f]/.test(folder)) return no("it has control characters in its name");
  if (!folder.startsWith("/")) return no("it is not an absolute path");
  if (folder === "/") return no("it is the whole file system");
  const parts = folder.slice(1).split("/");
  if (parts.some((p) => p === "" || p === "." || p === ".."))
    return no("it is not a plain path (it has an empty, `.` or `..` part, or a trailing /)");
  const { home } = places;
  if (home === null) return no("the supervisor did not say where your home folder is (update Warden)");
  if (folder === home) return no("it is your whole home folder");
  if (within(home, folder)) return no(`it holds your home folder (${home})`);
  for (const raw of places.hidden) {
    const h = raw.length > 1 ? raw.replace(/\/+$/, "") : raw;
    if (within(folder, h)) return no(`it is ${folder === h ? "" : "inside "}${h}, which the sandbox hides`);
    if (within(h, folder)) return no(`it holds ${h}, which the sandbox hides`);
  }
  if (within(folder, home)) {
    const rest = folder.slice(home.length + 1).split("/");
    if (rest[0]?.startsWith(".")) return no(`it is ${rest.length > 1 ? "inside " : ""}${home}/${rest[0]}, a dot folder of your home (settings and tokens live in those)`);
    if (rest.length === 1) return { ok: true, folder, broad: "a whole folder of your home" };
    return { ok: true, folder, broad: null };
  }
  if (parts.length === 1) return { ok: true, folder, broad: "a top-level folder of the system" };
  return { ok: true, folder, broad: null };
}

/**
 * What stays read-only inside a grant (`sandbox_write`) as the supervisor found it: the names
 * it holds (relative to the grant; a resolved path elsewhere as it is), and whether it is a
 * git work tree.
 */
export interface GrantInside {
  readOnly: string[];
  git: boolean;
}

/** The names that stay read-only inside every grant (none from an older supervisor). */
export function readOnlyNames(report: LimitsReport): string[] {
  return report.sandbox_read_only_names ?? [];
}

/**
 * What stays read-only inside the grant `written` (as config.toml has it: `~/…` is under the
 * home), from the report's `sandbox_grants`; null for a folder the report does not list (one
 * that does not exist, or an older supervisor).
 */
export function insideGrant(report: LimitsReport, written: string, home: string | null): GrantInside | null {
  const trim = (p: string) => (p.length > 1 ? p.replace(/\/+$/, "") : p);
  const folder = trim(expandHome(written, home));
  const found = (report.sandbox_grants ?? []).find((g) => trim(g.grant) === folder);
  if (!found) return null;
  const root = trim(found.grant);
  return {
    readOnly: found.read_only.map((p) => (p.startsWith(`${root}/`) ? p.slice(root.length + 1) : p)),
    git: found.git,
  };
}

/** `~` and `~/…` as under the home folder (as config.toml reads them); other paths as they are. */
export function expandHome(path: string, home: string | null): string {
  if (home === null) return path;
  if (path === "~") return home;
  return path.startsWith("~/") ? `${home}${path.slice(1)}` : path;
}
