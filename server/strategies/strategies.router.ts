import { GetStrategyInput, ListStrategiesInput, ValidateStrategyInput } from "../../shared/strategy";
import { publicProcedure, router } from "../trpc/init";
import { getStrategy, listStrategies, validateStrategySource } from "./strategies.service";

/** Strategy files: discovery, one strategy with its graph, and validation (issues as data). */
export const strategiesRouter = router({
  /** The strategies of a cwd (its strategies/, .comma/strategies/, manifest), home and examples. */
  list: publicProcedure.input(ListStrategiesInput).query(({ input, ctx }) => listStrategies(input, { home: ctx.config.home })),

  /** One strategy by path or id; an invalid file fails with STRATEGY_INVALID and its issues. */
  get: publicProcedure.input(GetStrategyInput).query(({ input, ctx }) => getStrategy(input, { home: ctx.config.home })),

  /**
   * Checks strategy text or a file: `{valid, issues, warnings}`, never an error for a bad
   * strategy. A mutation so that the text travels in the request body, not the URL.
   */
  validate: publicProcedure.input(ValidateStrategyInput).mutation(({ input, ctx }) => validateStrategySource(input, { home: ctx.config.home })),
});
