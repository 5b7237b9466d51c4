import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { HUMAN } from "../../shared/conversations";
import type { AgentsService } from "../agents/agents.service";
import type { Store } from "../db/store";
import { DomainError } from "../errors";
import { EventBus } from "../events/bus";
import { STORE_KINDS, testStores, type StoreKind } from "../testing/stores";
import { ConversationsService } from "./conversations.service";

/**
 * The conversations' store-facing behaviour on SQLite and on PostgreSQL: a question is stored with
 * its conversation.created event; an answer is a compare-and-set stored with its
 * conversation.answered event, so a question is answered exactly once however many answer it at
 * once, on one server or several; a losing answer's write throws and leaves nothing behind; a new
 * store on the same database sees it all.
 */

const stores = testStores();
afterAll(() => stores.close());

/** The agents the conversations point at (the agents domain's own store is not under test here). */
const AGENTS = [
  { id: "agent_asker", alias: "asker", status: "running", taskId: "frontend", phaseId: "build", initiativeId: "init-1" },
  { id: "agent_backend_old", alias: "backend-old", status: "stopped", taskId: "backend", phaseId: "build", initiativeId: "init-1" },
  { id: "agent_backend", alias: "backend", status: "running", taskId: "backend", phaseId: "build", initiativeId: "init-1" },
];
const agents = {
  resolveId: async (ref: string, opts: { lenient?: boolean } = {}) => {
    const hit = AGENTS.find((a) => a.id === ref || a.alias === ref);
    if (hit) return hit.id;
    if (opts.lenient) return ref;
    throw new DomainError("AGENT_NOT_FOUND", `No agent "${ref}"`, { kind: "NOT_FOUND" });
  },
  get: async (ref: string) => AGENTS.find((a) => a.id === ref || a.alias === ref) ?? Promise.reject(new DomainError("AGENT_NOT_FOUND", `No agent "${ref}"`, { kind: "NOT_FOUND" })),
  list: async (f: { taskId?: string; phaseId?: string }) => ({ items: AGENTS.filter((a) => (!f.taskId || a.taskId === f.taskId) && (!f.phaseId || a.phaseId === f.phaseId)), nextCursor: null }),
} as unknown as AgentsService;

type Server = { store: Store; bus: EventBus; conversations: ConversationsService };

