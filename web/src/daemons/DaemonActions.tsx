import { useState } from "react";
import type { DaemonStatus } from "../../../shared/statuses";
import { Button } from "../components/Button";
import { PlayIcon, StopIcon } from "../components/icons";
import { navigate } from "../router/history";
import { trpc } from "../trpc";
import { describeDaemonError } from "./daemon-errors";

/** Stop (running) or Resume (stopped, failed), and Delete after a confirmation. */
export function DaemonActions({ id, name, status }: { id: string; name: string; status: DaemonStatus }) {
  const utils = trpc.useUtils();
  const refresh = () => {
    void utils.daemons.snapshot.invalidate({ id });
    void utils.daemons.list.invalidate();
  };
  const stop = trpc.daemons.stop.useMutation({ onSuccess: refresh });
  const resume = trpc.daemons.resume.useMutation({ onSuccess: refresh });
  const del = trpc.daemons.delete.useMutation({
    onSuccess: () => {
      void utils.daemons.list.invalidate();
      navigate("/daemons");
    },
  });
  const [confirming, setConfirming] = useState(false);
  const failed = stop.error ?? resume.error ?? del.error;
  const error = failed ? describeDaemonError(failed) : undefined;

  return (
    <div className="flex flex-col items-end gap-2">
      <div className="flex items-center gap-2">
        {status === "running" ? (
          <Button variant="danger" onClick={() => stop.mutate({ id })} disabled={stop.isPending}>
            <StopIcon width={13} height={13} />
            {stop.isPending ? "Stopping…" : "Stop"}
          </Button>
        ) : (
          <Button variant="primary" onClick={() => resume.mutate({ id })} disabled={resume.isPending}>
            <PlayIcon width={13} height={13} />
            {resume.isPending ? "Resuming…" : "Resume"}
          </Button>
        )}
        {!confirming && (
          <Button variant="ghost" onClick={() => setConfirming(true)} aria-haspopup="dialog">
            Delete
          </Button>
        )}
      </div>
      {confirming && (
        <div
          role="alertdialog"
          aria-labelledby="delete-daemon-title"
          data-testid="delete-confirm"
          onKeyDown={(e) => e.key === "Escape" && setConfirming(false)}
          className="max-w-sm rounded-lg border border-red-200 bg-red-50 p-3 text-sm dark:border-red-900/60 dark:bg-red-950/30"
        >
          <p id="delete-daemon-title" className="font-medium text-red-900 dark:text-red-200">
            Delete {name}?
          </p>
          <p className="mt-1 text-xs text-red-900/80 dark:text-red-200/80">It is stopped first; its queue is dropped, and its root directory too when it is the default one.</p>
          <div className="mt-2 flex gap-2">
            <Button variant="danger" onClick={() => del.mutate({ id })} disabled={del.isPending}>
              {del.isPending ? "Deleting…" : "Delete daemon"}
            </Button>
            <Button autoFocus onClick={() => setConfirming(false)}>
              Cancel
            </Button>
          </div>
        </div>
      )}
      {error && (
        <p role="alert" className="max-w-sm text-right text-sm text-red-700 dark:text-red-400">
          {error.code && <span className="mr-1.5 font-mono text-xs">{error.code}</span>}
          {error.message}
        </p>
      )}
    </div>
  );
}
