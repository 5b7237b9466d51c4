import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";
import { existsSync } from "node:fs";
import { join } from "node:path";

/**
 * Client routes of the dashboard: they fall back to index.html. Anything else unknown is a 404:
 * plain text, or the dashboard (status 404, its own "Page not found") for a browser asking for a
 * page (`Accept: text/html`) outside the API and the assets.
 */
const CLIENT_ROUTES = /^\/(?:(?:runs|agents|daemons|inbox|conversations|accounts|workers|settings)(?:\/.*)?)?$/;

export function isClientRoute(path: string): boolean {
  return CLIENT_ROUTES.test(path);
}

export async function registerDashboard(app: FastifyInstance, webDir: string) {
  const built = existsSync(join(webDir, "index.html"));
  if (built) {
    await app.register(fastifyStatic, { root: webDir, prefix: "/", index: false, wildcard: false, cacheControl: false, setHeaders: cacheHeaders });
  }
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split("?")[0] ?? "/";
    if ((req.method === "GET" || req.method === "HEAD") && isClientRoute(path)) {
      if (!built) {
        return reply
          .code(503)
          .type("text/plain; charset=utf-8")
          .send(`The dashboard is not built (${webDir} is missing). Run \`npm run build\`, or start with \`npm start\`, which builds it.`);
      }
      return reply.header("cache-control", "no-cache").sendFile("index.html");
    }
    if (built && req.method === "GET" && wantsPage(req.headers.accept, path)) {
      return reply.code(404).header("cache-control", "no-cache").sendFile("index.html");
    }
    return reply.code(404).type("text/plain; charset=utf-8").send("Not Found");
  });
}

/** A browser navigating to a page (not a script, an API call or an asset). */
function wantsPage(accept: string | undefined, path: string): boolean {
  return !!accept?.includes("text/html") && !/^\/(?:trpc|ws|health|assets|api)(?:[/?.]|$)/.test(path);
}

function cacheHeaders(res: { setHeader(name: string, value: string): void }, path: string) {
  // Vite's hashed assets never change; everything else is revalidated.
  res.setHeader("cache-control", /[/\\]assets[/\\]/.test(path) ? "public, max-age=31536000, immutable" : "no-cache");
}
