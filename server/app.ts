import { fastifyTRPCPlugin, type FastifyTRPCPluginOptions } from "@trpc/server/adapters/fastify";
import { registerSubscriptionSse } from "./trpc/sse";
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { isLoopbackHost, secretsOf, type Config } from "./config";
import type { Db } from "./db/client";
import { openPgStore } from "./db/pg/pg-store";
import { Cluster } from "./cluster/cluster.service";
import { RetentionPruner, retentionLimits } from "./db/retention-pruner";
import { SqliteStore, openSqliteStore } from "./db/sqlite-store";
import type { Store } from "./db/store";
import { EventBus } from "./events/bus";
import { healthOf } from "./http/health";
import { registerLogin } from "./http/login";
import { createGuard, LoginCodes, safeEqual, type Principal } from "./http/security";
import { registerDashboard } from "./http/static";
import { createLogger, routeModelWarnings, type Logger } from "./log";
import { createRedactor } from "./redact";
import { principalOf, type Context, type Services } from "./trpc/context";
import { appRouter, type AppRouter } from "./trpc/router";
import { REPO_ROOT } from "./paths";
import { createModelRegistry } from "./models/models.service";
import { registerDaemonWebhook } from "./daemons/daemon-webhook";
import { AgentsService } from "./agents/agents.service";
import { AccountsService } from "./accounts/accounts.service";
import { DEFAULT_PRICES } from "./runs/pricing";
import { ConversationsService } from "./conversations/conversations.service";
import { DaemonsService } from "./daemons/daemons.service";
import { registerMcpRoutes } from "./mcp/http";
import { RunsService } from "./runs/runs.service";
import { buildTools, PermissionPolicy } from "./tools";
import { attachCommaProtocol } from "./ws/comma-connection";
import { WsGateway } from "./ws/gateway";
import { RunFollowers } from "./ws/run-followers";
import { LocalAgentHost } from "./agents/local-host";
import { loopbackHost } from "./agents/loopback-host";
import { WorkersService } from "./workers/workers.service";
import { headOfRepo } from "./workers/repo-head";
import { registerGitHttp } from "./git-http/git-http";
import { gitExportKey } from "./git-http/export-key";
import { mirrorUrlOf } from "./agents/repo-mirrors";

export type ServerDeps = {
  config: Config;
  /** Where log lines go (default stdout). Every line is scrubbed of secrets first. */
  logStream?: Writable | { write(line: string): unknown };
  /** Where agents' CLIs run: "local" (default), or "loopback" (the local host behind a JSON round trip of every call: tests of the session seam). */
  agentHost?: "local" | "loopback";
};

export type SwitchyardServer = {
  readonly services: Services;
  readonly store: Store;
  /** The SQLite connection (tests reach into it); throws on PostgreSQL. */
  readonly db: Db;
  readonly log: Logger;
  readonly app: FastifyInstance;
  /** Listen; resolves with the URL once bound. */
  start(): Promise<{ url: string; port: number }>;
  /** Graceful stop: close connections, flush the bus, close the store. */
  stop(reason?: string): Promise<void>;
  /** A one-time login link for the dashboard, or the plain URL when no token is set. */
  loginLink(): string;
  url(): string;
};

export const VERSION: string = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).version;

export class StartupError extends Error {
  readonly code = "CONFIG_INVALID";
}

