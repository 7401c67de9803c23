// The Add flow's sandbox choices (docs/sandbox.md): on where bubblewrap works, the network
// off unless asked for, for the first start only or kept on.
import type { FirstStartNetwork as Network } from "../bindings/api";
import type { SandboxChoice } from "../lib/addFlow";

/** What the sandbox does, claiming no more than docs/sandbox.md. */
export const SANDBOX_HIDES =
  "~/.ssh, ~/.aws, ~/.gnupg, ~/.kube, ~/.docker, ~/.netrc, ~/.config/gh, ~/.local/share/keyrings, Warden's own folders and the session's runtime folder";

export function AddSandboxChoices(props: { works: boolean; wrap: boolean; preset: string | null; value: SandboxChoice; onChange: (v: SandboxChoice) => void }) {
  const { value: v, onChange } = props;
  if (!props.works)
    return (
      <p class="muted small" data-testid="no-sandbox">
        No sandbox here (bubblewrap is missing or may not create namespaces; docs/sandbox.md says how to get one).
      </p>
    );
  const on = v.on && props.wrap;
  return (
    <>
      <label class="check">
        <input type="checkbox" data-testid="add-sandbox" checked={on} disabled={!props.wrap} onChange={(e) => onChange({ ...v, on: e.currentTarget.checked })} />
        Run it in a sandbox: it cannot read {SANDBOX_HIDES}; everything else it can read (your projects, shell history, browser profiles…) but not
        change, except its package cache and a private /tmp; no network at all unless you allow it below
      </label>
      {on && (
        <>
          {props.preset && (
            <label class="check indent">
              <input
                type="checkbox"
                data-testid="add-sandbox-registry"
                checked={v.registry !== false && !v.keep}
                disabled={v.keep}
                onChange={(e) => onChange({ ...v, registry: e.currentTarget.checked })}
              />
              Let it reach its package registry only (<code>{props.preset}</code>, and the mirror your runner's configuration names), through Warden's
              proxy, to download and update its package: nowhere else
            </label>
          )}
          <label class="check indent">
            <input type="checkbox" data-testid="add-sandbox-first-start" checked={v.firstStart} disabled={v.keep || (props.preset !== null && v.registry !== false)} onChange={(e) => onChange({ ...v, firstStart: e.currentTarget.checked })} />
            Allow the network for the first start only (it downloads the package); taken away once that start is over
          </label>
          <label class="check indent">
            <input type="checkbox" data-testid="add-sandbox-network" checked={v.keep} onChange={(e) => onChange({ ...v, keep: e.currentTarget.checked })} />
            Keep the network on (this server calls an API): it may then connect anywhere, and so send anywhere what it can read
          </label>
        </>
      )}
    </>
  );
}

/** The result page's line on the first start's network. */
export function FirstStartNetwork(props: { state: Network | null }) {
  const { state } = props;
  if (state === null) return null;
  if (state === "allowed")
    return (
      <p class="muted small" data-testid="add-first-start-network" data-state="allowed">
        The network is allowed for this first start; it is taken away when the start is over.
      </p>
    );
  return (
    <p class="small" data-testid="add-first-start-network" data-state="taken">
      The first start is over, and its network with it: that start alone had it, and config.toml keeps{" "}
      <code>sandbox_network = "none"</code>, so no other start gets it.
    </p>
  );
}
