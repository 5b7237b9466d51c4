import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommaClient, type Frame } from "../testing/comma-client";
import { startRunsWorld, type RunsWorld } from "../testing/runs-world";

/**
 * outputSchema (structured output) through the engine: a conforming answer is parsed, validated
 * and handed on as JSON; anything else fails the run with a clear error. `mock/echo` answers with
 * its input, so the input decides what the agent "says".
 */
let world: RunsWorld;
const clients: CommaClient[] = [];
beforeAll(async () => {
  world = await startRunsWorld("switchyard-schema-cwd-");
});
afterAll(async () => {
  for (const c of clients) c.close();
  await world.stop();
});

const SCHEMA = `{type: object, properties: {title: {type: string}, score: {type: number, minimum: 0, maximum: 10}}, required: [title, score], additionalProperties: false}`;
const ended = (runId: string) => (f: Frame) => f.runId === runId && (f.type === "strategy_completed" || f.type === "strategy_error");

async function run(input: string): Promise<{ done: Frame; frames: Frame[] }> {
  const path = world.strategy("shaped", `name: Shaped\nversion: "1"\nagents:\n  shaper: {model: mock/echo, outputSchema: ${SCHEMA}}\n  next: {model: mock/echo}\nflow: {type: sequential, steps: [{agent: shaper}, {agent: next}]}\n`);
  const c = await CommaClient.connect(world.t.url);
  clients.push(c);
  const prepared = await c.request({ type: "prepare_run", strategyPath: path, cwd: world.cwd });
  const runId = prepared.runId as string;
  c.send({ type: "start_run", runId, input });
  const done = await c.waitFor(ended(runId), 15_000);
  return { done, frames: c.ofRun(runId) };
}

describe("outputSchema", () => {
  it("a conforming answer is validated and handed to the next step as JSON", async () => {
    const { done, frames } = await run('{"title": "Picnic", "score": 7}');
    expect(done).toMatchObject({ type: "strategy_completed" });
    const shaped = frames.find((f) => f.type === "step_completed" && f.stepName === "shaper")!;
    expect(JSON.parse((shaped.result as { text: string }).text)).toEqual({ title: "Picnic", score: 7 });
    // the next step received exactly that JSON
    expect(frames.find((f) => f.type === "step_started" && f.stepName === "next")?.message).toBe('{"title":"Picnic","score":7}');
  });

  it("an answer that is not JSON, or breaks the schema, fails the run naming the agent", async () => {
    const notJson = await run("just some prose");
    expect(notJson.done).toMatchObject({ type: "strategy_error", error: { code: "EXECUTION_ERROR" } });
    expect((notJson.done.error as { message: string }).message).toMatch(/Agent "shaper" did not answer in the shape of its outputSchema/);
    const outOfRange = await run('{"title": "Picnic", "score": 42}');
    expect(outOfRange.done).toMatchObject({ type: "strategy_error" });
    expect((outOfRange.done.error as { message: string }).message).toMatch(/outputSchema/);
    const missing = await run('{"title": "Picnic"}');
    expect((missing.done.error as { message: string }).message).toMatch(/outputSchema/);
    expect(missing.frames.some((f) => f.type === "step_started" && f.stepName === "next")).toBe(false);
  });
});
