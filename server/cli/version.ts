import { readFileSync } from "node:fs";
import { join } from "node:path";

/** Set by scripts/build.mjs in the bundle (esbuild `define`): the bundle reads no file to know its version. */
declare const __YARD_VERSION__: string | undefined;

/** The version in package.json (`yard --version`, `yard doctor`); from the sources, read from there. */
export const CLI_VERSION: string =
  typeof __YARD_VERSION__ === "string" ? __YARD_VERSION__ : (JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "package.json"), "utf8")) as { version: string }).version;
