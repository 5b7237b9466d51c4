import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PermissionPolicy } from "./policy";
import { OUTPUT_LIMIT_BYTES } from "./run-command";
import { tempWorkspace, testContext, toolRunner } from "./test-support";

let cwd: string;
beforeAll(() => {
  cwd = tempWorkspace("yard-cmd-");
  mkdirSync(join(cwd, "sub"));
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** A context whose policy lets every command run without asking. */
function allowing(signal?: AbortSignal) {
  const ctx = testContext(cwd, signal ? { signal } : {});
  ctx.policy = new PermissionPolicy(cwd, { run_command: { write: { default: "allow" } } });
  return ctx;
}

async function waitFor<T>(read: () => T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

const readPid = (file: string) => () => {
  const text = existsSync(file) ? readFileSync(file, "utf8").trim() : "";
  return text ? Number(text) : undefined;
};

/** process.kill(-pgid, 0) throws once no process of the group is left (zombies included). */
function groupGone(pgid: number): true | undefined {
  try {
    process.kill(-pgid, 0);
    return undefined;
  } catch {
    return true;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A killed grandchild re-parented to an init that does not reap stays a zombie: dead all the same.
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, "utf8") : "";
  return !/^\d+ \(.*\) Z/.test(stat);
}

describe("run_command", () => {
  it("returns the exit code and the combined output", async () => {
    const out = await toolRunner(allowing(), ["run_command"])("run_command", { command: "echo hello; echo oops >&2; exit 3" });
    expect(out).toMatch(/^\$ echo hello; echo oops >&2; exit 3\nexit code 3 \(\d+\.\d s\)\n\n/);
    expect(out).toContain("hello");
    expect(out).toContain("oops");
    expect(await toolRunner(allowing(), ["run_command"])("run_command", { command: "true" })).toMatch(/exit code 0 \(.*\)\n\n\(no output\)$/);
  });

  it("asks by default: request_permission (fs.exec, the command) comes before the tool call; denied runs nothing", async () => {
    const ctx = testContext(cwd, { answer: "deny" });
    const out = await toolRunner(ctx, ["run_command"])("run_command", { command: "touch made.txt" });
    expect(out).toContain("Access denied: run_command may not run touch made.txt (the user denied it)");
    expect(existsSync(join(cwd, "made.txt"))).toBe(false);
    expect(ctx.recorded.events).toMatchObject([
      { kind: "permission", request: { toolName: "run_command", operation: "fs.exec", resource: "touch made.txt", reason: "policy-ask", details: { cwd } } },
      { kind: "tool-call", call: { toolName: "run_command", args: '{"command":"touch made.txt"}' } },
    ]);
  });

  it("runs in cwd with extra env, without the server's token", async () => {
    process.env.SWITCHYARD_TOKEN = "server-secret-token";
    try {
      const out = await toolRunner(allowing(), ["run_command"])("run_command", { command: 'pwd; echo "$FOO"; echo "token=$SWITCHYARD_TOKEN"', cwd: "sub", env: { FOO: "bar" } });
      expect(out.endsWith(`\n\n${join(cwd, "sub")}\nbar\ntoken=`)).toBe(true);
    } finally {
      delete process.env.SWITCHYARD_TOKEN;
    }
    await expect(toolRunner(allowing(), ["run_command"])("run_command", { command: "true", cwd: "nope" })).rejects.toThrow("cwd nope is not an existing directory");
  });

  it("truncates long output in the middle with a note", async () => {
    const out = await toolRunner(allowing(), ["run_command"])("run_command", { command: "head -c 100000 /dev/zero | tr '\\0' x" });
    expect(out).toContain(`output truncated to ${OUTPUT_LIMIT_BYTES} of 100000 bytes`);
    expect(out).toContain(`[... ${100000 - OUTPUT_LIMIT_BYTES} bytes of output omitted ...]`);
    expect(out.length).toBeLessThan(OUTPUT_LIMIT_BYTES + 500);
  });

  it("kills the process group on timeout", async () => {
    const started = Date.now();
    const out = await toolRunner(allowing(), ["run_command"])("run_command", { command: `echo $$ > ${cwd}/timeout.pid; sleep 30`, timeoutMs: 300 });
    expect(out).toContain("timed out after 300 ms; the command and its children were killed");
    expect(Date.now() - started).toBeLessThan(5000);
    const pgid = await waitFor(readPid(join(cwd, "timeout.pid")));
    // The shell is reaped at once; its killed child is re-parented and reaped by init shortly after.
    await waitFor(() => groupGone(pgid));
    expect(() => process.kill(-pgid, 0)).toThrow();
  });

  it("abort kills the whole process group, children included", async () => {
    const controller = new AbortController();
    const run = toolRunner(allowing(controller.signal), ["run_command"]);
    const command = `sleep 30 & echo $! > ${cwd}/child.pid; echo $$ > ${cwd}/leader.pid; sleep 30`;
    const pending = run("run_command", { command });
    pending.catch(() => undefined);
    const leader = await waitFor(readPid(join(cwd, "leader.pid")));
    const child = await waitFor(readPid(join(cwd, "child.pid")));
    expect(alive(child)).toBe(true);
    controller.abort();
    await expect(pending).rejects.toThrow(/abort/i);
    expect(() => process.kill(leader, 0)).toThrow();
    await waitFor(() => (alive(child) ? undefined : true), 3000);
    await waitFor(() => groupGone(leader));
    expect(() => process.kill(-leader, 0)).toThrow();
  });

  it("the per-call abort signal of the AI SDK works too; an aborted call never starts", async () => {
    const run = toolRunner(allowing(), ["run_command"]);
    await expect(run("run_command", { command: `touch ${cwd}/never.txt` }, AbortSignal.abort())).rejects.toThrow(/abort/i);
    expect(existsSync(join(cwd, "never.txt"))).toBe(false);
  });
});
