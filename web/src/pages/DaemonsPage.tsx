import { EmptyState } from "../components/EmptyState";
import { DaemonsIcon } from "../components/icons";
import { PageHeader } from "../components/PageHeader";
import { Link } from "../router/Link";

export function DaemonsPage({ id }: { id?: string }) {
  return (
    <>
      <PageHeader
        title={id ? `Daemon ${id}` : "Daemons"}
        crumbs={id ? <Link href="/daemons" className="hover:underline">Daemons</Link> : undefined}
        description="Long-lived agents that wake on a schedule or a message, and their queues."
      />
      <EmptyState Icon={DaemonsIcon} title={id ? "This daemon is not here yet" : "No daemons yet"}>
        Daemons you configure show up here with their state, queue and last activity.
      </EmptyState>
    </>
  );
}
