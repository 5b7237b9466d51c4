import { commands } from "./commands";

/** `yard <command> [...]`: every command is a file under commands/. */
const USAGE = `yard: run, watch and steer AI agents

Usage: yard <command> [options]

Commands:
${Object.entries(commands)
  .map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`)
  .join("\n")}

Server address: --url or SWITCHYARD_URL (default http://127.0.0.1:7422); token: --token or SWITCHYARD_TOKEN.
`;

async function run(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "help" || name === "--help" || name === "-h") {
    process.stdout.write(USAGE);
    return name ? 0 : 1;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`yard: unknown command "${name}"\n\n${USAGE}`);
    return 1;
  }
  return command.run(rest);
}

run(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined && code !== -1) process.exitCode = code;
  },
  (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`yard: ${message}\n`);
    process.exitCode = 1;
  },
);
