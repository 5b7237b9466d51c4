import { EmptyState } from "../components/EmptyState";
import { AlertIcon } from "../components/icons";
import { PageHeader } from "../components/PageHeader";
import { Link } from "../router/Link";

export function NotFoundPage({ path }: { path: string }) {
  return (
    <>
      <PageHeader title="Page not found" description={<>Nothing lives at <code>{path}</code> in this dashboard.</>} />
      <EmptyState Icon={AlertIcon} title="Check the address">
        Pick a page from the navigation, or go back to the{" "}
        <Link href="/" className="font-medium text-indigo-600 hover:underline dark:text-indigo-400">
          overview
        </Link>
        .
      </EmptyState>
    </>
  );
}
