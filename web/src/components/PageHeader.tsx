import type { ReactNode } from "react";
import { ChevronIcon } from "./icons";

export function PageHeader({ title, description, crumbs, actions }: { title: string; description: ReactNode; crumbs?: ReactNode; actions?: ReactNode }) {
  return (
    <header className="flex flex-wrap items-end justify-between gap-4 border-b border-zinc-200 pb-5 dark:border-zinc-800">
      <div className="min-w-0">
        {crumbs && (
          <div className="mb-1 flex items-center gap-1 text-xs text-zinc-500 dark:text-zinc-400">
            {crumbs}
            <ChevronIcon width={12} height={12} aria-hidden="true" />
          </div>
        )}
        <h1 className="text-xl font-semibold tracking-tight">{title}</h1>
        <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">{description}</p>
      </div>
      {actions}
    </header>
  );
}
