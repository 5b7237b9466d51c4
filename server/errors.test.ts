import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import { describe, expect, it } from "vitest";
import type { ErrorCode, TransportErrorCode } from "../shared/errors";
import type { ServerInUse } from "./cluster/cluster.service";
import type { StartupError } from "./app";
import type { ConfigError } from "./config";
import type { SchemaNewerError } from "./db/client";
import { DomainError } from "./errors";
import type { BusClosedError } from "./events/bus";
import type { RunCancelledError } from "./runs/run-state";

/** `true` only when A and B are the same set of literals. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;

/** tRPC's codes are the transport domain (the formatter answers one when there is no domain code). */
export type TransportIsTrpc = Assert<Same<TransportErrorCode, TRPC_ERROR_CODE_KEY>>;
/** The errors that are not DomainErrors but carry a code carry one of the catalogue too. */
export type OtherCodesKnown = Assert<
  [ServerInUse["code"], StartupError["code"], ConfigError["code"], SchemaNewerError["code"], BusClosedError["code"], RunCancelledError["code"]] extends ErrorCode[] ? true : false
>;

describe("DomainError", () => {
  it("takes only a code of shared/errors.ts (checked by npm run typecheck)", () => {
    // @ts-expect-error: NOT_A_CODE is in no union of shared/errors.ts
    const unknown = new DomainError("NOT_A_CODE", "nope");
    // @ts-expect-error: a free string is not a code either
    const free = new DomainError(String("DAEMON_QUEUE_FULL"), "nope");
    // @ts-expect-error: a narrowed DomainError takes only its own code
    const narrowed: DomainError<"DAEMON_QUEUE_FULL"> = new DomainError("DAEMON_NOT_FOUND", "nope");
    expect([unknown.code, free.code, narrowed.code]).toEqual(["NOT_A_CODE", "DAEMON_QUEUE_FULL", "DAEMON_NOT_FOUND"]);
  });

  it("keeps its code, kind and details", () => {
    const err = new DomainError("DAEMON_QUEUE_FULL", "full", { kind: "TOO_MANY_REQUESTS", details: { capacity: 2 } });
    expect(err).toMatchObject({ code: "DAEMON_QUEUE_FULL", kind: "TOO_MANY_REQUESTS", details: { capacity: 2 }, message: "full" });
  });
});
