/** Test support, never set in production: pauses at the moments races happen (completion, cleanup at idle). */
export const agentTestHooks: {
  /** Runs when the completion of an ended process run starts (before its branch is pushed from its worker). */
  beforeRunCompletion?: (agentId: string) => Promise<void>;
  beforeCompletionWrite?: (agentId: string) => Promise<void>;
  /** Runs in the cleanup at idle just before a clean worktree is removed. */
  beforeWorktreeRemoval?: (agentId: string) => Promise<void>;
} = {};
