import type { Command } from "commander";
import { registerAccount } from "./account";
import { registerAgent } from "./agent";
import { registerCompletion } from "./completion";
import { registerConversations } from "./conversations";
import { registerDaemon } from "./daemon";
import { registerDb } from "./db";
import { registerDoctor } from "./doctor";
import { registerEmit } from "./emit";
import { registerEvents } from "./events";
import { registerHealth } from "./health";
import { registerLogin } from "./login";
import { registerMcp } from "./mcp";
import { registerRun } from "./run";
import { registerServers } from "./servers";
import { registerStart } from "./start";
import { registerWorker } from "./worker";
import type { Cli } from "./common";

/**
 * Every `yard` command, in the order `yard --help` lists them, with the top-level names each
 * `register*` function adds to the tree (with their subcommands, options, help and example).
 */
const COMMANDS: ReadonlyArray<readonly [names: readonly string[], register: (program: Command, cli: Cli) => void]> = [
  [["start"], registerStart],
  [["health"], registerHealth],
  [["servers"], registerServers],
  [["worker"], registerWorker],
  [["doctor"], registerDoctor],
  [["run", "continue", "runs"], registerRun],
  [["agent"], registerAgent],
  [["account"], registerAccount],
  [["ask", "listen", "answer"], registerConversations],
  [["daemon"], registerDaemon],
  [["events"], registerEvents],
  [["emit"], registerEmit],
  [["login"], registerLogin],
  [["mcp"], registerMcp],
  [["db"], registerDb],
  [["completion"], registerCompletion],
];

/** The top-level command names, as COMMANDS declares them (a test holds them to the tree's). */
export const COMMAND_NAMES: readonly string[] = COMMANDS.flatMap(([names]) => names);

/**
 * Add the commands to the tree. `only`: the first word of the command line; when it names a
 * command, only that command's group is built. Building the whole tree (some 60 commands and their
 * options) is most of what a `yard` command does before its action; one command's help, parsing
 * and errors need only its own subtree. Anything else (`--help`, `help <command>`, a mistyped
 * command and its suggestion, `completion`, which prints the whole tree) builds all of it.
 */
export function registerCommands(program: Command, cli: Cli, only?: string): void {
  const one = only === "completion" ? undefined : COMMANDS.find(([names]) => only !== undefined && names.includes(only));
  for (const [, register] of one ? [one] : COMMANDS) register(program, cli);
}