/** The server factory: `main.ts` and every integration test start the same thing. */
export async function createServer(deps: ServerDeps): Promise<SwitchyardServer> {
  const { config } = deps;
  if (!isLoopbackHost(config.host) && !config.token) {
    throw new StartupError(
      `Refusing to bind ${config.host} without a token: set SWITCHYARD_TOKEN (16+ characters), or bind a loopback address (SWITCHYARD_HOST=127.0.0.1).`,
    );
  }
  const redact = createRedactor(secretsOf(config));
  const log = createLogger({ level: config.logLevel, redact, stream: deps.logStream });
  routeModelWarnings(log);
  // PostgreSQL when SWITCHYARD_DATABASE_URL is set (several servers on one database), else the SQLite file
  const store: Store = config.databaseUrl
    ? await openPgStore({ url: config.databaseUrl })
    : openSqliteStore({ path: config.dbPath, migrationsDir: config.migrationsDir, durability: config.durability });
  // the servers of this database: leases on runs and daemons, commands between servers, takeover
  const cluster = new Cluster({ store, home: config.home, log, version: VERSION });
  const sqliteDb = () => {
    if (store instanceof SqliteStore) return store.db;
    throw new Error("This server runs on PostgreSQL (SWITCHYARD_DATABASE_URL): there is no SQLite connection");
  };
  const bus = new EventBus(store.events);
  await bus.open();
  // SWITCHYARD_RETENTION_*: old events and agent output pruned periodically (off when unset)
  const limits = retentionLimits(config);
  const pruner = limits ? new RetentionPruner({ store, log, limits }) : undefined;

  let boundPort = config.port;
  let sseClients = 0;
  // eslint-disable-next-line prefer-const -- the accounts service needs the agents service, built next
  let agents: AgentsService;
  const accounts = new AccountsService({
    store,
    bus,
    log,
    home: config.home,
    ...(config.secretKey ? { secretKey: config.secretKey } : {}),
    cooldownMs: config.accountCooldownMs,
    claudeOAuth: { tokenUrl: config.claudeOAuthTokenUrl, clientId: config.claudeOAuthClientId },
    addSecret: (secret) => redact.add(secret),
    activeAgentsOf: (accountId) => agents.activeOnAccount(accountId),
  });
  const localHost = new LocalAgentHost({ home: config.home });
  const host = deps.agentHost === "loopback" ? loopbackHost(localHost) : localHost;
  // workers on other machines (`yard worker`): agents placed there run through their connection
  const workers = new WorkersService({
    store,
    bus,
    log,
    cluster,
    // a repository given as a URL is cloned by the worker from that URL, not from this server
    repoUrl: (serverUrl, repoPath) => mirrorUrlOf(repoPath) ?? `${serverUrl.replace(/\/+$/, "")}/git/${gitExportKey(repoPath)}.git`,
    headOf: headOfRepo,
  });
  agents = new AgentsService({ store, bus, log, config, accounts, host, workers, cluster, serverUrl: () => server.url() });
  workers.onLost((name) => agents.workerLost(name));
  workers.onPlaceOpened(() => agents.placeQueued());
  const guard = createGuard({
    boundHost: config.host,
    port: () => boundPort,
    allowedHosts: config.allowedHosts,
    token: config.token,
    // an agent's own token (its SWITCHYARD_TOKEN) works as a bearer token too
    agentOf: (token) => agents.agentOfToken(token),
    workerOf: (token) => workers.workerOfToken(token),
  });
  const ws = new WsGateway(guard.check);
  const codes = new LoginCodes();
  const models = createModelRegistry(config);
  // the sockets following each run: the Comma protocol fills it, the runs service sends to it
  const followers = new RunFollowers();
  const runs = new RunsService({
    store,
    bus,
    log,
    home: config.home,
    resolveModel: (model, override) => models.resolve(model, { override }),
    buildTools: (names, host) =>
      buildTools(names, { ...host, policy: host.policy as PermissionPolicy, requestPermission: (r) => host.requestPermission(r), isSecret: (value) => redact(value) !== value }),
    createPolicy: (cwd) => new PermissionPolicy(cwd),
    runCommand: config.runCommand,
    cli: { agents, bus },
    prices: { ...DEFAULT_PRICES, ...config.modelPrices },
    cluster,
    onEphemeral: (runId, frame) => followers.send(runId, frame),
  });

  const daemons = new DaemonsService({
    store,
    bus,
    log,
    home: config.home,
    allowedRoots: config.allowedRoots,
    cluster,
    resolveModel: (m) => models.resolve(m),
    buildTools: (names, host) =>
      buildTools(names, {
        ...host,
        policy: new PermissionPolicy(host.cwd),
        // a daemon runs unattended: what the policy would ask a human is refused (every command too)
        requestPermission: async () => "deny",
        commands: { askAll: true },
        isSecret: (value) => redact(value) !== value,
        askQuestion: async () => "No human is attached to this daemon; decide on your own.",
      }),
  });

  const services: Services = {
    config,
    bus,
    runs,
    daemons,
    agents,
    accounts,
    conversations: new ConversationsService(store, bus, agents),
    cluster,
    workers,
    redact,
    startedAt: Date.now(),
    version: VERSION,
    loginLink: () => server.loginLink(),
    stats: {
      activeRuns: () => runs.activeCount(),
      connectedClients: () => ws.clientCount + sseClients,
      sseOpened: () => void sseClients++,
      sseClosed: () => void sseClients--,
    },
  };

  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: config.logLevel !== "debug" && config.logLevel !== "trace" }),
    bodyLimit: 16 * 1024 * 1024,
    forceCloseConnections: true,
    // tRPC batches put every procedure path in one URL segment
    routerOptions: { maxParamLength: 10_000 },
    // Host, Origin and token are checked before Fastify routes anything.
    serverFactory: (handler) => {
      const server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
        const verdict = guard.check(req);
        // a worker's token: its connection (/worker, an upgrade), git, and /health (yard doctor on its machine)
        if (verdict.ok && verdict.kind === "worker" && !(req.url ?? "").startsWith("/git/") && (req.url ?? "").split("?")[0] !== "/health") {
          res.writeHead(403, { "content-type": "application/json; charset=utf-8" });
          return res.end(JSON.stringify({ error: "FORBIDDEN", message: "A worker's token is for /worker, /git/ and /health only" }));
        }
        if (verdict.ok) {
          (req as IncomingMessage & { principal?: Principal }).principal =
            verdict.kind === "agent" ? { kind: "agent", agentId: verdict.agentId } : verdict.kind === "worker" ? { kind: "worker", worker: verdict.worker } : { kind: verdict.kind };
          return handler(req, res);
        }
        const wantsHtml = verdict.status === 401 && req.method === "GET" && (req.headers.accept ?? "").includes("text/html");
        if (wantsHtml) {
          res.writeHead(303, { location: "/login", "cache-control": "no-store" });
          return res.end();
        }
        res.writeHead(verdict.status, { "content-type": "application/json; charset=utf-8" });
        res.end(JSON.stringify({ error: verdict.status === 401 ? "UNAUTHORIZED" : "FORBIDDEN", message: verdict.reason }));
      });
      ws.attach(server);
      return server;
    },
  });

  registerLogin(app, { token: config.token, codes, port: () => boundPort });
  // repositories of agents on workers, over git (clone, fetch; push of switchyard/* branches)
  await registerGitHttp(app, {
    resolve: (key) => agents.repoOfExportKey(key),
    authorize: async ({ token, key, refs }) => {
      if (refs) return { status: 403, message: "only switchyard/* branches may be pushed, and never deleted" };
      if (config.token && safeEqual(token, config.token)) return true;
      const worker = workers.workerOfToken(token);
      if (!worker) return { status: 401, message: "unknown token" };
      return (await agents.workerUsesRepo(worker, key)) ? true : { status: 403, message: `worker ${worker} has no agent on this repository` };
    },
    authorizeUpdates: async ({ token, key, refs }) => {
      const worker = config.token && safeEqual(token, config.token) ? null : workers.workerOfToken(token);
      if (!worker) return null;
      const fenced = await agents.workerMayPush(worker, key, refs.map((r) => r.refName));
      return fenced && { refs: refs.filter((r) => fenced.refs.includes(r.refName)), denial: { status: 403, message: fenced.reason } };
    },
  });
  ws.onWorker((socket, worker) => workers.accept(socket, worker));
  app.get("/health", async () => healthOf(services));
  registerDaemonWebhook(app, daemons, agents);
  // the `switchyard` MCP server: /mcp, and /mcp/agents/:id (that agent's, with its `approve` tool)
  registerMcpRoutes(app, { services, log, version: VERSION });
  app.get("/ws", async (_req, reply) => reply.code(400).type("text/plain; charset=utf-8").send("WebSocket upgrade failed"));

  const trpcOptions = {
    router: appRouter,
    createContext: ({ req }): Context => ({ ...services, principal: principalOf(req.raw as IncomingMessage & { principal?: Principal }) }),
    onError: ({ error, path }) => {
      if (error.code === "INTERNAL_SERVER_ERROR") log.error({ path, err: { message: redact(error.message), stack: error.stack && redact(error.stack) } }, "tRPC procedure failed");
    },
  } satisfies FastifyTRPCPluginOptions<AppRouter>["trpcOptions"];
  // subscriptions over SSE: the same bytes as tRPC's, written with less per message (trpc/sse.ts)
  registerSubscriptionSse(app, "/trpc", trpcOptions);
  await app.register(fastifyTRPCPlugin, { prefix: "/trpc", trpcOptions });
  await registerDashboard(app, config.webDir);

  attachCommaProtocol(ws, { services, log, runs, followers, models });

  let stopping: Promise<void> | undefined;
  const server: SwitchyardServer = {
    services,
    store,
    get db() {
      return sqliteDb();
    },
    log,
    app,
    async start() {
      const recovered = await runs.recover();
      if (recovered.resumed.length + recovered.interrupted.length > 0) log.info(recovered, "runs recovered after a restart");
      const daemonsRecovered = await daemons.recover();
      if (daemonsRecovered.resumed.length + daemonsRecovered.failed.length > 0) log.info(daemonsRecovered, "daemons recovered after a restart");
      await app.listen({ host: config.host, port: config.port });
      boundPort = (app.server.address() as AddressInfo).port;
      await cluster.start(server.url());
      // after listen: a dead agent's completion may resume it, and it must reach us
      const agentsRecovered = await agents.recover();
      if (agentsRecovered.reattached.length + agentsRecovered.finished.length > 0) log.info(agentsRecovered, "agents recovered after a restart");
      await workers.start();
      pruner?.start();
      await bus.publish("server.started", {
        version: VERSION,
        pid: process.pid,
        host: config.host,
        port: boundPort,
        resumedFromEventId: bus.lastId,
      });
      return { url: server.url(), port: boundPort };
    },
    url() {
      const host = config.host.includes(":") ? `[${config.host}]` : config.host;
      return `http://${host === "0.0.0.0" || host === "[::]" ? "127.0.0.1" : host}:${boundPort}`;
    },
    loginLink() {
      return config.token ? `${server.url()}/login?code=${codes.mint()}` : `${server.url()}/`;
    },
    stop(reason = "stop") {
      stopping ??= (async () => {
        try {
          await bus.publish("server.shutdown_started", { reason });
        } catch {
          // the bus may already be closed
        }
        await pruner?.stop();
        await workers.stop();
        await runs.shutdown();
        await daemons.shutdown();
        await agents.shutdown();
        // leases expire now: another server of the database takes over what this one owned
        await cluster.stop();
        accounts.close();
        // Connections are cut, not ended: clients reconnect and resume from their last event id.
        ws.close();
        await app.close();
        bus.close();
        await store.close();
      })();
      return stopping;
    },
  };
  return server;
}
