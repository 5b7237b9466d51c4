import type { Tool } from "../tool-kit";
import { AGENT_WORK_TOOLS } from "./agent-work";
import { AGENT_TOOLS } from "./agents";
import { CONVERSATION_TOOLS } from "./conversations";
import { DAEMON_TOOLS } from "./daemons";
import { inbox } from "./inbox";
import { RUN_TOOLS } from "./runs";

/** Every tool of the `switchyard` MCP server (besides `approve`, bound to one agent: server/agents/permission-mcp.ts). */
export const SWITCHYARD_TOOLS: readonly Tool[] = [...RUN_TOOLS, ...AGENT_TOOLS, ...AGENT_WORK_TOOLS, ...CONVERSATION_TOOLS, ...DAEMON_TOOLS, inbox];
