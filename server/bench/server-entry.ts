export {};
/**
 * The server as `yard start` runs it (production mode, `server/main.ts`), without the CLI around
 * it: the bench bundles this file as `yard start` bundles the CLI (see bench-server.ts).
 */
process.env.NODE_ENV ??= "production";
const { main } = await import("../main");
await main();
