import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import type { ErrorCode } from "../shared/errors";

export type { ErrorCode } from "../shared/errors";

/**
 * A domain error: a stable literal code of the catalogue in shared/errors.ts and a message a user
 * can act on. Thrown by services, translated once per front door (tRPC in trpc/init.ts, protocol
 * frames in their own layer). A code that is not in the catalogue does not compile.
 */
export class DomainError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  readonly kind: TRPC_ERROR_CODE_KEY;
  readonly details?: unknown;

  constructor(code: C, message: string, options: { kind?: TRPC_ERROR_CODE_KEY; details?: unknown; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "DomainError";
    this.code = code;
    this.kind = options.kind ?? "BAD_REQUEST";
    this.details = options.details;
  }
}

export function isDomainError(err: unknown): err is DomainError {
  return err instanceof DomainError;
}
