import type { SpawnDaemonInput } from "../../../shared/daemons";
import { fieldErrors } from "../lib/errors";
import { describeDaemonError, errorDetails } from "./daemon-errors";

/** The spawn form as typed: every field a string until it is sent. */
export type SpawnValues = {
  name: string;
  task: string;
  system: string;
  model: string;
  wakeIntervalMs: string;
  /** One path per line. */
  watchPaths: string;
  capacity: string;
  maxIterations: string;
  persistPath: string;
};
export type SpawnField = keyof SpawnValues;
/** Per field, plus `form` (the message beside the form) and the server's `code`. */
export type SpawnErrors = Partial<Record<SpawnField | "form" | "code", string>>;

export const DEFAULT_MODEL = "mock/echo";
export const DEFAULT_SPAWN: SpawnValues = {
  name: "",
  task: "",
  system: "",
  model: DEFAULT_MODEL,
  wakeIntervalMs: "",
  watchPaths: "",
  capacity: "1024",
  maxIterations: "",
  persistPath: "",
};

const MAX_CAPACITY = 1_000_000;
const isWhole = (text: string) => /^\d+$/.test(text.trim());

/** Lines of the watch-paths box, trimmed, blank ones dropped. */
export function watchPathList(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
}

/** Checks made before anything is sent, per field; {} when the form can go. */
export function validateSpawn(v: SpawnValues): SpawnErrors {
  const errors: SpawnErrors = {};
  if (!v.task.trim()) errors.task = "Give the daemon a task: what it should do with each message.";
  if (v.name.trim().length > 200) errors.name = "Keep the name under 200 characters.";
  if (!v.model.trim()) errors.model = "Choose a model.";
  const wake = v.wakeIntervalMs.trim();
  if (wake && (!isWhole(wake) || Number(wake) < 10)) errors.wakeIntervalMs = "A whole number of milliseconds, 10 or more (or leave it empty for no timer).";
  const capacity = v.capacity.trim();
  if (!isWhole(capacity) || Number(capacity) < 1 || Number(capacity) > MAX_CAPACITY) errors.capacity = `A whole number from 1 to ${MAX_CAPACITY.toLocaleString("en")}.`;
  const max = v.maxIterations.trim();
  if (max && (!isWhole(max) || Number(max) < 1)) errors.maxIterations = "A whole number above 0 (or leave it empty for no limit).";
  const root = v.persistPath.trim();
  if (root && !root.startsWith("/") && !/^[A-Za-z]:[\\/]/.test(root)) errors.persistPath = "Give an absolute path (or leave it empty for the default under the server's home).";
  return errors;
}

/** True when some field (not just the code) has an error. */
export function hasErrors(errors: SpawnErrors): boolean {
  return Object.entries(errors).some(([key, value]) => key !== "code" && Boolean(value));
}

/** The `daemons.spawn` input, without the optional fields left empty. */
export function spawnInput(v: SpawnValues): SpawnDaemonInput {
  const name = v.name.trim();
  const wake = v.wakeIntervalMs.trim();
  const max = v.maxIterations.trim();
  const root = v.persistPath.trim();
  const watch = watchPathList(v.watchPaths);
  return {
    task: v.task.trim(),
    model: v.model.trim(),
    eventQueueCapacity: Number(v.capacity.trim()),
    ...(name ? { name } : {}),
    ...(v.system.trim() ? { system: v.system } : {}),
    ...(wake ? { wakeIntervalMs: Number(wake) } : {}),
    ...(max ? { maxIterations: Number(max) } : {}),
    ...(watch.length > 0 ? { watchPaths: watch } : {}),
    ...(root ? { persistPath: root } : {}),
  };
}

/** The server's field names (`watchPaths.2`, `eventQueueCapacity`) to the form's. */
function formField(path: string): SpawnField | undefined {
  const head = path.split(".")[0] ?? "";
  if (head === "eventQueueCapacity") return "capacity";
  if (head === "prompt") return "task";
  return head in DEFAULT_SPAWN ? (head as SpawnField) : undefined;
}

/** A refused spawn: the message beside the form, and a note on the field it is about when known. */
export function spawnServerErrors(err: unknown): SpawnErrors {
  const { code, message } = describeDaemonError(err);
  const errors: SpawnErrors = { form: message, ...(code ? { code } : {}) };
  for (const [path, text] of Object.entries(fieldErrors(err))) {
    const field = formField(path);
    if (field) errors[field] ??= text;
  }
  const details = errorDetails(err);
  if (code === "DAEMON_PATH_NOT_ALLOWED" && typeof details.field === "string") {
    const field = formField(details.field);
    if (field) errors[field] = "Outside the directories this server may use (its home and SWITCHYARD_ALLOWED_ROOTS).";
  }
  if (code === "DAEMON_ALREADY_RUNNING") errors.persistPath = "Another daemon is running on this directory: stop it, or choose another.";
  if (code === "MODEL_UNAVAILABLE") errors.model = "This model cannot be used on this server (is its API key set?).";
  return errors;
}
