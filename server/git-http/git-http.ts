import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Readable, type Writable } from "node:stream";
import { createGunzip } from "node:zlib";
import { drain, pullChunks } from "./body-reader";
import { readCgiHead, spawnBackend, type BackendPath, type BackendRequest } from "./cgi";
import { EXPORT_KEY_SHAPE } from "./export-key";
import { PktLineError } from "./pkt-line";
import { defaultRefusal, readPushCommands, type PushCommands, type RefUpdate } from "./push-commands";
import { refusalReport } from "./report-status";

export type GitService = "git-upload-pack" | "git-receive-pack";

/**
 * What `authorize` is asked. Once per request without `refs` (may this token fetch from / push to
 * this repository at all?), and for a push whose ref updates the default rule refuses (anything
 * outside `refs/heads/switchyard/`, any deletion) once more with `refs` = those updates: `true`
 * then lets them through, so an implementation that only checks tokens must answer 403 whenever
 * `refs` is set.
 */
export type GitAuthRequest = { token: string; key: string; service: GitService; refs?: RefUpdate[] };
export type GitAuthDenial = { status: 401 | 403; message: string };

export type GitHttpDeps = {
  /** The repository a key names (see gitExportKey), or null: 404. */
  resolve(key: string): { repoPath: string } | null | Promise<{ repoPath: string } | null>;
  authorize(request: GitAuthRequest): Promise<true | GitAuthDenial>;
  /**
   * Every push's updates that the default rule lets through (`refs/heads/switchyard/*`, no
   * deletion), asked once per push: null lets them all through, else the updates refused and why
   * (a worker may move only the branches of its own agents). Absent: the default rule alone.
   */
  authorizeUpdates?(request: { token: string; key: string; refs: RefUpdate[] }): Promise<null | { refs: RefUpdate[]; denial: GitAuthDenial }>;
};

type Req = FastifyRequest<{ Params: { repo: string }; Querystring: { service?: string } }>;

const CHALLENGE = 'Bearer realm="Switchyard git"';

/**
 * Git's smart HTTP protocol under `/git/<key>.git/`: `GET info/refs?service=...`, `POST
 * git-upload-pack`, `POST git-receive-pack`, each served by one `git http-backend` child with the
 * request body streamed into it and its output streamed back. Every request carries
 * `Authorization: Bearer <token>`. Pushes may only create or move `refs/heads/switchyard/*` unless
 * `authorize` allows more. Any other path under /git/ is a 404 (no dumb-HTTP file is served).
 */
export async function registerGitHttp(app: FastifyInstance, deps: GitHttpDeps): Promise<void> {
  await app.register(
    async (scope) => {
      // bodies are git's own (packs of any size): never parsed or buffered by Fastify
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser("*", (_req, _payload, done) => done(null));
      scope.setNotFoundHandler((_req, reply) => plain(reply, 404, "Not found"));
      scope.get("/:repo/info/refs", (req: Req, reply) => serve(deps, req, reply, "/info/refs"));
      scope.post("/:repo/git-upload-pack", (req: Req, reply) => serve(deps, req, reply, "/git-upload-pack"));
      scope.post("/:repo/git-receive-pack", (req: Req, reply) => serve(deps, req, reply, "/git-receive-pack"));
    },
    { prefix: "/git" },
  );
}

async function serve(deps: GitHttpDeps, req: Req, reply: FastifyReply, path: BackendPath): Promise<FastifyReply> {
  const key = /^(.*)\.git$/.exec(req.params.repo)?.[1];
  if (key === undefined || !EXPORT_KEY_SHAPE.test(key)) return plain(reply, 404, "Repository not found");
  const service = path === "/info/refs" ? serviceOf(req.query.service) : (path.slice(1) as GitService);
  if (!service) return plain(reply, 400, "Only git's smart HTTP protocol is served here: info/refs?service=git-upload-pack or git-receive-pack");
  const token = bearerOf(req.headers.authorization);
  if (!token) return deny(reply, { status: 401, message: "Authentication required: send Authorization: Bearer <token>" });
  const repo = await deps.resolve(key);
  if (!repo) return plain(reply, 404, "Repository not found");
  const verdict = await deps.authorize({ token, key, service });
  if (verdict !== true) return deny(reply, verdict);

  const request: BackendRequest = {
    repoPath: repo.repoPath,
    path,
    method: path === "/info/refs" ? "GET" : "POST",
    query: path === "/info/refs" ? `service=${service}` : "",
    contentType: req.headers["content-type"],
    gitProtocol: protocolOf(req.headers["git-protocol"]),
    remoteAddr: req.ip,
    receivePack: service === "git-receive-pack",
  };
  if (path === "/info/refs") return run(req, reply, request, null);
  const encoding = encodingOf(req.headers["content-encoding"]);
  if (!encoding) return plain(reply, 415, "Content-Encoding must be gzip or none");
  if (path === "/git-upload-pack") {
    return run(req, reply, { ...request, contentLength: req.headers["content-length"], gzip: encoding === "gzip" }, req.raw);
  }
  return receivePack(deps, req, reply, { token, key, encoding }, request);
}

/**
 * A push: read its command list (inflating a gzip body first), refuse it whole before git sees it
 * when an update breaks the rule and `authorize` does not allow it, else replay the bytes read
 * and stream the rest into http-backend.
 */