describe.each(STORE_KINDS)("conversations on %s", (kind: StoreKind) => {
  let servers: Server[];
  beforeEach(() => {
    servers = [];
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      s.bus.close();
      await s.bus.drain();
    }
  });

  function serve(store: Store, bus = new EventBus(store.events)): Server {
    const server = { store, bus, conversations: new ConversationsService(store, bus, agents) };
    servers.push(server);
    return server;
  }
  /** Another server on the same database (PostgreSQL: its own pool; SQLite: one connection per file, shared). */
  const other = async (store: Store) => (kind === "postgres" ? stores.again(store) : store);
  const eventsOf = async (store: Store, type: string) => (await store.events.readAfter(0, undefined, 10_000)).filter((e) => e.type === type);

  it("stores a question with its conversation.created event; pending, list and get read it back", async () => {
    const store = await stores.fresh(kind);
    const { conversations } = serve(store);
    const toHuman = await conversations.ask({ fromAgentId: "asker", toAgentId: HUMAN, question: "Ship it today?" });
    const toTask = await conversations.ask({ fromAgentId: "agent_asker", taskId: "backend", question: "Which port?" });
    const fromHuman = await conversations.ask({ fromAgentId: HUMAN, toAgentId: "backend", question: "Status?" });

    expect(toHuman).toMatchObject({ fromAgentId: "agent_asker", toAgentId: HUMAN, initiativeId: "init-1", phaseId: "build", taskId: "frontend", status: "pending", answer: null });
    expect(toTask).toMatchObject({ toAgentId: "agent_backend", taskId: "backend" });
    expect(fromHuman).toMatchObject({ fromAgentId: HUMAN, toAgentId: "agent_backend", initiativeId: null });
    expect(await conversations.get(toTask.id)).toEqual(toTask);
    await expect(conversations.get("conv_nope")).rejects.toThrow(/No conversation "conv_nope"/);
    await expect(conversations.ask({ fromAgentId: "asker", toAgentId: "asker", question: "?" })).rejects.toThrow(/cannot ask itself/);
    await expect(conversations.ask({ fromAgentId: "asker", taskId: "nobody", question: "?" })).rejects.toThrow(/No agent works on task "nobody"/);

    expect((await conversations.pending(HUMAN)).map((c) => c.id)).toEqual([toHuman.id]);
    expect((await conversations.pending("backend")).map((c) => c.id)).toEqual([toTask.id, fromHuman.id]);
    expect((await conversations.list({ agentId: "asker" })).map((c) => c.id).sort()).toEqual([toHuman.id, toTask.id].sort());
    expect(await conversations.list({ status: "answered" })).toEqual([]);
    expect(await conversations.list()).toHaveLength(3);

    const created = await eventsOf(store, "conversation.created");
    expect(created.map((e) => e.scope)).toEqual([
      { conversationId: toHuman.id, agentId: HUMAN },
      { conversationId: toTask.id, agentId: "agent_backend" },
      { conversationId: fromHuman.id, agentId: "agent_backend" },
    ]);
    expect(created[1]!.payload).toEqual({ fromAgentId: "agent_asker", toAgentId: "agent_backend", question: "Which port?" });
  });

  it("answers a question exactly once: six answers at once on two servers, one is stored with its one event, the others are refused", async () => {
    const store = await stores.fresh(kind);
    const a = serve(store);
    const b = serve(await other(store));
    const q = await a.conversations.ask({ fromAgentId: "asker", toAgentId: HUMAN, question: "Which color?" });
    const settled = await Promise.allSettled(["red", "green", "blue", "cyan", "magenta", "yellow"].map((answer, i) => (i % 2 ? b : a).conversations.answer(q.id, answer)));
    const won = settled.filter((r) => r.status === "fulfilled");
    expect(won).toHaveLength(1);
    for (const r of settled.filter((x) => x.status === "rejected")) {
      expect((r as PromiseRejectedResult).reason).toMatchObject({ code: "CONVERSATION_ANSWERED", message: `Conversation ${q.id} is already answered` });
    }
    const answer = (won[0] as PromiseFulfilledResult<{ answer: string }>).value.answer;
    expect(await b.conversations.get(q.id)).toMatchObject({ status: "answered", answer });
    const answered = await eventsOf(store, "conversation.answered");
    expect(answered).toHaveLength(1);
    expect(answered[0]!).toMatchObject({ scope: { conversationId: q.id, agentId: "agent_asker" }, payload: { answer, fromAgentId: "agent_asker", toAgentId: HUMAN } });
    expect(await a.conversations.pending(HUMAN)).toEqual([]);
    await expect(a.conversations.answer(q.id, "again")).rejects.toThrow(/already answered/);
  });

  it("an answer whose write loses (another server answered after its check) throws: its row change and its event are not stored", async () => {
    const store = await stores.fresh(kind);
    const theirs = serve(await other(store));
    const realBus = new EventBus(store.events);
    // another server answers between this one's check and its write
    const racingBus = {
      publish: async (...args: Parameters<EventBus["publish"]>) => {
        if (args[0] === "conversation.answered") await theirs.conversations.answer(args[2]!.conversationId!, "theirs");
        return realBus.publish(...args);
      },
    } as unknown as EventBus;
    const ours = serve(store, realBus);
    const mine = new ConversationsService(store, racingBus, agents);
    const q = await ours.conversations.ask({ fromAgentId: "asker", toAgentId: HUMAN, question: "Who answers?" });
    const before = await store.events.count(0);

    await expect(mine.answer(q.id, "mine")).rejects.toMatchObject({ code: "CONVERSATION_ANSWERED" });
    expect(await ours.conversations.get(q.id)).toMatchObject({ status: "answered", answer: "theirs" });
    const answered = await eventsOf(store, "conversation.answered");
    expect(answered.map((e) => (e.payload as { answer: string }).answer)).toEqual(["theirs"]);
    expect(await store.events.count(0)).toBe(before + 1);
  });

  it("after a restart (a new store on the same database): the questions, their answers and their events are there; answering again is refused", async () => {
    const store = await stores.fresh(kind);
    const a = serve(store);
    const open = await a.conversations.ask({ fromAgentId: "asker", toAgentId: HUMAN, question: "Still open?" });
    const done = await a.conversations.ask({ fromAgentId: "asker", taskId: "backend", question: "Done?" });
    await a.conversations.answer(done.id, "yes");
    a.bus.close();
    await a.bus.drain();

    const b = serve(await stores.again(store));
    expect((await b.conversations.pending(HUMAN)).map((c) => c.id)).toEqual([open.id]);
    expect(await b.conversations.get(done.id)).toMatchObject({ status: "answered", answer: "yes" });
    await expect(b.conversations.answer(done.id, "no")).rejects.toThrow(/already answered/);
    expect((await eventsOf(b.store, "conversation.created")).map((e) => e.scope.conversationId)).toEqual([open.id, done.id]);
    await b.conversations.answer(open.id, "now closed");
    expect(await a.conversations.pending(HUMAN)).toEqual([]);
  });
});
