import { useEffect, useState } from "preact/hooks";
import type { OpenTarget } from "../bindings/app";
import { askApp } from "../lib/tauri";
import { useStore } from "./context";

export function Footer() {
  const { state } = useStore();
  const [autostart, setAutostart] = useState<boolean | null>(null);
  const [message, setMessage] = useState<string | null>(null);

  useEffect(() => {
    void askApp({ op: "autostart", on: null }).then((r) => {
      if (r.ok) setAutostart(r.value.on);
      else setMessage(r.error.message);
    });
  }, []);

  const toggle = async (on: boolean) => {
    const r = await askApp({ op: "autostart", on });
    if (r.ok) {
      setAutostart(r.value.on);
      setMessage(null);
    } else setMessage(r.error.message);
  };

  const open = async (target: OpenTarget) => {
    const r = await askApp({ op: "open", target });
    setMessage(r.ok ? `Opened ${r.value.path}` : r.error.message);
  };

  return (
    <footer class="bottom">
      <label class="check">
        <input
          type="checkbox"
          data-testid="autostart"
          checked={autostart === true}
          disabled={autostart === null}
          onChange={(e) => void toggle(e.currentTarget.checked)}
        />
        Start at login
      </label>
      <button type="button" class="link" data-testid="open-config" onClick={() => void open({ kind: "config" })}>
        Open config.toml
      </button>
      <button type="button" class="link" data-testid="open-state-dir" onClick={() => void open({ kind: "state_dir" })}>
        Open state folder
      </button>
      <button
        type="button"
        class="link"
        data-testid="open-app-log"
        title="The app's warnings and errors: attach it to a bug report"
        onClick={() => void open({ kind: "app_log" })}
      >
        Open log (warden-app.log)
      </button>
      {message && (
        <span class="muted" role="status" data-testid="footer-message">
          {message}
        </span>
      )}
      <span class="spacer" />
      <span class="muted small">
        {state.app ? `v${state.app.version}` : ""}
        {state.supervisor ? ` · supervisor pid ${state.supervisor.pid}` : ""}
      </span>
    </footer>
  );
}
