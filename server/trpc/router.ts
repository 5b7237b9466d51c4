import { accountsRouter } from "../accounts/accounts.router";
import { agentsRouter } from "../agents/agents.router";
import { conversationsRouter } from "../conversations/conversations.router";
import { inboxRouter } from "../inbox/inbox.router";
import { eventsRouter } from "../events/events.router";
import { healthOf } from "../http/health";
import { daemonsRouter } from "../daemons/daemons.router";
import { modelsRouter } from "../models/models.router";
import { runsRouter } from "../runs/runs.router";
import { strategiesRouter } from "../strategies/strategies.router";
import { publicProcedure, router } from "./init";
import { workersRouter } from "../workers/workers.router";

export const appRouter = router({
  health: publicProcedure.query(({ ctx }) => healthOf(ctx)),
  system: router({
    info: publicProcedure.query(({ ctx }) => ({
      version: ctx.version,
      home: ctx.config.home,
      authRequired: !!ctx.config.token,
      lastEventId: ctx.bus.lastId,
      /** Agent processes being watched now (/health keeps the reference daemon's exact shape). */
      activeAgents: ctx.agents.activeCount,
      providers: {
        anthropic: !!ctx.config.anthropicApiKey,
        openai: !!ctx.config.openaiApiKey,
      },
    })),
  }),
  /** The servers sharing this database, live in the last 10 s (`self`: the one answering). */
  servers: router({ list: publicProcedure.query(({ ctx }) => ctx.cluster.live()) }),
  workers: workersRouter,
  events: eventsRouter,
  strategies: strategiesRouter,
  runs: runsRouter,
  models: modelsRouter,
  daemons: daemonsRouter,
  agents: agentsRouter,
  accounts: accountsRouter,
  inbox: inboxRouter,
  conversations: conversationsRouter,
  auth: router({
    /** Mint a one-time login link for a browser (the caller already holds the token). */
    loginLink: publicProcedure.mutation(({ ctx }) => ({ link: ctx.loginLink() })),
  }),
});

export type AppRouter = typeof appRouter;
