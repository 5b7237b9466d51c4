import { parseArgs, type ParseArgsConfig } from "node:util";
import { createSwitchyardClient, defaultUrl } from "../../client";

export const connectionOptions = {
  url: { type: "string" },
  token: { type: "string" },
} as const satisfies ParseArgsConfig["options"];

export function parse<O extends NonNullable<ParseArgsConfig["options"]>>(args: string[], options: O, allowPositionals = false) {
  return parseArgs({ args, options, allowPositionals, strict: true });
}

export function clientFrom(values: { url?: string; token?: string }) {
  const url = values.url ?? defaultUrl();
  return { url, client: createSwitchyardClient({ url, token: values.token }) };
}

/** Turn a fetch failure into "cannot reach the server at ...". */
export function explain(err: unknown, url: string): Error {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  const code = e.cause?.code ?? (e.message?.includes("fetch failed") ? "ECONNREFUSED" : undefined);
  if (code === "ECONNREFUSED" || code === "UND_ERR_SOCKET") return new Error(`cannot reach the Switchyard server at ${url}: is it running? (yard start)`);
  return new Error(e.message ?? String(err));
}
