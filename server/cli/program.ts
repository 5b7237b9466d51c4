import { Command, CommanderError } from "commander";
import { registerCommands } from "./commands";
import { addConnectionOptions, checkRequired, Cli, explain } from "./commands/common";
import { colorsOn, processIo, type Io } from "./io";
import { CLI_VERSION } from "./version";

/**
 * The `yard` command tree (commander). Help, usage errors, `--version` and shell completion all
 * come from this one tree: a command added to commands/ is in all of them. `command`: the command
 * about to run (the first word of the command line); its group alone is built when it names one
 * (registerCommands), the whole tree otherwise.
 */
export function createProgram(cli: Cli, command?: string): Command {
  const { io } = cli;
  const program = new Command("yard");
  // set before the subcommands are made: `.command()` copies these to each of them
  program
    .description("Run, watch and steer AI agents: strategy runs, daemon agents and CLI coding agents.")
    .version(CLI_VERSION, "-V, --version", "print the version")
    .helpOption("-h, --help", "show this help")
    .helpCommand("help [command]", "show the help of a command")
    .exitOverride()
    .showHelpAfterError()
    .showSuggestionAfterError()
    .hook("preAction", checkRequired)
    // a command's options after its subcommand's name are the subcommand's (yard worker --name vs yard worker token create --name)
    .enablePositionalOptions()
    .configureHelp({ sortSubcommands: false })
    .configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
      getOutHelpWidth: () => (io.stdout.isTTY && io.stdout.columns ? io.stdout.columns : 80),
      getErrHelpWidth: () => (io.stderr.isTTY && io.stderr.columns ? io.stderr.columns : 80),
      getOutHasColors: () => colorsOn(io.stdout, io.env),
      getErrHasColors: () => colorsOn(io.stderr, io.env),
    });
  registerCommands(program, cli, command);
  addConnectionOptions(program);
  program.addHelpText(
    "after",
    `
The server: --url or SWITCHYARD_URL (default http://127.0.0.1:7422); its token: --token or SWITCHYARD_TOKEN.
Every command prints text for people; those that print data take --json for scripts.

Examples:
  $ yard start
  $ yard agent spawn --provider fake --repo ~/code/app --prompt "Write a notes file"
  $ yard agent spawn --help
`,
  );
  return program;
}

/** Run `yard <argv>`; resolves with the exit code (undefined: keep running, as `yard start` does). */
export async function runYard(argv: string[], io: Io = processIo()): Promise<number | undefined> {
  const cli = new Cli(io);
  const program = createProgram(cli, argv[0]);
  try {
    await program.parseAsync(argv, { from: "user" });
    return cli.exitCode;
  } catch (err) {
    // help and usage errors: commander has printed them already
    if (err instanceof CommanderError) return err.exitCode;
    const e = cli.url ? explain(err, cli.url) : err instanceof Error ? err : new Error(String(err));
    io.stderr.write(`yard: ${e.message}\n`);
    return 1;
  }
}
