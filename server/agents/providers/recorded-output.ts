import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentStreamEvent } from "../../../shared/agents";
import { REPO_ROOT } from "../../paths";
import type { LineParser } from "./types";

/**
 * Test support for the parser tests: the recorded real CLI output (the shared reference set and
 * this folder's `__recorded__/`) and the reviewed expected events in `__expected__/`. Run the
 * parser tests with UPDATE_EXPECTED=1 to rewrite the expected files, then read the diff.
 */

export const SHARED_RECORDINGS = join(REPO_ROOT, "..", "shared", "reference", "agent-output");
const LOCAL_RECORDINGS = join(import.meta.dirname, "__recorded__");
const EXPECTED = join(import.meta.dirname, "__expected__");

export interface Recording {
  name: string;
  path: string;
}

/** Every recording whose file name passes `accept`, shared ones first. */
export function recordings(accept: (name: string) => boolean): Recording[] {
  return [SHARED_RECORDINGS, LOCAL_RECORDINGS].flatMap((dir) =>
    existsSync(dir)
      ? readdirSync(dir)
          .filter((name) => !name.endsWith(".md") && accept(name))
          .sort()
          .map((name) => ({ name, path: join(dir, name) }))
      : [],
  );
}

/** Feeds every line of a file (newline-split, as the tailer delivers them) to one parser. */
export function parseFile(parser: LineParser, path: string): AgentStreamEvent[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .flatMap((line) => parser.parseLine(line));
}

/** The reviewed events for a recording (rewritten first when UPDATE_EXPECTED is set). */
export function expectedEvents(name: string, actual: AgentStreamEvent[]): unknown {
  const path = join(EXPECTED, `${name}.json`);
  if (process.env.UPDATE_EXPECTED) writeFileSync(path, `${JSON.stringify(actual, null, 2)}\n`);
  return JSON.parse(readFileSync(path, "utf8")) as unknown;
}
