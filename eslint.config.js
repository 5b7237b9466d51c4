// Lint: TypeScript rules plus the import arrows of STYLE.md section 1 (docs/ARCHITECTURE.md "Folders"):
// shared/ depends on zod alone; server/ imports shared/, never web/; web/ imports shared/ and only
// `import type` from server/ (the AppRouter, the client types); no import cycles anywhere.
// Each rule has a fixture that proves it fires: server/testing/lint-rules.test.ts.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import { importX } from "eslint-plugin-import-x";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";

const noWeb = { group: ["**/web/**", "../web/*", "../../web/*"], message: "server/ and shared/ never import web/ (STYLE.md 1)." };

export default tseslint.config(
  // server/testing/lint-fixtures/: files that break the rules on purpose, linted only by lint-rules.test.ts
  { ignores: ["node_modules", "dist", "drizzle", "test-results", "playwright-report", "e2e/artifacts", "**/*.mjs", "eslint.config.js", "server/testing/lint-fixtures/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-constant-condition": ["error", { checkLoops: false }],
    },
  },
  {
    // import arrows on resolved paths (the TypeScript resolver follows tsconfig.json), so no
    // spelling of a relative path gets around them; `import type` counts too
    files: ["**/*.ts", "**/*.tsx"],
    plugins: { "import-x": importX },
    settings: {
      "import-x/extensions": [".ts", ".tsx"],
      "import-x/parsers": { "@typescript-eslint/parser": [".ts", ".tsx"] },
      "import-x/external-module-folders": ["node_modules", "node_modules/@types"],
      "import-x/resolver-next": [createTypeScriptImportResolver({ project: "tsconfig.json" })],
    },
    rules: {
      // type-only imports are erased at build and never form a load-order cycle; dynamic import() does count
      "import-x/no-cycle": ["error", { ignoreExternal: true }],
      "import-x/no-restricted-paths": ["error", {
        zones: [
          { target: "shared", from: ["server", "web", "e2e", "scripts"], message: "shared/ imports nothing outside shared/ (STYLE.md 1)." },
          { target: "server", from: ["web", "e2e"], message: "server/ imports shared/, never web/ (STYLE.md 1)." },
          { target: "server/lib", from: "server", except: ["./lib"], message: "server/lib/ holds helpers any domain uses: it imports no domain." },
          // production code (not a test, not the bench or the package tests) never loads test support
          { target: ["server/!(*.test).ts", "server/!(testing|bench|package)/**/!(*.test).ts"], from: "server/testing", message: "server/testing/ is test support: only tests, the bench and the package tests import it." },
        ],
      }],
    },
  },
  {
    files: ["shared/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          { regex: "^(?!zod$|zod/|\\./|\\.\\./(?!\\.\\./))", message: "shared/ depends on zod alone (STYLE.md 1)." },
          { group: ["**/server/**", "**/web/**", "../../*"], message: "shared/ imports nothing outside shared/ (STYLE.md 1)." },
        ],
      }],
    },
  },
  {
    files: ["server/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: [noWeb] }] },
  },
  {
    // the domains run on both stores (server/db/store.ts): every query awaited, no SQLite-only executor
    files: ["server/{runs,agents,daemons,accounts,conversations,inbox,mcp,trpc,ws,strategies,tools,workers}/**/*.ts"],
    // the hot-path stores: raw SQL per dialect, and the factories that pick one
    ignores: ["**/*.test.ts", "server/agents/log-store.ts", "server/agents/pg-log-store.ts", "server/agents/log-storage.ts", "server/daemons/queue-store.ts", "server/daemons/pg-queue-store.ts"],
    rules: {
      "no-restricted-syntax": ["error",
        {
          // a query builder chain ending in a SQLite executor: db.select()...where(...).get()
          selector: "CallExpression[arguments.length=0] > MemberExpression.callee[object.type='CallExpression'][property.name=/^(get|all|run)$/]",
          message: "Await the query instead: .get()/.all()/.run() exist on SQLite only (server/db/store.ts rule 1; first() for one row).",
        },
        {
          selector: "MemberExpression[property.name='$client']",
          message: "No driver client in domain code: raw SQL lives in a hot-path store per dialect (server/db/store.ts rule 5).",
        },
      ],
    },
  },
  {
    files: ["web/**/*.ts", "web/**/*.tsx"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          // the API's types: the AppRouter and the typed client, `import type` only (erased at build)
          { regex: "^(\\.\\./)+server/(trpc/router|client(/index)?)$", allowTypeImports: true, message: "web/ imports server/ types only: `import type { AppRouter }` (STYLE.md 1)." },
          { regex: "^(\\.\\./)+server/(?!(trpc/router|client(/index)?)$)", message: "web/ imports shared/, and from server/ only `import type` of the AppRouter or the client (STYLE.md 1)." },
        ],
      }],
    },
  },
);
