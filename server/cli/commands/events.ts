import type { Command } from ".";
import { clientFrom, connectionOptions, explain, parse } from "./common";

export const events: Command = {
  summary: "follow the event stream as JSON lines: yard events [--after ID] [--run ID|--agent ID|--daemon ID]",
  async run(args) {
    const { values } = parse(args, { ...connectionOptions, after: { type: "string" }, run: { type: "string" }, agent: { type: "string" }, daemon: { type: "string" } });
    const { url, client } = clientFrom(values);
    const scope = values.run ? { kind: "run" as const, id: values.run } : values.agent ? { kind: "agent" as const, id: values.agent } : values.daemon ? { kind: "daemon" as const, id: values.daemon } : undefined;
    await new Promise<void>((resolve, reject) => {
      const sub = client.events.onEvent.subscribe(
        { lastEventId: values.after ?? null, scope },
        {
          onData: (e) => void process.stdout.write(`${JSON.stringify(e.data)}\n`),
          onError: (err) => {
            sub.unsubscribe();
            reject(explain(err, url));
          },
          onComplete: () => resolve(),
        },
      );
      process.once("SIGINT", () => {
        sub.unsubscribe();
        resolve();
      });
    });
    return 0;
  },
};
