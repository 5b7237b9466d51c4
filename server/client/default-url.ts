/**
 * The server a client talks to when it is not told: SWITCHYARD_URL, else the bind address the
 * server would take from SWITCHYARD_HOST / SWITCHYARD_PORT. Apart from the client (no tRPC here),
 * so a `yard` command finds its server without loading the client.
 */
export function defaultUrl(env: Record<string, string | undefined> = process.env): string {
  if (env.SWITCHYARD_URL) return env.SWITCHYARD_URL.replace(/\/+$/, "");
  const host = env.SWITCHYARD_HOST && !["0.0.0.0", "::"].includes(env.SWITCHYARD_HOST) ? env.SWITCHYARD_HOST : "127.0.0.1";
  return `http://${host.includes(":") ? `[${host}]` : host}:${env.SWITCHYARD_PORT || "7422"}`;
}
