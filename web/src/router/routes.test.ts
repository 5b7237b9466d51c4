import { describe, expect, it } from "vitest";
import { matchRoute } from "./routes";

describe("matchRoute", () => {
  it("maps sections, their ids and their `new` pages", () => {
    expect(matchRoute("/")).toEqual({ page: "home" });
    expect(matchRoute("/runs")).toEqual({ page: "runs" });
    expect(matchRoute("/runs/r-1")).toEqual({ page: "runs", id: "r-1" });
    expect(matchRoute("/agents/new")).toEqual({ page: "agents", id: "new" });
    expect(matchRoute("/agents/quiet%20owl")).toEqual({ page: "agents", id: "quiet owl" });
    expect(matchRoute("/daemons/nightly")).toEqual({ page: "daemons", id: "nightly" });
    expect(matchRoute("/accounts/new")).toEqual({ page: "accounts", id: "new" });
    expect(matchRoute("/workers")).toEqual({ page: "workers" });
  });

  it("anything else is not found: unknown sections, deeper paths, ids of pages that have none", () => {
    for (const path of ["/nope", "/runsx", "/runs/a/b", "/accounts/acct_1", "/inbox/x", "/conversations/c1", "/workers/build-2"]) {
      expect(matchRoute(path), path).toEqual({ page: "not-found", path });
    }
  });
});
