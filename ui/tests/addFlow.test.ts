// The Add flow's reducer: each step's move, and what it refuses, without a window.
import { describe, expect, it } from "vitest";
import type { InstallPlan, PlanView } from "../src/bindings/app";
import { type AddAction, type AddState, addReducer, addRequest, guessName, initialAddState, keyValues, planRequest, reviewed } from "../src/lib/addFlow";

const run = (s: AddState, ...actions: AddAction[]) => actions.reduce(addReducer, s);
const start = () => initialAddState(["cursor", "claude-code"], true);

function planView(over: Partial<PlanView> = {}, plan: Partial<InstallPlan> | null = {}): PlanView {
  return {
    name: "io.github.acme/weather", title: "Weather", version: "1.2.0", description: "", namespace: "io.github.acme",
    repository: null, website: null, entry_name: "weather", versions: ["1.2.0", "1.1.0"], missing: [], refused: null,
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
    expect(run(missing, { type: "to_clients", taken: new Set() }).step).toBe("review");
  });

  it("moves to Clients only with a name no entry has and every client's format takes", () => {
    const s = run(start(), { type: "planned", view: planView(), origin: null, rename: true });
    const taken = run(s, { type: "to_clients", taken: new Set(["weather"]) });
    expect([taken.step, taken.error]).toEqual(["review", "A server named weather exists already: choose another name."]);
    const bad = run(s, { type: "edit", field: "asName", value: "we ather" }, { type: "to_clients", taken: new Set() });
    expect(bad.step).toBe("review");
    expect(bad.error).toContain("Use letters");
    const ok = run(s, { type: "to_clients", taken: new Set(["other"]) });
    expect([ok.step, ok.error, ok.server?.name]).toEqual(["clients", null, "weather"]);
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

  it("reads KEY=VALUE lines and guesses names from commands", () => {
    expect(keyValues("A=1\n B=2 \n")).toEqual({ A: "1", B: "2" });
    expect(keyValues("=x")).toBe('"=x" is not KEY=VALUE.');
    expect(guessName(["npx", "-y", "@scope/pkg@1.0"])).toBe("pkg");
    expect(guessName(["uvx", "mcp-server-fetch==0.6"])).toBe("mcp-server-fetch");
    expect(guessName([])).toBe("server");
  });
});
