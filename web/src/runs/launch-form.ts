import type { StrategyEntry } from "../../../shared/strategy";

export type LaunchValues = { cwd: string; strategyPath: string; input: string; modelOverride: string };
export type LaunchErrors = Partial<Record<keyof LaunchValues | "form", string>>;

/** Checks made before anything is sent: what is missing or cannot work, per field. */
export function validateLaunch(values: LaunchValues, strategies: readonly StrategyEntry[] | undefined): LaunchErrors {
  const errors: LaunchErrors = {};
  const cwd = values.cwd.trim();
  if (cwd && !/^(\/|[A-Za-z]:[\\/]|~)/.test(cwd)) errors.cwd = "Give an absolute path (e.g. /home/me/project), or leave it empty for the server's directory.";
  if (cwd.startsWith("~")) errors.cwd = "The server does not expand ~: give the full path (e.g. /home/me/project).";
  if (!values.strategyPath) {
    errors.strategyPath = "Choose a strategy to run.";
    return errors;
  }
  const entry = strategies?.find((s) => s.path === values.strategyPath);
  if (strategies && !entry) errors.strategyPath = "This strategy is not in the list for this directory any more: choose one again.";
  else if (entry && !entry.valid) errors.strategyPath = `"${entry.name}" has errors and cannot run; fix the file first.`;
  return errors;
}

/** The prepare_run input, without empty optional fields. */
export function prepareInput(values: LaunchValues): { strategyPath: string; cwd?: string; modelOverride?: string } {
  const cwd = values.cwd.trim();
  return { strategyPath: values.strategyPath, ...(cwd ? { cwd } : {}), ...(values.modelOverride ? { modelOverride: values.modelOverride } : {}) };
}
