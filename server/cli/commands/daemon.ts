import type { Command } from ".";
import { clientFrom, connectionOptions, explain, parse } from "./common";

const USAGE = `usage: yard daemon <spawn|trigger|snapshot|stop|resume|list|delete> ...
  yard daemon spawn --task TEXT [--name N] [--model M] [--system TEXT] [--capacity N] [--wake-ms N] [--watch PATH]... [--persist-path DIR]
  yard daemon trigger <daemon> <payload: JSON, or text>     <daemon>: its id or its name, in every command
  yard daemon snapshot|stop|delete <daemon>
  yard daemon resume <daemon, or its root directory>
  yard daemon list`;

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

/** Parse a payload as JSON when it is JSON, else keep the text. */
function payloadOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

type Client = ReturnType<typeof clientFrom>["client"];

/** A daemon by id or name, else a root directory (a path-like argument, or no daemon of that name). */
async function resume(client: Client, ref: string) {
  if (/[\\/]/.test(ref) || ref.startsWith(".") || ref.startsWith("~")) return client.daemons.resume.mutate({ path: ref });
  try {
    return await client.daemons.resume.mutate({ id: ref });
  } catch (err) {
    const notFound = (err as { data?: { appCode?: string } }).data?.appCode === "DAEMON_NOT_FOUND";
    if (!notFound || ref.startsWith("daemon_")) throw err;
    return client.daemons.resume.mutate({ path: ref });
  }
}

export const daemon: Command = {
  summary: "daemon agents: yard daemon spawn|trigger|snapshot|stop|resume|list|delete",
  async run(args) {
    const [sub, ...rest] = args;
    const { values, positionals } = parse(
      rest,
      {
        ...connectionOptions,
        task: { type: "string" },
        name: { type: "string" },
        model: { type: "string" },
        system: { type: "string" },
        capacity: { type: "string" },
        "wake-ms": { type: "string" },
        watch: { type: "string", multiple: true },
        "persist-path": { type: "string" },
      },
      true,
    );
    const { url, client } = clientFrom(values);
    const id = positionals[0];
    try {
      switch (sub) {
        case "spawn":
          if (!values.task) throw new Error(USAGE);
          print(
            await client.daemons.spawn.mutate({
              task: values.task,
              name: values.name,
              model: values.model,
              system: values.system,
              eventQueueCapacity: values.capacity ? Number(values.capacity) : undefined,
              wakeIntervalMs: values["wake-ms"] ? Number(values["wake-ms"]) : undefined,
              watchPaths: values.watch,
              persistPath: values["persist-path"],
            }),
          );
          return 0;
        case "trigger":
          if (!id || positionals.length < 2) throw new Error(USAGE);
          print(await client.daemons.trigger.mutate({ id, payload: payloadOf(positionals.slice(1).join(" ")) }));
          return 0;
        case "snapshot":
          if (!id) throw new Error(USAGE);
          print(await client.daemons.snapshot.query({ id }));
          return 0;
        case "stop":
          if (!id) throw new Error(USAGE);
          print(await client.daemons.stop.mutate({ id }));
          return 0;
        case "delete":
          if (!id) throw new Error(USAGE);
          print(await client.daemons.delete.mutate({ id }));
          return 0;
        case "resume":
          if (!id) throw new Error(USAGE);
          print(await resume(client, id));
          return 0;
        case "list":
          print(await client.daemons.list.query());
          return 0;
        default:
          throw new Error(USAGE);
      }
    } catch (err) {
      throw explain(err, url);
    }
  },
};
