/**
 * A typed client for the PowerContext HTTP API.
 *
 * Every operation is typed from the service's own OpenAPI document (`schema.ts`,
 * generated), and each has a method here (`OPERATIONS` maps every operationId to
 * it): the methods turn error answers into typed errors (`errors.ts`), handle
 * `ETag`/`If-Match` on envelope writes, and retry idempotent captures when the
 * network drops an answer. `client.raw` is the underlying `openapi-fetch` client.
 */
import createClient, { type Client } from "openapi-fetch";

import { NetworkError, errorFromResponse } from "./errors.js";
import type { components, operations, paths } from "./schema.js";

export type Schemas = components["schemas"];
type Body<Operation extends keyof operations> =
  NonNullable<operations[Operation]["requestBody"]> extends {
    content: { "application/json": infer B };
  }
    ? B
    : never;
type Query<Operation extends keyof operations> = operations[Operation] extends {
  parameters: { query?: infer Q };
}
  ? NonNullable<Q>
  : never;

export interface ClientOptions {
  /** Where the service answers, e.g. `https://context.example.com`. */
  baseUrl: string;
  /** A bearer token (`pct_...`). */
  token: string;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof globalThis.fetch;
  /** How many times an idempotent capture is sent before giving up (default 3). */
  captureAttempts?: number;
  /** Milliseconds before the first retry; doubled each time (default 200). */
  retryDelayMs?: number;
}

/** An envelope with the ETag of its version (`"12"`), for a later `ifMatch`. */
export interface Tagged<T> {
  value: T;
  etag: string;
  /** True when the write created the envelope (201). */
  created: boolean;
}

export interface ReadOptions {
  /** Answer `null` (`304`) when the envelope is still at this ETag (or `*`). */
  ifNoneMatch?: string;
}

export interface WriteOptions {
  /** Write only if the envelope is at this ETag (`"12"`) or exists (`*`); else 412. */
  ifMatch?: string;
}

/** The `ETag` a version has; what `ifMatch` takes. */
export function etagOf(version: number): string {
  return `"${version}"`;
}

type Answer<T> = { data?: T; error?: unknown; response: Response };

function unwrap<T>(answer: Answer<T>): T {
  if (answer.error !== undefined || !answer.response.ok) {
    throw errorFromResponse(answer.response, answer.error);
  }
  return answer.data as T;
}

function tagged<T>(answer: Answer<T>): Tagged<T> {
  const value = unwrap(answer);
  return {
    value,
    etag: answer.response.headers.get("ETag") ?? "",
    created: answer.response.status === 201,
  };
}

function isReadiness(body: unknown): body is Schemas["ReadinessResponse"] {
  return typeof body === "object" && body !== null && "checks" in body && "status" in body;
}

function header(ifMatch: string | undefined): { "If-Match"?: string } {
  return ifMatch === undefined ? {} : { "If-Match": ifMatch };
}

export class PowerContextClient {
  /** Every operation of the service, typed (`client.raw.GET("/v1/tokens")`). */
  readonly raw: Client<paths>;
  private readonly captureAttempts: number;
  private readonly retryDelayMs: number;

  constructor(options: ClientOptions) {
    this.raw = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
      headers: { Authorization: `Bearer ${options.token}` },
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    this.captureAttempts = options.captureAttempts ?? 3;
    this.retryDelayMs = options.retryDelayMs ?? 200;
  }

  // --- Scopes ---------------------------------------------------------------------

  async createScope(body: Body<"create_scope">): Promise<Schemas["ScopeDescriptor"]> {
    return unwrap(await this.raw.POST("/v1/scopes", { body }));
  }

  async getScope(scopeId: string): Promise<Schemas["ScopeDescriptor"]> {
    const path = { scope_id: scopeId };
    return unwrap(await this.raw.GET("/v1/scopes/{scope_id}", { params: { path } }));
  }

