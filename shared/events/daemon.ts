import { z } from "zod";
import { DaemonLoopStatus, DaemonStatus } from "../statuses";

/** Daemon lifecycle events (scope: daemonId). Every `summary` is at most 160 characters. */
const summary = z.string().max(160);
const reason = z.enum(["spawn", "message", "resume", "watch", "timer"]);

export const DaemonEvents = {
  "daemon.spawned": z.object({ summary, name: z.string(), persistPath: z.string(), model: z.string() }),
  "daemon.triggered": z.object({ summary, seq: z.number().int().nonnegative(), pendingEventCount: z.number().int() }),
  "daemon.turn_completed": z.object({ summary, reason, seq: z.number().int().optional(), iteration: z.number().int(), text: z.string() }),
  "daemon.snapshotted": z.object({ summary, savedAt: z.string(), pendingEventCount: z.number().int() }),
  "daemon.resumed": z.object({ summary, pendingEventCount: z.number().int(), replayedSeq: z.number().int().optional() }),
  "daemon.stopped": z.object({ summary, status: DaemonStatus, loopStatus: DaemonLoopStatus.optional(), requeuedSeq: z.number().int().optional() }),
  "daemon.failed": z.object({ summary, code: z.string(), message: z.string() }),
} as const;
