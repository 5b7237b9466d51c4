import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ampMcpConfig } from "./amp";
import { geminiSettings, geminiUserDir, prepareGemini } from "./gemini";
import { getProvider, PROVIDERS } from "./index";
import { opencodeConfigContent } from "./opencode";
import type { LaunchSpec } from "./types";

/**
 * The switchyard MCP server the other CLIs get at spawn (claude's and codex's are in
 * commands.test.ts): each config as the CLI reads it, the token only in a 0600 file or read from
 * SWITCHYARD_TOKEN by the CLI itself, never in argv; the CLIs that cannot take one get nothing.
 */

const tmp = mkdtempSync(join(tmpdir(), "providers-mcp-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const TOKEN = "sya.agent_1.SECRET-SIG";
const URL = "http://127.0.0.1:7422/mcp/agents/agent_1";

function spec(name: string, over: Partial<LaunchSpec> = {}): LaunchSpec {
  return {
    prompt: "Do the task",
    cwd: "/work/tree",
    permissionMode: "acceptEdits",
    mode: "execute",
    configDir: join(tmp, name, "config"),
    endpoints: {},
    runningAsRoot: false,
    mcpServer: { url: URL, sharedUrl: "http://127.0.0.1:7422/mcp", token: TOKEN, serverName: "switchyard", configPath: join(tmp, name, "mcp.json"), tokenEnv: "SWITCHYARD_TOKEN" },
    ...over,
  };
}

const mode = (path: string) => statSync(path).mode & 0o777;

describe("gemini: a home of its own (GEMINI_CLI_HOME), the user's settings plus the server, everything else linked", () => {
  const userDir = join(tmp, "user-home", ".gemini");

  it("points gemini at the agent's config dir, no token in argv or the variables", () => {
    const s = spec("gemini-env");
    const { env, args } = getProvider("gemini").buildCommand(s, "gemini");
    expect(env).toEqual({ GEMINI_CLI_TRUST_WORKSPACE: "true", GEMINI_CLI_HOME: s.configDir });
    expect(JSON.stringify({ env, args })).not.toContain("SECRET-SIG");
    expect(geminiUserDir({ GEMINI_CLI_HOME: "/opt/g" })).toBe("/opt/g/.gemini");
    // without the server (never at spawn) the user's own home, as before
    expect(getProvider("gemini").buildCommand(spec("gemini-none", { mcpServer: undefined }), "gemini").env).toEqual({ GEMINI_CLI_TRUST_WORKSPACE: "true" });
  });

  it("the settings: the user's, plus the switchyard server over HTTP at the agent's endpoint, trusted, its token a ${SWITCHYARD_TOKEN} reference", () => {
    const user = { security: { auth: { selectedType: "gemini-api-key" } }, mcpServers: { corp: { httpUrl: "https://corp.example/mcp" } } };
    expect(geminiSettings(spec("gemini-settings"), user)).toEqual({
      ...user,
      mcpServers: { corp: { httpUrl: "https://corp.example/mcp" }, switchyard: { httpUrl: URL, headers: { Authorization: "Bearer ${SWITCHYARD_TOKEN}" }, trust: true } },
    });
  });

  it("prepare: settings.json 0600 with no token; the user's login and the rest linked; the user's own files never written", async () => {
    const s = spec("gemini-prepare");
    const own = join(s.configDir, ".gemini");
    await prepareGemini(s, join(tmp, "no-such-home", ".gemini"));
    expect(JSON.parse(readFileSync(join(own, "settings.json"), "utf8"))).toEqual({ mcpServers: { switchyard: { httpUrl: URL, headers: { Authorization: "Bearer ${SWITCHYARD_TOKEN}" }, trust: true } } });

    mkdirSync(join(userDir, "extensions"), { recursive: true });
    writeFileSync(join(userDir, "oauth_creds.json"), '{"refresh_token":"r"}');
    const userSettings = JSON.stringify({ general: { vimMode: true } });
    writeFileSync(join(userDir, "settings.json"), userSettings);
    await prepareGemini(s, userDir);
    expect(mode(join(own, "settings.json"))).toBe(0o600);
    expect(lstatSync(join(own, "settings.json")).isSymbolicLink()).toBe(false);
    const written = readFileSync(join(own, "settings.json"), "utf8");
    expect(written).not.toContain("SECRET-SIG");
    expect(JSON.parse(written)).toMatchObject({ general: { vimMode: true }, mcpServers: { switchyard: { httpUrl: URL } } });
    expect(readlinkSync(join(own, "oauth_creds.json"))).toBe(join(userDir, "oauth_creds.json"));
    expect(readlinkSync(join(own, "extensions"))).toBe(join(userDir, "extensions"));
    expect(readFileSync(join(userDir, "settings.json"), "utf8")).toBe(userSettings);

    // settings with comments: linked as they are (no server), and the next launch does not write through the link
    const jsonc = '{\n  // mine\n  "general": {}\n}\n';
    writeFileSync(join(userDir, "settings.json"), jsonc);
    await prepareGemini(s, userDir);
    expect(readlinkSync(join(own, "settings.json"))).toBe(join(userDir, "settings.json"));
    writeFileSync(join(userDir, "settings.json"), userSettings);
    await prepareGemini(s, userDir);
    expect(readFileSync(join(userDir, "settings.json"), "utf8")).toBe(userSettings);
    expect(lstatSync(join(own, "settings.json")).isSymbolicLink()).toBe(false);
  });
});

describe("opencode: OPENCODE_CONFIG_CONTENT, its inline config", () => {
  it("mcp.switchyard, remote, at the agent's endpoint, its token an {env:SWITCHYARD_TOKEN} reference", () => {
    const { env, args } = getProvider("opencode").buildCommand(spec("opencode"), "opencode");
    expect(args).toEqual(["run", "Do the task"]);
    expect(JSON.stringify({ env, args })).not.toContain("SECRET-SIG");
    expect(JSON.parse(env.OPENCODE_CONFIG_CONTENT!)).toMatchObject({
      mcp: { switchyard: { type: "remote", url: URL, headers: { Authorization: "Bearer {env:SWITCHYARD_TOKEN}" }, enabled: true } },
    });
  });

  it("an inline config the server's environment has is kept, the server added; one that is not plain JSON is left alone", () => {
    const merged = JSON.parse(opencodeConfigContent(spec("opencode"), '{"model":"a/b","mcp":{"docs":{"type":"remote","url":"https://docs.example/mcp"}}}')!);
    expect(merged).toMatchObject({ model: "a/b", mcp: { docs: { url: "https://docs.example/mcp" }, switchyard: { url: URL } } });
    expect(opencodeConfigContent(spec("opencode"), "{ // jsonc\n}")).toBe("{ // jsonc\n}");
  });
});

describe("amp: --mcp-config <file>", () => {
  it("argv names the agent's file; prepare writes it 0600 with the server and its token", async () => {
    const s = spec("amp");
    const { args, env } = getProvider("amp").buildCommand(s, "amp");
    expect(args).toEqual(["--stream-json", "--mcp-config", s.mcpServer!.configPath, "-x", "Do the task"]);
    expect(JSON.stringify({ args, env })).not.toContain("SECRET-SIG");
    await getProvider("amp").prepare?.(s);
    expect(mode(s.mcpServer!.configPath)).toBe(0o600);
    expect(JSON.parse(readFileSync(s.mcpServer!.configPath, "utf8"))).toEqual({ switchyard: { url: URL, headers: { Authorization: `Bearer ${TOKEN}` } } });
    expect(ampMcpConfig(spec("amp", { mcpServer: undefined }))).toBeNull();
  });
});

describe("every CLI", () => {
  it("never carries the token in argv or in the variables its adapter sets", () => {
    for (const p of Object.values(PROVIDERS)) {
      for (const permissionMode of ["acceptEdits", "ask", "bypass"] as const) {
        const { args, env } = p.buildCommand(spec(`all-${p.name}`, { permissionMode }), p.defaultCommand);
        expect(JSON.stringify({ args, env }), `${p.name} ${permissionMode}`).not.toContain("SECRET-SIG");
      }
    }
  });

  it("cursor-agent and aider cannot take an MCP config from Switchyard: nothing is added or written", async () => {
    for (const name of ["cursor-agent", "aider"]) {
      const s = spec(name);
      const { args, env } = getProvider(name).buildCommand(s, name);
      expect(JSON.stringify({ args, env }), name).not.toMatch(/mcp/i);
      await getProvider(name).prepare?.(s);
      expect(existsSync(s.mcpServer!.configPath), name).toBe(false);
    }
  });
});
