import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CommanderError, type Command } from "commander";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../paths";
import { capturedIo, commandPaths, yard } from "../testing/cli-harness";
import { Cli } from "./commands/common";
import { COMMAND_NAMES } from "./commands/index";
import { createProgram } from "./program";

/**
 * The `yard` command tree, walked: every command and subcommand answers --help and -h with its
 * usage, options and an example, and names a wrong option. The list comes from the tree itself,
 * so a command added without help or an example fails here.
 */
const program = createProgram(new Cli(capturedIo()));
const paths = commandPaths(program);
const commandAt = (path: string[]): Command => path.reduce<Command>((cmd, name) => cmd.commands.find((c) => c.name() === name)!, program);

describe("the command tree", () => {
  it("holds every command the CLI had before commander, and the new ones", () => {
    const top = program.commands.map((c) => c.name());
    for (const name of ["start", "health", "run", "runs", "continue", "agent", "account", "listen", "ask", "answer", "daemon", "events", "emit", "login", "doctor", "completion"]) expect(top).toContain(name);
    const sub = (name: string) => commandAt([name]).commands.map((c) => c.name());
    expect(sub("agent").sort()).toEqual(["approvals", "approve", "cleanup", "delete", "deny", "diff", "get", "list", "logs", "merge", "message", "resume", "spawn", "stop", "sweep"]);
    expect(sub("daemon").sort()).toEqual(["delete", "list", "resume", "snapshot", "spawn", "stop", "trigger"]);
    expect(sub("account").sort()).toEqual(["add", "list", "remove", "reset"]);
  });
});

/** `yard <args>` on the whole tree, as `yard --help` builds it (runYard builds only the group a command line names). */
async function onWholeTree(args: string[]): Promise<{ out: string; err: string }> {
  const io = capturedIo();
  try {
    await createProgram(new Cli(io)).parseAsync(args, { from: "user" });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
  }
  return io.result();
}

describe("building only the named command's group", () => {
  it("knows every top-level command of the tree, in its order", () => {
    expect(program.commands.map((c) => c.name())).toEqual(COMMAND_NAMES);
  });

  it.each(paths.map((p) => ({ path: p.join(" "), args: p })))("yard $path: --help and a wrong option read as on the whole tree", async ({ args }) => {
    for (const line of [[...args, "--help"], [...args, "--no-such-option"]]) {
      const { out, err } = await yard(line);
      expect({ out, err }).toEqual(await onWholeTree(line));
    }
  });
});

describe.each(paths.map((p) => ({ path: p.join(" "), args: p })))("yard $path", ({ path, args }) => {
  const cmd = commandAt(args);

  it.each(["--help", "-h"])("%s prints its usage, options and an example, exit 0", async (flag) => {
    const r = await yard([...args, flag]);
    expect(r.code).toBe(0);
    expect(r.err).toBe("");
    expect(r.out).toMatch(new RegExp(`^Usage: yard ${path} `));
    expect(cmd.description(), "a description").not.toBe("");
    expect(r.out).toContain(cmd.description().slice(0, 30));
    for (const o of cmd.options) expect(r.out).toContain(o.long ?? o.short);
    for (const sub of cmd.commands) expect(r.out).toContain(sub.name());
    const example = /\nExamples?:\n((?: {2}\$ .*\n)+)/.exec(r.out)?.[1];
    expect(example, "an Example section").toBeDefined();
    expect(example).toContain(`yard ${args[0]}`);
  });

  it("names a wrong option and prints its usage, exit non-zero", async () => {
    const r = await yard([...args, "--no-such-option"]);
    expect(r.code).not.toBe(0);
    expect(r.out).toBe("");
    expect(r.err).toContain("unknown option '--no-such-option'");
    expect(r.err).toContain(`Usage: yard ${path} `);
  });
});

describe("yard", () => {
  it("--help and -h: the commands with their summaries, exit 0", async () => {
    for (const flag of ["--help", "-h"]) {
      const r = await yard([flag]);
      expect(r.code).toBe(0);
      for (const c of program.commands) expect(r.out).toMatch(new RegExp(`^ {2}${c.name()}\\b`, "m"));
    }
  });

  it("with no command prints the usage on stderr, exit 1", async () => {
    const r = await yard([]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("Usage: yard [options] [command]");
  });

  it("an unknown command is named, with a suggestion", async () => {
    const r = await yard(["agnet", "list"]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("unknown command 'agnet'");
    expect(r.err).toContain("(Did you mean agent?)");
  });

  it("--version and -V print the version in package.json", async () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string };
    for (const flag of ["--version", "-V"]) expect(await yard([flag])).toEqual({ code: 0, out: `${version}\n`, err: "" });
  });

  it("help <command> is the command's --help", async () => {
    const r = await yard(["help", "doctor"]);
    expect(r.code).toBe(0);
    expect(r.out).toBe((await yard(["doctor", "--help"])).out);
  });

  it("a missing required option is named after the options are known good", async () => {
    const missing = await yard(["agent", "spawn", "--prompt", "x"]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("required option '--provider <name>' not specified");
    expect(missing.err).toContain("Usage: yard agent spawn");
    const typo = await yard(["agent", "spawn", "--promt", "x"]);
    expect(typo.err).toContain("unknown option '--promt'");
    expect(typo.err).toContain("(Did you mean --prompt?)");
  });

  it("a bad value of an option with choices names the choices", async () => {
    const r = await yard(["agent", "spawn", "--provider", "fake", "--prompt", "x", "--mode", "sing"]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/argument 'sing' is invalid\. Allowed choices are execute, plan, discuss, refine, review/);
  });

  it("an unreachable server is explained, exit 1", async () => {
    const r = await yard(["agent", "list", "--url", "http://127.0.0.1:9"]);
    expect(r.code).toBe(1);
    expect(r.err).toBe("yard: cannot reach the Switchyard server at http://127.0.0.1:9: is it running? (yard start)\n");
  });
});
