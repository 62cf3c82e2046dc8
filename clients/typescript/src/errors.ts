/**
 * Errors as typed values: every failure the service answers carries its
 * `{code, message, details}` envelope and the request id of the answer, so a host
 * can branch on `code` and quote the id when it asks an operator.
 */

export type ErrorDetails = { [key: string]: unknown } | null;

/** The service answered with an error envelope (any 4xx/5xx). */
export class PowerContextError extends Error {
  override readonly name: string = "PowerContextError";

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorDetails,
    readonly requestId: string | null,
  ) {
    super(`${status} ${code}: ${message}`);
  }
}

/**
 * 412 `precondition_failed`: the envelope changed since the version the write was
 * conditioned on (`If-Match`). Nothing was written; read again, merge, retry.
 */
export class PreconditionFailedError extends PowerContextError {
  override readonly name = "PreconditionFailedError";
}

/** 409 `source_conflict`: the Source identity already holds a different value. */
export class SourceConflictError extends PowerContextError {
  override readonly name = "SourceConflictError";
}

/** The request never got an answer (connection refused, reset, timed out). */
export class NetworkError extends Error {
  override readonly name = "NetworkError";

  constructor(readonly attempts: number, options: { cause: unknown }) {
    super(`no answer from the service after ${attempts} attempt(s)`, options);
  }
}

const SPECIFIC: Record<string, typeof PowerContextError> = {
  precondition_failed: PreconditionFailedError,
  source_conflict: SourceConflictError,
};

/** The typed error for an answer that is not a success. */
export function errorFromResponse(response: Response, body: unknown): PowerContextError {
  const requestId = response.headers.get("X-PowerContext-Request-ID");
  const envelope = (body as { error?: Record<string, unknown> } | undefined)?.error;
  if (envelope && typeof envelope.code === "string") {
    const Kind = SPECIFIC[envelope.code] ?? PowerContextError;
    return new Kind(
      response.status,
      envelope.code,
      String(envelope.message ?? ""),
      (envelope.details as ErrorDetails) ?? null,
      requestId,
    );
  }
  // Not our envelope: a proxy's page, the server's own 414, ...
  return new PowerContextError(
    response.status,
    "http_error",
    `${response.status} ${response.statusText}`.trim(),
    null,
    requestId,
  );
}
