// What one IDE config file looks like to Warden, as one word and a sentence: the Clients
// page's badge per file. Pure, so each rule is unit-tested (tests/clients.test.ts).
import type { ClientFile } from "../bindings/api";

export type FileStateKind = "missing" | "malformed" | "given_up" | "changed" | "none" | "wrapped" | "partly" | "unwrapped";

export interface FileState {
  kind: FileStateKind;
  label: string;
  /** What it means and what to do. */
  detail: string;
}

export function fileState(f: ClientFile): FileState {
  if (!f.exists) return { kind: "missing", label: "no file", detail: "The client has no config file here yet; Warden watches for one." };
  if (f.error) return { kind: "malformed", label: "cannot be read", detail: `Warden leaves it alone until it can be read: ${f.error}` };
  if (f.given_up) {
    return {
      kind: "given_up",
      label: "left alone: the client keeps undoing",
      detail: "The client kept undoing Warden's edits, so the watcher leaves this file alone; wrap again by hand after closing the client.",
    };
  }
  const reverted = f.servers.filter((s) => s.reverted).map((s) => s.name);
  if (reverted.length > 0) {
    return {
      kind: "changed",
      label: "changed by the client",
      detail: `Warden had wrapped ${reverted.join(", ")}; the client (or someone) put the original command back, so ${reverted.length === 1 ? "it runs" : "they run"} without Warden. Re-apply wraps ${reverted.length === 1 ? "it" : "them"} again (you see the change first).`,
    };
  }
  const wrapped = f.servers.filter((s) => s.state === "wrapped").length;
  const unwrapped = f.servers.filter((s) => s.state === "unwrapped").length;
  if (wrapped + unwrapped === 0) return { kind: "none", label: "no stdio servers", detail: "Nothing here that Warden can wrap." };
  if (unwrapped === 0) return { kind: "wrapped", label: "protected", detail: wrapped === 1 ? "Its stdio server runs through Warden." : `All ${wrapped} stdio servers run through Warden.` };
  if (wrapped === 0) {
    return { kind: "unwrapped", label: "not wrapped", detail: `${unwrapped} stdio server${unwrapped === 1 ? "" : "s"} run without Warden: Wrap all protects them.` };
  }
  return {
    kind: "partly",
    label: "partly wrapped",
    detail: `${wrapped} of ${wrapped + unwrapped} stdio servers run through Warden (a new one, or one the client changed back); Wrap all protects the rest.`,
  };
}
