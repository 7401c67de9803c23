// The Manage page's model: every server name across the clients' files, and the Add flow's
// input (a pasted command line to an argv, a plan's environment). What an entry may be named
// and what it runs are Rust's (`ServerAdd`).
import type { ClientId, ClientsReport, Request, ServerEntry } from "../bindings/api";
import type { InstallPlan } from "../bindings/app";

/** One client file's entry of a server, in one scope of that file: a row of the Manage page. */
export interface Place {
  client: ClientId;
  clientName: string;
  path: string;
  scope: string[];
  wrapped: boolean;
  /** Whether the client starts it (its own switch, or Warden keeps it aside). */
  enabled: boolean;
  /** Not a stdio server Warden manages (remote, built in): shown, not switched. */
  skipped: boolean;
}

export interface ManagedServer {
  name: string;
  places: Place[];
}

/**
 * Server names (sorted) with each active, readable file that has them (in report order),
 * including the entries Warden keeps aside while they are off.
 */
export function byServer(report: ClientsReport): ManagedServer[] {
  const out = new Map<string, Place[]>();
  for (const f of report.files) {
    if (!f.active || f.error) continue;
    for (const s of [...f.servers, ...f.kept_aside]) {
      const places = out.get(s.name) ?? [];
      places.push(place(f.client, f.client_name, f.path, s));
      out.set(s.name, places);
    }
  }
  return [...out.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, places]) => ({ name, places }));
}

function place(client: ClientId, clientName: string, path: string, s: ServerEntry): Place {
  return {
    client,
    clientName,
    path,
    scope: s.scope,
    wrapped: s.state === "wrapped",
    enabled: s.enabled,
    skipped: s.state === "skipped",
  };
}

/** The request that turns one row on or off: that file and scope only, no other entry of the name. */
export function switchRequest(server: string, p: Place, enabled: boolean): Extract<Request, { op: "server_switch" }> {
  return { op: "server_switch", server, clients: [p.client], file: p.path, scope: p.scope, enabled, dry_run: false };
}

/** Whether a refusal says that a file changed after the preview (`W-CLIENT-CHANGED`): a new preview is due. */
export function changedSincePreview(message: string): boolean {
  return message.includes("[W-CLIENT-CHANGED]");
}

/** The clients whose files Warden found (each once, in report order): where Add can write. */
export function detectedClients(report: ClientsReport): Array<{ client: ClientId; name: string }> {
  const seen = new Set<ClientId>();
  const out: Array<{ client: ClientId; name: string }> = [];
  for (const f of report.files) {
    if (!f.active || seen.has(f.client)) continue;
    seen.add(f.client);
    out.push({ client: f.client, name: f.client_name });
  }
  return out;
}

/**
 * A pasted command line as an argv: words split at blanks, '…' and "…" quoting, backslash
 * escapes. Nothing is expanded ($VAR, ~, globs): what is written runs without a shell, so a
 * line that needs one (pipes, &&, redirections) is refused with what to do instead.
 */
export function splitCommandLine(line: string): { argv: string[] } | { error: string } {
  const argv: string[] = [];
  let word: string | null = null;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"' && i + 1 < line.length) word = (word ?? "") + line[++i];
      else word = (word ?? "") + c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      word = word ?? "";
    } else if (c === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[++i];
    } else if (/\s/.test(c)) {
      if (word !== null) argv.push(word);
      word = null;
    } else if ("|&;<>`".includes(c) || (c === "$" && line[i + 1] === "(")) {
      return { error: `"${c}" needs a shell, and Warden runs servers without one. Put the command in a script and give the script's path, or type only the program and its arguments.` };
    } else {
      word = (word ?? "") + c;
    }
  }
  if (quote) return { error: `A ${quote} quote is not closed.` };
  if (word !== null) argv.push(word);
  if (argv.length === 0) return { error: "Type the command that starts the server, e.g. npx -y @modelcontextprotocol/server-everything" };
  return { argv };
}

/** A plan's environment split the way it is written: plain values in the file, secrets in the keychain. */
export function planEnv(plan: Pick<InstallPlan, "env">): { env: Record<string, string>; secrets: Record<string, string> } {
  const env: Record<string, string> = {};
  const secrets: Record<string, string> = {};
  for (const e of plan.env) {
    if (e.value === null) continue;
    if (e.secret) secrets[e.name] = e.value;
    else env[e.name] = e.value;
  }
  return { env, secrets };
}
