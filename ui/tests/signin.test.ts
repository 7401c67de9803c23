import { describe, expect, it } from "vitest";
import type { Signin } from "../src/bindings/app";
import { signinText } from "../src/lib/signin";

const base: Signin = { name: "gh", url: "https://mcp.example/mcp", clients: ["cursor"], signin: "signed_in", issuer: "https://auth.example", expires_at: 3600, refreshable: true };

describe("signinText", () => {
  it("says when a sign-in expires and that it renews by itself", () => {
    expect(signinText(base, 0)).toBe("Signed in at https://auth.example, expires in 1 h (renewed without the browser)");
  });
  it("tells an expired sign-in that renews from one that needs the browser", () => {
    expect([signinText({ ...base, signin: "expired" }, 0), signinText({ ...base, signin: "expired", refreshable: false }, 0)]).toEqual([
      "Expired; renewed without the browser at the next call at https://auth.example",
      "Expired: needs sign-in",
    ]);
  });
});
