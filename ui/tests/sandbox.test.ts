import { describe, expect, it } from "vitest";
import type { HistoryEntry, LimitsReport } from "../src/bindings/api";
import { blocked, expandHome, folderOf, grantable, hostEntry, insideGrant, listed, readOnlyNames, sandboxPlaces, sandboxSettings } from "../src/lib/sandbox";

const denied = (detail: string, ts_ms: number): HistoryEntry =>
  ({ server: "fs", session: null, command: null, event: { ts_ms, kind: "sandbox_denied", detail } }) as unknown as HistoryEntry;

const report = (keys: Record<string, unknown>): LimitsReport =>
  ({ server: "fs", config: null, keys: Object.entries(keys).map(([key, value]) => ({ key, value })) }) as unknown as LimitsReport;

describe("sandboxSettings", () => {
  it("reads the keys in force", () => {
    const s = sandboxSettings(report({ sandbox: "on", sandbox_network: "none", sandbox_write: ["/w"], sandbox_deny: [], hosts: null }));
    expect(s).toEqual({ on: true, network: false, write: ["/w"], deny: [], hosts: null });
  });
});

describe("blocked", () => {
  const settings = { on: true, network: false, write: ["/home/me/notes"], deny: [], hosts: null };

  it("offers each refusal once, newest first, with the folder to grant", () => {
    const list = blocked([denied("/home/me/out/a.txt", 1), denied("network", 2), denied("/home/me/out/a.txt", 3)], settings);
    expect(list).toEqual([
      { kind: "path", ts_ms: 3, path: "/home/me/out/a.txt", folder: "/home/me/out" },
      { kind: "network", ts_ms: 2 },
    ]);
  });

  it("leaves out what the settings allow by now", () => {
    expect(blocked([denied("/home/me/notes/x", 1), denied("network", 2)], { ...settings, network: true })).toEqual([]);
  });
});

describe("folderOf", () => {
  it("is the parent of a file, the folder itself when it ends with /", () => {
    expect(folderOf("/a/b/c.txt")).toBe("/a/b");
    expect(folderOf("/a/b/")).toBe("/a/b");
    expect(folderOf("/x")).toBe("/");
  });
});

describe("grantable", () => {
  const HOME = "/home/me";
  const places = {
    home: HOME,
    hidden: [`${HOME}/.ssh`, `${HOME}/.aws`, `${HOME}/.config/gh`, `${HOME}/.local/share/keyrings`, `${HOME}/.config/warden`, "/run/user/1000", "/srv/private/"],
  };
  const why = (folder: string) => {
    const g = grantable(folder, places);
    return g.ok ? null : g.why;
  };

  it("offers a plain folder inside the home, not as broad", () => {
    expect(grantable(`${HOME}/projects/notes`, places)).toEqual({ ok: true, folder: `${HOME}/projects/notes`, broad: null });
    expect(grantable("/data/exports", places)).toEqual({ ok: true, folder: "/data/exports", broad: null });
  });

  it("offers a folder directly under the home, or a top-level one, and says it is broad", () => {
    expect(grantable(`${HOME}/Downloads`, places)).toEqual({ ok: true, folder: `${HOME}/Downloads`, broad: "a whole folder of your home" });
    for (const f of ["/usr", "/etc", "/var", "/opt"]) expect(grantable(f, places)).toMatchObject({ ok: true, broad: "a top-level folder of the system" });
  });

  it("never offers / or the home folder, nor a folder that holds the home", () => {
    expect(why("/")).toBe("it is the whole file system");
    expect(why(HOME)).toBe("it is your whole home folder");
    expect(why("/home")).toBe(`it holds your home folder (${HOME})`);
  });

  it("never offers a hidden path, a folder inside one, or one that holds one", () => {
    expect(why(`${HOME}/.ssh`)).toBe(`it is ${HOME}/.ssh, which the sandbox hides`);
    expect(why(`${HOME}/.ssh/x`)).toBe(`it is inside ${HOME}/.ssh, which the sandbox hides`);
    expect(why(`${HOME}/.config`)).toBe(`it holds ${HOME}/.config/gh, which the sandbox hides`);
    expect(why("/run")).toBe("it holds /run/user/1000, which the sandbox hides");
    expect(why("/run/user/1000/bus")).toBe("it is inside /run/user/1000, which the sandbox hides");
    // A deny path written with a trailing /.
    expect(why("/srv")).toBe("it holds /srv/private, which the sandbox hides");
    expect(why("/srv/private/a")).toBe("it is inside /srv/private, which the sandbox hides");
    // .ssh-like names that are other folders are fine.
    expect(grantable(`${HOME}/projects/.sshx`, places).ok).toBe(true);
  });

  it("never offers a dot folder of the home, nor one inside it", () => {
    expect(why(`${HOME}/.cache`)).toBe(`it is ${HOME}/.cache, a dot folder of your home (settings and tokens live in those)`);
    expect(why(`${HOME}/.mozilla/firefox`)).toBe(`it is inside ${HOME}/.mozilla, a dot folder of your home (settings and tokens live in those)`);
  });

  it("never offers a path that is not absolute and normalised", () => {
    const plain = "it is not a plain path (it has an empty, `.` or `..` part, or a trailing /)";
    expect(why(`${HOME}/projects/../.ssh`)).toBe(plain);
    expect(why(`${HOME}/./projects`)).toBe(plain);
    expect(why(`${HOME}//projects`)).toBe(plain);
    expect(why(`${HOME}/projects/`)).toBe(plain);
    expect(why("projects/notes")).toBe("it is not an absolute path");
    expect(why("~/projects")).toBe("it is not an absolute path");
    expect(why(`${HOME}/projects\nnotes`)).toBe("it has control characters in its name");
    expect(why(`${HOME}/a\u001b[2Kb`)).toBe("it has control characters in its name");
  });

  it("offers nothing when the supervisor did not say where the home is", () => {
    expect(grantable("/data/exports", { home: null, hidden: [] })).toMatchObject({ ok: false });
  });
});