  async listScopes(query: Query<"list_scopes"> = {}): Promise<Schemas["ScopePage"]> {
    return unwrap(await this.raw.GET("/v1/scopes", { params: { query } }));
  }

  /** The caller's own default scope, created (with the caller as admin) on first use. */
  async getDefaultScope(): Promise<Schemas["ScopeDescriptor"]> {
    return unwrap(await this.raw.GET("/v1/scopes/default"));
  }

  // --- Sources --------------------------------------------------------------------

  /**
   * Capture content. Safe to retry: the same identity and value replay the
   * original receipt, so a dropped answer is sent again (network errors and
   * 503 `unavailable` only) and the caller gets the one receipt.
   */
  async captureContentSource(
    body: Body<"capture_content_source">,
  ): Promise<Schemas["CaptureReceipt"]> {
    return this.retryingCapture(() => this.raw.POST("/v1/sources/content", { body }));
  }

  /** Capture a Working Note; retried as `captureContentSource`. */
  async captureWorkingNote(
    body: Body<"capture_working_note">,
  ): Promise<Schemas["CaptureReceipt"]> {
    return this.retryingCapture(() =>
      this.raw.POST("/v1/sources/working-notes", { body }),
    );
  }

  async getSource(scopeId: string, sourceId: string) {
    const path = { scope_id: scopeId, source_type: "content" as const, source_id: sourceId };
    return unwrap(
      await this.raw.GET("/v1/scopes/{scope_id}/sources/{source_type}/{source_id}", {
        params: { path },
      }),
    );
  }

  async listSources(
    scopeId: string,
    query: Query<"list_sources"> = {},
  ) {
    const path = { scope_id: scopeId };
    return unwrap(
      await this.raw.GET("/v1/scopes/{scope_id}/sources", { params: { path, query } }),
    );
  }

  /** A Source with a server-assigned id (`src_...`); not idempotent, never retried. */
  async createSource(
    scopeId: string,
    body: Body<"create_source">,
  ) {
    const path = { scope_id: scopeId };
    return unwrap(
      await this.raw.POST("/v1/scopes/{scope_id}/sources", { params: { path }, body }),
    );
  }

  /** The generation window: non-note Sources after a position (notes are skipped). */
  async readGenerationWindow(
    scopeId: string,
    query: Query<"read_generation_window"> = {},
  ) {
    const path = { scope_id: scopeId };
    return unwrap(
      await this.raw.GET("/v1/scopes/{scope_id}/sources/window", {
        params: { path, query },
      }),
    );
  }

  async listSourceAudit(
    scopeId: string,
    query: Query<"list_source_audit"> = {},
  ) {
    const path = { scope_id: scopeId };
    return unwrap(
      await this.raw.GET("/v1/scopes/{scope_id}/source-audit", { params: { path, query } }),
    );
  }

  async getSourceAudit(scopeId: string, sourceId: string) {
    const path = { scope_id: scopeId, source_type: "content" as const, source_id: sourceId };
    return unwrap(
      await this.raw.GET("/v1/scopes/{scope_id}/source-audit/{source_type}/{source_id}", {
        params: { path },
      }),
    );
  }

  /** Every capture attempt of one identity, oldest first (also rejected new notes). */
  async listCaptureAttempts(
    scopeId: string,
    sourceId: string,
    query: Query<"list_capture_attempts"> = {},
  ): Promise<Schemas["AttemptPage"]> {
    const path = { scope_id: scopeId, source_type: "content" as const, source_id: sourceId };
    return unwrap(
      await this.raw.GET("/v1/scopes/{scope_id}/source-attempts/{source_type}/{source_id}", {
        params: { path, query },
      }),
    );
  }

  /** Find the Sources holding a text (`match`: `words` or `substring`), best first. */
  async searchSources(
    scopeId: string,
    query: Query<"search_sources">,
  ): Promise<Schemas["SearchPage"]> {
    const path = { scope_id: scopeId };
    return unwrap(
      await this.raw.GET("/v1/scopes/{scope_id}/search", { params: { path, query } }),
    );
  }

