import { measured } from "./load";

/**
 * The limit and the measured side, interleaved: A, B, A, B... `rounds` times each, so a drift of
 * the machine's speed hits both alike. Before each side `settle` runs (wait until the processes
 * involved are idle), outside the measured section; each side runs as a measured section. With
 * `warmup`, one round of each comes first (both sides warm, as a long-lived server is): its
 * results are in `warm`, for their counts, and not among the measured rounds. (The benches warm
 * up unless they run a single round: a quick run, which checks counts, not speed.)
 */
export async function interleave<A, B>(options: {
  rounds: number;
  limit: (round: number) => Promise<A>;
  measured: (round: number) => Promise<B>;
  settle?: () => Promise<unknown>;
  warmup?: boolean;
}): Promise<{ limit: A[]; measured: B[]; warm: { limit: A[]; measured: B[] } }> {
  const out = { limit: [] as A[], measured: [] as B[], warm: { limit: [] as A[], measured: [] as B[] } };
  if (options.warmup) {
    await options.settle?.();
    out.warm.limit.push(await options.limit(-1));
    await options.settle?.();
    out.warm.measured.push(await options.measured(-1));
  }
  for (let round = 0; round < options.rounds; round++) {
    await options.settle?.();
    out.limit.push(await measured(() => options.limit(round)));
    await options.settle?.();
    out.measured.push(await measured(() => options.measured(round)));
  }
  return out;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
