import { CreateWorkerTokenInput, DrainWorkerInput, WorkerNameInput } from "../../shared/workers";
import { publicProcedure, router } from "../trpc/init";

/** workers.*: workers on other machines (`yard worker`): their tokens, list and drain. Humans only (agent-scope.ts). */
export const workersRouter = router({
  list: publicProcedure.query(({ ctx }) => ctx.workers.list()),
  get: publicProcedure.input(WorkerNameInput).query(({ input, ctx }) => ctx.workers.get(input.name)),
  /** A new token for a worker (shown once; a worker of that name is registered). Its previous token stops working. */
  createToken: publicProcedure.input(CreateWorkerTokenInput).mutation(({ input, ctx }) => ctx.workers.createToken(input.name)),
  revoke: publicProcedure.input(WorkerNameInput).mutation(async ({ input, ctx }) => {
    await ctx.workers.revoke(input.name);
    return ctx.workers.get(input.name);
  }),
  /** No new agents on it (drained: true), or again (false); running ones finish. */
  drain: publicProcedure.input(DrainWorkerInput).mutation(({ input, ctx }) => ctx.workers.drain(input.name, input.drained)),
});
