// The Add flow: find a server (the MCP Registry, a command, or a server.json), read what it
// will run (the consent screen), give its values and secrets, choose the clients, see each
// file's exact change, write, and see whether it starts. The state and every move between
// steps are `addReducer`'s (src/lib/addFlow.ts); this component asks and hands it the answers,
// and each step is its own component (AddFind, AddReview, AddClients, AddResult).
import { useReducer } from "preact/hooks";
import type { ClientId } from "../bindings/api";
import { addReducer, addRequest, initialAddState, planRequest, reviewed, STEPS } from "../lib/addFlow";
import { bridgeArgv } from "../lib/manage";
import { runnerPreset, writeSandboxFirst } from "../lib/sandbox";
import { ask, askRegistry } from "../lib/tauri";
import { AddClients } from "./AddClients";
import { AddFind } from "./AddFind";
import { AddChanges, AddDone } from "./AddResult";
import { AddReview } from "./AddReview";
import { FirstStartNetwork } from "./AddSandbox";
import { changeResult } from "./Changes";
import { Dialog } from "./Dialog";
import { ErrorText } from "./common";

export function AddServer(props: {
  clients: Array<{ client: ClientId; name: string }>;
  warden: string | null;
  /** Whether bubblewrap works here: the sandbox is then offered, on, without network. */
  sandboxWorks: boolean;
  taken: Set<string>;
  onClose: () => void;
  onWritten: () => void;
}) {
  const [state, dispatch] = useReducer(addReducer, undefined, () =>
    initialAddState(
      props.clients.map((c) => c.client),
      props.sandboxWorks,
    ),
  );
  const { step, busy } = state;

  const task = async (f: () => Promise<void>) => {
    dispatch({ type: "busy", on: true });
    try {
      await f();
    } catch (e) {
      dispatch({ type: "error", message: String(e) });
    } finally {
      dispatch({ type: "busy", on: false });
    }
  };

  const search = () =>
    task(async () => {
      const r = await askRegistry({ op: "search", term: state.term });
      dispatch(r.ok ? { type: "found", servers: r.value.servers } : { type: "error", message: r.error.message });
    });

  /** Plans again with the values given so far; the view says what is still missing. */
  const replan = (over: { name?: string; version?: string | null; values?: Record<string, string>; entry?: string }) =>
    task(async () => {
      const planned = planRequest(state, over);
      if (!planned) return;
      const r = await askRegistry(planned.request);
      if (!r.ok) return dispatch({ type: "error", message: r.error.message });
      dispatch({
        type: "planned",
        view: r.value,
        origin: over.name ? planned.origin : null,
        rename: over.name !== undefined || over.entry === "",
      });
    });

  const preview = () =>
    task(async () => {
      const request = addRequest(state, true);
      if (!request) return;
      const r = await ask(request);
      dispatch(r.ok ? { type: "previewed", changes: r.value.changes, risks: r.value.risks } : { type: "error", message: r.error.message });
    });

  const write = () =>
    task(async () => {
      const s = state.server;
      const request = addRequest(state, false);
      if (!s || !request) return;
      const { wrap, sandbox } = state;
      const failed = await writeSandboxFirst(wrap && props.sandboxWorks && sandbox.on ? sandbox : null, {
        // 1. The sandbox's keys in config.toml, before any client's file.
        setKey: async (key, value) => {
          const r = await ask({ op: "set_limit", server: s.name, key, value });
          return r.ok ? null : r.error.message;
        },
        // 2. The clients' files.
        writeFiles: async () => {
          const r = await ask(request);
          if (!r.ok) return { error: r.error.message };
          const written = changeResult(`Added ${s.name}`, r.value.changes, (c) => `Into the OS keychain (service mcp-warden): ${c.secrets.join(", ")}.`);
          dispatch({ type: "written", result: written });
          props.onWritten();
          return { start: written.ok };
        },
        // 3. Probe what the clients will run: through the bridge (which reads the sandbox's
        // keys and the keychain, and pins the tools on first sight), with the entry's environment.
        firstStart: async () => {
          dispatch({ type: "probe", probe: "running" });
          const argv = wrap && props.warden ? bridgeArgv(props.warden, s.name, Object.keys(s.secrets), s.argv) : s.argv;
          const p = await ask({ op: "probe", server: s.name, command: argv, env: s.env, timeout_ms: 120_000 });
          dispatch({ type: "probe", probe: p.ok ? p.value : null });
          return p.ok ? null : `The probe could not run: ${p.error.message}`;
        },
        // 4. Then the network allowed for the first start only is taken away.
        onNetwork: (firstStart) => dispatch({ type: "first_start", state: firstStart }),
      }, runnerPreset(s.argv), wrap && state.askDestructive);
      if (failed !== null) dispatch({ type: "error", message: failed });
    });

  const s = step === "review" ? reviewed(state) : state.server;
  return (
    <Dialog title="Add a server" onClose={props.onClose} testid="add-server-dialog" wide>
      <ol class="stepper small" aria-label="Steps">
        {STEPS.map(([id, label]) => (
          <li key={id} aria-current={id === step ? "step" : undefined} data-step={id}>
            {label}
          </li>
        ))}
      </ol>
      {state.error && <ErrorText message={state.error} testid="add-error" />}

      {step === "find" && (
        <AddFind
          state={state}
          dispatch={dispatch}
          onSearch={() => void search()}
          onChoose={(name) => void replan({ name, version: null, values: {}, entry: "" })}
          onDocument={() => void replan({ values: {}, entry: "" })}
        />
      )}

      {step === "review" && (
        <AddReview
          plan={state.plan}
          server={s}
          warden={props.warden}
          asName={state.asName}
          inputs={state.inputs}
          busy={busy}
          onName={(value) => dispatch({ type: "edit", field: "asName", value })}
          onInputs={(value) => dispatch({ type: "edit", field: "inputs", value })}
          onApply={() => void replan({ values: state.inputs, entry: state.asName })}
          onVersion={(v) => state.origin && void replan({ name: state.origin.name, version: v })}
        />
      )}

      {step === "clients" && <AddClients state={state} dispatch={dispatch} clients={props.clients} sandboxWorks={props.sandboxWorks} />}

      {step === "changes" && state.changes && <AddChanges changes={state.changes} />}

      {step === "done" && <AddDone result={state.result} probe={state.probe} onCloseResult={() => dispatch({ type: "close_result" })} />}

      <FirstStartNetwork state={state.firstStart} />

      <div class="dialog-actions">
        <button type="button" class="secondary" data-testid="add-close" onClick={props.onClose}>
          {step === "done" ? "Close" : "Cancel"}
        </button>
        {step === "review" && (
          <button type="button" data-testid="review-next" disabled={busy || !s} onClick={() => dispatch({ type: "to_clients", taken: props.taken })}>
            I agree: choose clients
          </button>
        )}
        {step === "clients" && (
          <button type="button" data-testid="clients-next" disabled={busy || state.chosen.length === 0} onClick={() => void preview()}>
            Show the changes
          </button>
        )}
        {step === "changes" && (
          <button
            type="button"
            data-testid="add-write"
            data-autofocus
            disabled={busy || !state.changes || state.changes.changes.some((c) => c.error)}
            onClick={() => void write()}
          >
            Write
          </button>
        )}
      </div>
    </Dialog>
  );
}
