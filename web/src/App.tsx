import { QueryClientProvider } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { ErrorBoundary } from "./components/ErrorBoundary";
import { NAV_ITEMS, Sidebar } from "./components/Sidebar";
import { LiveEventsProvider } from "./live/LiveEventsProvider";
import { ConversationsPage } from "./conversations/ConversationsPage";
import { AccountsPage } from "./pages/AccountsPage";
import { AgentsPage } from "./pages/AgentsPage";
import { DaemonsPage } from "./pages/DaemonsPage";
import { HomePage } from "./pages/HomePage";
import { InboxPage } from "./pages/InboxPage";
import { NotFoundPage } from "./pages/NotFoundPage";
import { RunsPage } from "./pages/RunsPage";
import { WorkersPage } from "./workers/WorkersPage";
import { matchRoute, type Route } from "./router/routes";
import { usePath } from "./router/usePath";
import { createQueryClient, createTrpcClient, trpc } from "./trpc";

export function App() {
  const [queryClient] = useState(createQueryClient);
  const [trpcClient] = useState(createTrpcClient);
  return (
    <trpc.Provider client={trpcClient} queryClient={queryClient}>
      <QueryClientProvider client={queryClient}>
        <LiveEventsProvider>
          <Shell />
        </LiveEventsProvider>
      </QueryClientProvider>
    </trpc.Provider>
  );
}

function Shell() {
  const path = usePath();
  const route = matchRoute(path);
  useDocumentTitle(route);
  return (
    <div className="flex min-h-screen flex-col md:flex-row">
      <a href="#main" className="sr-only z-50 rounded bg-indigo-600 px-3 py-2 text-sm text-white focus:not-sr-only focus:fixed focus:top-2 focus:left-2">
        Skip to content
      </a>
      <Sidebar active={route.page} />
      <main id="main" tabIndex={-1} className="min-w-0 flex-1 px-6 py-8 focus:outline-none lg:px-10">
        <div className="mx-auto max-w-6xl">
          <ErrorBoundary resetKey={path}>
            <Page route={route} />
          </ErrorBoundary>
        </div>
      </main>
    </div>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case "home":
      return <HomePage />;
    case "runs":
      return <RunsPage id={route.id} />;
    case "agents":
      return <AgentsPage id={route.id} />;
    case "daemons":
      return <DaemonsPage id={route.id} />;
    case "inbox":
      return <InboxPage />;
    case "accounts":
      return <AccountsPage id={route.id} />;
    case "conversations":
      return <ConversationsPage />;
    case "workers":
      return <WorkersPage />;
    case "not-found":
      return <NotFoundPage path={route.path} />;
  }
}

function useDocumentTitle(route: Route) {
  const label = route.page === "not-found" ? "Not found" : NAV_ITEMS.find((item) => item.page === route.page)?.label;
  const isNew = route.page !== "not-found" && route.id === "new";
  const detail = route.page !== "not-found" && route.id && !isNew ? ` ${route.id}` : "";
  const singular: Partial<Record<string, string>> = { runs: "run", agents: "agent", daemons: "daemon", accounts: "account" };
  const title = route.page === "home" ? "Switchyard" : isNew ? `New ${singular[route.page] ?? "item"} · Switchyard` : `${label ?? ""}${detail} · Switchyard`;
  useEffect(() => {
    document.title = title;
  }, [title]);
}
