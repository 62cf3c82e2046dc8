/**
 * The client's methods for the rest of the service against a live server: health,
 * the default scope, Sources and their audit, search, handoffs, lifecycle (holds,
 * purge, redaction, export), Memory records and tokens. Each test asserts the
 * answer and reads back what the write changed.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";

import { PowerContextError, type PowerContextClient } from "../src/index.js";
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

/** The typed error a call rejects with; fails the test when it resolves. */
async function refusal(promise: Promise<unknown>): Promise<PowerContextError> {
  const error = await rejection(promise);
  assert.ok(error instanceof PowerContextError, String(error));
  assert.match(error.requestId ?? "", /^[0-9a-f]{16}$/);
  return error;
}

function inAnHour(): string {
  return new Date(Date.now() + 3600_000).toISOString();
}

describe("health", () => {
  test("liveness and readiness", async () => {
    assert.deepEqual(await client.getLiveness(), { status: "ok" });
    const readiness = await client.getReadiness();
    assert.equal(readiness.status, "ready");
    assert.ok(Object.keys(readiness.checks).length > 0);
  });

  test("a service that is not ready answers, it does not throw", async () => {
    // The live service is ready; its 503 (powercontext/api/health.py) as a proxy
    // in front of it would relay it when the database is down.
    const notReady: typeof fetch = async (input, init) => {
      const answer = await fetch(input, init);
      const body = { status: "not_ready", checks: { database: "unavailable" } };
      return new Response(JSON.stringify(body), { status: 503, headers: answer.headers });
    };
    const readiness = await service.client({ fetch: notReady }).getReadiness();
    assert.deepEqual(readiness, { status: "not_ready", checks: { database: "unavailable" } });
  });
});

describe("the default scope", () => {
  test("the caller's own, created once", async () => {
    const first = await client.getDefaultScope();
    assert.equal(first.title, "Default");
    assert.equal((await client.getDefaultScope()).scope_id, first.scope_id);
    assert.equal((await client.getScope(first.scope_id)).summary, "Default context");
  });
});

describe("sources, the window and the audit", () => {
  test("create a Source, read the window past a note, audit and attempts", async () => {
    const scopeId = await newScope(client);
    const created = await client.createSource(scopeId, { content: { finding: "cache" } });
    assert.match(created.source_id, /^src_[0-9a-f]{32}$/);
    assert.deepEqual((await client.getSource(scopeId, created.source_id)).content, {
      finding: "cache",
    });
    const note = {
      scope_id: scopeId,
      session_id: "sess-1",
      source_id: "wn-1",
      content: "looked at the cache",
      note_kind: "inspection" as const,
    };
    await client.captureWorkingNote(note);
    await client.captureWorkingNote(note); // a replay: a second attempt
    await client.captureContentSource({ scope_id: scopeId, source_id: "c-2", content: "b" });

    const window = await client.readGenerationWindow(scopeId, { after: 0, limit: 10 });
    assert.deepEqual(
      window.items.map((item) => item.source_id),
      [created.source_id, "c-2"],
    );
    assert.equal(window.high_watermark, 3);

    const notes = await client.listSourceAudit(scopeId, { working_note: true });
    assert.deepEqual(
      notes.items.map((item) => [item.source_id, item.state, item.session_id]),
      [["wn-1", "active", "sess-1"]],
    );
    const audit = await client.getSourceAudit(scopeId, "wn-1");
    assert.equal(audit.note_kind, "inspection");
    assert.equal(audit.attempts_total, 2);
    const attempts = await client.listCaptureAttempts(scopeId, "wn-1");
    assert.deepEqual(
      attempts.items.map((attempt) => attempt.outcome),
      ["accepted", "replayed"],
    );
  });
});

describe("search", () => {
  test("Sources by words and by substring; envelopes by their live notes", async () => {
    const scopeId = await newScope(client);
    await client.captureContentSource({
      scope_id: scopeId,
      source_id: "leak",
      content: "deploy key sk_live_4f9a pasted here",
    });
    await client.captureContentSource({ scope_id: scopeId, source_id: "other", content: "x y" });
    const words = await client.searchSources(scopeId, { q: "deploy pasted" });
    assert.deepEqual(
      words.items.map((item) => item.source_id),
      ["leak"],
    );
    const substring = await client.searchSources(scopeId, { q: "LIVE_4F", match: "substring" });
    assert.equal(substring.items[0]?.source_id, "leak");
    assert.match(substring.items[0]?.snippet ?? "", /sk_live_4f9a/);

    const written = await client.putWorkingNotes(scopeId, "chat-9", { notes: "rotate sk_live_4f9a" });
    const envelopes = await client.searchEnvelopes(scopeId, {
      q: "sk_live_4f",
      match: "substring",
    });
    assert.deepEqual(envelopes.items.map((item) => [item.session_id, item.version]), [
      ["chat-9", written.version],
    ]);

    const blank = await refusal(client.searchSources(scopeId, { q: " " }));
    assert.equal(blank.status, 422);
    assert.equal(blank.details?.reason, "empty");
  });
});

