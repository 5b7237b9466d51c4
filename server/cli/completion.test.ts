import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { capturedIo, commandPaths, yard } from "../testing/cli-harness";
import { Cli } from "./commands/common";
import { createProgram } from "./program";

/** `yard completion bash|zsh`: scripts made from the command tree, so every command completes. */
const program = createProgram(new Cli(capturedIo()));
const top = program.commands.map((c) => c.name());

/** What bash offers for `yard <words>` followed by <current>, with the script loaded. */
function bashCompletes(script: string, words: string[], current: string): string[] {
  const line = ["yard", ...words, current];
  const test = `${script}\nCOMP_WORDS=(${line.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${line.length - 1}; _yard; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const r = spawnSync("bash", ["--norc", "--noprofile", "-c", test], { encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.split("\n").filter(Boolean);
}

describe("yard completion", () => {
  it.each(["bash", "zsh"])("%s: the script names every command and subcommand", async (shell) => {
    const r = await yard(["completion", shell]);
    expect(r.code).toBe(0);
    for (const name of top) expect(r.out).toMatch(new RegExp(`\\b${name}\\b`));
    for (const path of commandPaths(program)) expect(r.out).toContain(path[path.length - 1]);
    expect(r.out).toContain(shell === "bash" ? "complete -o default -F _yard yard" : "#compdef yard");
  });

  it("bash: completes commands, subcommands, options and option choices", async () => {
    const script = (await yard(["completion", "bash"])).out;
    expect(bashCompletes(script, [], "")).toEqual(top);
    expect(bashCompletes(script, [], "ag")).toEqual(["agent"]);
    expect(bashCompletes(script, ["agent"], "")).toContain("spawn");
    expect(bashCompletes(script, ["agent"], "s")).toEqual(["spawn", "stop", "sweep"]);
    expect(bashCompletes(script, ["agent", "spawn"], "--pr")).toEqual(["--provider", "--prompt"]);
    expect(bashCompletes(script, ["agent", "spawn", "--mode"], "")).toEqual(["execute", "plan", "discuss", "refine", "review"]);
    expect(bashCompletes(script, ["daemon"], "tr")).toEqual(["trigger"]);
    expect(bashCompletes(script, ["daemon", "list", "--url", "http://x"], "--j")).toEqual(["--json"]);
    expect(bashCompletes(script, ["agent", "spawn", "--prompt"], "")).toEqual([]); // a value: files, not commands
    expect(bashCompletes(script, ["completion"], "")).toEqual([]);
  });

  it("zsh: offers commands with their descriptions, options and choices", async () => {
    const script = (await yard(["completion", "zsh"])).out;
    // no silent skip: zsh is a test dependency (.ci/run installs it)
    if (spawnSync("zsh", ["-n"], { input: script }).error) throw new Error("zsh is not installed: apt-get install zsh (the zsh completion is tested in a real zsh)");
    // zsh's completion builtins replaced by printers, then _yard called as a widget would be
    const stubs = `compdef() { :; }\n_describe() { print -l -- "$3" \${(P)4}; }\ncompadd() { shift; print -l -- \${(P)1}; }\n_files() { print files; }`;
    const offers = (words: string[]) => {
      const call = `words=(yard ${words.map((w) => `'${w}'`).join(" ")}); CURRENT=${words.length + 1}; _yard`;
      const r = spawnSync("zsh", ["-f", "-c", `${stubs}\n${script}\n${call}`], { encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout.split("\n").filter(Boolean);
    };
    expect(offers([""])).toEqual(["command", ...program.commands.map((c) => `${c.name()}:${c.description()}`)]);
    expect(offers(["agent", "sp"])).toContain("spawn:start an agent on a task, in a new worktree on branch switchyard/<alias>");
    expect(offers(["agent", "spawn", "--pr"])).toContain("--prompt:the task (required)");
    expect(offers(["agent", "spawn", "--mode", ""])).toEqual(["execute", "plan", "discuss", "refine", "review"]);
    expect(offers(["agent", "spawn", "--prompt", ""])).toEqual(["files"]);
  });

  it("an unknown shell is refused with the choices", async () => {
    const r = await yard(["completion", "fish"]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("Allowed choices are bash, zsh");
  });
});
