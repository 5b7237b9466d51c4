// Lint fixture: a cycle made of `import type` alone is erased at build, so no-cycle lets it pass.
import type { B } from "./type-only-b";

export type A = { b?: B };
