import { useState, type FormEvent } from "react";
import type { AccountKind } from "../../../shared/accounts";
import { Button, fieldClass } from "../components/Button";
import { PageHeader } from "../components/PageHeader";
import { QueryError } from "../components/QueryError";
import { errorMessage } from "../lib/errors";
import { navigate } from "../router/history";
import { Link } from "../router/Link";
import { trpc } from "../trpc";

/** `/accounts/new`: add a provider account; back to the list once it is stored. */
export default function AddAccountPage() {
  const utils = trpc.useUtils();
  const done = () => {
    void utils.accounts.list.invalidate();
    navigate("/accounts");
  };
  return (
    <>
      <PageHeader title="New account" crumbs={<Link href="/accounts" className="hover:underline">Accounts</Link>} description="A Claude or Codex account for CLI agents; with two or more, an agent at a usage limit continues on the next free one." />
      <AddAccountForm onDone={done} />
    </>
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
    <form onSubmit={submit} data-testid="add-account-form" className="mt-6 grid max-w-3xl gap-5 sm:grid-cols-2">
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
