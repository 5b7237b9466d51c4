import { defineConfig } from "drizzle-kit";

/** PostgreSQL migrations, generated from the pg-core twins of the tables (`npm run db:generate:pg`). */
export default defineConfig({
  dialect: "postgresql",
  schema: "./server/db/pg/schema.ts",
  out: "./drizzle-pg",
});
