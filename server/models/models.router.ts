import { publicProcedure, router } from "../trpc/init";
import { modelRegistryFor } from "./models.service";

/** Models and providers for the model picker; never exposes an API key. */
export const modelsRouter = router({
  /** Every known model: `{id, provider, label, contextWindow, available, reason?}`. */
  list: publicProcedure.query(({ ctx }) => modelRegistryFor(ctx.config).list()),

  /** Providers: `{id, name, kind, configured, baseUrl?}` (baseUrl without credentials). */
  providers: publicProcedure.query(({ ctx }) => modelRegistryFor(ctx.config).providers()),
});
