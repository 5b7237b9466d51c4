import { accessSync, constants, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { yard } from "../testing/cli-harness";
import type { DoctorReport } from "./doctor";
import { nodeCheck, satisfies } from "./doctor";

/**
 * `yard doctor` on a machine set up by the test: a PATH holding only git, node and a stand-in
 * gemini CLI; a fresh data dir; a port that is free, or taken by some other program.
 */
let dir: string;
let bin: string;
let other: Server;
let otherPort: number;

/** The git this machine runs. */
function whichGit(): string {
  for (const d of (process.env.PATH ?? "").split(":")) {
    try {
      accessSync(join(d, "git"), constants.X_OK);
      return join(d, "git");
    } catch {
      // not here
    }
  }
  throw new Error("the doctor test needs git on PATH");
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "switchyard-doctor-"));
  bin = join(dir, "bin");
  mkdirSync(bin);
  symlinkSync(whichGit(), join(bin, "git"));
  symlinkSync(process.execPath, join(bin, "node"));
  writeFileSync(join(bin, "gemini"), "#!/bin/sh\necho 'gemini 0.9.9-test'\n", { mode: 0o755 });
  other = createServer((_req, res) => res.writeHead(404).end("not switchyard"));
  await new Promise<void>((res) => other.listen(0, "127.0.0.1", res));
  otherPort = (other.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((res) => other.close(res));
  rmSync(dir, { recursive: true, force: true });
});

