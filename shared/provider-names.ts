/**
 * The agent CLIs Switchyard drives, by name, in the order server/agents/providers lists them. No
 * zod and no adapter here, so `yard agent spawn --help` names them without loading the adapters
 * (the CLI's client commands load no server module); a test holds this list to the adapters'.
 */
export const PROVIDER_NAMES = ["claude", "codex", "fake", "gemini", "cursor-agent", "opencode", "aider", "amp"] as const;

export type ProviderName = (typeof PROVIDER_NAMES)[number];
