import type { Route } from "../lib/route";
import { formatDateTime } from "../lib/format";
import { useStore } from "./context";

const NAV: Array<{ page: Route["page"]; label: string; href: string }> = [
  { page: "servers", label: "Servers", href: "#/servers" },
  { page: "sessions", label: "Sessions", href: "#/sessions" },
  { page: "manage", label: "Manage", href: "#/manage" },
  { page: "clients", label: "Clients", href: "#/clients" },
];

const TRAY_LABEL: Record<string, string> = {
  healthy: "All healthy",
  degraded: "Needs attention",
  down: "Server down",
  idle: "Idle",
};

export function Header({ route }: { route: Route }) {
  const { state } = useStore();
  const appState = state.app;
  const current = route.page === "server" ? "servers" : route.page;
  const notifications = appState ? [...appState.notifications].reverse().slice(0, 20) : [];
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById("main")?.focus(); }}>
        Skip to content
      </a>
      <header class="top">
        <div class="brand">
          <span class="logo" aria-hidden="true">◆</span> MCP Warden
        </div>
        <nav aria-label="Pages">
          {NAV.map((n) => (
            <a key={n.page} href={n.href} aria-current={current === n.page ? "page" : undefined}>
              {n.label}
            </a>
          ))}
        </nav>
        <div class="spacer" />
        <div
          class="tray"
          data-testid="tray-state"
          data-tray={appState?.tray ?? "unknown"}
          title={appState?.tooltip ?? "Waiting for the app"}
        >
          <span class="dot" aria-hidden="true" />
          <span class="tray-label">{appState ? (TRAY_LABEL[appState.tray] ?? appState.tray) : "…"}</span>
          {appState && <span class="tray-tooltip">{appState.tooltip}</span>}
        </div>
        <details class="notifications" data-testid="notifications">
          <summary aria-label={`Notifications (${notifications.length})`}>
            <svg viewBox="0 0 24 24" aria-hidden="true">
              <path d="M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22zm7-6V11a7 7 0 0 0-5.5-6.84V3a1.5 1.5 0 0 0-3 0v1.16A7 7 0 0 0 5 11v5l-2 2v1h18v-1l-2-2z" />
            </svg>
            {notifications.length}
          </summary>
          <div class="popover">
            {notifications.length === 0 ? (
              <p class="muted">No notifications yet.</p>
            ) : (
              <ul>
                {notifications.map((n) => (
                  <li key={`${n.ts_ms}-${n.title}`} data-testid="notification">
                    <div class="muted small">{formatDateTime(n.ts_ms)}</div>
                    <strong>{n.title}</strong>
                    <div>{n.body}</div>
                  </li>
                ))}
              </ul>
            )}
          </div>
        </details>
      </header>
      {appState?.supervisor_error && (
        <div class="banner error" role="alert" data-testid="supervisor-error">
          <strong>The supervisor is not running.</strong> {appState.supervisor_error}
        </div>
      )}
      {appState?.sidecar_error && (
        <div class="banner error" role="alert" data-testid="sidecar-error">
          <strong>Wrapped IDE servers cannot start.</strong> {appState.sidecar_error}
        </div>
      )}
      {state.statusError && (
        <div class="banner warn" role="alert" data-testid="status-error">
          <strong>Could not read the status.</strong> {state.statusError}
        </div>
      )}
    </>
  );
}
