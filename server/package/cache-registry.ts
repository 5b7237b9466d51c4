import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * Test support: an npm registry on loopback that serves what `npm ci` left in the npm cache.
 *
 * `npm install --offline -g <tarball>` cannot work from that cache alone: `npm ci` fetches the
 * tarballs the lockfile names but never the packuments (the version lists), and a global install
 * has no lockfile, so it must resolve every range from a packument. This server makes those
 * packuments from package-lock.json (each version the lock holds, with its dependencies and
 * integrity) and serves each tarball straight from the cache's content store by its integrity.
 * Nothing leaves the machine, and the real cache is only read.
 */

type LockEntry = {
  name?: string;
  version?: string;
  integrity?: string;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, unknown>;
  bin?: Record<string, string>;
  engines?: Record<string, string>;
  os?: string[];
  cpu?: string[];
  hasInstallScript?: boolean;
  license?: string;
};

export type CacheRegistry = { url: string; served: () => number; close: () => Promise<void> };

/** Where the content of `integrity` lies in an npm cache (cacache's content-v2 layout). */
export function cachedTarball(cacheDir: string, integrity: string): string {
  const first = integrity.split(/\s+/)[0] ?? "";
  const dash = first.indexOf("-");
  const algo = first.slice(0, dash);
  const hex = Buffer.from(first.slice(dash + 1), "base64").toString("hex");
  return join(cacheDir, "_cacache", "content-v2", algo, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
}

function nameOf(key: string, entry: LockEntry): string {
  return entry.name ?? key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length);
}

function packuments(lockPath: string, base: string): Map<string, { versions: Record<string, object>; integrity: Map<string, string> }> {
  const lock = JSON.parse(readFileSync(lockPath, "utf8")) as { packages: Record<string, LockEntry> };
  const out = new Map<string, { versions: Record<string, object>; integrity: Map<string, string> }>();
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (!key || entry.link || !entry.version || !entry.integrity) continue;
    const name = nameOf(key, entry);
    const doc = out.get(name) ?? { versions: {}, integrity: new Map<string, string>() };
    const file = `${name.split("/").pop()}-${entry.version}.tgz`;
    doc.versions[entry.version] = {
      name,
      version: entry.version,
      dependencies: entry.dependencies,
      optionalDependencies: entry.optionalDependencies,
      peerDependencies: entry.peerDependencies,
      peerDependenciesMeta: entry.peerDependenciesMeta,
      bin: entry.bin,
      engines: entry.engines,
      os: entry.os,
      cpu: entry.cpu,
      license: entry.license,
      hasInstallScript: entry.hasInstallScript,
      dist: { tarball: `${base}/-/${encodeURIComponent(name)}/${file}`, integrity: entry.integrity },
    };
    doc.integrity.set(file, entry.integrity);
    out.set(name, doc);
  }
  return out;
}

/** Start the registry; `npm --registry <url>` then installs from the cache with no network. */
export async function startCacheRegistry(opts: { lockPath: string; cacheDir?: string }): Promise<CacheRegistry> {
  const cacheDir = opts.cacheDir ?? join(homedir(), ".npm");
  let served = 0;
  let docs: ReturnType<typeof packuments> = new Map();
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? "/").split("?")[0] ?? "/");
    const tarball = /^\/-\/(.+)\/([^/]+\.tgz)$/.exec(path);
    if (tarball) {
      const integrity = docs.get(tarball[1] ?? "")?.integrity.get(tarball[2] ?? "");
      const file = integrity ? cachedTarball(cacheDir, integrity) : undefined;
      if (!file || !existsSync(file)) return void res.writeHead(404).end();
      served++;
      return void res.writeHead(200, { "content-type": "application/octet-stream" }).end(readFileSync(file));
    }
    const doc = docs.get(path.slice(1));
    if (!doc) return void res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
    const versions = Object.keys(doc.versions);
    const latest = versions[versions.length - 1] ?? "";
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ name: path.slice(1), "dist-tags": { latest }, versions: doc.versions }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  docs = packuments(opts.lockPath, url);
  return { url, served: () => served, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
