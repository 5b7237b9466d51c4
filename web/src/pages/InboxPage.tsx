import { EmptyState } from "../components/EmptyState";
import { InboxIcon } from "../components/icons";
import { PageHeader } from "../components/PageHeader";
import { Link } from "../router/Link";

export function InboxPage({ id }: { id?: string }) {
  return (
    <>
      <PageHeader
        title={id ? `Message ${id}` : "Inbox"}
        crumbs={id ? <Link href="/inbox" className="hover:underline">Inbox</Link> : undefined}
        description="Questions and approval requests from your agents and runs, waiting for your answer."
      />
      <EmptyState Icon={InboxIcon} title={id ? "This message is not here" : "Nothing needs you"}>
        When an agent asks a question or needs an approval, it lands here and waits for you.
      </EmptyState>
    </>
  );
}
