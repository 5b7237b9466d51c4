import { readFileSync } from "node:fs";
import type { Command } from "commander";
import type { AccountInfo } from "../../../shared/accounts";
import { statusPaint, table, type Style } from "../io";
import { examples, jsonOption, required, type Cli } from "./common";

/** A secret given as "-" is read from stdin (so it stays out of the shell history). */
function secretOf(value: string): string {
  if (value !== "-") return value;
  return readFileSync(0, "utf8").trim();
}

/** A Claude login's `.credentials.json`: {claudeAiOauth: {accessToken, refreshToken, expiresAt}}. */
function oauthFile(path: string): { secret: string; refreshToken?: string; expiresAt?: number } {
  const v = JSON.parse(readFileSync(path, "utf8")) as { claudeAiOauth?: { accessToken?: unknown; refreshToken?: unknown; expiresAt?: unknown } };
  const o = v.claudeAiOauth;
  if (!o || typeof o.accessToken !== "string") throw new Error(`${path}: expected {"claudeAiOauth":{"accessToken":...}}`);
  return {
    secret: o.accessToken,
    ...(typeof o.refreshToken === "string" ? { refreshToken: o.refreshToken } : {}),
    ...(typeof o.expiresAt === "number" ? { expiresAt: o.expiresAt } : {}),
  };
}

const stateOf = (a: AccountInfo) => (a.status === "exhausted" ? `exhausted until ${a.exhaustedUntil}` : a.status === "invalid" ? `invalid: ${a.statusReason}` : a.status);

function accountsTable(list: AccountInfo[], opts: { width: number; style: Style }): string {
  if (list.length === 0) return "No accounts: agents use the server's own credentials (see yard account add --help)\n";
  return table(
    list,
    [
      { header: "LABEL", value: (a) => a.label },
      { header: "PROVIDER", value: (a) => a.provider },
      { header: "KIND", value: (a) => a.kind },
      { header: "SECRET", value: (a) => a.secretHint },
      { header: "AGENTS", value: (a) => String(a.activeAgents), align: "right" },
      { header: "STATUS", value: stateOf, flex: true, paint: (v, a) => statusPaint(opts.style, a.status)(v) },
    ],
    opts,
  );
}

type AddOptions = { provider: string; token?: string; apiKey?: string; oauthFile?: string; email?: string; label?: string; json?: boolean };

export function registerAccount(program: Command, cli: Cli): void {
  const account = program.command("account").description("provider accounts for CLI agents: an agent at a usage limit fails over to the next one");
  examples(account, "yard account add --provider claude --token TOKEN --email you@example.com", "yard account list");

  const add = account
    .command("add")
    .description("register an account: a Claude setup token (claude setup-token), an API key, or a Claude login file")
    .addOption(required("--provider <name>", "claude, codex, ...: a provider whose adapter takes accounts"))
    .option("--token <token>", "a Claude setup token; - reads it from stdin")
    .option("--api-key <key>", "an API key; - reads it from stdin")
    .option("--oauth-file <path>", "a .credentials.json from a Claude login (~/.claude/.credentials.json)")
    .option("--email <email>", "the account's email (the default label)")
    .option("--label <name>", "a name to pick it by (default: the email, else <provider>-<n>)")
    .action(async (opts: AddOptions, self: Command) => {
      const common = { provider: opts.provider, ...(opts.label ? { label: opts.label } : {}), ...(opts.email ? { email: opts.email } : {}) } as const;
      let input;
      if (opts.token) input = { ...common, kind: "setup-token" as const, secret: secretOf(opts.token) };
      else if (opts.apiKey) input = { ...common, kind: "api-key" as const, secret: secretOf(opts.apiKey) };
      else if (opts.oauthFile) input = { ...common, kind: "oauth" as const, ...oauthFile(opts.oauthFile) };
      else return self.error("error: give the credentials: --token, --api-key or --oauth-file");
      const added = await (await cli.client(self)).accounts.add.mutate(input);
      if (opts.json) return cli.json(added);
      cli.print(`Added ${cli.style.bold(added.label)} (${added.provider} ${added.kind} ${added.secretHint}): ${added.status}`);
    });
  jsonOption(add);
  add.addHelpText("after", "\nThe server's token comes from SWITCHYARD_TOKEN here (--token is the setup token).");
  examples(add, "yard account add --provider claude --token TOKEN --email you@example.com", "pbpaste | yard account add --provider codex --api-key - --label codex-main", "yard account add --provider claude --oauth-file ~/.claude/.credentials.json --label max");

  const list = account
    .command("list")
    .description("registered accounts (never their secrets), with the agents running on each")
    .option("--provider <name>", "only this provider's")
    .action(async (opts: { provider?: string; json?: boolean }, self: Command) => {
      const accounts = await (await cli.client(self)).accounts.list.query(opts.provider ? { provider: opts.provider } : {});
      if (opts.json) return cli.json(accounts);
      cli.print(accountsTable(accounts, { width: cli.width, style: cli.style }));
    });
  jsonOption(list);
  examples(list, "yard account list --provider claude");

  const remove = account
    .command("remove")
    .description("remove an account and its CLI config dir")
    .argument("<account>", "its label or id")
    .option("--force", "even while agents run on it")
    .action(async (ref: string, opts: { force?: boolean; json?: boolean }, self: Command) => {
      const r = await (await cli.client(self)).accounts.remove.mutate({ account: ref, force: opts.force ?? false });
      if (opts.json) return cli.json(r);
      cli.print(`Removed ${ref}`);
    });
  jsonOption(remove);
  examples(remove, "yard account remove codex-main");

  const reset = account
    .command("reset")
    .description("clear an account's exhausted or invalid mark")
    .argument("<account>", "its label or id")
    .action(async (ref: string, opts: { json?: boolean }, self: Command) => {
      const a = await (await cli.client(self)).accounts.reset.mutate({ account: ref });
      if (opts.json) return cli.json(a);
      cli.print(`${a.label} is ${a.status}`);
    });
  jsonOption(reset);
  examples(reset, "yard account reset you@example.com");
}
