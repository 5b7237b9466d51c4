// Lint: TypeScript rules plus the import arrows of STYLE.md section 1:
// shared/ depends on zod alone; server/ never imports web/; web/ imports shared/ and only the
// AppRouter *type* from server/.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

const noWeb = { group: ["**/web/**", "../web/*", "../../web/*"], message: "server/ and shared/ never import web/ (STYLE.md 1)." };

export default tseslint.config(
  { ignores: ["node_modules", "dist", "drizzle", "test-results", "playwright-report", "e2e/artifacts", "**/*.mjs", "eslint.config.js"] },
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
    files: ["server/{runs,agents,daemons,accounts,conversations,inbox,mcp,trpc,ws,strategies,tools}/**/*.ts"],
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
        patterns: [{ group: ["**/server/**", "!@trpc/server/**"], allowTypeImports: true, message: "web/ imports server/ types only (import type { AppRouter })." }],
      }],
    },
  },
);
