import tailwindcss from "@tailwindcss/vite";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

/**
 * The dashboard: sources in web/, built to dist/web, which the server serves at `/`
 * (`yard start --build-if-needed` runs this build when dist/web is missing or stale).
 * Vendor code goes to a few long-lived chunks so an app change does not bust their cache.
 */
export default defineConfig({
  root: "web",
  base: "/",
  plugins: [react(), tailwindcss()],
  build: {
    outDir: "../dist/web",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    chunkSizeWarningLimit: 400,
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [
            { name: "react", test: /node_modules[\\/](?:react|react-dom|scheduler)[\\/]/, priority: 3 },
            { name: "data", test: /node_modules[\\/](?:@tanstack|@trpc)[\\/]/, priority: 2 },
            { name: "vendor", test: /node_modules[\\/]/, priority: 1 },
          ],
        },
      },
    },
  },
  server: {
    // `npx vite` for UI work with hot reload: /trpc goes to a running `yard start` (SWITCHYARD_URL,
    // default port 7422). The Origin header is dropped so the server's same-origin guard accepts it.
    proxy: {
      "/trpc": {
        target: process.env.SWITCHYARD_URL ?? "http://127.0.0.1:7422",
        changeOrigin: true,
        configure: (proxy) => proxy.on("proxyReq", (req) => req.removeHeader("origin")),
      },
    },
  },
});
