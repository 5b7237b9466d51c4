import type { ZodError } from "zod";

/** "lastEventId: expected a decimal event id; scope.kind: ..." naming each field. */
export function describeZodError(error: ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.map(String).join(".");
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join("; ");
}