describe("handoffs", () => {
  test("finalize, commit (idempotent), continue, hint; prepare and activate refused", async () => {
    const scopeId = await newScope(client);
    await client.captureContentSource({ scope_id: scopeId, source_id: "doc/h", content: "ok" });
    const citation = { kind: "source" as const, source_ref: { name: "content", source_id: "doc/h" } };
    const draft = {
      objective: "Ship the cache fix",
      state: [{ text: "The cache fix is written.", citations: [citation] }],
      disposition: "continuable" as const,
      next_action: { text: "Run the load test.", citations: [citation] },
      omissions: [],
    };
    const prepared = await client.finalizeHandoff({ scope_id: scopeId, draft });
    assert.equal(prepared.base, null);
    const committed = await client.commitHandoff({ scope_id: scopeId, handoff: prepared });
    assert.equal(committed.reference.revision, 1);
    assert.deepEqual(await client.commitHandoff({ scope_id: scopeId, handoff: prepared }), committed);

    const resolution = await client.continueHandoff({ scope_id: scopeId, selection: "latest" });
    assert.equal(resolution.status, "resolved");
    assert.deepEqual(
      resolution.evidence_checks.map((check) => [check.claim, check.status]),
      [
        ["state", "available"],
        ["next_action", "available"],
      ],
    );
    const hint = await client.prepareHandoffHint({ scope_id: scopeId, selection: "latest" });
    assert.equal(hint.status, "ready");
    assert.ok(hint.content?.startsWith("# PowerContext continuity hint\n"));
    assert.equal(hint.content_bytes, Buffer.byteLength(hint.content ?? ""));

    const prepare = await refusal(
      client.prepareHandoff({
        scope_id: scopeId,
        objective: "x",
        evidence: [citation],
      }),
    );
    const activate = await refusal(
      client.activateHandoff({
        scope_id: scopeId,
        objective: "x",
        boundary_source: { name: "content", source_id: "doc/h" },
      }),
    );
    for (const error of [prepare, activate]) {
      assert.equal(error.status, 503);
      assert.equal(error.code, "handoff_generation_unavailable");
    }
  });
});

describe("lifecycle", () => {
  test("a legal hold refuses a redaction until released", async () => {
    const scopeId = await newScope(client);
    await client.captureContentSource({ scope_id: scopeId, source_id: "pii", content: "a secret" });
    const hold = await client.setLegalHold(scopeId, { reason: "litigation" });
    assert.equal(hold.released_at, null);
    const holds = await client.listLegalHolds(scopeId);
    assert.deepEqual(
      holds.items.map((item) => item.hold_id),
      [hold.hold_id],
    );

    const held = await refusal(client.redactSource(scopeId, "pii", { reason: "erase" }));
    assert.equal(held.status, 409);
    assert.equal(held.code, "legal_hold");
    assert.equal(held.details?.scope_held, true);
    assert.equal((await client.getSource(scopeId, "pii")).content, "a secret");

    const released = await client.releaseLegalHold(scopeId, hold.hold_id, { reason: "settled" });
    assert.notEqual(released.released_at, null);
    const tombstone = await client.redactSource(scopeId, "pii", { reason: "erase" });
    assert.equal(tombstone.state, "purged");
    assert.equal((await client.getSource(scopeId, "pii")).content, null);
  });

  test("redact every match: a dry run plans, the run erases", async () => {
    const scopeId = await newScope(client);
    for (const sourceId of ["k-1", "k-2"]) {
      await client.captureContentSource({
        scope_id: scopeId,
        source_id: sourceId,
        content: `token ghp_${sourceId}_Zx81 in a log`,
      });
    }
    const request = { q: "ghp_", match: "substring" as const, reason: "leaked token" };
    const plan = await client.redactMatching(scopeId, { ...request, dry_run: true });
    assert.deepEqual(
      plan.redacted.map((item) => [item.source_id, item.redaction_id]).sort(),
      [
        ["k-1", null],
        ["k-2", null],
      ],
    );
    assert.equal((await client.getSource(scopeId, "k-1")).content, "token ghp_k-1_Zx81 in a log");

    const run = await client.redactMatching(scopeId, { ...request, dry_run: false });
    assert.equal(run.complete, true);
    assert.equal(run.redacted.length, 2);
    assert.deepEqual((await client.searchSources(scopeId, { q: "ghp_", match: "substring" })).items, []);
  });

  test("purge the notes of a closed session", async () => {
    const scopeId = await newScope(client);
    await client.captureWorkingNote({
      scope_id: scopeId,
      session_id: "done",
      source_id: "wn-old",
      content: "scratch",
      note_kind: "unresolved",
    });
    await client.closeSession(scopeId, "done");
    const dry = await client.purgeWorkingNotes(scopeId, { older_than_seconds: 0, dry_run: true });
    assert.equal(dry.purged, 1);
    assert.equal((await client.getSourceAudit(scopeId, "wn-old")).state, "closed");
    const run = await client.purgeWorkingNotes(scopeId, { older_than_seconds: 0, dry_run: false });
    assert.equal(run.purged, 1);
    assert.equal((await client.getSourceAudit(scopeId, "wn-old")).state, "purged");
  });

  test("export a scope as its JSON Lines bundle", async () => {
    const scopeId = await newScope(client);
    await client.captureContentSource({ scope_id: scopeId, source_id: "e-1", content: "one" });
    const stream = await client.exportScope(scopeId);
    const lines = (await new Response(stream).text()).trimEnd().split("\n");
    const records = lines.map(
      (line) => (JSON.parse(line) as { record: Record<string, unknown> }).record,
    );
    assert.deepEqual(
      [records[0]?.kind, records[0]?.format, records[0]?.scope_id],
      ["manifest", "powercontext-bundle", scopeId],
    );
    assert.deepEqual(
      records.filter((record) => record.kind === "source").map((record) => record.source_id),
      ["e-1"],
    );
    assert.deepEqual([records.at(-1)?.kind, records.at(-1)?.records], ["trailer", lines.length - 1]);

    const missing = await refusal(client.exportScope(scopeId, { session_id: "nobody" }));
    assert.equal(missing.code, "session_not_found");
  });
});

