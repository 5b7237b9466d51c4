import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { agentSecrets, agentToken, verifyAgentToken } from "./agent-env";

const dirs: string[] = [];
const dataDir = () => {
  const d = mkdtempSync(join(tmpdir(), "switchyard-agent-env-"));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("agent tokens", () => {
  it("without SWITCHYARD_SECRET_KEY: each data dir's own secret, a token of one is refused by another", () => {
    const a = agentSecrets(dataDir(), undefined);
    const b = agentSecrets(dataDir(), undefined);
    const token = agentToken(a.mint, "agent_1");
    expect(verifyAgentToken(a.accept, token)).toBe("agent_1");
    expect(verifyAgentToken(b.accept, token)).toBeNull();
  });

  it("with SWITCHYARD_SECRET_KEY: a token minted on one server works on another; tokens minted before the key was set keep working where they were", () => {
    const key = "cluster-secret-".repeat(3);
    const homeA = dataDir();
    const before = agentToken(agentSecrets(homeA, undefined).mint, "agent_old");
    const a = agentSecrets(homeA, key);
    const b = agentSecrets(dataDir(), key);
    const token = agentToken(a.mint, "agent_2");
    expect(verifyAgentToken(b.accept, token)).toBe("agent_2");
    expect(verifyAgentToken(a.accept, before)).toBe("agent_old");
    expect(verifyAgentToken(b.accept, before)).toBeNull();
    expect(verifyAgentToken(agentSecrets(dataDir(), "another-secret-".repeat(3)).accept, token)).toBeNull();
    // a forged agent id under a valid signature's shape is refused
    expect(verifyAgentToken(b.accept, token.replace("agent_2", "agent_3"))).toBeNull();
  });
});
