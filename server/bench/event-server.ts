/**
 * The measured side of the event pipeline: Switchyard's server (createServer, production mode)
 * in a process of its own, publishing on its bus from inside (event-load.ts's loops). Args: home,
 * then `pg` to put its store in PostgreSQL (SWITCHYARD_DATABASE_URL and SWITCHYARD_SECRET_KEY from
 * the environment; without `pg` they are ignored: the SQLite row stays on SQLite whatever the
 * environment says).
 */
import { createServer } from "../app";
import { loadConfig } from "../config";
import { serve } from "./event-load";

process.env.NODE_ENV = "production";
const [home, store] = process.argv.slice(2);
const pg = store === "pg" ? { SWITCHYARD_DATABASE_URL: process.env.SWITCHYARD_DATABASE_URL, SWITCHYARD_SECRET_KEY: process.env.SWITCHYARD_SECRET_KEY } : {};
const server = await createServer({ config: loadConfig({ SWITCHYARD_HOME: home!, SWITCHYARD_PORT: "0", SWITCHYARD_LOG_LEVEL: "warn", ...pg }) });
const { url } = await server.start();
const bus = server.services.bus;
process.on("SIGTERM", () => void server.stop("bench").finally(() => process.exit(0)));
await serve((payload) => void bus.publish("system.noted", payload), () => bus.lastId, { url });
