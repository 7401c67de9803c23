import { useEffect, useState } from "preact/hooks";
import type { Signin } from "../bindings/app";
import { printableLine } from "../lib/format";
import { signinText } from "../lib/signin";
import { askApp } from "../lib/tauri";
import { unwrap, useAction } from "../lib/useAction";
import { ErrorText } from "./common";

/**
 * A remote server's URL and sign-in (docs/remote.md), when the clients' files run it through
 * `warden bridge --remote`: Sign in opens the browser (the host runs `warden auth login`, and
 * every client then uses the sign-in), Sign out revokes the tokens where the server offers it.
 * Nothing is shown for a local server.
 */
export function SigninSection({ server }: { server: string }) {
  const [remote, setRemote] = useState<Signin | null>(null);
  const [said, setSaid] = useState<string | null>(null);
  const action = useAction();
  const load = () =>
    void askApp({ op: "signins" }).then((r) => {
      if (r.ok) setRemote(r.value.servers.find((s) => s.name === server) ?? null);
    });
  useEffect(load, [server]);
  if (remote === null) return null;
  const sign = (out: boolean) =>
    action.run(
      async () => {
        setSaid(null);
        setSaid(unwrap(await askApp({ op: "sign_in", server, out })).message);
        load();
      },
      { label: out ? "Signing out" : "Waiting for the sign-in in the browser" },
    );
  return (
    <section class="card signin" data-testid="signin" aria-labelledby="signin-title">
      <div class="card-head">
        <h2 id="signin-title">Remote server</h2>
      </div>
      <dl class="facts">
        <div class="wide"><dt>URL</dt><dd><code data-testid="remote-url">{printableLine(remote.url)}</code></dd></div>
        <div><dt>Clients</dt><dd>{remote.clients.join(", ")}</dd></div>
        <div class="wide"><dt>Sign-in</dt><dd data-testid="signin-state" data-state={remote.signin}>{printableLine(signinText(remote, Date.now()))}</dd></div>
      </dl>
      <div class="actions" role="group" aria-label="Sign-in">
        <button type="button" data-testid="sign-in" disabled={action.busy} onClick={() => void sign(false)} title="Open the browser to sign in; every client uses the sign-in">
          Sign in
        </button>
        <button type="button" class="secondary" data-testid="sign-out" disabled={action.busy || remote.signin === "none"} onClick={() => void sign(true)} title="Revoke the tokens where the server offers it, and forget them">
          Sign out
        </button>
        {action.running && <span class="muted" role="status">{action.running}…</span>}
      </div>
      {said && <p class="small" data-testid="signin-said">{printableLine(said)}</p>}
      {action.error && <ErrorText message={action.error} testid="signin-error" />}
    </section>
  );
}
