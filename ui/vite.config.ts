import { defineConfig } from "vitest/config";

// The window loads ui/dist from the app bundle: relative asset paths, no remote content
// (the CSP is `default-src 'self'`). TSX is compiled by Vite's own transform with Preact's
// JSX runtime (tsconfig: jsx react-jsx, jsxImportSource preact).
export default defineConfig({
  base: "./",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    // Keep everything in files: no inline scripts or data: modules (script-src 'self').
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  server: { port: 5173, strictPort: true },
  test: {
    include: ["tests/**/*.test.ts", "tests/**/*.test.tsx"],
    environment: "node",
  },
});
