import { parseArgs } from "node:util";
import { startFakeModelServer } from "./server";

/**
 * Starts the fake model server and prints `{"url": "http://127.0.0.1:PORT"}` as one JSON line on
 * stdout, then runs until SIGTERM/SIGINT. Usage: `npx tsx server/testing/fake-model/cli.ts --port 0`.
 */

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { port: { type: "string", default: "0" }, host: { type: "string", default: "127.0.0.1" } } });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`fake-model: --port must be an integer 0-65535, got ${JSON.stringify(values.port)}\n`);
    process.exit(2);
  }
  const fake = await startFakeModelServer({ port, host: values.host });
  process.stdout.write(`${JSON.stringify({ url: fake.url })}\n`);
  const stop = (): void => {
    void fake.close().then(() => process.exit(0));
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

void main();
