import { useEffect, useMemo, useReducer, useRef, useState } from "preact/hooks";
import { initialState, reduce } from "../lib/store";
import { parseRoute, type Route } from "../lib/route";
import { ask, askApp, onApiEvent, onAppEvent } from "../lib/tauri";
import { StoreContext } from "./context";
import { Header } from "./Header";
import { Footer } from "./Footer";
import { Toasts } from "./Toasts";
import { ServersPage } from "./ServersPage";
import { ServerPage } from "./ServerPage";
import { SessionsPage } from "./SessionsPage";
import { ClientsPage } from "./ClientsPage";
import { ManagePage } from "./ManagePage";
import { Approvals } from "./Approvals";

/** The status is re-read this often, under the live events (percentiles come from it). */
export const STATUS_EVERY_MS = 5000;

export function App() {
  const [state, dispatch] = useReducer(reduce, undefined, initialState);
  const [route, setRoute] = useState<Route>(() => parseRoute(window.location.hash));
  const polling = useRef(false);

  useEffect(() => {
    const onHash = () => {
      setRoute(parseRoute(window.location.hash));
      window.scrollTo(0, 0);
    };
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);

  useEffect(() => {
    let stopped = false;
    const unlisten: Array<() => void> = [];
    const keep = (p: Promise<() => void>) =>
      p.then(
        (f) => (stopped ? f() : unlisten.push(f)),
        (e: unknown) => dispatch({ type: "status_error", message: `Live updates are off: ${String(e)}` }),
      );

    const refresh = async () => {
      if (polling.current) return;
      polling.current = true;
      try {
        const r = await ask({ op: "status" });
        if (stopped) return;
        if (r.ok) dispatch({ type: "status", report: r.value, now: Date.now() });
        else dispatch({ type: "status_error", message: r.error.message });
      } finally {
        polling.current = false;
      }
    };

    // Listen first, then read the status, so nothing falls between the two.
    void Promise.all([
      keep(onApiEvent((event) => dispatch({ type: "event", event, now: Date.now() }))),
      keep(onAppEvent((e) => dispatch({ type: "app", state: e }))),
    ]).then(() => {
      void refresh();
      void askApp({ op: "state" }).then((r) => {
        if (!stopped && r.ok) dispatch({ type: "app", state: r.value });
      });
    });
    const timer = window.setInterval(() => void refresh(), STATUS_EVERY_MS);
    return () => {
      stopped = true;
      window.clearInterval(timer);
      for (const f of unlisten) f();
    };
  }, []);

  const store = useMemo(() => ({ state, dispatch }), [state]);

  return (
    <StoreContext.Provider value={store}>
      <Header route={route} />
      <main id="main" tabIndex={-1}>
        <Approvals />
        <Page route={route} />
      </main>
      <Footer />
      <Toasts />
    </StoreContext.Provider>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case "servers":
      return <ServersPage />;
    case "server":
      return <ServerPage key={route.name} name={route.name} />;
    case "sessions":
      return <SessionsPage />;
    case "manage":
      return <ManagePage />;
    case "clients":
      return <ClientsPage />;
    case "not_found":
      return (
        <section class="page">
          <h1>Page not found</h1>
          <p>
            Nothing lives at <code>{route.hash}</code>. <a href="#/servers">Go to Servers</a>.
          </p>
        </section>
      );
  }
}
