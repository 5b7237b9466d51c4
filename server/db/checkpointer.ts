import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside whichever commit
 * crosses the threshold, copying pages and syncing the file: a stall of tens of milliseconds in
 * the middle of serving. The main connection turns it off; this worker's own connection runs a
 * PASSIVE checkpoint (never blocks writers or readers) every `intervalMs`.
 */
const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma("busy_timeout = 5000");
const timer = setInterval(() => {
  try { db.pragma("wal_checkpoint(PASSIVE)"); } catch {}
}, workerData.intervalMs);
parentPort.on("message", (m) => {
  if (m !== "stop") return;
  clearInterval(timer);
  try { db.pragma("wal_checkpoint(PASSIVE)"); } catch {}
  db.close();
  parentPort.postMessage("stopped");
});
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startCheckpointer(path: string, intervalMs = 1000): Checkpointer {
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  const worker = new Worker(WORKER, { eval: true, workerData: { path, driver, intervalMs } });
  worker.unref();
  worker.on("error", () => undefined);
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        const done = () => resolve();
        worker.once("message", () => void worker.terminate().then(done, done));
        worker.once("exit", done);
        worker.postMessage("stop");
        setTimeout(() => void worker.terminate().then(done, done), 2000).unref();
      }),
  };
}
