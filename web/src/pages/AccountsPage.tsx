import { lazy, Suspense } from "react";
import { AccountsPage as AccountsListPage } from "../accounts/AccountsPage";
import { PageLoading } from "../components/PageLoading";

const AddAccountPage = lazy(() => import("../accounts/AddAccountPage"));

/** `/accounts` (the list) and `/accounts/new` (add one). */
export function AccountsPage({ id }: { id?: string }) {
  if (id !== "new") return <AccountsListPage />;
  return (
    <Suspense fallback={<PageLoading />}>
      <AddAccountPage />
    </Suspense>
  );
}
