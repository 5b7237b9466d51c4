/** Built-in tools and the permission policy of strategy runs. */
export { buildTools, NOT_IMPLEMENTED_TOOLS, type BuiltTools } from "./tools";
export { PermissionPolicy, ALL_TOOLS, modeOf, type PolicyDecision, type PolicyMode, type PolicyRule, type PolicySnapshot, type PolicyUpdate, type PermissionQuery, type SessionDecision, type ToolPolicy } from "./policy";
export type { MutationNotice, PermissionRequest, QuestionRequest, ToolCallNotice, ToolContext } from "./tool-context";
