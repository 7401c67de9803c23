// The Add flow's state (src/components/AddServer.tsx and its steps) as a pure reducer: which
// step it is on, what was found, planned and chosen, and the answers it got. The component
// asks (the registry, ServerAdd, SetLimit, Probe) and hands each answer to `addReducer`, so
// every move between steps is tested without a window (tests/addFlow.test.ts).
import type { ClientId, FileChangeView, ProbeReport, Risk } from "../bindings/api";
import type { Found, PlanView, RegistryRequest } from "../bindings/app";
import type { Result } from "../components/Changes";
import { entryNameProblem, planEnv, splitCommandLine } from "./manage";
import type { AddSandbox, FirstStartState } from "./sandbox";

export type Source = "registry" | "command" | "document";
export type Step = "find" | "review" | "clients" | "changes" | "done";

export const STEPS: Array<[Step, string]> = [
  ["find", "Find"],
  ["review", "Review"],
  ["clients", "Clients"],
  ["changes", "Changes"],
  ["done", "Result"],
];

/** What will be written, whatever the source. */
export interface Server {
  name: string;
  argv: string[];
  env: Record<string, string>;
  secrets: Record<string, string>;
  plan: PlanView | null;
}

/** A registry server and version chosen (the version `null`: the latest). */
export type Origin = { name: string; version: string | null };

export interface AddState {
  step: Step;
  source: Source;
  busy: boolean;
  error: string | null;
  // Find
  term: string;
  found: Found[] | null;
  commandLine: string;
  commandName: string;
  envText: string;
  secretText: string;
  document: string;
  // Review
  plan: PlanView | null;
  origin: Origin | null;
  inputs: Record<string, string>;
  asName: string;
  server: Server | null;
  // Clients
  chosen: ClientId[];
  wrap: boolean;
  sandbox: AddSandbox;
  askDestructive: boolean;
  // Changes and result
  changes: { changes: FileChangeView[]; risks: Risk[] } | null;
  result: Result | null;
  probe: ProbeReport | "running" | null;
  firstStart: FirstStartState | null;
}

/** The fields a control edits directly. */
export type Field =
  | "source"
  | "term"
  | "commandLine"
  | "commandName"
  | "envText"
  | "secretText"
  | "document"
  | "inputs"
  | "asName"
  | "wrap"
  | "sandbox"
  | "askDestructive";

export type AddAction =
  | { [K in Field]: { type: "edit"; field: K; value: AddState[K] } }[Field]
  | { type: "client"; client: ClientId; on: boolean }
  | { type: "busy"; on: boolean }
  | { type: "error"; message: string | null }
  | { type: "found"; servers: Found[] }
  /** A plan arrived; `origin`: the registry server it is of, when newly chosen; `rename`: the
   * entry is named afresh from it. */
  | { type: "planned"; view: PlanView; origin: Origin | null; rename: boolean }
  | { type: "from_command" }
  | { type: "to_clients"; taken: ReadonlySet<string> }
  | { type: "previewed"; changes: FileChangeView[]; risks: Risk[] }
  | { type: "written"; result: Result }
  | { type: "close_result" }
  | { type: "probe"; probe: ProbeReport | "running" | null }
  | { type: "first_start"; state: FirstStartState | null };

export function initialAddState(clients: ClientId[], sandboxWorks: boolean): AddState {
  return {
    step: "find",
    source: "registry",
    busy: false,
    error: null,
    term: "",
    found: null,
    commandLine: "",
    commandName: "",
    envText: "",
    secretText: "",
    document: "",
    plan: null,
    origin: null,
    inputs: {},
    asName: "",
    server: null,
    chosen: [...clients],
    wrap: true,
    sandbox: { on: sandboxWorks, firstStart: false, keep: false },
    askDestructive: true,
    changes: null,
    result: null,
    probe: null,
    firstStart: null,
  };
}

