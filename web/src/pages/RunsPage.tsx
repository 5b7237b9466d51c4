import { Cmd, EmptyState } from "../components/EmptyState";
import { RunsIcon } from "../components/icons";
import { PageHeader } from "../components/PageHeader";
import { Link } from "../router/Link";

export function RunsPage({ id }: { id?: string }) {
  if (id) {
    return (
      <>
        <PageHeader title={`Run ${id}`} crumbs={<Link href="/runs" className="hover:underline">Runs</Link>} description="Each step of the run, its model calls and results, live." />
        <EmptyState Icon={RunsIcon} title="This run is not here yet">
          No run with id <Cmd>{id}</Cmd> has been recorded. Runs appear here once you start one with <Cmd>yard run &lt;strategy&gt;</Cmd>.
        </EmptyState>
      </>
    );
  }
  return (
    <>
      <PageHeader title="Runs" description="Strategy runs: every step, model call and result, streamed as it happens." />
      <EmptyState Icon={RunsIcon} title="No runs yet">
        Start one with <Cmd>yard run &lt;strategy&gt;</Cmd>; it shows up here live, and stays for review when it ends.
      </EmptyState>
    </>
  );
}
