import { describe, expect, it } from "vitest";
import { DaemonMessage } from "../../shared/comma";
import { availableModels, providerList, type ModelsPort } from "./palette";

const models: ModelsPort = {
  list: () => [
    { id: "anthropic/claude-sonnet-4-5", provider: "anthropic", label: "Claude Sonnet 4.5", contextWindow: 200000, available: true },
    { id: "gateway/claude-sonnet-4-5", provider: "gateway", label: "claude-sonnet-4-5 (Gateway)", contextWindow: 200000, available: false },
    { id: "mock/demo", provider: "mock", label: "Demo", contextWindow: 100000, available: true },
  ],
  providers: () => [
    { id: "mock", name: "Mock (no API key)", kind: "mock", configured: true },
    { id: "gateway", name: "Gateway", kind: "openai-compatible", configured: false },
    { id: "anthropic", name: "Anthropic", kind: "anthropic", configured: true },
  ],
};

const wire = (frame: Record<string, unknown>) => DaemonMessage.parse({ ...frame, ts: "2026-01-01T00:00:00.000Z" });

describe("palette replies", () => {
  it("available_models: one entry per model id, with the providers serving it and those with credentials", () => {
    const list = availableModels(models);
    expect(list).toEqual([
      { id: "claude-sonnet-4-5", name: "Claude Sonnet 4.5", contextWindow: 200000, hasCredentials: true, providers: ["anthropic", "gateway"], configuredProviders: ["anthropic"] },
      { id: "demo", name: "Demo", contextWindow: 100000, hasCredentials: true, providers: ["mock"], configuredProviders: ["mock"] },
    ]);
    expect(availableModels(models, "mock/demo").map((m) => m.id)).toEqual(["demo"]);
    expect(availableModels(models, "demo").map((m) => m.id)).toEqual(["demo"]);
    wire({ type: "available_models", models: list });
  });

  it("provider_list: alphabetical, with credential type, auth status, models and whether it is a custom endpoint", () => {
    const list = providerList(models);
    expect(list.map((p) => [p.id, p.credentialType, p.authStatus, p.isCustom, p.models.map((m) => m.id)])).toEqual([
      ["anthropic", "api", "configured", false, ["claude-sonnet-4-5"]],
      ["gateway", "api", "none", true, ["claude-sonnet-4-5"]],
      ["mock", "none", "configured", false, ["demo"]],
    ]);
    wire({ type: "provider_list", providers: list });
    expect(providerList(undefined)).toEqual([]);
  });
});
