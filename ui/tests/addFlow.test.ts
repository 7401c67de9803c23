// The Add flow's reducer: each step's move, and what it refuses, without a window.
import { describe, expect, it } from "vitest";
import type { InstallPlan, PlanView } from "../src/bindings/app";
import type { AddAnswer, FileChangeView } from "../src/bindings/api";
import {
  type AddAction,
  type AddState,
  addReducer,
  addRequest,
  following,
  guessName,
  initialAddState,
  keyValues,
  onAnswer,
  onStep,
  planRequest,
  reviewed,
  writeRequest,
} from "../src/lib/addFlow";

const run = (s: AddState, ...actions: AddAction[]) => actions.reduce(addReducer, s);
const start = () => initialAddState(["cursor", "claude-code"], true);

function planView(over: Partial<PlanView> = {}, plan: Partial<InstallPlan> | null = {}): PlanView {
  return {
    name: "io.github.acme/weather", title: "Weather", version: "1.2.0", description: "", namespace: "io.github.acme",
    repository: null, website: null, entry_name: "weather", versions: ["1.2.0", "1.1.0"], missing: [], refused: null, remote: null,
    plan: plan === null ? null : ({
      command: "npx", args: ["-y", "@acme/weather@1.2.0"],
      env: [
        { name: "UNITS", required: false, secret: false, value: "metric" },
        { name: "API_KEY", required: true, secret: true, value: "k" },
        { name: "UNSET", required: false, secret: false, value: null },
      ],
      ...plan,
    } as unknown as InstallPlan),
    ...over,
  };
}

describe("the Add flow's reducer", () => {
  it("starts on Find with every detected client chosen and the sandbox as it works here", () => {
    const s = start();
    expect([s.step, s.source, s.chosen, s.wrap, s.sandbox.on, s.askDestructive]).toEqual(["find", "registry", ["cursor", "claude-code"], true, true, true]);
    expect(initialAddState([], false).sandbox.on).toBe(false);
  });

  it("a pasted command becomes the server to review, named after its package", () => {
    const s = run(
      start(),
      { type: "edit", field: "commandLine", value: "npx -y @modelcontextprotocol/server-everything@2025.9.25" },
      { type: "edit", field: "envText", value: "A=1\n\nB = two=2" },
      { type: "edit", field: "secretText", value: "TOKEN=t" },
      { type: "from_command" },
    );
    expect(s.step).toBe("review");
    expect(s.error).toBeNull();
    expect(s.server).toEqual({
      name: "server-everything", argv: ["npx", "-y", "@modelcontextprotocol/server-everything@2025.9.25"],
      env: { A: "1", B: " two=2" }, secrets: { TOKEN: "t" }, plan: null,
    });
    expect(s.asName).toBe("server-everything");
  });

  it("a command's bad line stays on Find and says which", () => {
    const s = run(start(), { type: "edit", field: "commandLine", value: "uvx thing" }, { type: "edit", field: "envText", value: "NOPE" }, { type: "from_command" });
    expect([s.step, s.error]).toEqual(["find", 'Environment: "NOPE" is not KEY=VALUE.']);
    const named = run(start(), { type: "edit", field: "commandLine", value: "uvx thing" }, { type: "edit", field: "commandName", value: "mine" }, { type: "from_command" });
    expect(named.server?.name).toBe("mine");
  });

  it("a new plan names the entry afresh; planning again keeps the name typed", () => {
    const origin = { name: "io.github.acme/weather", version: null };
    let s = run(start(), { type: "planned", view: planView(), origin, rename: true });
    expect([s.step, s.asName, s.origin]).toEqual(["review", "weather", origin]);
    s = run(s, { type: "edit", field: "asName", value: "wx" }, { type: "planned", view: planView({ entry_name: "weather-2" }), origin: null, rename: false });
    expect([s.asName, s.origin]).toEqual(["wx", origin]);
    s = run(s, { type: "planned", view: planView({ entry_name: "weather-3" }), origin: null, rename: true });
    expect(s.asName).toBe("weather-3");
  });

  it("the reviewed server comes from the plan: values into env, secrets apart, unset ones left out", () => {
    const s = run(start(), { type: "planned", view: planView(), origin: null, rename: true });
    expect(reviewed(s)).toMatchObject({ name: "weather", argv: ["npx", "-y", "@acme/weather@1.2.0"], env: { UNITS: "metric" }, secrets: { API_KEY: "k" } });
    // A plan still missing values has nothing to review, and cannot move on.
    const missing = run(start(), { type: "planned", view: planView({}, null), origin: null, rename: true });
    expect(reviewed(missing)).toBeNull();
    expect(run(missing, { type: "to_clients", preset: null }).step).toBe("review");
  });

  it("moves to Clients once the review's dry run passed, with the runner's preset it answered", () => {
    const s = run(start(), { type: "planned", view: planView(), origin: null, rename: true }, { type: "error", message: "refused" });
    const ok = run(s, { type: "to_clients", preset: "@npm" });
    expect([ok.step, ok.error, ok.server?.name, ok.preset]).toEqual(["clients", null, "weather", "@npm"]);
  });

  it("clients are chosen one by one; busy clears the last error and keeps the step", () => {
    let s = run(start(), { type: "client", client: "cursor", on: false });
    expect(s.chosen).toEqual(["claude-code"]);
    s = run(s, { type: "client", client: "cursor", on: true }, { type: "client", client: "cursor", on: true });
    expect(s.chosen).toEqual(["claude-code", "cursor"]);
    s = run(s, { type: "error", message: "x" }, { type: "busy", on: true });
    expect([s.busy, s.error, s.step]).toEqual([true, null, "find"]);
  });

  it("a preview goes to Changes, a write to the result; the probe and network are kept", () => {
    const result = { title: "Added weather", ok: true, lines: [], notices: [] };
    const s = run(
      start(),
      { type: "previewed", changes: [], risks: [] },
      { type: "written", result },
      { type: "probe", probe: "running" },
      { type: "first_start", state: "allowed" },
    );
    expect([s.step, s.result, s.probe, s.firstStart, s.changes]).toEqual(["done", result, "running", "allowed", { changes: [], risks: [] }]);
    expect(run(s, { type: "close_result" }).result).toBeNull();
  });
});

