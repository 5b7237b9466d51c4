import { EmptyState } from "../components/EmptyState";
import { AlertIcon } from "../components/icons";
import { PageHeader } from "../components/PageHeader";
import { Link } from "../router/Link";

/** Any address the dashboard has no page for (the server answers it with this app and a 404). */
export function NotFoundPage({ path }: { path: string }) {
  return (
    <div data-testid="not-found" data-kind="page">
      <PageHeader title="Page not found" description={<>Nothing lives at <code>{path}</code> in this dashboard.</>} />
      <EmptyState
        Icon={AlertIcon}
        title="Check the address"
        action={
          <Link href="/" className="text-sm font-medium text-indigo-600 hover:underline dark:text-indigo-400">
            Go to the overview
          </Link>
        }
      >
        Pick a page from the navigation, or start again from the overview.
      </EmptyState>
    </div>
  );
}
