import type { ComponentType, ReactNode, SVGProps } from "react";

/** The placeholder of a page with nothing to show yet: what will appear, and how to make it appear. */
export function EmptyState({ Icon, title, children, action }: { Icon: ComponentType<SVGProps<SVGSVGElement>>; title: string; children: ReactNode; action?: ReactNode }) {
  return (
    <div data-testid="empty-state" className="mt-8 flex flex-col items-center rounded-xl border border-dashed border-zinc-300 px-6 py-16 text-center dark:border-zinc-700">
      <div className="flex size-11 items-center justify-center rounded-full bg-zinc-100 text-zinc-500 dark:bg-zinc-800 dark:text-zinc-400">
        <Icon width={20} height={20} />
      </div>
      <h2 className="mt-4 text-sm font-semibold">{title}</h2>
      <p className="mt-1 max-w-md text-sm text-zinc-600 dark:text-zinc-400">{children}</p>
      {action && <div className="mt-5">{action}</div>}
    </div>
  );
}

/** Inline command, copy-friendly. */
export function Cmd({ children }: { children: ReactNode }) {
  return <code className="rounded bg-zinc-100 px-1.5 py-0.5 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200">{children}</code>;
}