describe("the Add flow's requests", () => {
  it("plans a pasted document, a chosen registry server, or nothing without one", () => {
    const doc = run(start(), { type: "edit", field: "source", value: "document" }, { type: "edit", field: "document", value: "{}" });
    expect(planRequest(doc, { values: {}, entry: "" })).toEqual({ request: { op: "document", document: "{}", inputs: {}, as_name: null }, origin: null });
    expect(planRequest(start(), {})).toBeNull();
    const chosen = planRequest(start(), { name: "io.github.acme/weather", version: "1.1.0", entry: " wx " });
    expect(chosen).toEqual({
      request: { op: "plan", name: "io.github.acme/weather", version: "1.1.0", inputs: {}, as_name: "wx" },
      origin: { name: "io.github.acme/weather", version: "1.1.0" },
    });
  });

  it("a dry run's ServerAdd names the secrets without their values", () => {
    const s = run(
      start(),
      { type: "edit", field: "commandLine", value: "uvx weather" },
      { type: "edit", field: "secretText", value: "TOKEN=t" },
      { type: "from_command" },
      { type: "edit", field: "wrap", value: false },
    );
    expect(addRequest(s, true)).toEqual({
      op: "server_add", name: "weather", clients: ["cursor", "claude-code"], command: "uvx", args: ["weather"],
      env: {}, secrets: { TOKEN: "" }, wrap: false, dry_run: true,
    });
    expect(addRequest(s, false)?.secrets).toEqual({ TOKEN: "t" });
    expect(addRequest(start(), true)).toBeNull();
  });

  it("checks the name under review with a dry run of the server being reviewed", () => {
    const s = run(start(), { type: "planned", view: planView(), origin: null, rename: true }, { type: "edit", field: "asName", value: "wx" });
    expect(s.server).toBeNull();
    expect(addRequest(s, true, reviewed(s))).toMatchObject({ op: "server_add", name: "wx", secrets: { API_KEY: "" }, dry_run: true });
  });

  it("writes with one ServerAdd: the sandbox as chosen, tools_ask, and the first start", () => {
    const s = run(start(), { type: "edit", field: "commandLine", value: "npx -y x@1" }, { type: "from_command" }, { type: "to_clients", preset: "@npm" });
    expect(writeRequest(s, true)).toMatchObject({
      op: "server_add", name: "x", dry_run: false, start: true, ask_destructive: true,
      sandbox: { registry: true, first_start: false, keep: false },
    });
    const first = run(s, { type: "edit", field: "sandbox", value: { on: true, registry: false, firstStart: true, keep: false } });
    expect(writeRequest(first, true)?.sandbox).toEqual({ registry: false, first_start: true, keep: false });
    // No sandbox where bubblewrap does not work, none when off, nothing of either without the bridge.
    expect(writeRequest(s, false)?.sandbox).toBeNull();
    expect(writeRequest(run(s, { type: "edit", field: "sandbox", value: { on: false, firstStart: false, keep: false } }), true)?.sandbox).toBeNull();
    const plain = run(s, { type: "edit", field: "wrap", value: false });
    expect([writeRequest(plain, true)?.sandbox, writeRequest(plain, true)?.ask_destructive]).toEqual([null, false]);
    expect(writeRequest(run(s, { type: "edit", field: "askDestructive", value: false }), true)?.ask_destructive).toBe(false);
    expect(writeRequest(start(), true)).toBeNull();
  });

  it("reads KEY=VALUE lines and guesses names from commands", () => {
    expect(keyValues("A=1\n B=2 \n")).toEqual({ A: "1", B: "2" });
    expect(keyValues("=x")).toBe('"=x" is not KEY=VALUE.');
    expect(guessName(["npx", "-y", "@scope/pkg@1.0"])).toBe("pkg");
    expect(guessName(["uvx", "mcp-server-fetch==0.6"])).toBe("mcp-server-fetch");
    expect(guessName([])).toBe("server");
  });
});

