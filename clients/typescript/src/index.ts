/** kenning for TypeScript: the client of a kenning server. The AI SDK tools are in `kenning/ai`. */
export { Memory, Messages, Notes, Core, Documents, Erase } from "./client.js";
export type {
  AddResult, Receipt, MemoryStatus, RecallResult, RecallItem, Fact, FactState, FactPage, Entity, Job, DatasetPage,
  Episode, MessageHit, ChatPage, MessagePage, Note, NoteHit, CoreFile, CoreFileVersion, Document, Health, Time,
  MemoryCommand, Role, Namespaced, ErasureReceipt, ErasureRecord, ErasurePage, EraseOptions,
} from "./client.js";
export type { ClientOptions, CallOptions } from "./http.js";
export * from "./errors.js";
export type { components, operations, paths } from "./openapi.js";
