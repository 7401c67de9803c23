// The Add flow's state (src/components/AddServer.tsx and its steps) as a pure reducer: which
// step it is on, what was found, planned and chosen, and the answers it got. The component
// asks (the registry, ServerAdd) and hands each answer to `addReducer`, so every move between
// steps is tested without a window (tests/addFlow.test.ts). The workflow itself (the entry's
// name rule, the sandbox's keys, the secrets, the files, the first start and its network) is
// Rust's `ServerAdd`; this only shows its answer and the `add_progress` steps it reports.
import type { AddAnswer, AddStep, ClientId, FileChangeView, FirstStartNetwork, ProbeReport, Request, Risk } from "../bindings/api";
import type { Found, PlanView, RegistryRequest } from "../bindings/app";
import type { Result } from "../components/Changes";
import { planEnv, splitCommandLine } from "./manage";
import type { Reply } from "./tauri";

export type Source = "registry" | "command" | "url" | "document";
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
  /** A remote server (Streamable HTTP): its URL in place of `argv`, and the bridge's
   * `--header NAME=VAR`s (each variable's value among `secrets`). */
  url?: string;
  headers?: string[];
}

/** A registry server and version chosen (the version `null`: the latest). */
export type Origin = { name: string; version: string | null };

/** The Add flow's sandbox choices. The network is off unless asked for. */
export interface SandboxChoice {
  on: boolean;
  /** Its runner's package registry only (the `preset` of the review's dry run), kept: where
   * there is a runner, on unless unticked. */
  registry?: boolean;
  /** The network for the first start only (the package runner downloads the package). */
  firstStart: boolean;
  /** The network kept on (a server that calls an API). */
  keep: boolean;
}

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
  url: string;
  urlName: string;
  headerText: string;
  document: string;
  // Review
  plan: PlanView | null;
  origin: Origin | null;
  inputs: Record<string, string>;
  asName: string;
  server: Server | null;
  /** The `sandbox_network` preset of its package runner (`@npm`, `@pypi`), as the review's dry
   * run answered: the sandbox may then reach that registry only. */
  preset: string | null;
  // Clients
  chosen: ClientId[];
  wrap: boolean;
  sandbox: SandboxChoice;
  askDestructive: boolean;
  // Changes and result
  changes: { changes: FileChangeView[]; risks: Risk[] } | null;
  result: Result | null;
  probe: ProbeReport | "running" | null;
  firstStart: FirstStartNetwork | null;
}

