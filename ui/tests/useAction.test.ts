// What `useAction` does around a component's action: busy meanwhile, the failure recorded
// (a request's message as it is), the error cleared by the next success.
import { describe, expect, it } from "vitest";
import { Failed, failureMessage, runAction, unwrap } from "../src/lib/useAction";

/** `runAction` with its states logged. */
async function logged(f: () => Promise<unknown>, onError?: (m: string) => void) {
  const log: Array<[string, string | null]> = [];
  await runAction(f, { label: "Save", ...(onError ? { onError } : {}) }, { running: (l) => log.push(["running", l]), error: (e) => log.push(["error", e]) });
  return log;
}

describe("useAction", () => {
  it("unwraps an answer, and throws a failure's message as it is", () => {
    expect(unwrap({ ok: true, value: 3 })).toBe(3);
    expect(() => unwrap({ ok: false, error: { code: "io", message: "no socket" } })).toThrow(Failed);
    expect(failureMessage(new Failed("no socket"))).toBe("no socket");
    expect(failureMessage(new Error("bug"))).toBe("Error: bug");
  });

  it("is busy while the action runs, and clears the error when it succeeds", async () => {
    expect(await logged(async () => undefined)).toEqual([["running", "Save"], ["error", null], ["running", null]]);
  });

  it("records what failed, or hands it to onError and leaves the error alone", async () => {
    const fail = async () => unwrap({ ok: false, error: { message: "read-only file" } });
    expect(await logged(fail)).toEqual([["running", "Save"], ["error", "read-only file"], ["running", null]]);
    const seen: string[] = [];
    expect(await logged(fail, (m) => seen.push(m))).toEqual([["running", "Save"], ["running", null]]);
    expect(seen).toEqual(["read-only file"]);
  });
});
