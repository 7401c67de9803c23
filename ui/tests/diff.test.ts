import { describe, expect, it } from "vitest";
import { classifyLine, diffStat, parseDiff } from "../src/lib/diff";

const DIFF = `--- /home/me/.cursor/mcp.json
+++ /home/me/.cursor/mcp.json
@@ -1,5 +1,5 @@
 {
   "mcpServers": {
-    "ripgrep": { "command": "npx", "args": ["-y", "mcp-ripgrep"] }
+    "ripgrep": { "command": "/usr/bin/warden", "args": ["bridge", "--server", "ripgrep", "--", "npx", "-y", "mcp-ripgrep"] }
   }
 }
\\ No newline at end of file
`;

describe("diff", () => {
  it("classifies single lines", () => {
    expect(classifyLine("+++ b/x")).toBe("file");
    expect(classifyLine("--- a/x")).toBe("file");
    expect(classifyLine("@@ -1 +1 @@")).toBe("hunk");
    expect(classifyLine("+a")).toBe("add");
    expect(classifyLine("-a")).toBe("del");
    expect(classifyLine(" a")).toBe("ctx");
    expect(classifyLine("\\ No newline at end of file")).toBe("meta");
  });

  it("classifies a whole diff", () => {
    expect(parseDiff(DIFF).map((l) => l.kind)).toEqual([
      "file", "file", "hunk", "ctx", "ctx", "del", "add", "ctx", "ctx", "meta",
    ]);
    expect(diffStat(DIFF)).toEqual({ added: 1, removed: 1 });
  });

  it("takes lines inside a hunk as content even when they look like headers", () => {
    const d = "--- a\n+++ b\n@@ -1,2 +1,2 @@\n--- x\n+++ y\n ctx\n--- c\n+++ c\n@@ -3 +3 @@\n-old\n+new\n";
    expect(parseDiff(d).map((l) => l.kind)).toEqual([
      "file", "file", "hunk", "del", "add", "ctx", "file", "file", "hunk", "del", "add",
    ]);
  });

  it("an empty diff has no lines", () => {
    expect(parseDiff("")).toEqual([]);
    expect(diffStat("")).toEqual({ added: 0, removed: 0 });
  });
});
