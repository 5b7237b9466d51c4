/**
 * The measured side of the event pipeline: Switchyard's server (createServer, production mode)
 * in a process of its own, publishing on its bus from inside (event-load.ts's loops). Args: home.
 */
import { createServer } from "../app";
import { loadConfig } from "../config";
import { serve } from "./event-load";

process.env.NODE_ENV = "production";
const [home] = process.argv.slice(2);
const server = await createServer({ config: loadConfig({ SWITCHYARD_HOME: home!, SWITCHYARD_PORT: "0", SWITCHYARD_LOG_LEVEL: "warn" }) });
const { url } = await server.start();
const bus = server.services.bus;
process.on("SIGTERM", () => void server.stop("bench").finally(() => process.exit(0)));
await serve((payload) => void bus.publish("system.noted", payload), () => bus.lastId, { url });
