// Lint fixture (server/testing/lint-rules.test.ts): half of an import cycle, on purpose.
// The main lint ignores this folder.
import { b } from "./cycle-b";

export const a = () => b() + 1;
