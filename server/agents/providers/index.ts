import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join, resolve, sep } from "node:path";
import { aiderProvider } from "./aider";
import { ampProvider } from "./amp";
import { claudeProvider } from "./claude";
import { codexProvider } from "./codex";
import { cursorAgentProvider } from "./cursor-agent";
import { fakeProvider } from "./fake";
import { geminiProvider } from "./gemini";
import { opencodeProvider } from "./opencode";
import type { ProviderSummary } from "../../../shared/agents";
import type { AccountSupport, ProviderAdapter } from "./types";

/** Every agent CLI Switchyard can drive. Adding one is adding a file and a line here. */
export const PROVIDERS: Record<string, ProviderAdapter> = Object.fromEntries(
  [claudeProvider, codexProvider, fakeProvider, geminiProvider, cursorAgentProvider, opencodeProvider, aiderProvider, ampProvider].map((p) => [p.name, p]),
);

export function getProvider(name: string): ProviderAdapter {
  const p = PROVIDERS[name];
  if (!p) throw new Error(`Unknown agent provider "${name}": expected one of ${Object.keys(PROVIDERS).join(", ")}`);
  return p;
}

/** The providers whose agents can run on registered accounts. */
export function accountProviders(): string[] {
  return Object.values(PROVIDERS)
    .filter((p) => p.accounts)
    .map((p) => p.name);
}

/** A provider's account support, or null when it has none (or there is no such provider). */
export function accountSupportOf(name: string): AccountSupport | null {
  return PROVIDERS[name]?.accounts ?? null;
}


export function listProviders(): ProviderSummary[] {
  return Object.values(PROVIDERS).map((p) => ({
    name: p.name,
    displayName: p.displayName,
    structuredOutput: p.structuredOutput,
    canSteer: p.canSteer,
    resumeStyle: p.resumeStyle,
    approvals: { ...p.approvals },
    accounts: p.accounts ? { kinds: [...p.accounts.kinds] } : null,
  }));
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The executable to run, or null when there is none: a configured override (an absolute path, a
 * path relative to the repo root, or a bare name looked up on PATH), else the repo's
 * node_modules/.bin/<defaultCommand>, else PATH. The fake agent runs on this very node.
 */
export function resolveCommand(adapter: ProviderAdapter, opts: { repoRoot: string; pathEnv: string; override?: string }): string | null {
  if (opts.override) return resolveOverride(opts.override, opts);
  if (adapter.name === "fake") return process.execPath;
  const local = join(opts.repoRoot, "node_modules", ".bin", adapter.defaultCommand);
  if (executable(local)) return local;
  return findOnPath(adapter.defaultCommand, opts.pathEnv);
}

function resolveOverride(override: string, opts: { repoRoot: string; pathEnv: string }): string | null {
  if (isAbsolute(override)) return executable(override) ? override : null;
  if (override.includes("/") || override.includes(sep)) {
    const path = resolve(opts.repoRoot, override);
    return executable(path) ? path : null;
  }
  return findOnPath(override, opts.pathEnv);
}

function findOnPath(command: string, pathEnv: string): string | null {
  for (const dir of pathEnv.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    if (executable(candidate)) return candidate;
  }
  return null;
}