  /** Find the envelopes whose live working notes hold a text. */
  async searchEnvelopes(
    scopeId: string,
    query: Query<"search_envelopes">,
  ): Promise<Schemas["EnvelopeSearchPage"]> {
    const path = { scope_id: scopeId };
    return unwrap(
      await this.raw.GET("/v1/scopes/{scope_id}/search/envelopes", {
        params: { path, query },
      }),
    );
  }

  async resolveEvidence(
    scopeId: string,
    body: Body<"resolve_evidence">,
  ) {
    const path = { scope_id: scopeId };
    return unwrap(
      await this.raw.POST("/v1/scopes/{scope_id}/evidence/resolve", {
        params: { path },
        body,
      }),
    );
  }

  // --- Session envelopes ------------------------------------------------------------

  /**
   * The envelope with its `ETag`. With `ifNoneMatch` (an ETag read earlier) the
   * answer is `null` when the envelope is still at that version (`304`): a cheap poll.
   */
  async getSessionEnvelope(
    scopeId: string,
    sessionId: string,
  ): Promise<Tagged<Schemas["Envelope"]>>;
  async getSessionEnvelope(
    scopeId: string,
    sessionId: string,
    options: ReadOptions,
  ): Promise<Tagged<Schemas["Envelope"]> | null>;
  async getSessionEnvelope(
    scopeId: string,
    sessionId: string,
    options: ReadOptions = {},
  ): Promise<Tagged<Schemas["Envelope"]> | null> {
    const path = { scope_id: scopeId, session_id: sessionId };
    const header =
      options.ifNoneMatch === undefined ? {} : { "If-None-Match": options.ifNoneMatch };
    const answer = await this.raw.GET(
      "/v1/scopes/{scope_id}/sessions/{session_id}/envelope",
      { params: { path, header } },
    );
    return answer.response.status === 304 ? null : tagged(answer);
  }

  /** The host's replace (PUT); a stale `ifMatch` throws `PreconditionFailedError`. */
  async replaceSessionEnvelope(
    scopeId: string,
    sessionId: string,
    meta: Body<"replace_session_envelope">["meta"],
    options: WriteOptions = {},
  ): Promise<Tagged<Schemas["Envelope"]>> {
    const path = { scope_id: scopeId, session_id: sessionId };
    return tagged(
      await this.raw.PUT("/v1/scopes/{scope_id}/sessions/{session_id}/envelope", {
        params: { path, header: header(options.ifMatch) },
        body: { meta },
      }),
    );
  }

  /** The worker's overlay (PATCH); a stale `ifMatch` throws `PreconditionFailedError`. */
  async patchSessionEnvelope(
    scopeId: string,
    sessionId: string,
    meta: Body<"patch_session_envelope">["meta"],
    options: WriteOptions = {},
  ): Promise<Tagged<Schemas["Envelope"]>> {
    const path = { scope_id: scopeId, session_id: sessionId };
    return tagged(
      await this.raw.PATCH("/v1/scopes/{scope_id}/sessions/{session_id}/envelope", {
        params: { path, header: header(options.ifMatch) },
        body: { meta },
      }),
    );
  }

  async closeSession(scopeId: string, sessionId: string): Promise<Schemas["SessionClosure"]> {
    const path = { scope_id: scopeId, session_id: sessionId };
    return unwrap(
      await this.raw.POST("/v1/scopes/{scope_id}/sessions/{session_id}/close", {
        params: { path },
        body: {},
      }),
    );
  }

  // --- Working notes ------------------------------------------------------------------

  async getWorkingNotes(scopeId: string, sessionId: string): Promise<Schemas["WorkingNotes"]> {
    const path = { scope_id: scopeId, session_id: sessionId };
    return unwrap(
      await this.raw.GET("/v1/scopes/{scope_id}/sessions/{session_id}/working-notes", {
        params: { path },
      }),
    );
  }