describe("sandboxPlaces, expandHome", () => {
  it("reads the report, and an older supervisor's as no places", () => {
    expect(sandboxPlaces({ ...report({}), home: "/home/me", sandbox_hidden: ["/home/me/.ssh"] })).toEqual({ home: "/home/me", hidden: ["/home/me/.ssh"] });
    expect(sandboxPlaces(report({}))).toEqual({ home: null, hidden: [] });
  });

  it("expands ~ as config.toml does", () => {
    expect(expandHome("~/notes", "/home/me")).toBe("/home/me/notes");
    expect(expandHome("~", "/home/me")).toBe("/home/me");
    expect(expandHome("~other/x", "/home/me")).toBe("~other/x");
    expect(expandHome("~/notes", null)).toBe("~/notes");
  });

  it("refuses a typed grant of the home, written ~ or in full, as the Add folder form checks it", () => {
    const places = { home: "/home/me", hidden: [] };
    for (const typed of ["~", "/home/me"]) expect(grantable(expandHome(typed, places.home), places)).toMatchObject({ ok: false, why: "it is your whole home folder" });
  });
});

describe("what stays read-only inside a grant", () => {
  const withGrants = (grants: Array<{ grant: string; read_only: string[]; git: boolean }>): LimitsReport =>
    ({ ...report({}), home: "/home/me", sandbox_read_only_names: [".git/config", ".vscode"], sandbox_grants: grants }) as LimitsReport;
  const app = { grant: "/home/me/projects/app", read_only: ["/home/me/projects/app/.git/config", "/home/me/projects/app/.vscode"], git: true };

  it("finds the report's grant for one written ~/…, with a trailing /, or in full, its names relative to it", () => {
    const r = withGrants([app]);
    for (const written of ["~/projects/app", "~/projects/app/", "/home/me/projects/app"])
      expect(insideGrant(r, written, "/home/me")).toEqual({ readOnly: [".git/config", ".vscode"], git: true });
  });

  it("shows a name resolved outside the grant (a symlink) as its whole path", () => {
    const r = withGrants([{ grant: "/w", read_only: ["/w/.vscode", "/srv/shared/vscode"], git: false }]);
    expect(insideGrant(r, "/w", "/home/me")).toEqual({ readOnly: [".vscode", "/srv/shared/vscode"], git: false });
  });

  it("says nothing of a grant the report does not list (missing, or from an older supervisor)", () => {
    expect(insideGrant(withGrants([app]), "~/projects/other", "/home/me")).toBeNull();
    expect(insideGrant(withGrants([app]), "/home/me/projects/app-2", "/home/me")).toBeNull();
    expect(insideGrant(report({}), "/home/me/projects/app", "/home/me")).toBeNull();
  });

  it("reads the names, and an older supervisor's as none", () => {
    expect(readOnlyNames(withGrants([]))).toEqual([".git/config", ".vscode"]);
    expect(readOnlyNames(report({}))).toEqual([]);
  });
});

describe("network by name", () => {
  const refused = (host: string, port: number, ts_ms: number): HistoryEntry => ({
    server: "s",
    event: { ts_ms, kind: "network_denied", host, port, detail: `${host}:${port}` },
  });
  const settings = { on: true, network: false, write: [], deny: [], hosts: ["api.github.com", "*.example.org", "127.0.0.1:8080"] };

  it("names a destination the way the list does", () => {
    expect(hostEntry("api.github.com", 443)).toBe("api.github.com");
    expect(hostEntry("x.test", 8443)).toBe("x.test:8443");
    expect(hostEntry("::1", 9000)).toBe("[::1]:9000");
  });

  it("matches names, wildcards and ports as the proxy does", () => {
    expect(listed(settings.hosts, "API.github.com", 443)).toBe(true);
    expect(listed(settings.hosts, "api.github.com", 22)).toBe(false);
    expect(listed(settings.hosts, "cdn.example.org", 80)).toBe(true);
    expect(listed(settings.hosts, "example.org", 80)).toBe(false);
    expect(listed(settings.hosts, "127.0.0.1", 8080)).toBe(true);
    expect(listed(["[::1]:9000"], "::1", 9000)).toBe(true);
  });

  it("offers each destination not on the list once, newest first, and no whole network", () => {
    const timeline = [refused("evil.test", 443, 1), refused("api.github.com", 443, 2), refused("evil.test", 443, 3), { server: "s", event: { ts_ms: 4, kind: "sandbox_denied", detail: "network" } }];
    expect(blocked(timeline, settings)).toEqual([{ kind: "host", ts_ms: 3, host: "evil.test", port: 443, entry: "evil.test" }]);
  });
});
