import { account } from "./account";
import { agent } from "./agent";
import { answer, ask, listen } from "./conversations";
import { daemon } from "./daemon";
import { emit } from "./emit";
import { events } from "./events";
import { health } from "./health";
import { login } from "./login";
import { cont, run, runsList } from "./run";
import { start } from "./start";

export type Command = {
  summary: string;
  /** Resolves with the exit code; -1 keeps the process running (e.g. the server). */
  run(args: string[]): Promise<number>;
};

export const commands: Record<string, Command> = { start, health, run, runs: runsList, continue: cont, agent, account, listen, ask, answer, daemon, events, emit, login };