  /**
   * Replace the session's notes. With `ifMatch` (`etagOf(version)` of the notes
   * you read) a concurrent write makes this throw `PreconditionFailedError`
   * instead of overwriting a note you never saw.
   */
  async putWorkingNotes(
    scopeId: string,
    sessionId: string,
    body: Body<"put_working_notes">,
    options: WriteOptions = {},
  ): Promise<Schemas["WorkingNotesWrite"]> {
    const path = { scope_id: scopeId, session_id: sessionId };
    return unwrap(
      await this.raw.PUT("/v1/scopes/{scope_id}/sessions/{session_id}/working-notes", {
        params: { path, header: header(options.ifMatch) },
        body,
      }),
    );
  }

  async deleteWorkingNotes(
    scopeId: string,
    sessionId: string,
    options: WriteOptions = {},
  ): Promise<Schemas["WorkingNotes"]> {
    const path = { scope_id: scopeId, session_id: sessionId };
    return unwrap(
      await this.raw.DELETE("/v1/scopes/{scope_id}/sessions/{session_id}/working-notes", {
        params: { path, header: header(options.ifMatch) },
      }),
    );
  }

  /**
   * The notes block for the model's system prompt, exactly as the service folds
   * it, or `null` when the session has no notes (204).
   */
  async foldWorkingNotes(scopeId: string, sessionId: string): Promise<string | null> {
    const path = { scope_id: scopeId, session_id: sessionId };
    const answer = await this.raw.GET(
      "/v1/scopes/{scope_id}/sessions/{session_id}/working-notes/fold",
      { params: { path }, parseAs: "text" },
    );
    if (answer.response.status === 204) {
      return null;
    }
    return unwrap(answer as Answer<string>);
  }

  // --- Handoffs -------------------------------------------------------------------------

  /** Check a draft; the PreparedHandoff to commit (nothing is written). */
  async finalizeHandoff(
    body: Body<"finalize_handoff">,
  ): Promise<Schemas["PreparedHandoff"]> {
    return unwrap(await this.raw.POST("/v1/handoff/finalize", { body }));
  }

  /** Store a PreparedHandoff as the next revision (the same content replays it). */
  async commitHandoff(body: Body<"commit_handoff">): Promise<Schemas["CommittedHandoff"]> {
    return unwrap(await this.raw.POST("/v1/handoff/commit", { body }));
  }

  /** A handoff with a per-claim evidence check. */
  async continueHandoff(
    body: Body<"continue_handoff">,
  ): Promise<Schemas["HandoffResolution"]> {
    return unwrap(await this.raw.POST("/v1/handoff/continue", { body }));
  }

  /** The continuity hint text for a handoff, or `status: "empty"`. */
  async prepareHandoffHint(
    body: Body<"prepare_handoff_hint">,
  ): Promise<Schemas["PreparedContext"]> {
    return unwrap(await this.raw.POST("/v1/handoff/hint", { body }));
  }

  /**
   * Generating a draft needs a language model, which the service has none of: after
   * validation it always throws `503 handoff_generation_unavailable`.
   */
  async prepareHandoff(body: Body<"prepare_handoff">): Promise<never> {
    return unwrap(await this.raw.POST("/v1/handoff/prepare", { body })) as never;
  }

  /** As `prepareHandoff` (after resolving `boundary_source`): always a typed error. */
  async activateHandoff(body: Body<"activate_handoff">): Promise<never> {
    return unwrap(await this.raw.POST("/v1/handoff/activate", { body })) as never;
  }

  // --- Lifecycle ------------------------------------------------------------------------

  async setLegalHold(
    scopeId: string,
    body: Body<"set_legal_hold">,
  ): Promise<Schemas["LegalHold"]> {
    const path = { scope_id: scopeId };
    return unwrap(
      await this.raw.POST("/v1/scopes/{scope_id}/legal-holds", { params: { path }, body }),
    );
  }

