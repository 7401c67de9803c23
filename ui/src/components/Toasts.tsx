import { useEffect } from "preact/hooks";
import { useStore } from "./context";

const TOAST_MS = 12_000;

export function Toasts() {
  const { state, dispatch } = useStore();
  const ids = state.toasts.map((t) => t.id).join(",");
  useEffect(() => {
    const timers = state.toasts.map((t) =>
      window.setTimeout(() => dispatch({ type: "dismiss_toast", id: t.id }), TOAST_MS),
    );
    return () => timers.forEach((t) => window.clearTimeout(t));
    // Re-arm when the set of toasts changes.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [ids]);
  return (
    <div class="toasts" aria-live="polite" aria-label="Messages">
      {state.toasts.map((t) => (
        <div key={t.id} class={`toast ${t.kind}`} data-testid="toast" role={t.kind === "info" ? "status" : "alert"}>
          <div>
            <strong>{t.title}</strong>
            {t.body && <div>{t.body}</div>}
            {t.kind !== "error" && (
              <a href="#/clients" class="small">
                Open Clients
              </a>
            )}
          </div>
          <button type="button" class="icon" aria-label="Dismiss" onClick={() => dispatch({ type: "dismiss_toast", id: t.id })}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
