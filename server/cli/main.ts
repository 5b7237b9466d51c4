import { runYard } from "./program";

/** `yard <command> [...]`: the command tree is in program.ts, each command in commands/. */

// `yard agent list | head`: a reader that stops early ends the command quietly
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code !== "EPIPE") throw err;
  process.exit(0);
});

runYard(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`yard: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