async function receivePack(deps: GitHttpDeps, req: Req, reply: FastifyReply, who: { token: string; key: string; encoding: "gzip" | "identity" }, request: BackendRequest): Promise<FastifyReply> {
  const source = who.encoding === "gzip" ? inflate(req.raw) : req.raw;
  const chunks = pullChunks(source);
  let commands: PushCommands;
  try {
    commands = await readPushCommands(chunks);
  } catch (err) {
    await drainRequest(req, source);
    const reason = err instanceof PktLineError ? err.message : who.encoding === "gzip" ? "the gzip body does not inflate" : "the body was cut off";
    return plain(reply, 400, `Bad push request: ${reason}`);
  }
  const refused = commands.updates.filter((update) => defaultRefusal(update) !== null);
  if (refused.length > 0) {
    const verdict = await deps.authorize({ token: who.token, key: who.key, service: "git-receive-pack", refs: refused });
    if (verdict !== true) {
      await drainRequest(req, source);
      return refusePush(reply, commands, refused, verdict, (update) => `refused by Switchyard: ${defaultRefusal(update)}`);
    }
  }
  const allowed = commands.updates.filter((update) => defaultRefusal(update) === null);
  if (allowed.length > 0 && deps.authorizeUpdates) {
    const fenced = await deps.authorizeUpdates({ token: who.token, key: who.key, refs: allowed });
    if (fenced) {
      await drainRequest(req, source);
      return refusePush(reply, commands, fenced.refs, fenced.denial, () => `refused by Switchyard: ${fenced.denial.message}`);
    }
  }
  async function* replay(): AsyncGenerator<Buffer> {
    yield commands.prefix;
    for (;;) {
      const next = await chunks.next();
      if (next.done) return;
      yield next.value;
    }
  }
  // the same bytes as the request when it was not compressed: http-backend may rely on its length
  const contentLength = who.encoding === "identity" ? req.headers["content-length"] : undefined;
  return run(req, reply, { ...request, contentLength }, Readable.from(replay(), { objectMode: false }));
}

/** Read the rest of the request (answering before the client has sent it all would cut its upload short). */
async function drainRequest(req: Req, source: Readable): Promise<void> {
  await drain(source);
  if (source !== req.raw) await drain(req.raw);
}

function refusePush(reply: FastifyReply, commands: PushCommands, refused: RefUpdate[], denial: GitAuthDenial, reason: (update: RefUpdate) => string): FastifyReply {
  const reasons = new Map(refused.map((update) => [update.refName, reason(update)]));
  const message = `Switchyard: ${denial.message}`;
  const report = refusalReport(commands.capabilities, commands.updates, { reasons, message });
  if (!report) return deny(reply, denial);
  return reply.code(200).header("content-type", "application/x-git-receive-pack-result").header("cache-control", "no-cache").send(report);
}

/** One `git http-backend` call: `body` streamed into it, its CGI response streamed back. */
async function run(req: Req, reply: FastifyReply, request: BackendRequest, body: Readable | null): Promise<FastifyReply> {
  const child = spawnBackend(request);
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    if (stderr.length < 4096) stderr += chunk.toString("utf8");
  });
  const failed = new Promise<never>((_, reject) => child.once("error", reject));
  failed.catch(() => {});
  child.once("close", (code, signal) => {
    if (code !== 0 && !(signal && reply.raw.destroyed)) req.log.warn({ path: request.path, code, signal, stderr: stderr.slice(0, 4096) }, "git http-backend failed");
  });
  // a client gone before the end: stop the child (a push is then not applied, or applied whole)
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished && child.exitCode === null && child.signalCode === null) child.kill();
  });
  if (body) feed(body, child.stdin);
  else child.stdin.end();
  try {
    const head = await Promise.race([readCgiHead(child.stdout), failed]);
    return reply.code(head.status).headers(head.headers).send(head.body);
  } catch (err) {
    child.kill();
    req.log.error({ path: request.path, err: { message: (err as Error).message }, stderr: stderr.slice(0, 4096) }, "git http-backend gave no response");
    return plain(reply, 502, "git http-backend failed");
  }
}

/**
 * Stream the request body into http-backend's stdin (with backpressure). Not `pipeline`: that would
 * destroy the request, and with it the connection the answer goes back on.
 */
function feed(body: Readable, stdin: Writable): void {
  // http-backend answered without reading everything (an error status): let the client finish sending
  stdin.on("error", () => {
    body.unpipe(stdin);
    void drain(body);
  });
  // the client went away mid-body: the child sees a cut-off body and applies nothing
  body.on("error", () => stdin.destroy());
  body.pipe(stdin);
}

/** A gzip request body, inflated; a body that does not inflate fails the inflated stream, and the rest of the request is drained. */
function inflate(raw: Readable): Readable {
  const gunzip = createGunzip();
  gunzip.on("error", () => {
    raw.unpipe(gunzip);
    void drain(raw);
  });
  return raw.pipe(gunzip);
}

function plain(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type("text/plain; charset=utf-8").header("cache-control", "no-cache").send(`${message}\n`);
}

function deny(reply: FastifyReply, denial: GitAuthDenial): FastifyReply {
  if (denial.status === 401) reply.header("www-authenticate", CHALLENGE);
  return plain(reply, denial.status, denial.message);
}

function serviceOf(value: unknown): GitService | null {
  return value === "git-upload-pack" || value === "git-receive-pack" ? value : null;
}

/** The token of `Authorization: Bearer <token>`, or null. */
export function bearerOf(header: string | undefined): string | null {
  const match = /^Bearer +([\x21-\x7e]+) *$/i.exec(header ?? "");
  return match?.[1] ?? null;
}

function encodingOf(header: string | undefined): "gzip" | "identity" | null {
  const value = (header ?? "identity").trim().toLowerCase();
  if (value === "gzip" || value === "x-gzip") return "gzip";
  return value === "identity" || value === "" ? "identity" : null;
}

/** Git-Protocol (`version=2`, colon-separated parameters): passed on only when it looks like one. */
function protocolOf(header: string | string[] | undefined): string | undefined {
  return typeof header === "string" && /^[A-Za-z0-9._=:-]{1,256}$/.test(header) ? header : undefined;
}
