import { TRPCClientError } from "@trpc/client";
import { describe, expect, it } from "vitest";
import { SpawnDaemonInput } from "../../../shared/daemons";
import { DEFAULT_SPAWN, hasErrors, spawnInput, spawnServerErrors, validateSpawn, watchPathList } from "./spawn-form";

/** An error as the client receives it from the server's errorFormatter. */
function serverError(message: string, data: Record<string, unknown>) {
  return new TRPCClientError(message, { result: { error: { message, code: -32600, data } } });
}

describe("validateSpawn", () => {
  it("refuses an empty task and keeps the defaults otherwise valid", () => {
    const errors = validateSpawn(DEFAULT_SPAWN);
    expect(Object.keys(errors)).toEqual(["task"]);
    expect(hasErrors(errors)).toBe(true);
    expect(validateSpawn({ ...DEFAULT_SPAWN, task: "echo" })).toEqual({});
  });

  it("checks the numbers and the root directory field by field", () => {
    const errors = validateSpawn({ ...DEFAULT_SPAWN, task: "t", wakeIntervalMs: "5", capacity: "0", maxIterations: "1.5", persistPath: "rel/dir" });
    expect(errors.wakeIntervalMs).toMatch(/10 or more/);
    expect(errors.capacity).toMatch(/1 to 1,000,000/);
    expect(errors.maxIterations).toMatch(/above 0/);
    expect(errors.persistPath).toMatch(/absolute path/);
    expect(validateSpawn({ ...DEFAULT_SPAWN, task: "t", capacity: "1000001" }).capacity).toBeDefined();
    expect(validateSpawn({ ...DEFAULT_SPAWN, task: "t", wakeIntervalMs: "abc" }).wakeIntervalMs).toBeDefined();
    expect(validateSpawn({ ...DEFAULT_SPAWN, task: "t", wakeIntervalMs: "10", capacity: " 3 ", maxIterations: "7", persistPath: "/srv/d" })).toEqual({});
  });
});

describe("spawnInput", () => {
  it("sends only the fields filled in, in a shape the server's schema accepts", () => {
    const input = spawnInput({ ...DEFAULT_SPAWN, task: "  echo  " });
    expect(input).toEqual({ task: "echo", model: "mock/echo", eventQueueCapacity: 1024 });
    expect(SpawnDaemonInput.safeParse(input).success).toBe(true);
  });

  it("converts numbers and one watch path per line", () => {
    const input = spawnInput({ ...DEFAULT_SPAWN, name: " bot ", task: "t", system: "be brief", wakeIntervalMs: "250", capacity: "3", maxIterations: "4", watchPaths: " /a \n\n b/c \r\n", persistPath: "/srv/d" });
    expect(input).toEqual({ task: "t", name: "bot", system: "be brief", model: "mock/echo", wakeIntervalMs: 250, eventQueueCapacity: 3, maxIterations: 4, watchPaths: ["/a", "b/c"], persistPath: "/srv/d" });
    expect(SpawnDaemonInput.safeParse(input).success).toBe(true);
    expect(watchPathList("  \n")).toEqual([]);
  });
});

describe("spawnServerErrors", () => {
  it("puts a path outside the allowed roots on the field the server names", () => {
    const err = serverError("watchPaths.1: /etc is outside the allowed roots (/home/x); add it to SWITCHYARD_ALLOWED_ROOTS", {
      appCode: "DAEMON_PATH_NOT_ALLOWED",
      details: { field: "watchPaths.1", path: "/etc", allowedRoots: ["/home/x"] },
    });
    const errors = spawnServerErrors(err);
    expect(errors.code).toBe("DAEMON_PATH_NOT_ALLOWED");
    expect(errors.form).toContain("outside the allowed roots");
    expect(errors.watchPaths).toMatch(/Outside the directories/);
    expect(errors.persistPath).toBeUndefined();
  });

  it("points DAEMON_ALREADY_RUNNING at the root directory and keeps the server's message", () => {
    const errors = spawnServerErrors(serverError("Daemon 'daemon_1' is already running on /srv/d; stop it first", { appCode: "DAEMON_ALREADY_RUNNING", details: { daemonId: "daemon_1", root: "/srv/d" } }));
    expect(errors).toMatchObject({ code: "DAEMON_ALREADY_RUNNING", form: "Daemon 'daemon_1' is already running on /srv/d; stop it first" });
    expect(errors.persistPath).toMatch(/Another daemon is running/);
  });

  it("maps validation issues to the form's field names", () => {
    const errors = spawnServerErrors(serverError("eventQueueCapacity: too big", { appCode: "VALIDATION_ERROR", issues: [{ path: "eventQueueCapacity", message: "Too big: expected <= 1000000" }, { path: "bogus", message: "x" }] }));
    expect(errors.capacity).toBe("Too big: expected <= 1000000");
    expect(errors.code).toBe("VALIDATION_ERROR");
    expect(Object.keys(errors).sort()).toEqual(["capacity", "code", "form"]);
  });

  it("keeps a plain error's message without a code", () => {
    expect(spawnServerErrors(new Error("boom"))).toEqual({ form: "boom" });
  });
});
