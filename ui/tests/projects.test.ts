import { describe, expect, it } from "vitest";
import type { FileChangeView, Overview, SetAnswer, Starts } from "../src/bindings/api";
import { applyRequest, formProblem, removableSets, removeRequest, setFiles, skippedLine, startsText } from "../src/lib/projects";

const change = (over: Partial<FileChangeView> = {}): FileChangeView => ({
  client: "cursor", path: "/p/.cursor/mcp.json", changed: ["github"], skipped: [], diff: "+x\n", written: false, backup: null,
  secrets: [], notices: [], error: null, ...over,
});

const answer = (over: Partial<SetAnswer> = {}): SetAnswer => ({ files: [], skipped: [], plan: [], warning: null, ...over });

describe("applyRequest", () => {
  it("previews without a plan and writes with the preview's plan", () => {
    const form = { set: "web", project: " /p ", clients: ["cursor" as const] };
    const plan = [{ path: "/p/.cursor/mcp.json", fingerprint: "f1", changed: ["github"] }];
    expect(applyRequest(form, null)).toEqual({ op: "set_apply", set: "web", project: "/p", clients: ["cursor"], plan: null, dry_run: true });
    expect(applyRequest(form, plan)).toMatchObject({ plan, dry_run: false });
  });

  it("sends no project for an empty folder: the user files", () => {
    expect(applyRequest({ set: "web", project: "  ", clients: ["codex"] }, null).project).toBeNull();
  });
});

describe("removeRequest", () => {
  it("takes the set out of every client's files of the project", () => {
    expect(removeRequest("web", "/p", null)).toEqual({ op: "set_remove", set: "web", project: "/p", clients: [], plan: null, dry_run: true });
  });
});

describe("formProblem", () => {
  it("asks for a client before a preview", () => {
    expect(formProblem({ set: "web", project: "/p", clients: [] })).toBe("Choose at least one client.");
  });
});

describe("setFiles", () => {
  it("shows the set's servers already in a file as left alone, and a new file as created", () => {
    const shown = setFiles(answer({ files: [{ change: change(), kept: ["postgres"], whole_file: true }] }), true, true);
    expect(shown.map((f) => [f.change.skipped, f.whole])).toEqual([
      [[{ name: "postgres", reason: "already there, left as it is" }], "A new file: it would be created."],
    ]);
  });

  it("says a removed file Warden created is deleted", () => {
    const shown = setFiles(answer({ files: [{ change: change({ written: true }), kept: [], whole_file: true }] }), false, false);
    expect(shown[0]?.whole).toBe("Deleted: Warden had created it.");
  });
});

describe("skippedLine", () => {
  it("names the clients without a project file", () => {
    expect(skippedLine(answer({ skipped: ["claude-desktop", "cline"] }), (c) => c.toUpperCase())).toBe(
      "Skipped (no project file Warden knows of): CLAUDE-DESKTOP, CLINE.",
    );
  });
});

describe("startsText", () => {
  it("says where an entry comes from, whether it goes through Warden, and when it is off", () => {
    const s: Starts = { name: "gh", server: "github", wrapped: false, enabled: false, from: "local" };
    expect(startsText(s)).toBe("gh (github): its settings for this project, not through Warden, off");
  });
});

describe("removableSets", () => {
  it("offers Remove only for the sets whose apply added entries in that project", () => {
    const applied = (project: string | null, by_warden: boolean) => ({ client: "cursor" as const, file: "/f", project, present: [], missing: [], by_warden });
    const overview: Overview = {
      projects: [],
      sets: [
        { name: "web", servers: [], unknown: [], applied: [applied("/p", true)] },
        { name: "docs", servers: [], unknown: [], applied: [applied("/p", false)] },
        { name: "db", servers: [], unknown: [], applied: [applied(null, true)] },
      ],
    };
    expect(removableSets(overview, "/p")).toEqual(["web"]);
  });
});
