// Lint fixture: the other half of type-only-a.ts.
import type { A } from "./type-only-a";

export type B = { a?: A };
