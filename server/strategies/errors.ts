import type { StrategyIssue } from "../../shared/strategy";
import { DomainError } from "../errors";

export type StrategyErrorCode = "STRATEGY_INVALID" | "STRATEGY_NOT_FOUND" | "STRATEGY_PARSE_ERROR";

/**
 * A strategy that cannot be used, as data: the code, the file and every issue (with path, line
 * and column). `details` carries `{file, issues}` to tRPC clients; the message lists the issues
 * one a line, `strategies/bad.yaml:7:5 agents.a.colour: unknown key "colour"`.
 */
export class StrategyError extends DomainError<StrategyErrorCode> {
  readonly file: string;
  readonly issues: StrategyIssue[];

  constructor(code: StrategyErrorCode, file: string, issues: StrategyIssue[], headline?: string) {
    super(code, headline ?? describeIssues(code, file, issues), {
      kind: code === "STRATEGY_NOT_FOUND" ? "NOT_FOUND" : "BAD_REQUEST",
      details: { file, issues },
    });
    this.name = "StrategyError";
    this.file = file;
    this.issues = issues;
  }

  static notFound(file: string, hint = ""): StrategyError {
    const message = `Strategy file not found: ${file}${hint}`;
    return new StrategyError("STRATEGY_NOT_FOUND", file, [{ file, path: "", message }], message);
  }
}

export function isStrategyError(err: unknown): err is StrategyError {
  return err instanceof StrategyError;
}

/** `file:line:column path: message`, leaving out the parts an issue does not have. */
export function formatIssue(issue: StrategyIssue): string {
  const where = [issue.file, issue.line, issue.column].filter((part) => part !== undefined).join(":");
  return `${where ? `${where} ` : ""}${issue.path ? `${issue.path}: ` : ""}${issue.message}`;
}

function describeIssues(code: StrategyErrorCode, file: string, issues: StrategyIssue[]): string {
  const headline = code === "STRATEGY_PARSE_ERROR" ? `Strategy file could not be parsed: ${file}` : "Strategy validation failed:";
  return [headline, ...issues.map((issue) => `  - ${formatIssue(issue)}`)].join("\n");
}
