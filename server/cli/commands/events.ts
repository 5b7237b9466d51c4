import type { Command } from "commander";
import type { BusEvent } from "../../../shared/events";
import { collect, examples, jsonOption, type Cli } from "./common";

/** One event as a line for people: id, time, type, scope, then as much of the payload as fits. */
export function eventLine(e: BusEvent, width: number): string {
  const scope = Object.entries(e.scope)
    .map(([k, v]) => `${k.replace(/Id$/, "")}=${v}`)
    .join(" ");
  const head = `${String(e.id).padStart(6)} ${e.ts.slice(11, 19)} ${e.type}${scope ? ` ${scope}` : ""}`;
  const payload = JSON.stringify(e.payload) ?? "";
  const room = width - head.length - 1;
  if (room < 12 || payload === "{}") return head;
  return `${head} ${payload.length > room ? `${payload.slice(0, room - 1)}…` : payload}`;
}

export function registerEvents(program: Command, cli: Cli): void {
  const cmd = program
    .command("events")
    .description("follow the event stream (Ctrl-C to stop): one line an event, JSON lines with --json")
    .option("--after <id>", "start after this event id (default: from the first one)")
    .option("--run <id>", "only this run's events")
    .option("--agent <agent>", "only this agent's events (id or alias)")
    .option("--daemon <daemon>", "only this daemon's events (id or name)")
    .option("--type <type>", "only events of this type (repeatable; an event's old name before a rename works too)", collect)
    .action(async (opts: { after?: string; run?: string; agent?: string; daemon?: string; type?: string[]; json?: boolean }, self: Command) => {
      const client = await cli.client(self);
      const scope = opts.run ? { kind: "run" as const, id: opts.run } : opts.agent ? { kind: "agent" as const, id: opts.agent } : opts.daemon ? { kind: "daemon" as const, id: opts.daemon } : undefined;
      await new Promise<void>((resolve, reject) => {
        const sub = client.events.onEvent.subscribe(
          { lastEventId: opts.after ?? null, scope, ...(opts.type ? { types: opts.type } : {}) },
          {
            onData: (e) => {
              if (opts.json) cli.io.stdout.write(`${JSON.stringify(e.data)}\n`);
              else cli.print(eventLine(e.data, cli.width));
            },
            onError: (err) => {
              sub.unsubscribe();
              reject(err);
            },
            onComplete: () => resolve(),
          },
        );
        process.once("SIGINT", () => {
          sub.unsubscribe();
          resolve();
        });
      });
    });
  jsonOption(cmd);
  examples(cmd, "yard events --agent brave-otter", "yard events --type run.completed --type agent.went_idle", "yard events --json | jq .type");
}
