import { z } from "zod";

/**
 * Stable error codes of Switchyard's domains. A domain throws `new DomainError(code, message)`;
 * the tRPC layer and the protocol layers translate it in one place each.
 */
export const ErrorCode = z.enum([
  "BAD_INPUT",
  "NOT_FOUND",
  "CONFLICT",
  "UNAUTHORIZED",
  "FORBIDDEN",
  "INTERNAL_ERROR",
  "CONFIG_INVALID",
  "SHUTTING_DOWN",
  "STRATEGY_INVALID",
  "STRATEGY_NOT_FOUND",
  "STRATEGY_PARSE_ERROR",
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const ErrorData = z.object({
  code: z.string(),
  message: z.string(),
  details: z.unknown().optional(),
});
export type ErrorData = z.infer<typeof ErrorData>;
