import { useState, type FormEvent } from "react";
import type { AccountInfo, AccountKind } from "../../../shared/accounts";
import { Button, fieldClass } from "../components/Button";
import { Cmd, EmptyState } from "../components/EmptyState";
import { KeyIcon } from "../components/icons";
import { PageHeader } from "../components/PageHeader";
import { QueryError } from "../components/QueryError";
import { useNow } from "../hooks/useNow";
import { useLiveRefresh } from "../live/useLiveRefresh";
import { errorMessage } from "../lib/errors";
import { formatRelative } from "../lib/format";
import { trpc } from "../trpc";

const STATUS_STYLE: Record<AccountInfo["status"], string> = {
  available: "bg-emerald-100 text-emerald-800 dark:bg-emerald-900/40 dark:text-emerald-300",
  exhausted: "bg-amber-100 text-amber-800 dark:bg-amber-900/40 dark:text-amber-300",
  invalid: "bg-red-100 text-red-800 dark:bg-red-900/40 dark:text-red-300",
};

/** Provider accounts for CLI agents: agents fail over between them on usage limits. */
export function AccountsPage() {
  const utils = trpc.useUtils();
  const accounts = trpc.accounts.list.useQuery({});
  useLiveRefresh((e) => e.type.startsWith("account.") || e.type === "agent.account_switched" || e.type === "agent.spawned", () => void utils.accounts.list.invalidate());
  const now = useNow(true);
  const [showForm, setShowForm] = useState(false);
  const list = accounts.data ?? [];
  return (
    <>
      <PageHeader
        title="Accounts"
        description="Claude and Codex accounts for CLI agents. An agent that hits a usage limit continues on the next free account, on the same session."
        actions={<Button variant="primary" onClick={() => setShowForm((v) => !v)}>{showForm ? "Close" : "Add account"}</Button>}
      />
      {showForm && <AddAccountForm onDone={() => setShowForm(false)} />}
      {accounts.isPending ? (
        <p className="mt-6 text-sm text-zinc-500">Loading accounts…</p>
      ) : accounts.isError && !accounts.data ? (
        <QueryError title="Cannot load the accounts" error={accounts.error} onRetry={() => void accounts.refetch()} />
      ) : list.length === 0 ? (
        !showForm && (
          <EmptyState Icon={KeyIcon} title="No accounts: agents use the server's own credentials" action={<Button variant="primary" onClick={() => setShowForm(true)}>Add an account</Button>}>
            Add two or more to fail over on usage limits, here or with <Cmd>yard account add --provider claude --token TOKEN --email you@example.com</Cmd>.
          </EmptyState>
        )
      ) : (
        <div className="mt-6 overflow-x-auto rounded-xl border border-zinc-200 bg-white shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60">
          <table data-testid="accounts-table" className="w-full min-w-[52rem] text-left text-sm">
            <thead className="border-b border-zinc-200 text-xs text-zinc-500 uppercase dark:border-zinc-800">
              <tr>
                <th className="px-4 py-2 font-medium">Account</th>
                <th className="px-4 py-2 font-medium">Kind</th>
                <th className="px-4 py-2 font-medium">Status</th>
                <th className="px-4 py-2 text-right font-medium">Agents</th>
                <th className="px-4 py-2 text-right font-medium">Last used</th>
                <th className="px-4 py-2" />
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
        {a.kind} <span className="font-mono">{a.secretHint}</span>
        {a.expiresAt && <div>token expires {formatRelative(a.expiresAt, now)}</div>}
      </td>
      <td className="px-4 py-2.5">
        <span className={`rounded-full px-2 py-0.5 text-xs font-medium ${STATUS_STYLE[a.status]}`}>{a.status}</span>
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

const KIND_LABELS: Record<AccountKind, string> = {
  "api-key": "API key",
  "setup-token": "Setup token (claude setup-token)",
  oauth: "OAuth login (access + refresh token)",
};

interface AccountProviderOption {
  name: string;
  displayName: string;
  kinds: AccountKind[];
}

/** The providers whose adapter takes accounts, with the credential kinds each takes. */
function AddAccountForm({ onDone }: { onDone: () => void }) {
  const providers = trpc.agents.providers.useQuery();
  if (providers.isError && !providers.data) return <QueryError title="Cannot load the providers" error={providers.error} onRetry={() => void providers.refetch()} />;
  if (!providers.data) return <p className="mt-6 text-sm text-zinc-500">Loading providers…</p>;
  const options = providers.data.flatMap((p) => (p.accounts ? [{ name: p.name, displayName: p.displayName, kinds: p.accounts.kinds }] : []));
  return <AddAccountFields providers={options} onDone={onDone} />;
}

function AddAccountFields({ providers, onDone }: { providers: AccountProviderOption[]; onDone: () => void }) {
  const add = trpc.accounts.add.useMutation({ onSuccess: onDone });
  const [provider, setProvider] = useState(providers[0]?.name ?? "");
  const [kind, setKind] = useState<AccountKind>(providers[0]?.kinds[0] ?? "api-key");
  const [label, setLabel] = useState("");
  const [email, setEmail] = useState("");
  const [secret, setSecret] = useState("");
  const [refreshToken, setRefreshToken] = useState("");
  const [error, setError] = useState<string | null>(null);
  const kinds = providers.find((p) => p.name === provider)?.kinds ?? ["api-key"];
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (secret.trim().length < 8) return setError(kind === "api-key" ? "Paste the API key." : "Paste the token.");
    setError(null);
    add.mutate({
      provider,
      kind,
      secret: secret.trim(),
      ...(label.trim() ? { label: label.trim() } : {}),
      ...(email.trim() ? { email: email.trim() } : {}),
      ...(kind === "oauth" && refreshToken.trim() ? { refreshToken: refreshToken.trim() } : {}),
    });
  };
  const field = "block text-sm font-medium text-zinc-700 dark:text-zinc-300";
  return (
    <form onSubmit={submit} data-testid="add-account-form" className="mt-6 grid gap-4 rounded-xl border border-zinc-200 bg-white p-5 shadow-sm sm:grid-cols-2 dark:border-zinc-800 dark:bg-zinc-900/60">
      <label className={field}>
        Provider
        <select
          value={provider}
          onChange={(e) => {
            const p = e.target.value;
            setProvider(p);
            const allowed = providers.find((x) => x.name === p)?.kinds ?? [];
            if (!allowed.includes(kind)) setKind(allowed[0] ?? "api-key");
          }}
          className={`${fieldClass} mt-1`}
        >
          {providers.map((p) => <option key={p.name} value={p.name}>{p.displayName}</option>)}
        </select>
      </label>
      <label className={field}>
        Kind
        <select value={kind} onChange={(e) => setKind(e.target.value as AccountKind)} className={`${fieldClass} mt-1`}>
          {kinds.map((k) => <option key={k} value={k}>{KIND_LABELS[k]}</option>)}
        </select>
      </label>
      <label className={field}>
        Label <span className="font-normal text-zinc-500">(optional)</span>
        <input value={label} onChange={(e) => setLabel(e.target.value)} placeholder="work-max" className={`${fieldClass} mt-1`} />
      </label>
      <label className={field}>
        Email <span className="font-normal text-zinc-500">(optional)</span>
        <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} placeholder="you@example.com" className={`${fieldClass} mt-1`} />
      </label>
      <label className={`${field} sm:col-span-2`}>
        {kind === "api-key" ? "API key" : "Access token"}
        <input type="password" autoComplete="off" value={secret} onChange={(e) => setSecret(e.target.value)} className={`${fieldClass} mt-1 font-mono`} />
      </label>
      {kind === "oauth" && (
        <label className={`${field} sm:col-span-2`}>
          Refresh token <span className="font-normal text-zinc-500">(lets Switchyard renew the access token)</span>
          <input type="password" autoComplete="off" value={refreshToken} onChange={(e) => setRefreshToken(e.target.value)} className={`${fieldClass} mt-1 font-mono`} />
        </label>
      )}
      <p className="text-xs text-zinc-500 sm:col-span-2">Stored encrypted in the data directory; never shown again (only its last 4 characters).</p>
      <div className="flex items-center gap-3 sm:col-span-2">
        <Button type="submit" variant="primary" disabled={add.isPending}>{add.isPending ? "Adding…" : "Add account"}</Button>
        {(error ?? add.error) && <p role="alert" className="text-sm text-red-600 dark:text-red-400">{error ?? errorMessage(add.error)}</p>}
      </div>
    </form>
  );
}
