import { describe, expect, it } from "vitest";
import type { ClientFile, ServerEntry } from "../src/bindings/api";
import { fileState } from "../src/lib/clients";

const wrapped = (name: string): ServerEntry => ({ name, scope: [], env_keys: [], risks: [], reverted: false, enabled: true, state: "wrapped", bridge: "/usr/bin/warden", server: null, command: "npx", args: [] });
const unwrapped = (name: string): ServerEntry => ({ name, scope: [], env_keys: [], risks: [], reverted: false, enabled: true, state: "unwrapped", command: "npx", args: [] });
const skipped = (name: string): ServerEntry => ({ name, scope: [], env_keys: [], risks: [], reverted: false, enabled: true, state: "skipped", reason: "an HTTP server" });

const file = (over: Partial<ClientFile>): ClientFile => ({
  client: "cursor",
  client_name: "Cursor",
  path: "/home/u/.cursor/mcp.json",
  format: "json",
  project: null,
  active: true,
  exists: true,
  servers: [],
  kept_aside: [],
  error: null,
  notices: [],
  given_up: false,
  ...over,
});

describe("fileState", () => {
  it("says how much of a file runs through Warden", () => {
    expect(fileState(file({ servers: [wrapped("a"), wrapped("b"), skipped("web")] })).kind).toBe("wrapped");
    expect(fileState(file({ servers: [unwrapped("a")] })).kind).toBe("unwrapped");
    expect(fileState(file({ servers: [skipped("web")] })).kind).toBe("none");
    const partly = fileState(file({ servers: [wrapped("a"), unwrapped("b"), unwrapped("c")] }));
    expect(partly).toMatchObject({ kind: "partly", label: "partly wrapped" });
    expect(partly.detail).toContain("1 of 3");
  });

  it("puts what keeps Warden out before the servers", () => {
    expect(fileState(file({ exists: false, servers: [unwrapped("a")] })).kind).toBe("missing");
    const bad = fileState(file({ error: "line 3, column 7: expected `,`", servers: [unwrapped("a")] }));
    expect(bad.kind).toBe("malformed");
    expect(bad.detail).toContain("line 3, column 7");
    expect(fileState(file({ given_up: true, servers: [wrapped("a")] })).kind).toBe("given_up");
  });

  it("names the servers a client put back since Warden wrapped them", () => {
    const changed = fileState(file({ servers: [wrapped("a"), { ...unwrapped("b"), reverted: true }, unwrapped("c")] }));
    expect(changed.kind).toBe("changed");
    expect(changed.detail).toContain("Warden had wrapped b;");
  });
});
