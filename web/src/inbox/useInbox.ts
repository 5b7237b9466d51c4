import { useState } from "react";
import type { InboxItem } from "../../../shared/inbox";
import { trpc } from "../trpc";

/** The live inbox: the server sends the complete list at (re)connect and after every change. */
export function useInbox(): { items: InboxItem[] | undefined; error: string | undefined } {
  const [items, setItems] = useState<InboxItem[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  trpc.inbox.onChange.useSubscription(
    {},
    {
      onData: ({ data }) => {
        setItems(data.items as InboxItem[]);
        setError(undefined);
      },
      onError: (err) => setError(err.message),
    },
  );
  return { items, error };
}