  async listLegalHolds(
    scopeId: string,
    query: Query<"list_legal_holds"> = {},
  ): Promise<Schemas["LegalHoldPage"]> {
    const path = { scope_id: scopeId };
    return unwrap(
      await this.raw.GET("/v1/scopes/{scope_id}/legal-holds", { params: { path, query } }),
    );
  }

  async releaseLegalHold(
    scopeId: string,
    holdId: string,
    body: Body<"release_legal_hold">,
  ): Promise<Schemas["LegalHold"]> {
    const path = { scope_id: scopeId, hold_id: holdId };
    return unwrap(
      await this.raw.POST("/v1/scopes/{scope_id}/legal-holds/{hold_id}/release", {
        params: { path },
        body,
      }),
    );
  }

  /** Tombstone expired or closed working notes (`dry_run` answers what it would do). */
  async purgeWorkingNotes(
    scopeId: string,
    body: Body<"purge_working_notes">,
  ): Promise<Schemas["PurgeResult"]> {
    const path = { scope_id: scopeId };
    return unwrap(
      await this.raw.POST("/v1/scopes/{scope_id}/purge", { params: { path }, body }),
    );
  }

  /** Erase one Source (a tombstone) and its copies; `409 legal_hold` when held. */
  async redactSource(
    scopeId: string,
    sourceId: string,
    body: Body<"redact_source">,
  ) {
    const path = { scope_id: scopeId, source_type: "content" as const, source_id: sourceId };
    return unwrap(
      await this.raw.POST("/v1/scopes/{scope_id}/sources/{source_type}/{source_id}/redact", {
        params: { path },
        body,
      }),
    );
  }

  /** Erase every Source and envelope the search finds with `q`, holds respected. */
  async redactMatching(
    scopeId: string,
    body: Body<"redact_matching">,
  ): Promise<Schemas["RedactionRun"]> {
    const path = { scope_id: scopeId };
    return unwrap(
      await this.raw.POST("/v1/scopes/{scope_id}/redactions", { params: { path }, body }),
    );
  }

  /**
   * The scope's (or one session's) export bundle as it streams: JSON Lines, the
   * manifest first and the trailer last (docs/export.md). Errors before the first
   * byte are thrown; a bundle cut short has no trailer.
   */
  async exportScope(
    scopeId: string,
    query: Query<"export_scope"> = {},
  ): Promise<ReadableStream<Uint8Array>> {
    const path = { scope_id: scopeId };
    const answer = await this.raw.GET("/v1/scopes/{scope_id}/export", {
      params: { path, query },
      parseAs: "stream",
    });
    return unwrap(answer as Answer<ReadableStream<Uint8Array>>);
  }

  // --- Memory records (the reference client's legacy operations) -------------------------

  /** Store a new Memory record (every call stores one). */
  async rememberMemory(body: Body<"remember_memory">) {
    return unwrap(await this.raw.POST("/v1/memory/remember", { body }));
  }

  async listMemoryEntries(
    body: Body<"list_memory_entries">,
  ) {
    return unwrap(await this.raw.POST("/v1/memory/entries/list", { body }));
  }

  /** Text search over the scope's records (`vector`/`hybrid` are refused). */
  async searchMemory(body: Body<"search_memory">) {
    return unwrap(await this.raw.POST("/v1/memory/search", { body }));
  }

  /**
   * A legacy Memory collection's entry: this service keeps none, so it always
   * throws (`404 not_found` for a `target`, `422` for a `citation`).
   */
  async getMemoryEntry(body: Body<"get_memory_entry">): Promise<never> {
    return unwrap(await this.raw.POST("/v1/memory/entries/get", { body })) as never;
  }

  /** Memory extraction needs a model: always `422 operation_not_supported`. */
  async flushMemory(body: Body<"flush_memory">): Promise<never> {
    return unwrap(await this.raw.POST("/v1/memory/flush", { body })) as never;
  }

