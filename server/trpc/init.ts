import { initTRPC, TRPCError } from "@trpc/server";
import { ZodError } from "zod";
import { databaseUnavailable } from "../db/pg/errors";
import type { ErrorData } from "../../shared/errors";
import { isDomainError } from "../errors";
import type { Context } from "./context";
import { checkAgentScope } from "./agent-scope";
import { describeZodError } from "./errors";

const t = initTRPC.context<Context>().create({
  sse: {
    ping: { enabled: true, intervalMs: 10_000 },
    client: { reconnectAfterInactivityMs: 25_000 },
  },
  errorFormatter({ shape, error, ctx }) {
    const cause = error.cause;
    const zod = cause instanceof ZodError ? cause : undefined;
    const domainCode = isDomainError(cause) ? cause.code : undefined;
    const message = zod ? describeZodError(zod) : error.message;
    /** The stable domain code (e.g. DAEMON_QUEUE_FULL), VALIDATION_ERROR for refused input, or the tRPC code. */
    const appCode: ErrorData["appCode"] = domainCode ?? (zod ? "VALIDATION_ERROR" : shape.data.code);
    const safe = ctx ? ctx.redact(message) : message;
    return {
      ...shape,
      message: safe,
      data: {
        ...shape.data,
        stack: undefined,
        appCode,
        issues: zod?.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message })),
        details: isDomainError(cause) ? cause.details : undefined,
      },
    };
  },
});

/** Domain errors become TRPCErrors here, in one place. */
const translateErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok) {
    const cause = result.error.cause;
    if (isDomainError(cause) && result.error.code === "INTERNAL_SERVER_ERROR") {
      throw new TRPCError({ code: cause.kind, message: cause.message, cause });
    }
    // the database is down or restarting: a clear 503, not an internal error
    const down = result.error.code === "INTERNAL_SERVER_ERROR" ? databaseUnavailable(cause) : undefined;
    if (down) throw new TRPCError({ code: down.kind, message: down.message, cause: down });
  }
  return result;
});

/** An agent's own token reaches only what agent-scope.ts allows it. */
const agentScope = t.middleware(async ({ ctx, path, getRawInput, next }) => {
  if (ctx.principal?.kind === "agent") await checkAgentScope(ctx, path, await getRawInput());
  return next();
});

export const router = t.router;
export const publicProcedure = t.procedure.use(translateErrors).use(agentScope);
export const createCallerFactory = t.createCallerFactory;
