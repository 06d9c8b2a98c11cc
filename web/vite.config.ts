import { defineConfig } from "vite"

// The page the engine serves at `/` (api/StaticSite.ts reads `dist/` at start).
export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  publicDir: false,
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    reportCompressedSize: true,
    chunkSizeWarningLimit: 600
  }
})