  /** Always `422 legacy_memory_operation_unsupported`, as the reference answers. */
  async getMemoryCapacity(body: Body<"get_memory_capacity">): Promise<never> {
    return unwrap(await this.raw.POST("/v1/memory/capacity", { body })) as never;
  }

  /** Always `422 legacy_memory_operation_unsupported`, as the reference answers. */
  async listMemoryChanges(body: Body<"list_memory_changes">): Promise<never> {
    return unwrap(await this.raw.POST("/v1/memory/changes", { body })) as never;
  }

  /** Always `422 legacy_memory_operation_unsupported`: records are immutable. */
  async reviseMemoryEntry(body: Body<"revise_memory_entry">): Promise<never> {
    return unwrap(await this.raw.POST("/v1/memory/entries/revise", { body })) as never;
  }

  /** Always `422 legacy_memory_operation_unsupported`: records are immutable. */
  async retireMemoryEntry(body: Body<"retire_memory_entry">): Promise<never> {
    return unwrap(await this.raw.POST("/v1/memory/entries/retire", { body })) as never;
  }

  // --- Tokens and grants ----------------------------------------------------------------

  /** A new token; its secret (`token`) is in this answer only. */
  async mintToken(body: Body<"mint_token">): Promise<Schemas["MintedToken"]> {
    return unwrap(await this.raw.POST("/v1/tokens", { body }));
  }

  async listTokens(query: Query<"list_tokens"> = {}): Promise<Schemas["TokenPage"]> {
    return unwrap(await this.raw.GET("/v1/tokens", { params: { query } }));
  }

  async getToken(tokenId: number): Promise<Schemas["TokenDescriptor"]> {
    const path = { token_id: tokenId };
    return unwrap(await this.raw.GET("/v1/tokens/{token_id}", { params: { path } }));
  }

  async setTokenExpiry(
    tokenId: number,
    body: Body<"set_token_expiry">,
  ): Promise<Schemas["TokenDescriptor"]> {
    const path = { token_id: tokenId };
    return unwrap(await this.raw.PATCH("/v1/tokens/{token_id}", { params: { path }, body }));
  }

  async addTokenGrant(
    tokenId: number,
    body: Body<"add_token_grant">,
  ): Promise<Schemas["TokenDescriptor"]> {
    const path = { token_id: tokenId };
    return unwrap(
      await this.raw.POST("/v1/tokens/{token_id}/grants", { params: { path }, body }),
    );
  }

  /** Remove the token's grant on `scope` (a scope id or `*`). */
  async removeTokenGrant(tokenId: number, scope: string): Promise<Schemas["TokenDescriptor"]> {
    const path = { token_id: tokenId, scope };
    return unwrap(
      await this.raw.DELETE("/v1/tokens/{token_id}/grants/{scope}", { params: { path } }),
    );
  }

  async revokeToken(tokenId: number): Promise<Schemas["TokenDescriptor"]> {
    const path = { token_id: tokenId };
    return unwrap(await this.raw.POST("/v1/tokens/{token_id}/revoke", { params: { path } }));
  }

  /** A new secret for the token; the old one keeps working for `grace_seconds`. */
  async rotateToken(
    tokenId: number,
    body: Body<"rotate_token"> = {},
  ): Promise<Schemas["MintedToken"]> {
    const path = { token_id: tokenId };
    return unwrap(
      await this.raw.POST("/v1/tokens/{token_id}/rotate", { params: { path }, body }),
    );
  }

  // --- Health -----------------------------------------------------------------------------

  async getLiveness(): Promise<Schemas["HealthResponse"]> {
    return unwrap(await this.raw.GET("/health/live"));
  }

  /** Ready or not: a `503` with `status: "not_ready"` is an answer too, not an error. */
  async getReadiness(): Promise<Schemas["ReadinessResponse"]> {
    const answer = await this.raw.GET("/health/ready");
    if (answer.response.status === 503 && isReadiness(answer.error)) {
      return answer.error;
    }
    return unwrap(answer);
  }

