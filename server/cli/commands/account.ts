import { readFileSync } from "node:fs";
import type { Command } from ".";
import { clientFrom, connectionOptions, explain, parse } from "./common";

const USAGE = `usage: yard account <add|list|remove|reset> ...
  yard account add --provider claude --token TOKEN --email EMAIL [--label NAME]     a Claude setup token (claude setup-token)
  yard account add --provider NAME --api-key KEY [--label NAME] [--email EMAIL]     claude, codex, ...: a provider whose adapter takes accounts
  yard account add --provider claude --oauth-file PATH [--label NAME]               a .credentials.json from a Claude login
  yard account list [--provider NAME]
  yard account remove <label or id> [--force]
  yard account reset <label or id>          clear an exhausted or invalid mark
  Secrets may also come from stdin: --token - or --api-key -`;

function secretOf(value: string | undefined): string | undefined {
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

export const account: Command = {
  summary: "provider accounts for CLI agents (failover on usage limits): yard account add|list|remove|reset",
  async run(args) {
    const [sub, ...rest] = args;
    const { values, positionals } = parse(
      rest,
      {
        ...connectionOptions,
        provider: { type: "string" },
        token: { type: "string" },
        "api-key": { type: "string" },
        "oauth-file": { type: "string" },
        email: { type: "string" },
        label: { type: "string" },
        force: { type: "boolean" },
      },
      true,
    );
    const { url, client } = clientFrom(values);
    try {
      switch (sub) {
        case "add": {
          const provider = values.provider;
          if (!provider) throw new Error(USAGE);
          const common = { provider, ...(values.label ? { label: values.label } : {}), ...(values.email ? { email: values.email } : {}) } as const;
          let input;
          if (values.token) input = { ...common, kind: "setup-token" as const, secret: secretOf(values.token)! };
          else if (values["api-key"]) input = { ...common, kind: "api-key" as const, secret: secretOf(values["api-key"])! };
          else if (values["oauth-file"]) input = { ...common, kind: "oauth" as const, ...oauthFile(values["oauth-file"]) };
          else throw new Error(USAGE);
          const added = await client.accounts.add.mutate(input);
          process.stdout.write(`${JSON.stringify(added, null, 2)}\n`);
          return 0;
        }
        case "list": {
          const list = await client.accounts.list.query(values.provider ? { provider: values.provider } : {});
          if (list.length === 0) process.stdout.write("no accounts: agents use the server's own credentials (see yard account add)\n");
          for (const a of list) {
            const state = a.status === "exhausted" ? `exhausted until ${a.exhaustedUntil}` : a.status === "invalid" ? `invalid: ${a.statusReason}` : "available";
            process.stdout.write(`${a.label.padEnd(28)} ${a.provider.padEnd(7)} ${a.kind.padEnd(12)} ${a.secretHint.padEnd(6)} ${String(a.activeAgents).padStart(3)} agents  ${state}\n`);
          }
          return 0;
        }
        case "remove": {
          const ref = positionals[0];
          if (!ref) throw new Error(USAGE);
          process.stdout.write(`${JSON.stringify(await client.accounts.remove.mutate({ account: ref, force: values.force ?? false }))}\n`);
          return 0;
        }
        case "reset": {
          const ref = positionals[0];
          if (!ref) throw new Error(USAGE);
          process.stdout.write(`${JSON.stringify(await client.accounts.reset.mutate({ account: ref }), null, 2)}\n`);
          return 0;
        }
        default:
          throw new Error(USAGE);
      }
    } catch (err) {
      throw explain(err, url);
    }
  },
};
