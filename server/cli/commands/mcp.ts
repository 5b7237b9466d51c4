import type { Command } from "commander";
import { examples, type Cli } from "./common";

export function registerMcp(program: Command, cli: Cli): void {
  const cmd = program
    .command("mcp")
    .description("the switchyard MCP server on stdio, for an MCP client (Claude Code, Codex, Claude Desktop...), talking to a running server")
    .option("--agent-id <agent>", "act as this agent (its questions, its approvals): what an agent's own config passes")
    .action(async (opts: { agentId?: string }, self: Command) => {
      // loaded here, not with every command: the MCP SDK is only for this one
      const { runStdioMcp } = await import("../../mcp/stdio");
      // stdout carries the protocol: nothing else may be printed there
      await runStdioMcp({ ...(cli.connection(self)), ...(opts.agentId ? { agentId: opts.agentId } : {}) });
    });
  examples(cmd, "claude mcp add switchyard -- yard mcp", "yard mcp --url http://127.0.0.1:7422 --token $SWITCHYARD_TOKEN");
}
