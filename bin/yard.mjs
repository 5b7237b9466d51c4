#!/usr/bin/env node
// The `yard` CLI: TypeScript sources run through tsx, no build step.
import { register } from "tsx/esm/api";

register();
await import("../server/cli/main.ts");