/** The fields a control edits directly. */
export type Field =
  | "source"
  | "term"
  | "commandLine"
  | "commandName"
  | "envText"
  | "secretText"
  | "url"
  | "urlName"
  | "headerText"
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
  | { type: "from_url" }
  /** The review's dry run passed (the name is one every client takes, and no chosen client
   * has it yet); `preset`: its answer's. */
  | { type: "to_clients"; preset: string | null }
  | { type: "previewed"; changes: FileChangeView[]; risks: Risk[] }
  | { type: "written"; result: Result }
  | { type: "close_result" }
  | { type: "probe"; probe: ProbeReport | "running" | null }
  | { type: "first_start"; state: FirstStartNetwork | null };

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
    url: "",
    urlName: "",
    headerText: "",
    document: "",
    plan: null,
    origin: null,
    inputs: {},
    asName: "",
    server: null,
    preset: null,
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
    case "from_url": {
      const url = remoteUrl(s.url);
      if (typeof url === "string") return { ...s, error: url };
      const given = keyValues(s.headerText);
      if (typeof given === "string") return { ...s, error: `Headers: ${given}` };
      const secrets: Record<string, string> = {};
      const headers = Object.entries(given).map(([header, value]) => {
        // Prefixed, so a header can never name a variable that steers a program (BROWSER).
        const variable = `MCP_HEADER_${header.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
        secrets[variable] = value;
        return `${header}=${variable}`;
      });
      const name = s.urlName.trim() || url.hostname.replace(/^(mcp|api)\./, "").split(".")[0] || "remote";
      return { ...s, error: null, plan: null, asName: name, wrap: true, server: { name, argv: [], env: {}, secrets, plan: null, url: url.href, headers }, step: "review" };
    }
    case "to_clients": {
      const server = reviewed(s);
      if (!server) return s;
      return { ...s, server, preset: a.preset, error: null, step: "clients" };
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
  if (s.plan?.remote) {
    // A server that lists only remotes: its URL through the bridge, each header's value from
    // its variable (a secret one from the keychain).
    const r = s.plan.remote;
    const { env, secrets } = planEnv(r);
    return { name: s.asName.trim() || s.plan.entry_name, argv: [], env, secrets, plan: s.plan, url: r.url, headers: r.headers };
  }
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

/** The `ServerAdd` of the chosen server (`server`: the one under review): a dry run sends each
 * secret's name with no value. */
export function addRequest(s: AddState, dryRun: boolean, server = s.server) {
  if (!server) return null;
  const [command, ...args] = server.argv;
  return {
    op: "server_add" as const,
    name: server.name,
    clients: [...s.chosen],
    command: command ?? "",
    args,
    ...(server.url ? { url: server.url, headers: server.headers ?? [] } : {}),
    env: server.env,
    secrets: dryRun ? Object.fromEntries(Object.keys(server.secrets).map((k) => [k, ""])) : server.secrets,
    wrap: s.wrap,
    dry_run: dryRun,
  };
}

/** The write: one `ServerAdd` that sets the sandbox's keys (where bubblewrap works and the
 * entry runs through the bridge) and `tools_ask`, stores the secrets, writes the files, and
 * starts the entry once as they run it. */
export function writeRequest(s: AddState, sandboxWorks: boolean): Extract<Request, { op: "server_add" }> | null {
  const request = addRequest(s, false);
  if (!request) return null;
  const c = s.sandbox;
  return {
    ...request,
    // A remote server's process is Warden's own relay, and its first start may open a
    // browser for a sign-in: no sandbox, and no start now (the server's page signs in).
    sandbox: s.wrap && sandboxWorks && c.on && !request.url ? { registry: c.registry !== false, first_start: c.firstStart, keep: c.keep } : null,
    ask_destructive: s.wrap && s.askDestructive,
    start: !request.url,
  };
}

/**
 * Following one write: its `add_progress` steps (files written, first start, network) and its
 * answer come on two channels, events and the request's reply, so either may come first. Each
 * is shown once, and nothing the answer said is undone by a late step.
 */
export interface Following {
  name: string;
  /** The files' result is shown. */
  written: boolean;
  /** The answer came. */
  answered: boolean;
  /** The first start's network as the answer said it. */
  network: FirstStartNetwork | null;
}

/** What to show: the files written (the component words the result), or a move of the flow. */
export type Shown = { type: "files_written"; changes: FileChangeView[] } | AddAction;

export function following(name: string): Following {
  return { name, written: false, answered: false, network: null };
}

/** What an `add_progress` step of the write followed shows (`f` notes what was shown). */
export function onStep(f: Following, step: AddStep): Shown[] {
  switch (step.step) {
    case "written":
      if (f.written) return [];
      f.written = true;
      return [{ type: "files_written", changes: step.changes }];
    case "first_start":
      return f.answered ? [] : [{ type: "probe", probe: "running" }];
    case "network":
      // After the answer only an outcome it did not say is news (an error answer says none;
      // "allowed" always comes before the answer).
      if (f.answered && (f.network !== null || step.state === "allowed")) return [];
      return [{ type: "first_start", state: step.state }];
  }
}

/** What the write's answer shows: the files (unless a step showed them), the first start's
 * report and network; or why nothing was written. */
export function onAnswer(f: Following, r: Reply<AddAnswer>): Shown[] {
  f.answered = true;
  // A start that was running when the request failed (the app went away) shows no more.
  if (!r.ok) return f.written ? [{ type: "probe", probe: null }, { type: "error", message: r.error.message }] : [{ type: "error", message: r.error.message }];
  const shown: Shown[] = [];
  if (!f.written) {
    f.written = true;
    shown.push({ type: "files_written", changes: r.value.changes });
  }
  shown.push({ type: "probe", probe: r.value.probe });
  if (r.value.network !== null) {
    f.network = r.value.network;
    shown.push({ type: "first_start", state: r.value.network });
  }
  return shown;
}

/** A remote server's URL as Warden takes it (https, or http to this machine; no user name or
 * password in it), or why not. */
export function remoteUrl(text: string): URL | string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return `"${text.trim()}" is not a URL.`;
  }
  const local = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && local)) return "Warden reaches a remote server over https only (plain http only to this machine).";
  if (url.username || url.password) return "The URL holds a user name or password: give credentials as a header instead.";
  return url;
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
