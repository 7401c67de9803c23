import type { Signin } from "../bindings/app";
import { formatMs } from "./format";

/** How a sign-in reads: signed in (until when), expired, or none yet. */
export function signinText(s: Signin, nowMs: number): string {
  const at = s.issuer ? ` at ${s.issuer}` : "";
  switch (s.signin) {
    case "signed_in":
      return s.expires_at === null
        ? `Signed in${at}`
        : `Signed in${at}, expires in ${formatMs(Math.max(0, s.expires_at * 1000 - nowMs))}${s.refreshable ? " (renewed without the browser)" : ""}`;
    case "expired":
      return s.refreshable ? `Expired; renewed without the browser at the next call${at}` : "Expired: needs sign-in";
    case "none":
      return "Needs sign-in: the next call opens the browser, or sign in now";
    case "unknown":
      return "Unknown: the OS keychain did not answer";
  }
}