describe("following a write", () => {
  const changes = [{ path: "/p/mcp.json" }] as unknown as FileChangeView[];
  const probe = { ok: true } as unknown as NonNullable<AddAnswer["probe"]>;
  const answer = (over: Partial<AddAnswer> = {}) => ({ ok: true as const, value: { kind: "server_add" as const, changes, risks: [], preset: null, probe, network: "taken" as const, ...over } });
  const types = (shown: Array<{ type: string }>) => shown.map((s) => s.type);

  it("shows each step as it happens, then the answer's report and network", () => {
    const f = following("x");
    expect(onStep(f, { step: "network", state: "allowed" })).toEqual([{ type: "first_start", state: "allowed" }]);
    expect(onStep(f, { step: "written", changes })).toEqual([{ type: "files_written", changes }]);
    expect(onStep(f, { step: "first_start" })).toEqual([{ type: "probe", probe: "running" }]);
    expect(onStep(f, { step: "network", state: "taken" })).toEqual([{ type: "first_start", state: "taken" }]);
    // The files were shown already: the answer shows the rest.
    expect(onAnswer(f, answer())).toEqual([{ type: "probe", probe }, { type: "first_start", state: "taken" }]);
  });

  it("shows it all from the answer when it comes before the steps, and no late step undoes it", () => {
    const f = following("x");
    expect(types(onAnswer(f, answer()))).toEqual(["files_written", "probe", "first_start"]);
    expect(onStep(f, { step: "written", changes })).toEqual([]);
    expect(onStep(f, { step: "first_start" })).toEqual([]);
    expect(onStep(f, { step: "network", state: "allowed" })).toEqual([]);
    expect(onStep(f, { step: "network", state: "taken" })).toEqual([]);
  });

  it("says why nothing was written, and still shows a network step that comes after the answer", () => {
    const f = following("x");
    expect(onStep(f, { step: "network", state: "allowed" })).toHaveLength(1);
    expect(onAnswer(f, { ok: false, error: { code: "io", message: "The clients' files were not written: …" } })).toEqual([
      { type: "error", message: "The clients' files were not written: …" },
    ]);
    expect(onStep(f, { step: "network", state: "taken" })).toEqual([{ type: "first_start", state: "taken" }]);
  });

  it("stops showing a running start when the request failed after the files", () => {
    const f = following("x");
    onStep(f, { step: "written", changes });
    onStep(f, { step: "first_start" });
    expect(onAnswer(f, { ok: false, error: { code: "io", message: "The app did not answer: gone" } })).toEqual([
      { type: "probe", probe: null },
      { type: "error", message: "The app did not answer: gone" },
    ]);
  });
});

describe("a remote server by URL", () => {
  const fromUrl = (url: string, headers = "") =>
    run(start(), { type: "edit", field: "source", value: "url" }, { type: "edit", field: "url", value: url }, { type: "edit", field: "headerText", value: headers }, { type: "from_url" });

  it("is named after its host and sends each header from a keychain variable", () => {
    const s = fromUrl("https://api.githubcopilot.com/mcp/", "X-API-Key=sk-1");
    expect([s.step, s.server?.name, s.server?.headers, s.server?.secrets]).toEqual(["review", "githubcopilot", ["X-API-Key=MCP_HEADER_X_API_KEY"], { MCP_HEADER_X_API_KEY: "sk-1" }]);
  });

  it("refuses plain http off this machine and credentials in the URL", () => {
    expect([fromUrl("http://mcp.example.com/mcp").error, fromUrl("https://me:pw@mcp.example.com/mcp").error]).toEqual([
      "Warden reaches a remote server over https only (plain http only to this machine).",
      "The URL holds a user name or password: give credentials as a header instead.",
    ]);
  });

  it("is written through the bridge, without a sandbox or a first start", () => {
    const s = run(fromUrl("http://127.0.0.1:8080/mcp"), { type: "to_clients", preset: null });
    const w = writeRequest(s, true);
    expect([w?.url, w?.command, w?.sandbox, w?.start, w?.wrap]).toEqual(["http://127.0.0.1:8080/mcp", "", null, false, true]);
  });
});

describe("a registry server that lists only remotes", () => {
  it("is reviewed as its URL, each header's value a secret of its variable", () => {
    const remote = {
      server: "io.example/ticket-desk", version: "5.0.1", transport: "streamable-http", url: "https://eu.tickets.example.com/mcp",
      headers: ["Authorization=MCP_HEADER_AUTHORIZATION"],
      env: [{ name: "MCP_HEADER_AUTHORIZATION", required: true, secret: true, value: "Bearer t-1" }],
      warnings: [],
    } as unknown as NonNullable<PlanView["remote"]>;
    const s = run(start(), { type: "planned", view: planView({ entry_name: "ticket-desk", remote }, null), origin: null, rename: true });
    const server = reviewed(s);
    expect([server?.url, server?.headers, server?.secrets, server?.argv]).toEqual([
      "https://eu.tickets.example.com/mcp", ["Authorization=MCP_HEADER_AUTHORIZATION"], { MCP_HEADER_AUTHORIZATION: "Bearer t-1" }, [],
    ]);
  });
});