/** A free port: listened on, then let go. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((res) => s.listen(0, "127.0.0.1", res));
  const { port } = s.address() as AddressInfo;
  await new Promise((res) => s.close(res));
  return port;
}

async function doctor(env: Record<string, string>, json = true) {
  const base = { PATH: bin, HOME: dir, SWITCHYARD_HOME: join(dir, "home"), CHROMIUM_PATH: join(dir, "no-chromium") };
  const r = await yard(["doctor", ...(json ? ["--json"] : [])], { env: { ...base, ...env } });
  return { ...r, report: json ? (JSON.parse(r.out) as DoctorReport) : undefined };
}

const check = (r: DoctorReport | undefined, id: string) => r?.checks.find((c) => c.id === id);

describe("yard doctor", () => {
  it("reports a CLI missing from PATH with how to install it; found ones with their version; exit 0", async () => {
    const { code, report } = await doctor({ SWITCHYARD_PORT: String(await freePort()) });
    expect(report?.ok).toBe(true);
    expect(code).toBe(0);
    expect(check(report, "node")).toMatchObject({ status: "ok" });
    expect(check(report, "git")).toMatchObject({ status: "ok" });
    expect(check(report, "cli-gemini")).toMatchObject({ status: "ok", detail: expect.stringContaining("gemini 0.9.9-test") });
    expect(check(report, "credentials-gemini")).toMatchObject({ status: "warn", fix: expect.stringContaining("GEMINI_API_KEY") });
    expect(check(report, "cli-aider")).toMatchObject({ status: "info", detail: "Aider: aider is not on PATH", fix: expect.stringContaining("aider-install") });
    expect(check(report, "cli-amp")).toMatchObject({ status: "info", fix: expect.stringContaining("npm install -g @sourcegraph/amp") });
    expect(check(report, "cli-fake")).toMatchObject({ status: "ok" });
    expect(check(report, "data-dir")).toMatchObject({ status: "ok" });
    expect(check(report, "port")).toMatchObject({ status: "ok", detail: expect.stringContaining("is free") });
    expect(check(report, "chromium")).toMatchObject({ status: "warn", fix: expect.stringContaining("apt-get install chromium") });
  });

  it("for people: one line a check, the fix under it", async () => {
    const { code, out } = await doctor({ SWITCHYARD_PORT: String(await freePort()) }, false);
    expect(code).toBe(0);
    expect(out).toMatch(/^- aider {12}Aider: aider is not on PATH\n {19}fix: python -m pip install aider-install && aider-install; or\n/m);
    expect(out).toMatch(/^✓ gemini {11}gemini 0\.9\.9-test/m);
    expect(out).toContain("Nothing required is missing");
    expect(out).not.toContain("\x1b["); // not a terminal: no colors
  });

  it("with no agent CLI at all, each missing one is a warning naming where it was looked for", async () => {
    const { report } = await doctor({ SWITCHYARD_PORT: "0", PATH: join(dir, "empty"), SWITCHYARD_AGENT_COMMANDS: "claude=/nowhere/claude,codex=/nowhere/codex" });
    expect(check(report, "cli-claude")).toMatchObject({ status: "warn", detail: expect.stringContaining("/nowhere/claude (SWITCHYARD_AGENT_COMMANDS) is not executable") });
    expect(check(report, "cli-gemini")).toMatchObject({ status: "warn", fix: expect.stringContaining("npm install -g @google/gemini-cli") });
  });

  it("a port held by another program and no git: both fail with a fix, exit 1", async () => {
    const { code, report } = await doctor({ SWITCHYARD_PORT: String(otherPort), PATH: join(dir, "empty") });
    expect(code).toBe(1);
    expect(report?.ok).toBe(false);
    expect(check(report, "port")).toMatchObject({ status: "fail", detail: `${otherPort} on 127.0.0.1 is taken by another program`, fix: expect.stringContaining(`SWITCHYARD_PORT=${otherPort + 1} yard start`) });
    expect(check(report, "git")).toMatchObject({ status: "fail", fix: expect.stringContaining("install git") });
  });

  it("a missing git identity is a warning saying how to set it; a set one is shown", async () => {
    // HOME is the test's dir (no ~/.gitconfig there) and the system config is ignored
    const port = String(await freePort());
    const missing = await doctor({ SWITCHYARD_PORT: port, GIT_CONFIG_NOSYSTEM: "1" });
    expect(missing.code).toBe(0);
    expect(check(missing.report, "git-identity")).toMatchObject({
      status: "warn",
      detail: "user.name is not set: an agent's own git commit fails without it",
      fix: 'git config --global user.name "Your Name" && git config --global user.email you@example.com',
    });
    const home = join(dir, "home-with-identity");
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, ".gitconfig"), "[user]\n\tname = Ada Lovelace\n");
    const noEmail = await doctor({ SWITCHYARD_PORT: port, GIT_CONFIG_NOSYSTEM: "1", HOME: home });
    expect(check(noEmail.report, "git-identity")).toMatchObject({ status: "warn", detail: expect.stringMatching(/^user\.email is not set/) });
    writeFileSync(join(home, ".gitconfig"), "[user]\n\tname = Ada Lovelace\n\temail = ada@example.com\n");
    const set = await doctor({ SWITCHYARD_PORT: port, GIT_CONFIG_NOSYSTEM: "1", HOME: home });
    expect(check(set.report, "git-identity")).toMatchObject({ status: "ok", detail: "Ada Lovelace <ada@example.com>" });
  });

  it("a bad configuration fails and names the variable", async () => {
    const { code, report } = await doctor({ SWITCHYARD_PORT: "not-a-port" });
    expect(code).toBe(1);
    expect(check(report, "config")).toMatchObject({ status: "fail", detail: expect.stringContaining("SWITCHYARD_PORT") });
  });
});

describe("the Node check", () => {
  it("reads package.json's engines range", () => {
    expect(satisfies("20.19.0", ">=20.19")).toBe(true);
    expect(satisfies("20.18.3", ">=20.19")).toBe(false);
    expect(satisfies("22.1.0", "^20.19.0 || >=22.12")).toBe(false);
    expect(satisfies("22.12.0", "^20.19.0 || >=22.12")).toBe(true);
    expect(satisfies("20.5.0", "20.x")).toBe(true);
    expect(satisfies("20.5.0", "latest")).toBeNull();
    expect(nodeCheck("18.20.0", ">=20.19")).toMatchObject({ status: "fail", fix: expect.stringContaining("nvm install") });
  });
});
