import type { Command } from "commander";
import type { Io } from "../cli/io";
import { runYard } from "../cli/program";

/**
 * The whole `yard` CLI in-process with captured output, for tests: the same parser, commands and
 * exit codes as `node bin/yard.mjs`, without a process per call.
 */
export interface YardResult {
  code: number | undefined;
  out: string;
  err: string;
}

export function capturedIo(env: Io["env"] = {}, tty = false): Io & { result(): { out: string; err: string } } {
  let out = "";
  let err = "";
  return {
    stdout: { write: (s: string) => (out += s), isTTY: tty, columns: 80 },
    stderr: { write: (s: string) => (err += s), isTTY: tty, columns: 80 },
    env,
    result: () => ({ out, err }),
  };
}

export async function yard(args: string[], opts: { env?: Io["env"]; tty?: boolean } = {}): Promise<YardResult> {
  const io = capturedIo(opts.env ?? {}, opts.tty);
  const code = await runYard(args, io);
  return { code, ...io.result() };
}

/** Every command of the tree as its path of names: ["agent"], ["agent", "spawn"], ... */
export function commandPaths(program: Command): string[][] {
  const paths: string[][] = [];
  const walk = (cmd: Command, path: string[]) => {
    for (const sub of cmd.commands) {
      paths.push([...path, sub.name()]);
      walk(sub, [...path, sub.name()]);
    }
  };
  walk(program, []);
  return paths;
}
