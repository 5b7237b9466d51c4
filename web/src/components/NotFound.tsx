import type { ComponentType, ReactNode, SVGProps } from "react";
import { Link } from "../router/Link";
import { EmptyState } from "./EmptyState";
import { PageHeader } from "./PageHeader";

const linkClass = "text-sm font-medium text-indigo-600 hover:underline dark:text-indigo-400";

/**
 * The page of a run, agent or daemon that does not exist (the server answered *_NOT_FOUND):
 * one look for every entity, with the way back to its list. Never retried, never a raw code.
 */
export function EntityNotFound({ kind, id, list, Icon, children }: {
  /** "run", "agent", "daemon" */
  kind: string;
  id: string;
  list: { href: string; label: string };
  Icon: ComponentType<SVGProps<SVGSVGElement>>;
  /** What could have been meant, in a sentence ("No agent has the id or alias <id>."). */
  children: ReactNode;
}) {
  const title = `${kind[0]?.toUpperCase() ?? ""}${kind.slice(1)} ${id}`;
  return (
    <div data-testid="not-found" data-kind={kind}>
      <PageHeader title={title} crumbs={<Link href={list.href} className="hover:underline">{list.label}</Link>} description={`No such ${kind} on this server.`} />
      <EmptyState
        Icon={Icon}
        title={`This ${kind} is not here`}
        action={
          <Link href={list.href} className={linkClass}>
            Open the {kind} list
          </Link>
        }
      >
        {children} It may have been deleted, or the address is mistyped.
      </EmptyState>
    </div>
  );
}
