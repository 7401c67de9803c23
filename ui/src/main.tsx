import { render } from "preact";
import { App } from "./components/App";
import "./styles.css";

async function start(): Promise<void> {
  // `npm run dev` in a plain browser: stand in for the Rust app with fixtures. The whole
  // branch is dropped from production builds (import.meta.env.DEV is false there).
  if (import.meta.env.DEV && !("__TAURI_INTERNALS__" in window)) {
    await import("./dev/mock");
  }
  const root = document.getElementById("app");
  if (root) render(<App />, root);
}

void start();
