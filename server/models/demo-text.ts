/**
 * The prose of `mock/demo`: a short, plausible, deterministic answer derived from the agent's
 * system prompt (its role) and its input (the topic). Generic on purpose: a first-time user sees
 * a planner plan, a reviewer review and an editor approve, with no API key. Pure, no I/O.
 */

export type DemoInput = { system: string; input: string };

/** Marks an improvement the judge asked for; seeing it again in a draft means it was applied. */
export const DEMO_SUGGESTION_MARK = "Suggestion:";

type Role = "judge" | "planner" | "optimist" | "skeptic" | "reviewer" | "researcher" | "summarizer" | "writer" | "assistant";

/** Most specific first; matched against the persona ("You are a X"), then the whole prompt. */
const ROLE_PATTERNS: Array<[Role, RegExp]> = [
  ["optimist", /\boptimist|\bstrongest\b|\bargues? for\b|\badvocate\b/],
  ["skeptic", /\bskeptic|\bsceptic|\bbiggest risk|\bargues? against|\bdevil'?s advocate/],
  ["reviewer", /\breview|\bcritic|\bcritique|\bfeedback\b|\beditor\b/],
  ["researcher", /\bresearch|\banaly[sz]/],
  ["summarizer", /\bsummar/],
  ["writer", /\bwrit(e|er|ing)\b|\bdraft/],
  ["planner", /\bplan(ner|s)?\b|\bsteps\b/],
];

/** A small stable hash, to vary phrasing deterministically. */
function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

function pick<T>(options: readonly T[], seed: number): T {
  return options[(seed >>> 0) % options.length] as T;
}

/** The break signal a judge is told to answer (`==DONE==`, or "answer APPROVED on the first line"). */
export function judgeSignal(system: string): string | undefined {
  const marked = /==[A-Z][A-Z_ ]*==/.exec(system)?.[0];
  if (marked) return marked;
  return /\b(?:answer|reply|respond|say|write)\s+["'`]?([A-Z][A-Z_]{2,})["'`]?\s+(?:on|as|in)\s+the\s+first\s+line/i.exec(system)?.[1];
}

function matchRole(text: string): Role | undefined {
  return ROLE_PATTERNS.find(([, pattern]) => pattern.test(text))?.[0];
}

function roleOf(system: string): Role {
  if (judgeSignal(system)) return "judge";
  const who = persona(system);
  return (who ? matchRole(who) : undefined) ?? matchRole(system.toLowerCase()) ?? "assistant";
}

/** "the technical researcher" from "You are a technical researcher. ..." */
function persona(system: string): string | undefined {
  const match = /\byou are (?:an?|the)\s+([a-z][a-z -]{2,40}?)(?:[.,;:\n]| who | that | focusing)/i.exec(system);
  return match?.[1]?.trim().toLowerCase();
}

/** The topic: the first non-empty line of the input, plain, at most 80 characters. */
export function topicOf(input: string): string {
  const line = input.split("\n").map((l) => l.replace(/[#>*_`]/g, "").trim()).find((l) => l.length > 0);
  if (!line) return "the request";
  const plain = line.replace(/\s+/g, " ").replace(/[.?!:]+$/, "");
  return plain.length > 80 ? `${plain.slice(0, 77).trimEnd()}...` : plain;
}

function bullets(lines: string[]): string {
  return lines.map((l) => `- ${l}`).join("\n");
}

function judge(signal: string, input: string, seed: number): string {
  if (input.includes(DEMO_SUGGESTION_MARK) || /\brevised\b/i.test(input)) {
    return `${signal}\nThe draft now addresses the earlier note. ${pick(["It reads clearly and is ready to ship.", "It is concise, concrete and ready.", "Nothing essential is missing; approved."], seed)}`;
  }
  const suggestion = pick(
    ["open with the conclusion, then give the reasons", "add one concrete example", "cut the second paragraph to a single sentence", "name who benefits and how"],
    seed,
  );
  return `Not yet.\n${DEMO_SUGGESTION_MARK} ${suggestion}. The rest of the draft works; one more pass should do it.`;
}

function researcher(system: string, topic: string, seed: number): string {
  const who = persona(system) ?? "researcher";
  const angle = who.split(" ")[0] ?? "practical";
  return [
    `**${who[0]?.toUpperCase() ?? ""}${who.slice(1)}: ${topic}**`,
    "",
    bullets([
      `From a ${angle} angle, the core question is what "${topic}" changes for the people involved.`,
      pick(["The cheapest experiment is a small pilot with a clear success measure.", "Existing solutions cover part of this; the gap is integration.", "Most of the value comes from the first, simplest version."], seed),
      pick(["Watch the dependencies: they decide the timeline.", "Measure early, before opinions harden.", "Plan for maintenance, not just delivery."], seed >> 3),
    ]),
  ].join("\n");
}

function proseFor(role: Role, system: string, topic: string, input: string, seed: number): string {
  switch (role) {
    case "judge":
      return judge(judgeSignal(system) ?? "DONE", input, seed);
    case "planner":
      return `Here is a three-step plan for **${topic}**:\n\n1. Clarify the goal and what a good result looks like.\n2. ${pick(["Sketch the simplest version that could work", "Gather the facts and constraints that matter", "Split the work into small, checkable pieces"], seed)}.\n3. Review the result against the goal and tighten it.`;
    case "optimist":
      return `The strongest point: the plan for "${topic}" starts small and checks itself at every step, so ${pick(["progress is visible early", "mistakes are cheap to fix", "it builds confidence quickly"], seed)}.`;
    case "skeptic":
      if (/bullet/i.test(system)) return researcher(system, topic, seed);
      return `The biggest risk: "${topic}" may hide ${pick(["an unstated requirement", "more work than the plan admits", "a dependency nobody owns"], seed)}. Check that before committing to step two.`;
    case "reviewer":
      return `**Review.** The text on "${topic}" is clear and on topic. ${pick(["The structure works", "The tone fits the audience", "The main point comes through"], seed)}; ${pick(["one example would make it more concrete", "the ending could be a sentence shorter", "the first paragraph could state the conclusion"], seed >> 2)}. Overall: good to go with that small change.`;
    case "researcher":
      return researcher(system, topic, seed);
    case "summarizer":
      return `**Summary.** ${topic}: the key points are the goal, the simplest way to reach it, and how to check the result. ${pick(["Everything else is detail.", "The rest supports these three.", "Start with the first; the others follow."], seed)}`;
    case "writer":
      if (/\bsuggestion:|\bnot yet\b|\*\*review\.\*\*/i.test(input)) {
        // a revision is about the draft's subject, never the editor's verdict ("Not yet. Suggestion: ...")
        const drafted = /\*\*Draft: ([^*\n]+)\*\*/.exec(input)?.[1];
        const rest = input.split("\n").filter((l) => !/^\W*(not yet|suggestion:|review\.|the rest of the draft)/i.test(l)).join("\n");
        const subject = drafted ?? (rest.trim() ? topicOf(rest) : null);
        return `**Revised draft${subject ? `: ${subject}` : ""}**\n\nThe conclusion now comes first, followed by the reasons and one concrete example.`;
      }
      return `**Draft: ${topic}**\n\n${pick(["A good answer starts with the point and then earns it.", "Here is a short, direct take on the request.", "The short version first, then the reasons."], seed)} ${pick(["Keep the scope small, check the result early, and improve it in passes.", "Focus on the one thing that matters most, and make it concrete.", "Say what changes, who it helps, and how to tell that it worked."], seed >> 4)}`;
    case "assistant":
      return `You asked about **${topic}**. ${pick(["Here is a short answer:", "In brief:", "The short version:"], seed)} start with the simplest version that works, check it against what you need, and refine from there. *(This is the mock/demo model: pick a real model to get real answers.)*`;
  }
}

/** The demo answer for an agent: 2-5 sentences of markdown, stable for the same input. */
export function demoAnswer({ system, input }: DemoInput): string {
  const role = roleOf(system);
  return proseFor(role, system, topicOf(input), input, hash(`${system}\n${input}`));
}

/** What the demo says after one of its own exploration tool calls returned. */
export function demoToolSummary(toolName: string, output: string): string {
  const lines = output.split("\n").filter((l) => l.trim() !== "");
  const shown = lines.slice(0, 8);
  const more = lines.length > shown.length ? `\n... and ${lines.length - shown.length} more lines` : "";
  return `I looked around with \`${toolName}\`. It returned:\n\n\`\`\`\n${shown.join("\n")}${more}\n\`\`\`\n\nThat is the starting point; a real model would now dig into the files that matter for your question.`;
}

/** Splits text into word-sized deltas (a word and its trailing whitespace), 1-3 words each. */
export function wordDeltas(text: string): string[] {
  const words = text.match(/\S+\s*|\s+/g) ?? [];
  const deltas: string[] = [];
  for (let i = 0; i < words.length; ) {
    const size = 1 + (i % 3 === 0 ? 1 : 0);
    deltas.push(words.slice(i, i + size).join(""));
    i += size;
  }
  return deltas;
}
