import { InvalidArgumentError, Option, type Command } from "commander";
import type { ListPage } from "../../../shared/api";
import type { SwitchyardClient } from "../../client";
import { defaultUrl } from "../../client/default-url";
import { colorsOn, styleFor, type Io, type Style } from "../io";

/**
 * What every command gets: where to write, the style of its output, and the server it talks to
 * (its `--url` / `--token`, or SWITCHYARD_URL / SWITCHYARD_TOKEN).
 */
export class Cli {
  /** The exit code of the command that ran; undefined leaves the process running (`yard start`). */
  exitCode: number | undefined = 0;
  /** The server the command talked to, for "cannot reach the server at ...". */
  url: string | undefined;
  readonly style: Style;

  constructor(readonly io: Io) {
    this.style = styleFor(colorsOn(io.stdout, io.env));
  }

  /** Text for people, on stdout. */
  print(text: string): void {
    this.io.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  }

  /** A value for scripts (`--json`), on stdout. */
  json(value: unknown): void {
    this.io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** Notes about the output (not the output itself), on stderr. */
  note(text: string): void {
    this.io.stderr.write(text.endsWith("\n") ? text : `${text}\n`);
  }

  /** Tables fit the terminal when there is one, else 80 columns. */
  get width(): number {
    return this.io.stdout.isTTY && this.io.stdout.columns ? this.io.stdout.columns : 80;
  }

  /** The server a command names: its --url / --token, else SWITCHYARD_URL / SWITCHYARD_TOKEN. */
  connection(cmd: Command): { url: string; token: string | undefined } {
    const value = (flag: string) => {
      const option = cmd.options.find((o) => o.long === flag && CONNECTION.has(o));
      return option ? (cmd.getOptionValue(option.attributeName()) as string | undefined) : undefined;
    };
    const url = value("--url") ?? defaultUrl(this.io.env);
    return { url: url.replace(/\/+$/, ""), token: value("--token") ?? (this.io.env.SWITCHYARD_TOKEN || undefined) };
  }

  /** The typed client of the server the command names; the client module (tRPC) is loaded here, by the commands that use it. */
  async client(cmd: Command): Promise<SwitchyardClient> {
    const { url, token } = this.connection(cmd);
    this.url = url;
    const { connect } = await import("../connect");
    return connect(url, token);
  }

  /** A plain JSON route of that server (`GET /health`), for a command that needs no tRPC client. */
  async getJson(cmd: Command, path: string): Promise<unknown> {
    const { url, token } = this.connection(cmd);
    this.url = url;
    const { getJson } = await import("../http-fetch");
    return await getJson(`${url}${path}`, token);
  }
}

const CONNECTION = new WeakSet<Option>();
const LOCAL = new WeakSet<Command>();

/** A command that talks to no server (`start`, `completion`): it gets no --url / --token. */
export function local(cmd: Command): Command {
  LOCAL.add(cmd);
  return cmd;
}

/**
 * --url and --token on every command that talks to a server, added once the tree is built (a new
 * command gets them too). A command whose own --token means something else (`account add`: a
 * setup token) keeps it; the server's token then comes from SWITCHYARD_TOKEN.
 */
export function addConnectionOptions(cmd: Command): void {
  for (const sub of cmd.commands) {
    if (sub.commands.length > 0) addConnectionOptions(sub);
    else if (!LOCAL.has(sub)) {
      const has = (flag: string) => sub.options.some((o) => o.long === flag);
      const add = (option: Option) => {
        CONNECTION.add(option);
        sub.addOption(option);
      };
      if (!has("--url")) add(new Option("--url <url>", "the server (default: SWITCHYARD_URL, else http://127.0.0.1:7422)"));
      if (!has("--token")) add(new Option("--token <token>", "the server's token (default: SWITCHYARD_TOKEN)"));
    }
  }
}

/** Turn a fetch failure into "cannot reach the server at ...". */
export function explain(err: unknown, url: string): Error {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  const code = e.cause?.code ?? (e.message?.includes("fetch failed") ? "ECONNREFUSED" : undefined);
  if (code === "ECONNREFUSED" || code === "UND_ERR_SOCKET") return new Error(`cannot reach the Switchyard server at ${url}: is it running? (yard start)`);
  return new Error(e.message ?? String(err));
}

/** Every command shows one example or more at the end of its help (a test checks each one). */
export function examples(cmd: Command, ...lines: string[]): Command {
  return cmd.addHelpText("after", `\nExample${lines.length > 1 ? "s" : ""}:\n${lines.map((l) => `  $ ${l}`).join("\n")}\n`);
}

/** `--json` on a command that prints data. */
export function jsonOption(cmd: Command, description = "print JSON for scripts instead of text"): Command {
  return cmd.option("--json", description);
}

/** A repeatable option: `--status a --status b` -> ["a", "b"]. */
export const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** A whole-number option value (0 or more). */
export function wholeNumber(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("expected a whole number");
  return n;
}

const REQUIRED = new WeakSet<Option>();

/**
 * An option a command cannot run without. Checked before the action (`checkRequired`), after
 * commander's unknown-option check: a mistyped option is named first, not a missing one.
 */
export function required(flags: string, description: string): Option {
  const option = new Option(flags, `${description} (required)`);
  REQUIRED.add(option);
  return option;
}

/** The program's preAction hook: the command about to run has all its required options. */
export function checkRequired(_program: Command, action: Command): void {
  for (const option of action.options) {
    if (REQUIRED.has(option) && action.getOptionValue(option.attributeName()) === undefined) {
      action.error(`error: required option '${option.flags}' not specified`, { code: "commander.missingMandatoryOptionValue" });
    }
  }
}

/** How many rows a listing command shows without --limit or --all. */
export const LIST_LIMIT = 50;

/** A whole-number option value of 1 or more. */
export function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a whole number of 1 or more");
  return n;
}

/** `--limit` and `--all` on a command that lists `noun` (plural), newest first. */
export function limitOptions(cmd: Command, noun: string): Command {
  return cmd.option("--limit <n>", `show the newest <n> ${noun} (default ${LIST_LIMIT})`, positiveNumber).option("--all", `show all the ${noun} (read page by page)`);
}

/**
 * The rows a listing command shows: the first page of `--limit` (default LIST_LIMIT), or with
 * `--all` every page, read one after the other (keyset cursors). `more`: rows were left out.
 */
export async function listRows<T>(read: (page: { limit: number; cursor?: string }) => Promise<ListPage<T>>, opts: { limit?: number; all?: boolean }): Promise<{ items: T[]; more: boolean }> {
  if (!opts.all) {
    const page = await read({ limit: opts.limit ?? LIST_LIMIT });
    return { items: page.items, more: page.nextCursor !== null };
  }
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await read({ limit: 500, ...(cursor ? { cursor } : {}) });
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return { items, more: false };
}

/** The note under a cut listing: how many `noun`s (singular) were left out, when known, and how to see them. */
export function moreHint(noun: string, remaining: number | undefined): string {
  const what = remaining !== undefined && remaining > 0 ? `${remaining.toLocaleString("en-US")} more ${remaining === 1 ? noun : `${noun}s`}` : `More ${noun}s`;
  return `${what} not shown: --limit <n> or --all`;
}
