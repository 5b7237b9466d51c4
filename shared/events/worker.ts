import { z } from "zod";

/** Workers on other machines (no scope: workers are global). Payloads never carry a token. */
export const WorkerEvents = {
  "worker.token_created": z.object({ name: z.string() }),
  "worker.revoked": z.object({ name: z.string() }),
  "worker.connected": z.object({ name: z.string(), epoch: z.number().int(), hostname: z.string(), capacity: z.number().int(), labels: z.array(z.string()), providers: z.array(z.string()) }),
  "worker.disconnected": z.object({ name: z.string(), reason: z.string().max(2000) }),
  /** No contact for the lost delay: its running agents were interrupted. */
  "worker.lost": z.object({ name: z.string(), interrupted: z.array(z.string()) }),
  "worker.drained": z.object({ name: z.string(), drained: z.boolean() }),
} as const;
