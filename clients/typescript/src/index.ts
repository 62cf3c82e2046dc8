/** PowerContext for TypeScript hosts: the typed client and the working-notes tools. */
export { OPERATIONS, PowerContextClient, etagOf } from "./client.js";
export type { ClientOptions, ReadOptions, Schemas, Tagged, WriteOptions } from "./client.js";
export {
  NetworkError,
  PowerContextError,
  PreconditionFailedError,
  SourceConflictError,
} from "./errors.js";
export type { ErrorDetails } from "./errors.js";
export { systemPromptBlock, workingNotesTools } from "./notes.js";
export type { SessionNotes } from "./notes.js";
export type { components, operations, paths } from "./schema.js";
