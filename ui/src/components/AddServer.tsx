// The Add flow: find a server (the MCP Registry, a command, or a server.json), read what it
// will run (the consent screen), give its values and secrets, choose the clients, see each
// file's exact change, write, and see whether it starts. The state and every move between
// steps are `addReducer`'s (src/lib/addFlow.ts); this component asks and hands it the answers,
// and each step is its own component (AddFind, AddReview, AddClients, AddResult). The write is
// one `ServerAdd` (the workflow is Rust's), shown step by step from its `add_progress` events.
import { useEffect, useReducer, useRef } from "preact/hooks";
import type { ClientId } from "../bindings/api";
import { addReducer, addRequest, following, type Following, initialAddState, onAnswer, onStep, planRequest, reviewed, type Shown, STEPS, writeRequest } from "../lib/addFlow";
import { ask, askRegistry, onApiEvent } from "../lib/tauri";
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

  // The write followed (its name), and the `add_progress` events, listened to from the start so
  // that none of a write's steps comes before the listener.
  const followed = useRef<Following | null>(null);
  const listening = useRef<Promise<unknown>>(Promise.resolve());
  const onWritten = useRef(props.onWritten);
  onWritten.current = props.onWritten;
  const show = (f: Following, shown: Shown[]) => {
    for (const s of shown) {
      if (s.type !== "files_written") dispatch(s);
      else {
        dispatch({ type: "written", result: changeResult(`Added ${f.name}`, s.changes, (c) => `Into the OS keychain (service mcp-warden): ${c.secrets.join(", ")}.`) });
        onWritten.current();
      }
    }
  };
  useEffect(() => {
    let stop: (() => void) | null = null;
    let gone = false;
    listening.current = onApiEvent((e) => {
      const f = followed.current;
      if (e.kind === "add_progress" && f && e.server === f.name) show(f, onStep(f, e.step));
    }).then(
      (f) => (gone ? f() : (stop = f)),
      // Without events the answer still shows it all, at the end.
      () => undefined,
    );
    return () => {
      gone = true;
      stop?.();
    };
  }, []);

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

  /** The review's dry run: the Rust side refuses a name a client cannot take or a chosen
   * client has already, and answers the runner's sandbox preset. */
  const toClients = () =>
    task(async () => {
      const server = reviewed(state);
      if (!server) return;
      // No client detected: nothing to check against (the clients step says so).
      if (state.chosen.length === 0) return dispatch({ type: "to_clients", preset: null });
      const request = addRequest(state, true, server);
      if (!request) return;
      // The name and the clients are what is checked here: through the bridge only where its
      // path is known (else the bridge is refused before the name is looked at; the clients
      // step offers the plain command).
      const r = await ask({ ...request, wrap: request.wrap && props.warden !== null });
      dispatch(r.ok ? { type: "to_clients", preset: r.value.preset } : { type: "error", message: r.error.message });
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
      const request = writeRequest(state, props.sandboxWorks);
      if (!request) return;
      await listening.current;
      const f = following(request.name);
      followed.current = f;
      show(f, onAnswer(f, await ask(request)));
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
          <button type="button" data-testid="review-next" disabled={busy || !s} onClick={() => void toClients()}>
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
