import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { git, gitMany } from "./git";

const dir = mkdtempSync(join(tmpdir(), "switchyard-git-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("gitMany", () => {
  it("runs the commands in one process and returns each output in order, arguments taken literally", async () => {
    await git(["init", "-q", "-b", "main"], { cwd: dir });
    const odd = `it's "$HOME" \`x\` ; rm -rf /tmp/nothing`;
    const [first, second, third] = await gitMany(
      [
        ["config", "user.name", odd],
        ["config", "--get", "user.name"],
        ["symbolic-ref", "HEAD"],
      ],
      { cwd: dir },
    );
    expect(first).toBe("");
    expect(second).toBe(`${odd}\n`);
    expect(third).toBe("refs/heads/main\n");
  });

  it("rejects with the failing command's message", async () => {
    await expect(gitMany([["status", "--porcelain"], ["rev-parse", "--verify", "no-such-ref"]], { cwd: dir })).rejects.toThrow(/no-such-ref|Needed a single revision/);
  });
});
