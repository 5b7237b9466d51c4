import { chmod, mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";

/** A file only its owner reads (0600, also when it existed with wider rights): where an agent's MCP config holds its token. */
export async function writeSecretFile(path: string, content: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, content, { mode: 0o600 });
  await chmod(path, 0o600);
}
