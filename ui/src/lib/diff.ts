// Unified diffs (client_edit, restore) split into lines a view can colour.

export type DiffLineKind = "file" | "hunk" | "add" | "del" | "ctx" | "meta";

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
}

export function classifyLine(line: string): DiffLineKind {
  if (line.startsWith("+++ ") || line.startsWith("--- ") || line === "+++" || line === "---") {
    return "file";
  }
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  if (line.startsWith("\\")) return "meta";
  return "ctx";
}

const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;

/**
 * Lines of a unified diff, classified; the trailing newline does not make an empty line.
 * Inside a hunk (as many lines as its header counts) every line is content, so a removed
 * line that reads "-- x" is not taken for a file header.
 */
export function parseDiff(diff: string): DiffLine[] {
  if (diff === "") return [];
  const lines = diff.replace(/\r\n/g, "\n").split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  let oldLeft = 0;
  let newLeft = 0;
  return lines.map((text): DiffLine => {
    if (oldLeft > 0 || newLeft > 0) {
      if (text.startsWith("+")) {
        newLeft--;
        return { kind: "add", text };
      }
      if (text.startsWith("-")) {
        oldLeft--;
        return { kind: "del", text };
      }
      if (text.startsWith("\\")) return { kind: "meta", text };
      oldLeft--;
      newLeft--;
      return { kind: "ctx", text };
    }
    const m = HUNK.exec(text);
    if (m) {
      oldLeft = m[1] === undefined ? 1 : Number(m[1]);
      newLeft = m[2] === undefined ? 1 : Number(m[2]);
      return { kind: "hunk", text };
    }
    return { kind: classifyLine(text), text };
  });
}

/** How many lines a diff adds and removes. */
export function diffStat(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of parseDiff(diff)) {
    if (l.kind === "add") added++;
    if (l.kind === "del") removed++;
  }
  return { added, removed };
}