export function addReducer(s: AddState, a: AddAction): AddState {
  switch (a.type) {
    case "edit":
      return { ...s, [a.field]: a.value };
    case "client": {
      const rest = s.chosen.filter((c) => c !== a.client);
      return { ...s, chosen: a.on ? [...rest, a.client] : rest };
    }
    case "busy":
      return a.on ? { ...s, busy: true, error: null } : { ...s, busy: false };
    case "error":
      return { ...s, error: a.message };
    case "found":
      return { ...s, found: a.servers };
    case "planned": {
      // A new choice names the entry afresh; planning again keeps the name typed.
      const rename = a.rename || s.asName === "";
      return { ...s, plan: a.view, origin: a.origin ?? s.origin, asName: rename ? a.view.entry_name : s.asName, step: "review" };
    }
    case "from_command": {
      const split = splitCommandLine(s.commandLine);
      if ("error" in split) return { ...s, error: split.error };
      const env = keyValues(s.envText);
      const secrets = keyValues(s.secretText);
      if (typeof env === "string") return { ...s, error: `Environment: ${env}` };
      if (typeof secrets === "string") return { ...s, error: `Secrets: ${secrets}` };
      const name = s.commandName.trim() || guessName(split.argv);
      return { ...s, error: null, plan: null, asName: name, server: { name, argv: split.argv, env, secrets, plan: null }, step: "review" };
    }
    case "to_clients": {
      const server = reviewed(s);
      if (!server) return s;
      const problem =
        entryNameProblem(server.name) ?? (a.taken.has(server.name) ? `A server named ${server.name} exists already: choose another name.` : null);
      if (problem) return { ...s, error: problem };
      return { ...s, server, error: null, step: "clients" };
    }
    case "previewed":
      return { ...s, changes: { changes: a.changes, risks: a.risks }, step: "changes" };
    case "written":
      return { ...s, result: a.result, step: "done" };
    case "close_result":
      return { ...s, result: null };
    case "probe":
      return { ...s, probe: a.probe };
    case "first_start":
      return { ...s, firstStart: a.state };
  }
}

/** The review's server: the plan's (none while values are missing), or the command's with the
 * name as edited. */
export function reviewed(s: AddState): Server | null {
  if (s.plan) {
    if (!s.plan.plan) return null;
    const { env, secrets } = planEnv(s.plan.plan);
    return { name: s.asName.trim() || s.plan.entry_name, argv: [s.plan.plan.command, ...s.plan.plan.args], env, secrets, plan: s.plan };
  }
  return s.server ? { ...s.server, name: s.asName.trim() || s.server.name } : null;
}

/** What to plan again with: another server or version (`name`), the values given so far, the
 * entry's name. The request, and the registry server it is of (`null`: a pasted document). */
export function planRequest(
  s: AddState,
  over: { name?: string; version?: string | null; values?: Record<string, string>; entry?: string },
): { request: Extract<RegistryRequest, { op: "plan" | "document" }>; origin: Origin | null } | null {
  const inputs = over.values ?? s.inputs;
  const as_name = (over.entry ?? s.asName).trim() || null;
  if (s.source === "document") return { request: { op: "document", document: s.document, inputs, as_name }, origin: null };
  const origin = over.name ? { name: over.name, version: over.version ?? null } : s.origin;
  if (!origin) return null;
  return { request: { op: "plan", name: origin.name, version: origin.version, inputs, as_name }, origin };
}

/** The `ServerAdd` of the chosen server: a dry run sends each secret's name with no value. */
export function addRequest(s: AddState, dryRun: boolean) {
  const server = s.server;
  if (!server) return null;
  const [command, ...args] = server.argv;
  return {
    op: "server_add" as const,
    name: server.name,
    clients: [...s.chosen],
    command: command ?? "",
    args,
    env: server.env,
    secrets: dryRun ? Object.fromEntries(Object.keys(server.secrets).map((k) => [k, ""])) : server.secrets,
    wrap: s.wrap,
    dry_run: dryRun,
  };
}

/** `KEY=VALUE` lines to a map; a line without `=` is an error that names it. */
export function keyValues(text: string): Record<string, string> | string {
  const out: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    const at = line.indexOf("=");
    if (at <= 0) return `"${line}" is not KEY=VALUE.`;
    out[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return out;
}

/** A name from the command: the package's last path part, without its version. */
export function guessName(argv: string[]): string {
  const last = [...argv].reverse().find((a) => !a.startsWith("-")) ?? argv[0] ?? "server";
  const base = last.split("/").pop() ?? last;
  return base.replace(/(@|==)[^@=]*$/, "").replace(/[^A-Za-z0-9._-]/g, "-") || "server";
}
