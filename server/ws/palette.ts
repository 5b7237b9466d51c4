import { createHash } from "node:crypto";
import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { DaemonFrameOf, WireAvailableModel, WireProvider, WireTrashWorkspace } from "../../shared/comma";

/**
 * The Comma client's palette pages (models, providers, trash, hub), answered from what Switchyard
 * has, in the shapes the reference client's parser expects. Where Switchyard has no such thing it
 * says so in that shape: no hub packages, a trash that is the archive of agent worktrees.
 */

/** What the palette needs from the model registry. */
export type ModelsPort = {
  list(): Array<{ id: string; provider: string; label?: string; contextWindow: number; available: boolean }>;
  providers(): Array<{ id: string; name?: string; kind?: string; configured: boolean }>;
};

const bareId = (id: string, provider: string) => (id.startsWith(`${provider}/`) ? id.slice(provider.length + 1) : id);

/**
 * available_models: one entry per model id (without its provider, as the reference lists them),
 * with the providers that serve it and those that have credentials. `modelId` filters by the bare
 * id or the full "provider/model".
 */
export function availableModels(models: ModelsPort | undefined, modelId?: string): WireAvailableModel[] {
  const byId = new Map<string, WireAvailableModel>();
  for (const m of models?.list() ?? []) {
    const id = bareId(m.id, m.provider);
    if (modelId && modelId !== id && modelId !== m.id) continue;
    const entry = byId.get(id) ?? { id, ...(m.label ? { name: m.label } : {}), contextWindow: m.contextWindow, hasCredentials: false, providers: [], configuredProviders: [] };
    entry.providers.push(m.provider);
    if (m.available) {
      entry.configuredProviders.push(m.provider);
      entry.hasCredentials = true;
    }
    byId.set(id, entry);
  }
  return [...byId.values()];
}

/** provider_list: every provider Switchyard can call, alphabetically, with its models. */
export function providerList(models: ModelsPort | undefined): WireProvider[] {
  const list = models?.list() ?? [];
  return (models?.providers() ?? [])
    .map((p): WireProvider => ({
      id: p.id,
      name: p.name ?? p.id,
      credentialType: p.kind === "mock" ? "none" : "api",
      authStatus: p.configured ? "configured" : "none",
      models: list.filter((m) => m.provider === p.id).map((m) => ({ id: bareId(m.id, p.id), ...(m.label ? { name: m.label } : {}), contextWindow: m.contextWindow })),
      modelsSource: "catalog",
      isCustom: p.kind === "openai-compatible",
    }))
    .sort((a, b) => a.id.localeCompare(b.id));
}

/** Bytes and a digest of a directory's file list (path and size of each file). */
async function treeFacts(dir: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash("sha256");
  let bytes = 0;
  const walk = async (at: string, rel: string): Promise<void> => {
    const entries = await readdir(at, { withFileTypes: true }).catch(() => []);
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(at, e.name);
      const relPath = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(path, relPath);
      else if (e.isFile()) {
        const size = (await stat(path).catch(() => undefined))?.size ?? 0;
        bytes += size;
        hash.update(`${relPath}\0${size}\n`);
      }
    }
  };
  await walk(dir, "");
  return { bytes, sha256: hash.digest("hex") };
}

/**
 * trash_list: Switchyard's trash is `<home>/archive/`, where agent worktrees are copied before they
 * are removed (SWITCHYARD_AGENT_CLEANUP=debug): one entry per archived worktree.
 */
export async function trashList(home: string): Promise<Omit<DaemonFrameOf<"trash_list_result">, "type">> {
  const archive = join(home, "archive");
  const names = (await readdir(archive, { withFileTypes: true }).catch(() => [])).filter((e) => e.isDirectory()).map((e) => e.name);
  const entries: WireTrashWorkspace["entries"] = [];
  let totalBytes = 0;
  for (const name of names.sort()) {
    const path = join(archive, name);
    const facts = await treeFacts(path);
    const at = /-(\d{12,})$/.exec(name);
    const trashedAt = new Date(at ? Number(at[1]) : ((await stat(path).catch(() => undefined))?.mtimeMs ?? 0)).toISOString();
    const alias = at ? name.slice(0, at.index) : name;
    entries.push({ path, metadata: { trashedAt, originalPath: join(home, "worktrees", alias), originalSha256: facts.sha256 }, sizeBytes: facts.bytes });
    totalBytes += facts.bytes;
  }
  return { workspaces: entries.length > 0 ? [{ cwd: archive, entries }] : [], totalEntries: entries.length, totalBytes };
}

/** trash_clear: removes the archived worktrees. */
export async function trashClear(home: string): Promise<{ cleared: number; bytesFreed: number }> {
  const listed = await trashList(home);
  let cleared = 0;
  let bytesFreed = 0;
  for (const entry of listed.workspaces.flatMap((w) => w.entries)) {
    await rm(entry.path, { recursive: true, force: true });
    cleared += 1;
    bytesFreed += entry.sizeBytes;
  }
  return { cleared, bytesFreed };
}
