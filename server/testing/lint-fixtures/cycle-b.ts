// Lint fixture (server/testing/lint-rules.test.ts): the other half of the cycle with cycle-a.ts.
import { a } from "./cycle-a";

export const b = () => 1;
export const c = () => a();
