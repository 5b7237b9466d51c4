import type { Command } from "commander";
import type { Check, DoctorReport } from "../doctor";
import { plural, type Style } from "../io";
import { CLI_VERSION } from "../version";
import { examples, jsonOption, type Cli } from "./common";

const TITLE = 16;

/** Words of `text` in lines of at most `width`, every line after the first indented. */
function wrap(text: string, width: number, indent: number): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > width - indent) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines.join(`\n${" ".repeat(indent)}`);
}

export function renderReport(r: DoctorReport, style: Style, width: number): string {
  const marks: Record<Check["status"], string> = { ok: style.green("✓"), info: style.dim("-"), warn: style.yellow("!"), fail: style.red("✗") };
  const mark = (c: Check) => marks[c.status];
  const indent = 2 + TITLE + 1;
  const lines = r.checks.map((c) => {
    const head = `${mark(c)} ${c.title.padEnd(TITLE)} ${wrap(c.detail, width, indent)}`;
    return c.fix ? `${head}\n${" ".repeat(indent)}${style.dim(wrap(`fix: ${c.fix}`, width, indent))}` : head;
  });
  const failed = r.checks.filter((c) => c.status === "fail").length;
  const warned = r.checks.filter((c) => c.status === "warn").length;
  const summary = failed > 0 ? style.red(`${plural(failed, "problem")} to fix (✗) before Switchyard can run`) : style.green("Nothing required is missing");
  return `Switchyard ${r.version}: doctor\n\n${lines.join("\n")}\n\n${summary}${warned > 0 ? `; ${plural(warned, "warning")} (!) for optional features` : ""}.\n`;
}

export function registerDoctor(program: Command, cli: Cli): void {
  const cmd = program
    .command("doctor")
    .description("check what Switchyard needs (Node, git, agent CLIs and their keys, data dir, port...) and how to fix each")
    .action(async (opts: { json?: boolean }, self: Command) => {
      const { url, token } = cli.connection(self);
      // loaded here, not with every command: the checks read the config (zod) and the providers
      const [{ runDoctor }, { REPO_ROOT }] = await Promise.all([import("../doctor"), import("../../paths")]);
      const report = await runDoctor({
        env: cli.io.env,
        repoRoot: REPO_ROOT,
        cwd: process.cwd(),
        version: CLI_VERSION,
        url,
        token,
      });
      cli.exitCode = report.ok ? 0 : 1;
      if (opts.json) return cli.json(report);
      cli.print(renderReport(report, cli.style, cli.width));
    });
  jsonOption(cmd);
  examples(cmd, "yard doctor", "yard doctor --json | jq '.checks[] | select(.status != \"ok\")'");
}
