/**
 * A scripted two-turn agent with the AI SDK's mock language model, as a host runs
 * one: each turn folds the session's notes into the system prompt and gives the
 * model the three working-notes tools for that session.
 *
 * Turn 1 writes a note with `working_notes_update`; turn 2's system prompt holds
 * the exact note, byte for byte as the service folds it; a second client for the
 * same session (a device switch) sees it; a new session has none; and
 * `working_notes_clear` empties it.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";

import { generateText, stepCountIs, type ModelMessage } from "ai";
import { MockLanguageModelV3 } from "ai/test";

import { systemPromptBlock, workingNotesTools, type PowerContextClient } from "../src/index.js";
import { newScope, releaseService, useService, type Service } from "./service.js";

const PERSONA = "You are a careful coding agent.";
// Non-ASCII, an astral character, inner blank lines and indentation: the fold
// must carry every byte of it.
const NOTE =
  "Prüfe tests/test_flaky.py 🧪 - it fails under load only.\n\n" +
  "  - migration 0042 verified on PostgreSQL\n\t- SQLite: not yet checked";

let service: Service;

before(async () => {
  service = await useService();
});
after(async () => {
  await releaseService();
});

/** One model step: the given tool call, or plain text when `call` is absent. */
function step(call?: { toolName: string; input: object }) {
  const content = call
    ? [
        {
          type: "tool-call" as const,
          toolCallId: randomUUID(),
          toolName: call.toolName,
          input: JSON.stringify(call.input),
        },
      ]
    : [{ type: "text" as const, text: "done" }];
  return {
    content,
    finishReason: { unified: call ? ("tool-calls" as const) : ("stop" as const), raw: undefined },
    usage: {
      inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 1, text: 1, reasoning: 0 },
    },
    warnings: [],
  };
}

/** One host turn: fold the notes into the system prompt, run the scripted model. */
async function turn(
  client: PowerContextClient,
  scopeId: string,
  sessionId: string,
  script: Array<ReturnType<typeof step>>,
) {
  const model = new MockLanguageModelV3({ doGenerate: script });
  const block = await systemPromptBlock({ client, scopeId, sessionId });
  const result = await generateText({
    model,
    system: [PERSONA, block].filter((part) => part !== null).join("\n\n"),
    prompt: "Continue the task.",
    tools: workingNotesTools({ client, scopeId, sessionId }),
    stopWhen: stepCountIs(4),
  });
  const firstPrompt = model.doGenerateCalls[0]?.prompt ?? [];
  const system = firstPrompt.find((message) => message.role === "system");
  return { result, system: system?.content as string, model };
}

function toolOutputs(messages: ModelMessage[]): unknown[] {
  return messages.flatMap((message) =>
    message.role === "tool"
      ? message.content.flatMap((part) => (part.type === "tool-result" ? [part.output] : []))
      : [],
  );
}

test("a note written in turn 1 is in turn 2's system prompt, on every device, and cleared", async () => {
  const client = service.client();
  const scopeId = await newScope(client);
  const sessionId = `chat/${randomUUID()}`;
  // A neighbour session of the same scope: the tools must never write there.
  const neighbour = `${sessionId}-other`;
  await client.putWorkingNotes(scopeId, neighbour, { notes: "the neighbour's own note" });

  const first = await turn(client, scopeId, sessionId, [
    step({ toolName: "working_notes_update", input: { notes: NOTE } }),
    step(),
  ]);
  assert.equal(first.system, PERSONA); // no notes yet: no block, no tokens
  assert.deepEqual(toolOutputs(first.result.response.messages), [
    { type: "json", value: { ok: true, bytes: Buffer.byteLength(NOTE), maxBytes: 32768 } },
  ]);
  assert.equal((await client.getWorkingNotes(scopeId, sessionId)).notes, NOTE);
  assert.equal((await client.getWorkingNotes(scopeId, neighbour)).notes, "the neighbour's own note");

  const second = await turn(client, scopeId, sessionId, [step()]);
  const fold = await fetch(
    `${service.url}/v1/scopes/${scopeId}/sessions/${encodeURIComponent(sessionId)}/working-notes/fold`,
    { headers: { Authorization: `Bearer ${service.token}` } },
  );
  const foldBytes = Buffer.from(await fold.arrayBuffer());
  assert.ok(second.system.startsWith(`${PERSONA}\n\n### Working notes (across turns)\n`));
  assert.ok(second.system.endsWith(`\n---\n${NOTE}`));
  assert.deepEqual(Buffer.from(second.system.slice(PERSONA.length + 2)), foldBytes);

  // A device switch: another client, same session, same block.
  const otherDevice = service.client();
  assert.equal(
    await systemPromptBlock({ client: otherDevice, scopeId, sessionId }),
    foldBytes.toString("utf8"),
  );
  // A new session starts empty.
  assert.equal(
    await systemPromptBlock({ client: otherDevice, scopeId, sessionId: `${sessionId}-new` }),
    null,
  );

  const third = await turn(otherDevice, scopeId, sessionId, [
    step({ toolName: "working_notes_clear", input: {} }),
    step(),
  ]);
  assert.deepEqual(toolOutputs(third.result.response.messages), [
    { type: "json", value: { ok: true } },
  ]);
  assert.equal(await systemPromptBlock({ client, scopeId, sessionId }), null);
  assert.equal((await client.getWorkingNotes(scopeId, neighbour)).notes, "the neighbour's own note");
});

test("an update over notes another device changed is refused to the model, not lost", async () => {
  const client = service.client();
  const scopeId = await newScope(client);
  const sessionId = randomUUID();
  await client.putWorkingNotes(scopeId, sessionId, { notes: "v1" });

  const tools = workingNotesTools({ client, scopeId, sessionId });
  const options = { toolCallId: "t", messages: [] };
  const read = await tools.working_notes_get.execute?.({}, options);
  assert.deepEqual(read, { ok: true, notes: "v1", bytes: 2, maxBytes: 32768 });

  await service.client().putWorkingNotes(scopeId, sessionId, { notes: "v2 from the phone" });
  const refused = await tools.working_notes_update.execute?.({ notes: "v1 + more" }, options);
  assert.equal((refused as { code: string }).code, "precondition_failed");
  assert.equal((await client.getWorkingNotes(scopeId, sessionId)).notes, "v2 from the phone");

  await tools.working_notes_get.execute?.({}, options);
  const merged = await tools.working_notes_update.execute?.({ notes: "v2 + more" }, options);
  assert.equal((merged as { ok: boolean }).ok, true);
  assert.equal((await client.getWorkingNotes(scopeId, sessionId)).notes, "v2 + more");
});

test("notes over 32 KiB are refused to the model, never truncated", async () => {
  const client = service.client();
  const scopeId = await newScope(client);
  const sessionId = randomUUID();
  const tools = workingNotesTools({ client, scopeId, sessionId });
  const result = await tools.working_notes_update.execute?.(
    { notes: "x".repeat(32769) },
    { toolCallId: "t", messages: [] },
  );
  assert.equal((result as { code: string }).code, "working_notes_too_large");
  assert.equal((await client.getWorkingNotes(scopeId, sessionId)).notes, null);
});

test("the tools tell the model what notes are", () => {
  const tools = workingNotesTools({ client: service.client(), scopeId: "s", sessionId: "x" });
  for (const [name, definition] of Object.entries(tools)) {
    const description = definition.description ?? "";
    assert.match(description, /verify/i, name);
    assert.match(description, /never put secrets/i, name);
    assert.match(description, /not verified facts/i, name);
  }
});
