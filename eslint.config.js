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
    files: ["web/**/*.ts", "web/**/*.tsx"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [{ group: ["**/server/**"], allowTypeImports: true, message: "web/ imports server/ types only (import type { AppRouter })." }],
      }],
    },
  },
);
