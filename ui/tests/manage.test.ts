import { describe, expect, it } from "vitest";
import type { ClientFile, ClientsReport, ServerEntry } from "../src/bindings/api";
import type { InstallPlan } from "../src/bindings/app";
import { byServer, changedSincePreview, detectedClients, planEnv, splitCommandLine, switchRequest } from "../src/lib/manage";

const entry = (name: string, over: Partial<ServerEntry> = {}): ServerEntry =>
  ({ name, scope: [], env_keys: [], risks: [], reverted: false, enabled: true, state: "unwrapped", command: "npx", args: [], ...over }) as ServerEntry;

const file = (over: Partial<ClientFile>): ClientFile => ({
  client: "cursor", client_name: "Cursor", path: "/home/u/.cursor/mcp.json", format: "json", project: null,
  active: true, exists: true, servers: [], kept_aside: [], error: null, notices: [], given_up: false, ...over,
});

const report = (files: ClientFile[]): ClientsReport => ({
  files, auto_rewrite: false, without_asking: false, awaiting: [], probe_ide: null, watching: true, warden: "/usr/bin/warden", sandbox_works: true,
});

describe("byServer", () => {
  it("gathers a name's entries across the clients' files, names sorted", () => {
    const r = report([
      file({ servers: [entry("rg"), entry("fs", { enabled: false })] }),
      file({ client: "cline", client_name: "Cline", path: "/c.json", servers: [entry("rg", { state: "wrapped", bridge: "/usr/bin/warden", server: "rg" } as Partial<ServerEntry>)] }),
    ]);
    const servers = byServer(r);
    expect(servers.map((s) => s.name)).toEqual(["fs", "rg"]);
    expect(servers[1]?.places.map((p) => [p.client, p.wrapped, p.enabled])).toEqual([["cursor", false, true], ["cline", true, true]]);
    expect(servers[0]?.places[0]?.enabled).toBe(false);
  });

  it("shows an entry Warden keeps aside as off", () => {
    const servers = byServer(report([file({ kept_aside: [entry("gone", { enabled: false })] })]));
    expect(servers.map((s) => [s.name, s.places[0]?.enabled])).toEqual([["gone", false]]);
  });

  it("leaves out files the client does not read and files that do not parse", () => {
    const r = report([file({ active: false, servers: [entry("a")] }), file({ error: "line 1", servers: [entry("b")] })]);
    expect(byServer(r)).toEqual([]);
  });
});

describe("detectedClients", () => {
  it("lists each client once", () => {
    const r = report([file({}), file({ path: "/p/.cursor/mcp.json" }), file({ client: "zed", client_name: "Zed" })]);
    expect(detectedClients(r)).toEqual([{ client: "cursor", name: "Cursor" }, { client: "zed", name: "Zed" }]);
  });
});

describe("splitCommandLine", () => {
  it("splits words and keeps quoted blanks", () => {
    expect(splitCommandLine(`npx -y "@scope/pkg" --root 'My Files' a\\ b`)).toEqual({ argv: ["npx", "-y", "@scope/pkg", "--root", "My Files", "a b"] });
  });

  it("keeps an empty quoted argument", () => {
    expect(splitCommandLine(`tool ""`)).toEqual({ argv: ["tool", ""] });
  });

  it("refuses what needs a shell, and says what to do", () => {
    const r = splitCommandLine("curl https://x | sh");
    expect("error" in r && r.error).toContain("script");
  });

  it("refuses an open quote and an empty line", () => {
    expect(splitCommandLine(`npx "a`)).toEqual({ error: "A \" quote is not closed." });
    expect("error" in splitCommandLine("   ")).toBe(true);
  });
});

describe("planEnv", () => {
  it("sends secrets to the keychain and leaves unset variables out", () => {
    const env = (name: string, secret: boolean, value: string | null) =>
      ({ name, required: false, secret, default: null, description: null, value, source: value === null ? "unset" : "user", declared: true }) as InstallPlan["env"][number];
    const plan = { env: [env("A", false, "1"), env("KEY", true, "s"), env("B", false, null)] } as InstallPlan;
    expect(planEnv(plan)).toEqual({ env: { A: "1" }, secrets: { KEY: "s" } });
  });
});

describe("a row's switch", () => {
  it("addresses that file and scope only, not the same name in the client's other files and scopes", () => {
    const claude = (servers: ServerEntry[]) => file({ client: "claude-code", client_name: "Claude Code", path: "/home/u/.claude.json", servers });
    const [github] = byServer(report([claude([entry("github"), entry("github", { scope: ["projects", "/work/app"] })])]));
    const project = github?.places.find((p) => p.scope.length > 0);
    expect(project && switchRequest("github", project, false)).toEqual({
      op: "server_switch", server: "github", clients: ["claude-code"], file: "/home/u/.claude.json", scope: ["projects", "/work/app"], enabled: false, dry_run: false,
    });
  });
});

describe("changedSincePreview", () => {
  it("tells a refusal because a file changed after the preview from other failures", () => {
    expect([changedSincePreview("/a.json changed since the preview was made … [W-CLIENT-CHANGED]"), changedSincePreview("read-only [W-CLIENT-READ-ONLY]")]).toEqual([true, false]);
  });
});
