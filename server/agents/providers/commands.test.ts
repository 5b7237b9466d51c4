import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../paths";
import { claudeProvider } from "./claude";
import { codexConfigToml, codexProvider, tomlString } from "./codex";
import { FAKE_AGENT_SCRIPT, fakeProvider } from "./fake";
import { getProvider, listProviders, PROVIDERS, resolveCommand } from "./index";
import type { LaunchSpec } from "./types";

const tmp = mkdtempSync(join(tmpdir(), "providers-test-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function spec(over: Partial<LaunchSpec> = {}): LaunchSpec {
  return {
    prompt: "Do the task",
    cwd: "/work/tree",
    permissionMode: "acceptEdits",
    mode: "execute",
    configDir: "/state/agent-1",
    endpoints: {},
    runningAsRoot: false,
    ...over,
  };
}

const GIT = { gitDir: "/repo/.git/worktrees/brave-otter", commonDir: "/repo/.git", branch: "switchyard/brave-otter" };

describe("what each CLI needs to commit in its worktree, and nothing more", () => {
  it("claude: git add/commit/status/diff/log allowed by --settings in acceptEdits and ask; none in bypass or outside a worktree", () => {
    for (const permissionMode of ["acceptEdits", "ask"] as const) {
      const { args } = claudeProvider.buildCommand(spec({ permissionMode, git: GIT }), "claude");
      expect(JSON.parse(valueAfter(args, "--settings")!)).toEqual({ permissions: { allow: ["Bash(git add:*)", "Bash(git commit:*)", "Bash(git status:*)", "Bash(git diff:*)", "Bash(git log:*)"] } });
    }
    expect(claudeProvider.buildCommand(spec({ permissionMode: "bypass", git: GIT }), "claude").args).not.toContain("--settings");
    expect(claudeProvider.buildCommand(spec({ permissionMode: "acceptEdits" }), "claude").args).not.toContain("--settings");
    // the fake agent speaks claude's flags: it gets them too
    expect(fakeProvider.buildCommand(spec({ git: GIT }), "node").args).toContain("--settings");
  });

  it("codex: the worktree's git dir, the objects and the agent's ref folders as writable roots, on spawn and resume; none in bypass", () => {
    const roots = '["/repo/.git/worktrees/brave-otter", "/repo/.git/objects", "/repo/.git/refs/heads/switchyard", "/repo/.git/logs/refs/heads/switchyard"]';
    const spawn = codexProvider.buildCommand(spec({ git: GIT }), "codex").args;
    expect(spawn).toContain(`sandbox_workspace_write.writable_roots=${roots}`);
    expect(valueAfter(spawn, "--sandbox")).toBe("workspace-write");
    const resume = codexProvider.buildCommand(spec({ git: GIT, resumeSessionId: "t1" }), "codex").args;
    expect(resume).toContain(`sandbox_workspace_write.writable_roots=${roots}`);
    expect(resume.indexOf(`sandbox_workspace_write.writable_roots=${roots}`)).toBeLessThan(resume.indexOf("--"));
    const bypass = codexProvider.buildCommand(spec({ git: GIT, permissionMode: "bypass" }), "codex").args;
    expect(bypass.some((a) => a.includes("writable_roots"))).toBe(false);
    expect(codexProvider.buildCommand(spec(), "codex").args.some((a) => a.includes("writable_roots"))).toBe(false);
  });
});

const ASK_SERVER = { url: "http://127.0.0.1:4000/mcp/agents/a1", token: "tok", toolName: "approve", serverName: "switchyard" };
const valueAfter = (args: string[], flag: string) => args[args.indexOf(flag) + 1];

describe("claude command", () => {
  it("spawns with the prompt, stream-json, the chosen session id and the model", () => {
    const { command, args } = claudeProvider.buildCommand(spec({ newSessionId: "0d629d01-5988-4ada-afb7-8921a01866fe", model: "claude-x" }), "/bin/claude");
    expect(command).toBe("/bin/claude");
    expect(args).toEqual(["-p", "Do the task", "--output-format", "stream-json", "--verbose", "--session-id", "0d629d01-5988-4ada-afb7-8921a01866fe", "--model", "claude-x", "--permission-mode", "acceptEdits"]);
  });

  it("resumes with --resume and no --session-id", () => {
    const { args } = claudeProvider.buildCommand(spec({ resumeSessionId: "s-old", newSessionId: "ignored", prompt: "Answer: yes" }), "claude");
    expect(valueAfter(args, "--resume")).toBe("s-old");
    expect(valueAfter(args, "-p")).toBe("Answer: yes");
    expect(args).not.toContain("--session-id");
  });

  it("keeps a prompt that starts with a dash from being read as an option", () => {
    const { args } = claudeProvider.buildCommand(spec({ prompt: "- fix the bug" }), "claude");
    expect(valueAfter(args, "-p")).toBe(" - fix the bug");
  });

  it("bypass: bypassPermissions, and IS_SANDBOX=1 only when running as root", () => {
    const user = claudeProvider.buildCommand(spec({ permissionMode: "bypass" }), "claude");
    const root = claudeProvider.buildCommand(spec({ permissionMode: "bypass", runningAsRoot: true }), "claude");
    expect(valueAfter(user.args, "--permission-mode")).toBe("bypassPermissions");
    expect(user.env.IS_SANDBOX).toBeUndefined();
    expect(root.env.IS_SANDBOX).toBe("1");
    expect(claudeProvider.buildCommand(spec({ permissionMode: "acceptEdits", runningAsRoot: true }), "claude").env.IS_SANDBOX).toBeUndefined();
  });

  it("ask: default mode, the permission MCP server with its bearer token, and no MCP timeout", () => {
    const { args, env } = claudeProvider.buildCommand(spec({ permissionMode: "ask", permissionServer: ASK_SERVER }), "claude");
    expect(valueAfter(args, "--permission-mode")).toBe("default");
    expect(JSON.parse(valueAfter(args, "--mcp-config") ?? "")).toEqual({
      mcpServers: { switchyard: { type: "http", url: ASK_SERVER.url, headers: { Authorization: "Bearer tok" } } },
    });
    expect(valueAfter(args, "--permission-prompt-tool")).toBe("mcp__switchyard__approve");
    expect(env.MCP_TOOL_TIMEOUT).toBe("86400000");
    expect(claudeProvider.buildCommand(spec(), "claude").env.MCP_TOOL_TIMEOUT).toBeUndefined();
  });

  it("sets its config dir, quiet switches and the Anthropic endpoint without /v1", () => {
    const { env } = claudeProvider.buildCommand(spec({ endpoints: { anthropicBaseUrl: "http://127.0.0.1:9999/v1/" } }), "claude");
    expect(env).toEqual({
      CLAUDE_CONFIG_DIR: "/state/agent-1",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9999",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
    });
    expect(claudeProvider.buildCommand(spec({ endpoints: { anthropicBaseUrl: "http://h:1" } }), "claude").env.ANTHROPIC_BASE_URL).toBe("http://h:1");
    expect(claudeProvider.buildCommand(spec(), "claude").env.ANTHROPIC_BASE_URL).toBeUndefined();
  });

  it("prepare skips onboarding in a fresh config dir and never overwrites an existing .claude.json", async () => {
    const configDir = join(tmp, "claude-home", "nested");
    await claudeProvider.prepare?.(spec({ configDir }));
    expect(JSON.parse(readFileSync(join(configDir, ".claude.json"), "utf8"))).toEqual({ hasCompletedOnboarding: true });
    writeFileSync(join(configDir, ".claude.json"), '{"userID":"keep me"}');
    await claudeProvider.prepare?.(spec({ configDir }));
    expect(readFileSync(join(configDir, ".claude.json"), "utf8")).toBe('{"userID":"keep me"}');
  });
});

describe("codex command", () => {
  it("spawns `exec` with its options, the sandbox, -C and the prompt after --", () => {
    const { command, args, env } = codexProvider.buildCommand(spec({ model: "gpt-x" }), "/bin/codex");
    expect(command).toBe("/bin/codex");
    expect(args).toEqual(["exec", "--json", "--skip-git-repo-check", "--disable", "plugins", "--model", "gpt-x", "--sandbox", "workspace-write", "-C", "/work/tree", "--", "Do the task"]);
    expect(env).toEqual({ CODEX_HOME: "/state/agent-1" });
  });

  it("resumes with the `exec resume` subcommand: thread id then prompt, sandbox through -c (resume has no --sandbox)", () => {
    const { args } = codexProvider.buildCommand(spec({ resumeSessionId: "01a201ee-14b5", prompt: "-continue" }), "codex");
    expect(args).toEqual(["exec", "resume", "--json", "--skip-git-repo-check", "--disable", "plugins", "-c", 'sandbox_mode="workspace-write"', "--", "01a201ee-14b5", "-continue"]);
  });

  it("bypass drops the sandbox; ask falls back to the workspace-write sandbox like acceptEdits", () => {
    const bypass = codexProvider.buildCommand(spec({ permissionMode: "bypass" }), "codex").args;
    expect(bypass).toContain("--dangerously-bypass-approvals-and-sandbox");
    expect(bypass).not.toContain("--sandbox");
    expect(codexProvider.buildCommand(spec({ permissionMode: "bypass", resumeSessionId: "t" }), "codex").args).toContain("--dangerously-bypass-approvals-and-sandbox");
    expect(valueAfter(codexProvider.buildCommand(spec({ permissionMode: "ask" }), "codex").args, "--sandbox")).toBe("workspace-write");
  });

  it("prepare writes a config.toml naming the endpoint's /v1, the model, analytics off", async () => {
    const configDir = join(tmp, "codex-home");
    await codexProvider.prepare?.(spec({ configDir, model: "fake-model", endpoints: { openaiBaseUrl: "http://127.0.0.1:7777/" } }));
    expect(readFileSync(join(configDir, "config.toml"), "utf8")).toBe(
      [
        'model = "fake-model"',
        'model_provider = "switchyard"',
        "",
        "[model_providers.switchyard]",
        'name = "Switchyard endpoint"',
        'base_url = "http://127.0.0.1:7777/v1"',
        'env_key = "OPENAI_API_KEY"',
        'wire_api = "responses"',
        "",
        "[analytics]",
        "enabled = false",
        "",
      ].join("\n"),
    );
    expect(codexConfigToml(spec({ endpoints: { openaiBaseUrl: "http://h:1/v1" } }))).toContain('base_url = "http://h:1/v1"\n');
    expect(codexConfigToml(spec())).toBe("\n[analytics]\nenabled = false\n");
  });

  it("quotes TOML strings: quotes, backslashes, control characters", () => {
    expect(tomlString('a "b" \\ c\nd\te\u0001\u007f')).toBe('"a \\"b\\" \\\\ c\\nd\\te\\u0001\\u007f"');
    expect(tomlString("gpt-ü 🚀")).toBe('"gpt-ü 🚀"');
    expect(tomlString("x\ud800y")).toBe('"x\ufffdy"');
  });

  it("writes a config.toml the real codex binary loads, even with an awkward model name", async () => {
    const codex = resolveCommand(codexProvider, { repoRoot: REPO_ROOT, pathEnv: "" });
    if (!codex) return expect.fail("node_modules/.bin/codex is missing: run npm install");
    const configDir = join(tmp, "codex-real");
    await codexProvider.prepare?.(spec({ configDir, model: 'we"ird\\name\n', endpoints: { openaiBaseUrl: "http://127.0.0.1:9" } }));
    // `codex mcp list` loads config.toml and fails on a syntax error, without any network
    const out = execFileSync(codex, ["mcp", "list"], { env: { ...process.env, CODEX_HOME: configDir }, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", timeout: 15_000 });
    expect(out).toMatch(/No MCP servers configured/);
    writeFileSync(join(configDir, "config.toml"), 'model = "broken\n');
    expect(() => execFileSync(codex, ["mcp", "list"], { env: { ...process.env, CODEX_HOME: configDir }, stdio: ["ignore", "pipe", "pipe"], timeout: 15_000 })).toThrow();
  });
});

describe("fake agent command", () => {
  it("runs the fake agent script on this node with claude's flags and environment", () => {
    const s = spec({ permissionMode: "ask", permissionServer: ASK_SERVER, newSessionId: "sid", endpoints: { anthropicBaseUrl: "http://h:1/v1" } });
    const fake = fakeProvider.buildCommand(s, process.execPath);
    const claude = claudeProvider.buildCommand(s, "claude");
    expect(FAKE_AGENT_SCRIPT).toBe(join(REPO_ROOT, "server", "testing", "fake-agent", "fake-agent.mjs"));
    expect(fake).toEqual({ command: process.execPath, args: [FAKE_AGENT_SCRIPT, ...claude.args], env: claude.env });
    expect(fakeProvider.buildCommand(spec({ resumeSessionId: "sid" }), process.execPath).args).toEqual([FAKE_AGENT_SCRIPT, ...claudeProvider.buildCommand(spec({ resumeSessionId: "sid" }), "c").args]);
    expect(fakeProvider.choosesSessionId).toBe(true);
  });
});

describe("generic presets", () => {
  it("build their commands from flags: prompt flag or positional, permission and model flags", () => {
    expect(getProvider("aider").buildCommand(spec({ permissionMode: "bypass", model: "sonnet" }), "aider").args).toEqual([
      "--no-pretty", "--no-stream", "--no-check-update", "--yes-always", "--model", "sonnet", "--message", "Do the task",
    ]);
    expect(getProvider("opencode").buildCommand(spec({ prompt: "-v please" }), "opencode").args).toEqual(["run", " -v please"]);
    expect(getProvider("gemini").buildCommand(spec({ permissionMode: "bypass" }), "gemini").args).toEqual(["--output-format", "stream-json", "--yolo", "-p", "Do the task"]);
    expect(getProvider("cursor-agent").buildCommand(spec({ resumeSessionId: "chat-1" }), "cursor-agent").args).toEqual(["-p", "--output-format", "stream-json", "--resume", "chat-1", "Do the task"]);
    expect(getProvider("amp").buildCommand(spec({ permissionMode: "bypass" }), "amp").args).toEqual(["--stream-json", "--dangerously-allow-all", "-x", "Do the task"]);
  });
});

describe("registry", () => {
  it("lists every provider with its capabilities", () => {
    const list = listProviders();
    expect(list.map((p) => p.name).sort()).toEqual(["aider", "amp", "claude", "codex", "cursor-agent", "fake", "gemini", "opencode"]);
    expect(list.find((p) => p.name === "claude")).toEqual({
      name: "claude",
      displayName: "Claude Code",
      structuredOutput: true,
      canSteer: false,
      resumeStyle: "flag",
      approvals: { human: true, askMeans: expect.any(String) },
      accounts: { kinds: ["api-key", "setup-token", "oauth"] },
    });
    expect(list.find((p) => p.name === "codex")).toMatchObject({ structuredOutput: true, resumeStyle: "subcommand" });
    expect(list.find((p) => p.name === "opencode")).toMatchObject({ structuredOutput: false, resumeStyle: "none" });
    for (const [name, adapter] of Object.entries(PROVIDERS)) expect(adapter.name).toBe(name);
  });

  it("getProvider names the known providers when asked for an unknown one", () => {
    expect(getProvider("codex")).toBe(codexProvider);
    expect(() => getProvider("nope")).toThrow(/Unknown agent provider "nope".*claude.*codex.*fake/);
  });
});

describe("resolveCommand", () => {
  it("finds the repo's node_modules/.bin/claude and codex", () => {
    expect(resolveCommand(claudeProvider, { repoRoot: REPO_ROOT, pathEnv: "" })).toBe(join(REPO_ROOT, "node_modules", ".bin", "claude"));
    expect(resolveCommand(codexProvider, { repoRoot: REPO_ROOT, pathEnv: "" })).toBe(join(REPO_ROOT, "node_modules", ".bin", "codex"));
  });

  it("falls back to an executable on PATH, skipping files without the executable bit", () => {
    const plain = join(tmp, "path-a");
    const exec = join(tmp, "path-b");
    mkdirSync(plain, { recursive: true });
    mkdirSync(exec, { recursive: true });
    writeFileSync(join(plain, "gemini"), "#!/bin/sh\n");
    chmodSync(join(plain, "gemini"), 0o644);
    writeFileSync(join(exec, "gemini"), "#!/bin/sh\n");
    chmodSync(join(exec, "gemini"), 0o755);
    const repoRoot = join(tmp, "no-repo");
    expect(resolveCommand(getProvider("gemini"), { repoRoot, pathEnv: `${plain}:${exec}` })).toBe(join(exec, "gemini"));
    expect(resolveCommand(getProvider("gemini"), { repoRoot, pathEnv: plain })).toBeNull();
  });

  it("prefers an override: absolute, repo-relative or a name on PATH; null when it is not executable", () => {
    const bin = join(tmp, "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "my-claude"), "#!/bin/sh\n");
    chmodSync(join(bin, "my-claude"), 0o755);
    expect(resolveCommand(claudeProvider, { repoRoot: REPO_ROOT, pathEnv: "", override: join(bin, "my-claude") })).toBe(join(bin, "my-claude"));
    expect(resolveCommand(claudeProvider, { repoRoot: tmp, pathEnv: "", override: "bin/my-claude" })).toBe(join(bin, "my-claude"));
    expect(resolveCommand(claudeProvider, { repoRoot: REPO_ROOT, pathEnv: bin, override: "my-claude" })).toBe(join(bin, "my-claude"));
    expect(resolveCommand(claudeProvider, { repoRoot: REPO_ROOT, pathEnv: bin, override: join(bin, "missing") })).toBeNull();
  });

  it("runs the fake agent on this node unless overridden", () => {
    expect(resolveCommand(fakeProvider, { repoRoot: REPO_ROOT, pathEnv: "" })).toBe(process.execPath);
  });
});

describe("the switchyard MCP server every agent gets", () => {
  const mcpServer = { url: "http://127.0.0.1:7422/mcp/agents/agent_1", sharedUrl: "http://127.0.0.1:7422/mcp", token: "sya.agent_1.SECRET-SIG", serverName: "switchyard", configPath: "", tokenEnv: "SWITCHYARD_TOKEN" };

  it("claude: the config is a file (0600) named in argv, the token only inside it; its tools are allowed in acceptEdits and ask", async () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-mcp-"));
    try {
      for (const permissionMode of ["acceptEdits", "ask", "bypass"] as const) {
        const s = spec({ permissionMode, configDir: join(dir, "config"), mcpServer: { ...mcpServer, configPath: join(dir, "mcp.json") } });
        const args = claudeProvider.buildCommand(s, "claude").args;
        expect(args.join(" ")).not.toContain("SECRET-SIG");
        expect(args[args.indexOf("--mcp-config") + 1]).toBe(join(dir, "mcp.json"));
        const settings = args.includes("--settings") ? (JSON.parse(args[args.indexOf("--settings") + 1]!) as { permissions: { allow: string[] } }) : null;
        if (permissionMode === "bypass") expect(settings).toBeNull();
        else expect(settings?.permissions.allow).toContain("mcp__switchyard");
      }
      await claudeProvider.prepare?.(spec({ configDir: join(dir, "config"), mcpServer: { ...mcpServer, configPath: join(dir, "mcp.json") } }));
      expect(statSync(join(dir, "mcp.json")).mode & 0o777).toBe(0o600);
      expect(JSON.parse(readFileSync(join(dir, "mcp.json"), "utf8"))).toEqual({ mcpServers: { switchyard: { type: "http", url: mcpServer.url, headers: { Authorization: `Bearer ${mcpServer.token}` } } } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("codex: mcp_servers.switchyard on the shared /mcp, the token read from SWITCHYARD_TOKEN, never written", () => {
    const toml = codexConfigToml(spec({ mcpServer: { ...mcpServer, configPath: "/unused" } }));
    expect(toml).toContain('[mcp_servers.switchyard]\nurl = "http://127.0.0.1:7422/mcp"\nbearer_token_env_var = "SWITCHYARD_TOKEN"\ndefault_tools_approval_mode = "approve"');
    expect(toml).not.toContain("SECRET-SIG");
  });
});
