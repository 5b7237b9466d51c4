/** Test support: a scriptable fake LLM HTTP server. See server.ts and script.ts. */
export { startFakeModelServer, type FakeModelServer, type FakeModelServerOptions } from "./server";
export { fakeReply } from "./replies";
export { interpretScript, parseDirectives, chunkText, longDeltas, DEFAULT_TEXT, DEFAULT_CHUNK_SIZE, type ScriptDirectives } from "./script";
export { extractScriptInput, contentText } from "./request-input";
export type {
  EnqueueTarget,
  FakeApi,
  FakeHttpError,
  FakeReply,
  FakeReplyHandler,
  FakeReplyInput,
  FakeStopReason,
  FakeStreamError,
  FakeToolCall,
  FakeTurn,
  FakeUsage,
  OtherRequest,
  RecordedRequest,
  ScriptInput,
} from "./types";
