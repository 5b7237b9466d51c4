import type { Cluster } from "../cluster/cluster.service";
import type { WorkersService } from "../workers/workers.service";
import type { Config } from "../config";
import type { Principal } from "../http/security";
import type { EventBus } from "../events/bus";
import type { Redactor } from "../redact";
import type { AccountsService } from "../accounts/accounts.service";
import type { AgentsService } from "../agents/agents.service";
import type { ConversationsService } from "../conversations/conversations.service";
import type { DaemonsService } from "../daemons/daemons.service";
import type { RunsService } from "../runs/runs.service";

/** What every procedure can reach: the services of the running server. */
export type Services = {
  config: Config;
  bus: EventBus;
  runs: RunsService;
  daemons: DaemonsService;
  agents: AgentsService;
  accounts: AccountsService;
  conversations: ConversationsService;
  /** The servers of this database (several on PostgreSQL; one on SQLite). */
  cluster: Cluster;
  workers: WorkersService;
  redact: Redactor;
  startedAt: number;
  /** A one-time dashboard login link (or the plain URL when no token is set). */
  loginLink: () => string;
  version: string;
  stats: {
    activeRuns: () => number;
    connectedClients: () => number;
    sseOpened: () => void;
    sseClosed: () => void;
  };
};

export type Context = Services & {
  /** Who is calling: the server's token, a browser session, anyone (no token configured), or an agent by its own token. */
  principal: Principal;
};

/** The principal a request carries (set by the guard before routing); "open" when none was set. */
export function principalOf(req: { principal?: Principal }): Principal {
  return req.principal ?? { kind: "open" };
}
