/**
 * A typed client for the PowerContext HTTP API.
 *
 * Every operation is typed from the service's own OpenAPI document (`schema.ts`,
 * generated): `client.raw` is an `openapi-fetch` client for all of them, and the
 * methods below wrap the ones an agent host uses, turning error answers into typed
 * errors (`errors.ts`), handling `ETag`/`If-Match` on envelope writes, and retrying
 * idempotent captures when the network drops an answer.
 */
import createClient, { type Client } from "openapi-fetch";

import { NetworkError, errorFromResponse } from "./errors.js";
import type { components, operations, paths } from "./schema.js";

export type Schemas = components["schemas"];
type Body<Operation extends keyof operations> =
  operations[Operation] extends { requestBody: { content: { "application/json": infer B } } }
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

  async getSessionEnvelope(
    scopeId: string,
    sessionId: string,
  ): Promise<Tagged<Schemas["Envelope"]>> {
    const path = { scope_id: scopeId, session_id: sessionId };
    return tagged(
      await this.raw.GET("/v1/scopes/{scope_id}/sessions/{session_id}/envelope", {
        params: { path },
      }),
    );
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

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
