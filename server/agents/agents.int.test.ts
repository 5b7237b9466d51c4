import { agentsSuite } from "../testing/agents-suite";

// the agents integration suite on the local host (agents-loopback.int.test.ts: the same through the JSON seam)
agentsSuite("local");
