import { useEffect, useRef, type ComponentType, type SVGProps } from "react";
import { Link } from "../router/Link";
import type { PageId } from "../router/routes";
import { ConnectionIndicator } from "./ConnectionIndicator";
import { AgentsIcon, ChatIcon, DaemonsIcon, InboxIcon, KeyIcon, LogoIcon, OverviewIcon, RunsIcon, WorkersIcon } from "./icons";
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
  { page: "workers", href: "/workers", label: "Workers", Icon: WorkersIcon },
];

/**
 * The navigation: a sidebar from md up; below, a top bar whose links scroll sideways, with the
 * Inbox (and its count) pinned at the strip's right end so it is never scrolled out of sight.
 */
export function Sidebar({ active }: { active: PageId | "not-found" }) {
  const { items } = useInbox();
  const waiting = items?.length ?? 0;
  const strip = useRef<HTMLUListElement>(null);
  const badge = waiting > 0;
  // again once the count shows: the pinned Inbox grows by its badge
  useEffect(() => revealCurrent(strip.current), [active, badge]);
  return (
    <aside className="flex shrink-0 flex-col gap-3 border-b border-zinc-200 bg-zinc-50 px-3 py-3 md:sticky md:top-0 md:h-screen md:w-60 md:gap-4 md:border-r md:border-b-0 md:bg-zinc-50/70 md:py-4 dark:border-zinc-800 dark:bg-zinc-900 md:dark:bg-zinc-900/40">
      <div className="flex items-center justify-between gap-2 px-2 md:flex-col md:items-start md:gap-4">
        <Link href="/" className="flex items-center gap-2 rounded text-sm font-semibold tracking-tight">
          <LogoIcon />
          Switchyard
        </Link>
        <ConnectionIndicator />
      </div>
      <nav aria-label="Main" className="md:flex-1">
        <ul ref={strip} className="flex gap-1 overflow-x-auto md:flex-col md:overflow-visible">
          {NAV_ITEMS.map(({ page, href, label, Icon }) => {
            const current = page === active;
            const inbox = page === "inbox";
            return (
              <li key={page} data-pinned={inbox || undefined} className={inbox ? "max-md:sticky max-md:right-0 max-md:order-last max-md:bg-zinc-50 max-md:pl-1 max-md:shadow-[-10px_0_8px_-6px_rgba(0,0,0,0.12)] dark:max-md:bg-zinc-900" : undefined}>
                <Link
                  href={href}
                  aria-current={current ? "page" : undefined}
                  className="flex items-center gap-2.5 rounded-md px-2 py-1.5 text-sm whitespace-nowrap text-zinc-600 hover:bg-zinc-200/60 hover:text-zinc-900 aria-[current=page]:bg-zinc-200/80 aria-[current=page]:font-medium aria-[current=page]:text-zinc-900 dark:text-zinc-400 dark:hover:bg-zinc-800/70 dark:hover:text-zinc-100 dark:aria-[current=page]:bg-zinc-800 dark:aria-[current=page]:text-zinc-50"
                >
                  <Icon className="shrink-0 opacity-80" />
                  {label}
                  {inbox && waiting > 0 && (
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
      <div className="flex flex-wrap items-center justify-between gap-3 border-t border-zinc-200 px-2 pt-3 md:block md:space-y-3 md:pt-4 dark:border-zinc-800">
        <ServerStatus />
        <ThemeToggle />
      </div>
    </aside>
  );
}

/** In the phone strip, scroll the current page's link into sight (left of the pinned Inbox). */
function revealCurrent(ul: HTMLUListElement | null): void {
  if (!ul || ul.scrollWidth <= ul.clientWidth) return;
  const item = ul.querySelector('[aria-current="page"]')?.closest("li");
  if (!item || item.hasAttribute("data-pinned")) return;
  const box = ul.getBoundingClientRect();
  const right = box.right - (ul.querySelector("[data-pinned]")?.getBoundingClientRect().width ?? 0);
  const r = item.getBoundingClientRect();
  if (r.right > right) ul.scrollLeft += r.right - right + 8;
  else if (r.left < box.left) ul.scrollLeft -= box.left - r.left + 8;
}
