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
import type { Cli } from "./common";

/**
 * Every `yard` command, in the order `yard --help` lists them. A command is a `register*`
 * function adding itself (and its subcommands) to the tree with its options, help and example.
 */
export function registerCommands(program: Command, cli: Cli): void {
  for (const register of [registerStart, registerHealth, registerServers, registerDoctor, registerRun, registerAgent, registerAccount, registerConversations, registerDaemon, registerEvents, registerEmit, registerLogin, registerMcp, registerDb, registerCompletion]) {
    register(program, cli);
  }
}
