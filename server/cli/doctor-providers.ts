/**
 * What `yard doctor` tells a user about each agent CLI: how to install it and where its
 * credentials come from. Provider knowledge belongs in the adapters (STYLE.md 6): these fields
 * are to move to `ProviderAdapter` (`install`, `credentialEnv`, `loginFiles`) once
 * server/agents/providers/ takes them; until then a provider without an entry here gets a
 * generic hint.
 */
export interface ProviderHelp {
  install: string;
  /** Environment variables that give the CLI a key, as the agent inherits them from the server. */
  credentialEnv: string[];
  /**
   * Files of the user's own login that an agent's CLI reads (under $HOME). Empty for CLIs that
   * Switchyard runs with their own config dir (claude, codex): a user's login does not reach them.
   */
  loginFiles: string[];
  /** How to give it credentials. */
  credentialHint: string;
}

export const PROVIDER_HELP: Record<string, ProviderHelp> = {
  claude: {
    install: "npm install -g @anthropic-ai/claude-code",
    credentialEnv: ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"],
    loginFiles: [],
    credentialHint: "yard account add --provider claude --token <claude setup-token> --email you@example.com, or ANTHROPIC_API_KEY in the server's environment (agents get their own config dir: your `claude login` is not used)",
  },
  codex: {
    install: "npm install -g @openai/codex",
    credentialEnv: ["OPENAI_API_KEY"],
    loginFiles: [],
    credentialHint: "yard account add --provider codex --api-key -, or OPENAI_API_KEY in the server's environment (agents get their own CODEX_HOME: your `codex login` is not used)",
  },
  gemini: {
    install: "npm install -g @google/gemini-cli",
    credentialEnv: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
    loginFiles: [".gemini/oauth_creds.json"],
    credentialHint: "GEMINI_API_KEY in the server's environment, or sign in once by running gemini",
  },
  "cursor-agent": {
    install: "curl https://cursor.com/install -fsS | bash",
    credentialEnv: ["CURSOR_API_KEY"],
    loginFiles: [],
    credentialHint: "CURSOR_API_KEY in the server's environment, or cursor-agent login",
  },
  opencode: {
    install: "npm install -g opencode-ai",
    credentialEnv: ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"],
    loginFiles: [".local/share/opencode/auth.json"],
    credentialHint: "opencode auth login, or the key of the model it uses in the server's environment",
  },
  aider: {
    install: "python -m pip install aider-install && aider-install",
    credentialEnv: ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY"],
    loginFiles: [],
    credentialHint: "the key of the model it uses in the server's environment (ANTHROPIC_API_KEY, OPENAI_API_KEY...)",
  },
  amp: {
    install: "npm install -g @sourcegraph/amp",
    credentialEnv: ["AMP_API_KEY"],
    loginFiles: [],
    credentialHint: "AMP_API_KEY in the server's environment, or amp login",
  },
};

export function helpOf(provider: string, command: string): ProviderHelp {
  return PROVIDER_HELP[provider] ?? { install: `install ${command} and put it on PATH`, credentialEnv: [], loginFiles: [], credentialHint: `see ${command}'s documentation` };
}
