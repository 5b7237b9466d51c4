import type { ComponentType, SVGProps } from "react";
import { Link } from "../router/Link";
import type { PageId } from "../router/routes";
import { ConnectionIndicator } from "./ConnectionIndicator";
import { AgentsIcon, ChatIcon, DaemonsIcon, InboxIcon, KeyIcon, LogoIcon, OverviewIcon, RunsIcon } from "./icons";
import { ServerStatus } from "./ServerStatus";
import { ThemeToggle } from "./ThemeToggle";
import { Notifier } from "../inbox/Notifier";
import { useInbox } from "../inbox/useInbox";

type NavItem = { page: PageId; href: string; label: string; Icon: ComponentType<SVGProps<SVGSVGElement>> };

export const NAV_ITEMS: readonly NavItem[] = [
  { page: "home", href: "/", label: "Overview", Icon: OverviewIcon },
  { page: "runs", href: "/runs", label: "Runs", Icon: RunsIcon },
  { page: "agents", href: "/agents", label: "Agents", Icon: AgentsIcon },
  { page: "daemons", href: "/daemons", label: "Daemons", Icon: DaemonsIcon },
  { page: "conversations", href: "/conversations", label: "Conversations", Icon: ChatIcon },
  { page: "inbox", href: "/inbox", label: "Inbox", Icon: InboxIcon },
  { page: "accounts", href: "/accounts", label: "Accounts", Icon: KeyIcon },
];

export function Sidebar({ active }: { active: PageId | "not-found" }) {
  const { items } = useInbox();
  const waiting = items?.length ?? 0;
  return (
    <aside className="flex shrink-0 flex-col gap-4 border-b border-zinc-200 bg-zinc-50/70 px-3 py-4 md:sticky md:top-0 md:h-screen md:w-60 md:border-r md:border-b-0 dark:border-zinc-800 dark:bg-zinc-900/40">
      <div className="flex items-center justify-between gap-2 px-2">
        <Link href="/" className="flex items-center gap-2 rounded text-sm font-semibold tracking-tight">
          <LogoIcon />
          Switchyard
        </Link>
      </div>
      <div className="px-2">
        <ConnectionIndicator />
      </div>
      <nav aria-label="Main" className="flex-1">
        <ul className="flex gap-1 overflow-x-auto md:flex-col">
          {NAV_ITEMS.map(({ page, href, label, Icon }) => {
            const current = page === active;
            return (
              <li key={page}>
                <Link
                  href={href}
                  aria-current={current ? "page" : undefined}
                  className="flex items-center gap-2.5 rounded-md px-2 py-1.5 text-sm text-zinc-600 hover:bg-zinc-200/60 hover:text-zinc-900 aria-[current=page]:bg-zinc-200/80 aria-[current=page]:font-medium aria-[current=page]:text-zinc-900 dark:text-zinc-400 dark:hover:bg-zinc-800/70 dark:hover:text-zinc-100 dark:aria-[current=page]:bg-zinc-800 dark:aria-[current=page]:text-zinc-50"
                >
                  <Icon className="shrink-0 opacity-80" />
                  {label}
                  {page === "inbox" && waiting > 0 && (
                    <span data-testid="inbox-count" aria-label={`${waiting} waiting`} className="ml-auto rounded-full bg-amber-500 px-1.5 text-xs font-semibold text-white tabular-nums">
                      {waiting}
                    </span>
                  )}
                </Link>
              </li>
            );
          })}
        </ul>
      </nav>
      <Notifier items={items} />
      <div className="flex flex-wrap items-center justify-between gap-3 border-t border-zinc-200 px-2 pt-4 md:block md:space-y-3 dark:border-zinc-800">
        <ServerStatus />
        <ThemeToggle />
      </div>
    </aside>
  );
}
