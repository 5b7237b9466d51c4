import { YardServer } from "./fixtures/server";

/**
 * Build the dashboard once, before the workers start their own servers (which would otherwise
 * race to build dist/web together): start a server with --build-if-needed and stop it.
 */
export default async function globalSetup() {
  const server = new YardServer();
  try {
    await server.start({ timeoutMs: 180_000 });
  } finally {
    await server.dispose();
  }
}
