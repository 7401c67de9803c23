// The Add flow's clients step: which clients' files get the entry, through the bridge or not,
// and the sandbox and the destructive-tools question a wrapped entry gets.
import type { Dispatch } from "preact/hooks";
import type { ClientId } from "../bindings/api";
import type { AddAction, AddState, Field } from "../lib/addFlow";
import { AddSandboxChoices } from "./AddSandbox";

export function AddClients(props: {
  state: AddState;
  dispatch: Dispatch<AddAction>;
  clients: Array<{ client: ClientId; name: string }>;
  sandboxWorks: boolean;
}) {
  const s = props.state;
  const edit = <K extends Field>(field: K, value: AddState[K]) => props.dispatch({ type: "edit", field, value } as AddAction);
  return (
    <fieldset class="clients-choice" data-testid="choose-clients">
      <legend>Add {s.server?.name} to</legend>
      {props.clients.length === 0 && <p class="muted">Warden found no client on this computer.</p>}
      {props.clients.map((c) => (
        <label key={c.client} class="check">
          <input
            type="checkbox"
            data-testid={`client-${c.client}`}
            checked={s.chosen.includes(c.client)}
            onChange={(e) => props.dispatch({ type: "client", client: c.client, on: e.currentTarget.checked })}
          />
          {c.name}
        </label>
      ))}
      <label class="check">
        <input type="checkbox" data-testid="wrap" checked={s.wrap} disabled={Boolean(s.server?.url)} onChange={(e) => edit("wrap", e.currentTarget.checked)} />
        Run it through Warden's bridge (timeouts, restarts, logs; needed for secrets in the keychain)
      </label>
      {!s.server?.url && <AddSandboxChoices works={props.sandboxWorks} wrap={s.wrap} preset={s.preset} value={s.sandbox} onChange={(v) => edit("sandbox", v)} />}
      <label class="check">
        <input type="checkbox" data-testid="add-ask-destructive" checked={s.wrap && s.askDestructive} disabled={!s.wrap} onChange={(e) => edit("askDestructive", e.currentTarget.checked)} />
        Ask me before it runs a tool that may change or delete things (<code>tools_ask = ["@destructive"]</code>: in the client's prompt where it
        has one, else on top of Warden's window and with <code>warden approvals</code>)
      </label>
    </fieldset>
  );
}
