// @vitest-environment happy-dom
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { navigate } from "../router/history";
import { awaitPreloaded, preloaded, resetPreloadForTests } from "./preload";
import { HEAD_LINES } from "./useAgentLogHead";

/** index.html's inline script that preloads an agent's page. */
const script = [...readFileSync(join(import.meta.dirname, "..", "..", "index.html"), "utf8").matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!).find((s) => s.includes("__switchyardPreload"))!;

type Asked = { path: string; input: unknown; answer: (body: unknown) => void; fail: () => void };

/** Runs the script as the browser would at `pathname`; the requests it makes wait for `answer`. */
function load(pathname: string): Asked[] {
  const asked: Asked[] = [];
  const fetch = (url: string) =>
    new Promise((resolve, reject) => {
      const u = new URL(url, "http://switchyard.test");
      asked.push({ path: u.pathname, input: JSON.parse(u.searchParams.get("input")!), answer: (body) => resolve({ json: () => Promise.resolve(body) }), fail: () => reject(new Error("offline")) });
    });
  new Function("window", "location", "fetch", script)(window, { pathname }, fetch);
  resetPreloadForTests();
  return asked;
}

const settle = () => new Promise((r) => setTimeout(r, 0));

afterEach(() => {
  delete window.__switchyardPreload;
  resetPreloadForTests();
  window.history.replaceState(null, "", "/");
});

describe("index.html's preload of an agent's page", () => {
  it("asks for the agent and its log's last HEAD_LINES lines, as the page would, by the id or alias of the URL", () => {
    const asked = load("/agents/brave-otter");
    expect(asked.map(({ path, input }) => ({ path, input }))).toEqual([
      { path: "/trpc/agents.output", input: { agentId: "brave-otter", limit: HEAD_LINES } },
      { path: "/trpc/agents.get", input: { agentId: "brave-otter" } },
    ]);
    expect(load("/agents/a%20b/")[0]!.input).toEqual({ agentId: "a b", limit: HEAD_LINES });
  });

  it("asks nothing on other pages", () => {
    for (const path of ["/", "/agents", "/agents/new", "/agents/x/y", "/runs/r1"]) expect(load(path)).toEqual([]);
    expect(window.__switchyardPreload).toBeUndefined();
  });

  it("hands the data to the page of that agent once it has arrived", async () => {
    const [log, agent] = load("/agents/brave-otter");
    expect(preloaded("log", "brave-otter")).toBeUndefined(); // not arrived yet
    const waiting = awaitPreloaded("log", "brave-otter");
    log!.answer({ result: { data: { totalLines: 7 } } });
    await settle();
    expect(await waiting).toEqual({ totalLines: 7 });
    expect(preloaded("log", "brave-otter")).toEqual({ totalLines: 7 });
    expect(preloaded("log", "other-agent")).toBeUndefined();
    agent!.answer({ result: { data: { id: "agent_1" } } });
    await settle();
    expect(preloaded("agent", "brave-otter")).toEqual({ id: "agent_1" });
  });

  it("an error or a failed request is no data: the page asks again", async () => {
    const [log, agent] = load("/agents/gone");
    log!.answer({ error: { message: "No agent", data: { code: "NOT_FOUND" } } });
    agent!.fail();
    await settle();
    expect(preloaded("log", "gone")).toBeUndefined();
    expect(await awaitPreloaded("log", "gone")).toBeUndefined();
    expect(await awaitPreloaded("agent", "gone")).toBeUndefined();
  });

  it("belongs to the page the browser opened: gone after the first navigation in the app", async () => {
    const [log] = load("/agents/brave-otter");
    log!.answer({ result: { data: { totalLines: 7 } } });
    await settle();
    expect(preloaded("log", "brave-otter")).toBeDefined();
    navigate("/agents");
    navigate("/agents/brave-otter");
    expect(preloaded("log", "brave-otter")).toBeUndefined();
  });
});
