import type { AccountInfo } from "../../../shared/accounts";
import { Button, primaryLinkClass } from "../components/Button";
import { Cmd, EmptyState } from "../components/EmptyState";
import { KeyIcon, PlusIcon } from "../components/icons";
import { PageHeader } from "../components/PageHeader";
import { QueryError } from "../components/QueryError";
import { useNow } from "../hooks/useNow";
import { useLiveRefresh } from "../live/useLiveRefresh";
import { errorMessage } from "../lib/errors";
import { formatRelative } from "../lib/format";
import { Link } from "../router/Link";
import { trpc } from "../trpc";
import { AccountStatusBadge } from "./AccountStatusBadge";

const KINDS: Record<AccountInfo["kind"], string> = { "api-key": "API key", "setup-token": "Setup token", oauth: "OAuth" };

const AddLink = ({ label }: { label: string }) => (
  <Link href="/accounts/new" className={primaryLinkClass}>
    <PlusIcon width={15} height={15} />
    {label}
  </Link>
);

/** Provider accounts for CLI agents: agents fail over between them on usage limits. */
export function AccountsPage() {
  const utils = trpc.useUtils();
  const accounts = trpc.accounts.list.useQuery({});
  useLiveRefresh((e) => e.type.startsWith("account.") || e.type === "agent.account_switched" || e.type === "agent.spawned", () => void utils.accounts.list.invalidate());
  const now = useNow(true);
  const list = accounts.data ?? [];
  return (
    <>
      <PageHeader
        title="Accounts"
        description="Claude and Codex accounts for CLI agents. An agent that hits a usage limit continues on the next free account, on the same session."
        actions={list.length > 0 ? <AddLink label="Add account" /> : undefined}
      />
      {accounts.isPending ? (
        <p className="mt-6 text-sm text-zinc-500">Loading accounts…</p>
      ) : accounts.isError && !accounts.data ? (
        <QueryError title="Cannot load the accounts" error={accounts.error} onRetry={() => void accounts.refetch()} />
      ) : list.length === 0 ? (
        <EmptyState Icon={KeyIcon} title="No accounts: agents use the server's own credentials" action={<AddLink label="Add an account" />}>
          Add two or more to fail over on usage limits, here or with <Cmd>yard account add --provider claude --token TOKEN --email you@example.com</Cmd>.
        </EmptyState>
      ) : (
        <div className="mt-6 overflow-x-auto rounded-xl border border-zinc-200 bg-white shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
          <table data-testid="accounts-table" className="w-full min-w-[52rem] text-left text-sm">
            <thead className="border-b border-zinc-200 text-xs font-medium text-zinc-500 dark:border-zinc-800 dark:text-zinc-400">
              <tr>
                <th scope="col" className="px-4 py-2.5 font-medium">Account</th>
                <th scope="col" className="px-4 py-2.5 font-medium">Kind</th>
                <th scope="col" className="px-4 py-2.5 font-medium">Status</th>
                <th scope="col" className="px-4 py-2.5 text-right font-medium">Agents</th>
                <th scope="col" className="px-4 py-2.5 text-right font-medium">Last used</th>
                <th scope="col" className="px-4 py-2.5"><span className="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800">
              {list.map((a) => <AccountRow key={a.id} account={a} now={now} />)}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

function AccountRow({ account: a, now }: { account: AccountInfo; now: number }) {
  const remove = trpc.accounts.remove.useMutation();
  const reset = trpc.accounts.reset.useMutation();
  const until = a.exhaustedUntil ? new Date(a.exhaustedUntil) : null;
  return (
    <tr data-testid="account-row" data-status={a.status}>
      <td className="px-4 py-2.5">
        <div className="font-medium text-zinc-900 dark:text-zinc-100">{a.label}</div>
        <div className="text-xs text-zinc-500">{a.provider}{a.email && a.email !== a.label ? ` · ${a.email}` : ""}</div>
      </td>
      <td className="px-4 py-2.5 text-xs text-zinc-600 dark:text-zinc-400">
        {KINDS[a.kind]} <span className="font-mono">{a.secretHint}</span>
        {a.expiresAt && <div>token expires {formatRelative(a.expiresAt, now)}</div>}
      </td>
      <td className="px-4 py-2.5">
        <AccountStatusBadge status={a.status} />
        {until && <div className="mt-1 text-xs text-zinc-500" title={a.statusReason ?? ""}>until {until.toLocaleString()}</div>}
        {a.status === "invalid" && a.statusReason && <div className="mt-1 max-w-sm text-xs text-red-700 dark:text-red-400">{a.statusReason}</div>}
      </td>
      <td className="px-4 py-2.5 text-right tabular-nums">{a.activeAgents}</td>
      <td className="px-4 py-2.5 text-right text-zinc-500">{a.lastUsedAt ? formatRelative(a.lastUsedAt, now) : "never"}</td>
      <td className="px-4 py-2.5 text-right whitespace-nowrap">
        {a.status !== "available" && <Button variant="ghost" onClick={() => reset.mutate({ account: a.id })} disabled={reset.isPending}>Mark available</Button>}
        <Button
          variant="ghost"
          onClick={() => {
            if (window.confirm(`Remove ${a.label}? Its stored credentials and config dir are deleted.`)) remove.mutate({ account: a.id, force: a.activeAgents > 0 });
          }}
        >
          Remove
        </Button>
        {(remove.error ?? reset.error) && <div role="alert" className="text-xs text-red-600">{errorMessage(remove.error ?? reset.error)}</div>}
      </td>
    </tr>
  );
}
