import type { ToolPermission } from "./types";

/**
 * An adapter's `permissionOf` from its CLI's tool names: a tool that writes files is `fs.write`
 * on its path, one that reads (files, searches, the web) `fs.read` on its path, pattern or URL;
 * anything else runs something (`fs.exec` on its command).
 */
export function toolPermissions(tools: { write: readonly string[]; read: readonly string[] }): (toolName: string, input: unknown) => ToolPermission {
  const write = new Set(tools.write);
  const read = new Set(tools.read);
  return (toolName, input) => {
    const o = (input && typeof input === "object" ? input : {}) as Record<string, unknown>;
    const str = (k: string) => (typeof o[k] === "string" ? (o[k] as string) : undefined);
    if (write.has(toolName)) return { operation: "fs.write", resource: str("file_path") ?? str("path") ?? JSON.stringify(input) };
    if (read.has(toolName)) return { operation: "fs.read", resource: str("file_path") ?? str("path") ?? str("pattern") ?? str("url") ?? JSON.stringify(input) };
    return { operation: "fs.exec", resource: str("command") ?? `${toolName} ${JSON.stringify(input)}` };
  };
}
