/**
 * A prompt passed as one argv element must never be read as an option: `claude -p "- fix it"`
 * fails with "unknown option '- fix it'" (commander), and clap, argparse and yargs refuse such a
 * value too. A leading space keeps every parser from seeing a dash, and a model does not care.
 * Codex, whose prompt is a trailing positional, uses `--` instead (see codex.ts).
 */
export function promptArg(prompt: string): string {
  return prompt.startsWith("-") ? ` ${prompt}` : prompt;
}
