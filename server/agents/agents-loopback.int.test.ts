import { agentsSuite } from "../testing/agents-suite";

// the agents integration suite with every call of the session seam (AgentHost) JSON round-tripped,
// as it will be to a worker on another machine: a call that only works in-process fails here
agentsSuite("loopback");
