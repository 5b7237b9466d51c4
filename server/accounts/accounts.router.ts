import { z } from "zod";
import { AccountProvider, AddAccountInput } from "../../shared/accounts";
import { publicProcedure, router } from "../trpc/init";

const ref = z.object({ account: z.string().min(1) }).strict();

/** Provider accounts: secrets go in, never out (a hint of the last 4 characters only). */
export const accountsRouter = router({
  list: publicProcedure
    .input(z.object({ provider: AccountProvider.optional() }).strict().default({}))
    .query(({ input, ctx }) => ctx.accounts.list(input)),
  get: publicProcedure.input(ref).query(({ input, ctx }) => ctx.accounts.get(input.account)),
  add: publicProcedure.input(AddAccountInput).mutation(({ input, ctx }) => ctx.accounts.add(input)),
  remove: publicProcedure
    .input(z.object({ account: z.string().min(1), force: z.boolean().default(false) }).strict())
    .mutation(async ({ input, ctx }) => {
      await ctx.accounts.remove(input.account, { force: input.force });
      return { removed: input.account };
    }),
  /** Clear an exhausted or invalid mark now. */
  reset: publicProcedure.input(ref).mutation(({ input, ctx }) => ctx.accounts.reset(input.account)),
});
