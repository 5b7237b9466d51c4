import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../paths";

/** The version in package.json (`yard --version`, `yard doctor`). */
export const CLI_VERSION: string = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;
