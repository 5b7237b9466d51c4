import type { FastifyInstance, FastifyReply } from "fastify";
import { LOGIN_PATH, sessionCookieName, sessionValue, type LoginCodes } from "./security";

const page = (message: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Switchyard · sign in</title>
<style>
  body{font-family:system-ui,sans-serif;background:#0b0f14;color:#e6edf3;display:grid;place-items:center;min-height:100vh;margin:0}
  form{background:#111820;border:1px solid #263040;border-radius:12px;padding:28px;width:min(420px,90vw)}
  h1{font-size:18px;margin:0 0 8px} p{color:#9aa7b4;font-size:14px;line-height:1.5}
  input{width:100%;box-sizing:border-box;padding:10px;border-radius:8px;border:1px solid #263040;background:#0b0f14;color:inherit;font:inherit}
  button{margin-top:12px;padding:10px 16px;border-radius:8px;border:0;background:#3b82f6;color:white;font:inherit;cursor:pointer}
</style></head>
<body><form method="post" action="${LOGIN_PATH}">
<h1>Switchyard</h1><p>${message}</p>
<label for="token">Token (SWITCHYARD_TOKEN)</label>
<input id="token" name="token" type="password" autocomplete="current-password" autofocus required>
<button type="submit">Sign in</button>
</form></body></html>`;

/** The one-time link printed at start, and a token form for browsers. */
export function registerLogin(app: FastifyInstance, opts: { token?: string; codes: LoginCodes; port: () => number }) {
  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string", bodyLimit: 4096 }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  const signIn = (reply: FastifyReply) => {
    const cookie = `${sessionCookieName(opts.port())}=${sessionValue(opts.token!)}; HttpOnly; SameSite=Strict; Path=/; Max-Age=2592000`;
    return reply.header("set-cookie", cookie).redirect("/", 303);
  };

  app.get(LOGIN_PATH, async (req, reply) => {
    if (!opts.token) return reply.redirect("/", 303);
    const code = (req.query as Record<string, string | undefined>).code;
    if (code && opts.codes.redeem(code)) return signIn(reply);
    const message = code ? "This login link was already used or has expired. Paste the token instead." : "This server requires a token.";
    return reply.code(401).type("text/html; charset=utf-8").send(page(message));
  });

  app.post(LOGIN_PATH, async (req, reply) => {
    if (!opts.token) return reply.redirect("/", 303);
    const given = (req.body as Record<string, string | undefined> | undefined)?.token ?? "";
    const { timingSafeEqual } = await import("node:crypto");
    const a = Buffer.from(given);
    const b = Buffer.from(opts.token);
    if (a.length === b.length && timingSafeEqual(a, b)) return signIn(reply);
    return reply.code(401).type("text/html; charset=utf-8").send(page("That token is not right."));
  });
}
