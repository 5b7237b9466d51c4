/** The model registry (anthropic, openai, OpenAI-compatible endpoints, mock) and the mock models. */
export {
  createModelRegistry,
  modelRegistryFor,
  parseModelString,
  type ModelRegistry,
  type ModelRegistryOptions,
  type ResolvedModel,
} from "./models.service";
export type { ModelInfo, ProviderInfo, ProviderKind } from "../../shared/models";
export { createMockModel, isMockModelId, MOCK_MODEL_IDS, type MockModelId, type MockModelOptions } from "./mock";
export { contextWindowOf, DEFAULT_CONTEXT_WINDOW, MOCK_CONTEXT_WINDOW } from "./context-window";
export { CompatibleProvider, ProvidersFile, loadProvidersFile } from "./providers-file";