  // --- Retries --------------------------------------------------------------------------

  private async retryingCapture<T>(send: () => Promise<Answer<T>>): Promise<T> {
    let lastFailure: unknown;
    for (let attempt = 1; attempt <= this.captureAttempts; attempt += 1) {
      if (attempt > 1) {
        await sleep(this.retryDelayMs * 2 ** (attempt - 2));
      }
      let answer: Answer<T>;
      try {
        answer = await send();
      } catch (failure) {
        lastFailure = failure; // no answer: the capture may or may not have landed
        continue;
      }
      if (answer.response.status === 503 && attempt < this.captureAttempts) {
        lastFailure = errorFromResponse(answer.response, answer.error);
        continue;
      }
      return unwrap(answer);
    }
    if (lastFailure instanceof Error && "status" in lastFailure) {
      throw lastFailure;
    }
    throw new NetworkError(this.captureAttempts, { cause: lastFailure });
  }
}

type Method = {
  [Name in keyof PowerContextClient]: PowerContextClient[Name] extends (
    ...args: never[]
  ) => Promise<unknown>
    ? Name
    : never;
}[keyof PowerContextClient];

/**
 * Every operation of the service (its OpenAPI `operationId`) and the client method
 * that wraps it: the type check fails when the document gains an operation that has
 * no method here, and test/operations.test.ts checks it against the live document.
 */
export const OPERATIONS = {
  activate_handoff: "activateHandoff",
  add_token_grant: "addTokenGrant",
  capture_content_source: "captureContentSource",
  capture_working_note: "captureWorkingNote",
  close_session: "closeSession",
  commit_handoff: "commitHandoff",
  continue_handoff: "continueHandoff",
  create_scope: "createScope",
  create_source: "createSource",
  delete_working_notes: "deleteWorkingNotes",
  export_scope: "exportScope",
  finalize_handoff: "finalizeHandoff",
  flush_memory: "flushMemory",
  fold_working_notes: "foldWorkingNotes",
  get_default_scope: "getDefaultScope",
  get_liveness: "getLiveness",
  get_memory_capacity: "getMemoryCapacity",
  get_memory_entry: "getMemoryEntry",
  get_readiness: "getReadiness",
  get_scope: "getScope",
  get_session_envelope: "getSessionEnvelope",
  get_source: "getSource",
  get_source_audit: "getSourceAudit",
  get_token: "getToken",
  get_working_notes: "getWorkingNotes",
  list_capture_attempts: "listCaptureAttempts",
  list_legal_holds: "listLegalHolds",
  list_memory_changes: "listMemoryChanges",
  list_memory_entries: "listMemoryEntries",
  list_scopes: "listScopes",
  list_source_audit: "listSourceAudit",
  list_sources: "listSources",
  list_tokens: "listTokens",
  mint_token: "mintToken",
  patch_session_envelope: "patchSessionEnvelope",
  prepare_handoff: "prepareHandoff",
  prepare_handoff_hint: "prepareHandoffHint",
  purge_working_notes: "purgeWorkingNotes",
  put_working_notes: "putWorkingNotes",
  read_generation_window: "readGenerationWindow",
  redact_matching: "redactMatching",
  redact_source: "redactSource",
  release_legal_hold: "releaseLegalHold",
  remember_memory: "rememberMemory",
  remove_token_grant: "removeTokenGrant",
  replace_session_envelope: "replaceSessionEnvelope",
  resolve_evidence: "resolveEvidence",
  retire_memory_entry: "retireMemoryEntry",
  revise_memory_entry: "reviseMemoryEntry",
  revoke_token: "revokeToken",
  rotate_token: "rotateToken",
  search_envelopes: "searchEnvelopes",
  search_memory: "searchMemory",
  search_sources: "searchSources",
  set_legal_hold: "setLegalHold",
  set_token_expiry: "setTokenExpiry",
} as const satisfies { [Id in keyof operations]: Method };

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
