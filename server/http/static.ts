import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";
import { existsSync } from "node:fs";
import { join } from "node:path";

/** Client routes of the dashboard: they fall back to index.html. Anything else unknown is a 404. */
const CLIENT_ROUTES = /^\/(?:(?:runs|agents|daemons|inbox|conversations|accounts|settings)(?:\/.*)?)?$/;

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
    return reply.code(404).type("text/plain; charset=utf-8").send("Not Found");
  });
}

function cacheHeaders(res: { setHeader(name: string, value: string): void }, path: string) {
  // Vite's hashed assets never change; everything else is revalidated.
  res.setHeader("cache-control", /[/\\]assets[/\\]/.test(path) ? "public, max-age=31536000, immutable" : "no-cache");
}
