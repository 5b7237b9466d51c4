import { describe, expect, it } from "vitest";
import type { StrategyEntry } from "../../../shared/strategy";
import { prepareInput, validateLaunch } from "./launch-form";

const entry = (path: string, valid = true): StrategyEntry => ({ id: path, name: path, path, source: "bundled", valid, warnings: [], ...(valid ? {} : { error: "bad" }) });
const values = { cwd: "", strategyPath: "", input: "", modelOverride: "" };

describe("validateLaunch", () => {
  it("requires a strategy", () => {
    expect(validateLaunch(values, [])).toEqual({ strategyPath: "Choose a strategy to run." });
  });
  it("refuses an invalid strategy and a relative cwd", () => {
    const errors = validateLaunch({ ...values, cwd: "proj", strategyPath: "/s/bad.yaml" }, [entry("/s/bad.yaml", false)]);
    expect(errors.strategyPath).toContain("has errors");
    expect(errors.cwd).toContain("absolute path");
  });
  it("accepts a valid choice", () => {
    expect(validateLaunch({ ...values, cwd: "/tmp/x", strategyPath: "/s/ok.yaml" }, [entry("/s/ok.yaml")])).toEqual({});
  });
});

describe("prepareInput", () => {
  it("leaves out empty optional fields", () => {
    expect(prepareInput({ ...values, strategyPath: "/s/ok.yaml", cwd: "  " })).toEqual({ strategyPath: "/s/ok.yaml" });
    expect(prepareInput({ ...values, strategyPath: "/s/ok.yaml", cwd: "/p", modelOverride: "mock/echo" })).toEqual({ strategyPath: "/s/ok.yaml", cwd: "/p", modelOverride: "mock/echo" });
  });
});