describe("memory records", () => {
  test("remember, list and search; the legacy calls are typed refusals", async () => {
    const scopeId = await newScope(client);
    const remembered = await client.rememberMemory({
      scope_id: scopeId,
      kind: "decision",
      text: "  Use PostgreSQL 15 in production ",
    });
    const record = remembered.records[0];
    assert.equal(record?.text, "Use PostgreSQL 15 in production");
    const artifactId = record?.artifact.artifact_id;
    const page = await client.listMemoryEntries({ scope_id: scopeId });
    assert.deepEqual(
      page.entries.map((entry) => entry.artifact.artifact_id),
      [artifactId],
    );
    const found = await client.searchMemory({ scope_id: scopeId, query: "postgresql" });
    assert.deepEqual(
      found.hits.map((hit) => hit.memory.artifact.artifact_id),
      [artifactId],
    );

    const target = { type: "memory_entry" as const, family: "memory" as const, artifact_id: "a", entry_id: "e" };
    const notFound = await refusal(client.getMemoryEntry({ scope_id: scopeId, target }));
    assert.deepEqual([notFound.status, notFound.code], [404, "not_found"]);
    const flush = await refusal(client.flushMemory({ scope_id: scopeId }));
    assert.deepEqual([flush.status, flush.code], [422, "operation_not_supported"]);

    const citation = { artifact_id: artifactId };
    const legacy = [
      () => client.getMemoryCapacity({ scope_id: scopeId }),
      () => client.listMemoryChanges({ scope_id: scopeId }),
      () => client.reviseMemoryEntry({ scope_id: scopeId, citation, kind: "decision", text: "x" }),
      () => client.retireMemoryEntry({ scope_id: scopeId, citation }),
    ];
    for (const call of legacy) {
      const error = await refusal(call());
      assert.deepEqual([error.status, error.code], [422, "legacy_memory_operation_unsupported"]);
    }
  });
});

describe("tokens and grants", () => {
  test("mint, use, list, re-date, grant, ungrant, rotate and revoke", async () => {
    const scopeId = await newScope(client);
    const otherScopeId = await newScope(client);
    const minted = await client.mintToken({
      name: `ts-bot-${randomUUID()}`,
      grants: [{ scope: scopeId, role: "viewer" }],
    });
    const bot = service.client({ token: minted.token });
    assert.equal((await bot.getScope(scopeId)).scope_id, scopeId);
    assert.equal((await refusal(bot.getScope(otherScopeId))).status, 403);

    assert.deepEqual((await client.getToken(minted.token_id)).grants, [
      { scope: scopeId, role: "viewer" },
    ]);
    // The scope's tokens: the admin's (`*`) and the new one.
    const listed = await client.listTokens({ scope_id: scopeId });
    assert.ok(listed.items.some((item) => item.token_id === minted.token_id));
    const elsewhere = await client.listTokens({ scope_id: otherScopeId });
    assert.ok(!elsewhere.items.some((item) => item.token_id === minted.token_id));
    const expiry = inAnHour();
    const redated = await client.setTokenExpiry(minted.token_id, { expires_at: expiry });
    assert.equal(Date.parse(redated.expires_at ?? ""), Date.parse(expiry));

    await client.addTokenGrant(minted.token_id, { scope: otherScopeId, role: "contributor" });
    assert.equal((await bot.getScope(otherScopeId)).scope_id, otherScopeId);
    const ungranted = await client.removeTokenGrant(minted.token_id, otherScopeId);
    assert.deepEqual(
      ungranted.grants.map((grant) => grant.scope),
      [scopeId],
    );

    const rotated = await client.rotateToken(minted.token_id, { grace_seconds: 0 });
    assert.notEqual(rotated.token, minted.token);
    assert.equal((await refusal(bot.getScope(scopeId))).status, 401);
    const successor = service.client({ token: rotated.token });
    assert.equal((await successor.getScope(scopeId)).scope_id, scopeId);

    const revoked = await client.revokeToken(rotated.token_id);
    assert.notEqual(revoked.revoked_at, null);
    assert.equal((await refusal(successor.getScope(scopeId))).code, "unauthorized");
  });
});
