/** Test support, never set in production: pauses at the moments races happen (completion, cleanup at idle). */
export const agentTestHooks: {
  beforeCompletionWrite?: (agentId: string) => Promise<void>;
  /** Runs in the cleanup at idle just before a clean worktree is removed. */
  beforeWorktreeRemoval?: (agentId: string) => Promise<void>;
} = {};
