/**
 * The typed client against a live service: every wrapped operation, typed errors
 * with the request id, `If-Match` on envelope and notes writes (412 as a typed
 * conflict, nothing lost), idempotent capture retries, and CORS as a browser
 * host meets it.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { after, before, describe, test } from "node:test";

import {
  NetworkError,
  PowerContextClient,
  PowerContextError,
  PreconditionFailedError,
  SourceConflictError,
  etagOf,
} from "../src/index.js";
import { REPOSITORY } from "../scripts/types.js";
import {
  newScope,
  rejection,
  releaseService,
  useService,
  type Service,
} from "./service.js";

let service: Service;
let client: PowerContextClient;

before(async () => {
  service = await useService();
  client = service.client();
});
after(async () => {
  await releaseService();
});

describe("scopes", () => {
  test("create, get and list", async () => {
    const scopeId = await newScope(client);
    const scope = await client.getScope(scopeId);
    assert.equal(scope.scope_id, scopeId);
    assert.equal(scope.title, "ts client test");
    const page = await client.listScopes({ limit: 100 });
    assert.ok(page.items.some((item) => item.scope_id === scopeId));
  });

  test("an unknown scope is a typed 404 with the request id", async () => {
    const error = await rejection(client.getScope("scp_missing"));
    assert.ok(error instanceof PowerContextError);
    assert.equal(error.status, 404);
    assert.equal(error.code, "scope_not_found");
    assert.equal(error.details, null);
    assert.match(error.requestId ?? "", /^[0-9a-f]{16}$/);
  });

  test("a bad token is a typed 401", async () => {
    const stranger = new PowerContextClient({ baseUrl: service.url, token: "pct_nope" });
    const error = await rejection(stranger.listScopes());
    assert.ok(error instanceof PowerContextError);
    assert.equal(error.status, 401);
    assert.equal(error.code, "unauthorized");
  });

  test("raw is the typed openapi-fetch client underneath", async () => {
    const { data, response } = await client.raw.GET("/v1/tokens", {
      params: { query: { limit: 5 } },
    });
    assert.equal(response.status, 200);
    assert.ok(Array.isArray(data?.items));
  });
});

describe("sources", () => {
  test("capture, replay, conflict, read, list, resolve", async () => {
    const scopeId = await newScope(client);
    const body = { scope_id: scopeId, source_id: "doc/1", content: "first text" };
    const receipt = await client.captureContentSource(body);
    assert.deepEqual(receipt.source, { name: "content", source_id: "doc/1" });
    assert.deepEqual(await client.captureContentSource(body), receipt);

    const conflict = await rejection(
      client.captureContentSource({ ...body, content: "other text" }),
    );
    assert.ok(conflict instanceof SourceConflictError);
    assert.equal(conflict.status, 409);
    assert.equal(conflict.code, "source_conflict");

    const note = await client.captureWorkingNote({
      scope_id: scopeId,
      session_id: "sess/a",
      source_id: "note-1",
      content: "checked the migration",
      note_kind: "validation",
    });
    assert.equal(note.position, receipt.position + 1);

    const record = await client.getSource(scopeId, "doc/1");
    assert.equal(record.content, "first text");
    const page = await client.listSources(scopeId, { limit: 10 });
    assert.deepEqual(
      page.items.map((item) => item.source_id),
      ["doc/1", "note-1"],
    );

    const resolved = await client.resolveEvidence(scopeId, {
      purpose: "handoff",
      refs: [{ name: "content", source_id: "doc/1", content_digest: record.content_digest }],
    });
    assert.equal(resolved.items[0]?.status, "available");
  });

  test("a capture whose answer was lost is sent again and replays its receipt", async () => {
    const scopeId = await newScope(client);
    const answers: Response[] = [];
    let dropped = 0;
    const droppingFetch: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      answers.push(response);
      if (dropped === 0) {
        dropped += 1; // the service stored it; the caller never hears back
        throw new TypeError("fetch failed");
      }
      return response;
    };
    const flaky = service.client({ fetch: droppingFetch });
    const receipt = await flaky.captureContentSource({
      scope_id: scopeId,
      source_id: "once",
      content: "written exactly once",
    });
    assert.equal(answers.length, 2);
    assert.equal(answers[0]?.status, 202);
    assert.equal(answers[1]?.headers.get("Idempotent-Replayed"), "true");
    assert.equal(receipt.position, 1);
    const page = await client.listSources(scopeId);
    assert.deepEqual(
      page.items.map((item) => item.source_id),
      ["once"],
    );
  });

  test("a capture answered 503 unavailable is sent again", async () => {
    const scopeId = await newScope(client);
    let sent = 0;
    // The first attempt meets an overloaded proxy's 503 in the service's envelope.
    const busyOnce: typeof fetch = async (input, init) => {
      sent += 1;
      if (sent === 1) {
        const body = { error: { code: "unavailable", message: "busy", details: null } };
        return new Response(JSON.stringify(body), {
          status: 503,
          headers: { "Content-Type": "application/json", "Retry-After": "1" },
        });
      }
      return fetch(input, init);
    };
    const receipt = await new PowerContextClient({
      baseUrl: service.url,
      token: service.token,
      fetch: busyOnce,
      retryDelayMs: 1,
    }).captureWorkingNote({
      scope_id: scopeId,
      session_id: "busy",
      source_id: "wn-busy",
      content: "kept once",
      note_kind: "validation",
    });
    assert.equal(sent, 2);
    assert.equal(receipt.position, 1);
    assert.equal((await client.getSourceAudit(scopeId, "wn-busy")).attempts_total, 1);
  });

  test("a capture that never gets an answer is a NetworkError after every attempt", async () => {
    let calls = 0;
    const deadFetch: typeof fetch = async () => {
      calls += 1;
      throw new TypeError("fetch failed");
    };
    const offline = new PowerContextClient({
      baseUrl: service.url,
      token: service.token,
      fetch: deadFetch,
      retryDelayMs: 1,
    });
    const error = await rejection(
      offline.captureContentSource({ scope_id: "s", source_id: "x", content: "y" }),
    );
    assert.ok(error instanceof NetworkError);
    assert.equal(error.attempts, 3);
    assert.equal(calls, 3);
  });
});

describe("session envelopes", () => {
  test("replace, get, patch with If-Match; a stale ETag is a typed 412 and writes nothing", async () => {
    const scopeId = await newScope(client);
    const created = await client.replaceSessionEnvelope(scopeId, "dev/1", {
      selectedModel: "m-large",
    });
    assert.equal(created.created, true);
    assert.equal(created.etag, etagOf(1));

    const read = await client.getSessionEnvelope(scopeId, "dev/1");
    assert.equal(read.etag, etagOf(1));
    assert.equal(read.value.meta.selectedModel, "m-large");

    const patched = await client.patchSessionEnvelope(
      scopeId,
      "dev/1",
      { turnStatus: "running" },
      { ifMatch: read.etag },
    );
    assert.equal(patched.created, false);
    assert.equal(patched.etag, etagOf(2));

    const stale = await rejection(
      client.replaceSessionEnvelope(scopeId, "dev/1", { selectedModel: "m-small" }, {
        ifMatch: read.etag,
      }),
    );
    assert.ok(stale instanceof PreconditionFailedError);
    assert.equal(stale.status, 412);
    const after = await client.getSessionEnvelope(scopeId, "dev/1");
    assert.equal(after.value.meta.selectedModel, "m-large");
    assert.equal(after.value.version, 2);

    // A poll with the current ETag: 304, no body.
    assert.equal(
      await client.getSessionEnvelope(scopeId, "dev/1", { ifNoneMatch: after.etag }),
      null,
    );
    const changed = await client.getSessionEnvelope(scopeId, "dev/1", { ifNoneMatch: read.etag });
    assert.equal(changed?.etag, etagOf(2));
  });

  test("close a session; later writes are a typed session_closed", async () => {
    const scopeId = await newScope(client);
    await client.putWorkingNotes(scopeId, "closing", { notes: "last words" });
    const closure = await client.closeSession(scopeId, "closing");
    assert.equal(closure.session_id, "closing");
    const error = await rejection(
      client.putWorkingNotes(scopeId, "closing", { notes: "too late" }),
    );
    assert.ok(error instanceof PowerContextError);
    assert.equal(error.code, "session_closed");
  });
});

describe("working notes", () => {
  test("put, get, fold, delete; a stale If-Match never loses a note", async () => {
    const scopeId = await newScope(client);
    assert.equal(await client.foldWorkingNotes(scopeId, "s1"), null);

    const first = await client.putWorkingNotes(scopeId, "s1", { notes: "note from device A" });
    assert.equal(first.version, 1);
    const second = await client.putWorkingNotes(
      scopeId,
      "s1",
      { notes: "note from device B" },
      { ifMatch: etagOf(first.version ?? 0) },
    );
    assert.equal(second.version, 2);

    const lost = await rejection(
      client.putWorkingNotes(scopeId, "s1", { notes: "stale A overwrite" }, {
        ifMatch: etagOf(first.version ?? 0),
      }),
    );
    assert.ok(lost instanceof PreconditionFailedError);
    assert.equal((await client.getWorkingNotes(scopeId, "s1")).notes, "note from device B");

    const fold = await client.foldWorkingNotes(scopeId, "s1");
    const raw = await fetch(
      `${service.url}/v1/scopes/${scopeId}/sessions/s1/working-notes/fold`,
      { headers: { Authorization: `Bearer ${service.token}` } },
    );
    assert.deepEqual(
      Buffer.from(fold ?? ""),
      Buffer.from(await raw.arrayBuffer()),
    );

    const captured = await client.putWorkingNotes(scopeId, "s1", {
      notes: "note from device B",
      capture: { note_kind: "host_context" },
    });
    assert.equal(captured.source?.source.source_id, "session-notes:s1:v2");

    const cleared = await client.deleteWorkingNotes(scopeId, "s1");
    assert.equal(cleared.notes, null);
    assert.equal(await client.foldWorkingNotes(scopeId, "s1"), null);
  });
});

describe("browser hosts (CORS)", () => {
  // What docs/hosts.md ("Browser hosts") says a page may send and read.
  const SENT = ["Authorization", "Content-Type", "If-Match", "If-None-Match"];
  const READ = ["ETag", "Idempotent-Replayed", "Location", "Retry-After", "X-PowerContext-Request-ID"];

  test("docs/hosts.md names those headers", () => {
    const page = readFileSync(resolve(REPOSITORY, "docs/hosts.md"), "utf8");
    const section = page.slice(page.indexOf("## Browser hosts (CORS)")).replace(/\s+/g, " ");
    const sent = section.slice(0, section.indexOf("may be sent"));
    const read = section.slice(section.indexOf("may be sent"), section.indexOf("may be read"));
    assert.deepEqual([...sent.matchAll(/`([\w-]+)`/g)].map((m) => m[1]).slice(-SENT.length), SENT);
    assert.deepEqual([...read.matchAll(/`([\w-]+)`/g)].map((m) => m[1]), READ);
  });

  test("a preflight from the allowed origin may send them, and a page may read them", async () => {
    const path = `/v1/scopes/scp_x/sessions/s/working-notes`;
    const preflight = await fetch(`${service.url}${path}`, {
      method: "OPTIONS",
      headers: {
        Origin: service.corsOrigin,
        "Access-Control-Request-Method": "PUT",
        "Access-Control-Request-Headers": SENT.join(", ").toLowerCase(),
      },
    });
    assert.equal(preflight.headers.get("Access-Control-Allow-Origin"), service.corsOrigin);
    const allowed = (preflight.headers.get("Access-Control-Allow-Headers") ?? "").split(/, */);
    for (const name of SENT) {
      assert.ok(allowed.includes(name.toLowerCase()), `${name} not in ${allowed}`);
    }

    const scopeId = await newScope(client);
    const answer = await fetch(`${service.url}/v1/scopes/${scopeId}/sessions/s/envelope`, {
      method: "PUT",
      headers: {
        Origin: service.corsOrigin,
        Authorization: `Bearer ${service.token}`,
        "Content-Type": "application/json",
      },
      body: JSON.stringify({ meta: {} }),
    });
    assert.equal(answer.headers.get("Access-Control-Allow-Origin"), service.corsOrigin);
    const exposed = (answer.headers.get("Access-Control-Expose-Headers") ?? "").split(/, */);
    for (const name of READ) {
      assert.ok(exposed.includes(name.toLowerCase()), `${name} not in ${exposed}`);
    }
  });

  test("another origin gets no CORS grant", async () => {
    const preflight = await fetch(`${service.url}/v1/scopes`, {
      method: "OPTIONS",
      headers: { Origin: "https://evil.test", "Access-Control-Request-Method": "GET" },
    });
    assert.equal(preflight.headers.get("Access-Control-Allow-Origin"), null);
  });
});
