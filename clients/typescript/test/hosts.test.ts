/**
 * docs/hosts.md's TypeScript and JSON examples, run as written against the live
 * service: each fenced block after `<!-- example: NAME -->` is taken from the
 * page, its placeholder URL and token replaced by the live server's, and used the
 * way a host would use it. (The Python example: tests/mcp/test_hosts_doc.py.)
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";

import { createMCPClient, type MCPClient } from "@ai-sdk/mcp";
import { Experimental_StdioMCPTransport as StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";
import { MockLanguageModelV3 } from "ai/test";

import { REPOSITORY } from "../scripts/types.js";
import { newScope, releaseService, useService, type Service } from "./service.js";

const PLACEHOLDER_URL = "https://context.example.com";
const PLACEHOLDER_TOKEN = "pct_...";
const PACKAGE = resolve(REPOSITORY, "clients/typescript");
const EXAMPLES = resolve(PACKAGE, ".examples");

let service: Service;

before(async () => {
  service = await useService();
  // The examples read these, as a host's deployment would set them.
  process.env.POWERCONTEXT_URL = service.url;
  process.env.POWERCONTEXT_TOKEN = service.token;
});
after(async () => {
  await releaseService();
});

/** The fenced block after `<!-- example: name -->` in docs/hosts.md. */
function example(name: string): string {
  const page = readFileSync(resolve(REPOSITORY, "docs/hosts.md"), "utf8");
  const marker = `<!-- example: ${name} -->\n\`\`\``;
  const start = page.indexOf(marker);
  assert.ok(start >= 0, `docs/hosts.md has no example ${name}`);
  const body = page.indexOf("\n", start + marker.length) + 1;
  return page.slice(body, page.indexOf("\n```", body));
}

/** A JSON example with the live server's URL and token in place of the placeholders. */
function liveConfig(name: string): Record<string, any> {
  const text = example(name);
  assert.ok(text.includes(PLACEHOLDER_URL) && text.includes(PLACEHOLDER_TOKEN), name);
  return JSON.parse(
    text.replaceAll(PLACEHOLDER_URL, service.url).replaceAll(PLACEHOLDER_TOKEN, service.token),
  );
}

/** A TypeScript example written beside the package (so it resolves the package
 * and its dependencies by name) and imported. */
async function importExample(name: string): Promise<Record<string, any>> {
  mkdirSync(EXAMPLES, { recursive: true });
  const path = resolve(EXAMPLES, `${name}-${randomUUID()}.ts`);
  writeFileSync(path, example(name));
  return import(pathToFileURL(path).href);
}

function scriptedStep(call?: { toolName: string; input: object }) {
  return {
    content: call
      ? [
          {
            type: "tool-call" as const,
            toolCallId: randomUUID(),
            toolName: call.toolName,
            input: JSON.stringify(call.input),
          },
        ]
      : [{ type: "text" as const, text: "ok" }],
    finishReason: { unified: call ? ("tool-calls" as const) : ("stop" as const), raw: undefined },
    usage: {
      inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 1, text: 1, reasoning: 0 },
    },
    warnings: [],
  };
}

async function notesOf(scopeId: string, sessionId: string): Promise<string | null> {
  return (await service.client().getWorkingNotes(scopeId, sessionId)).notes;
}

/** An MCP client's tools work against the service: list, then write a note. */
async function writesANote(mcp: MCPClient): Promise<void> {
  try {
    const tools = await mcp.tools();
    for (const name of ["working_notes_get", "working_notes_update", "working_notes_clear"]) {
      assert.ok(name in tools, `${name} missing`);
    }
    const scopeId = await newScope(service.client());
    const sessionId = randomUUID();
    await tools.working_notes_update!.execute!(
      { scope_id: scopeId, session_id: sessionId, notes: "written over MCP" },
      { toolCallId: "t", messages: [] },
    );
    assert.equal(await notesOf(scopeId, sessionId), "written over MCP");
  } finally {
    await mcp.close();
  }
}

// The examples run here, and the one tests/mcp/test_hosts_doc.py runs.
const RUN_HERE = ["ai-sdk-turn", "ai-sdk-mcp", "claude-code", "cursor", "claude-desktop"];
const RUN_BY_PYTEST = ["python-mcp"];

describe("docs/hosts.md", () => {
  test("every example on the page is one a test runs", () => {
    const page = readFileSync(resolve(REPOSITORY, "docs/hosts.md"), "utf8");
    const names = [...page.matchAll(/<!-- example: ([\w-]+) -->/g)].map((m) => m[1]);
    assert.deepEqual(names.sort(), [...RUN_HERE, ...RUN_BY_PYTEST].sort());
    const fences = page.split("\n").filter((line) => /^```\w+$/.test(line)).length;
    assert.equal(fences, names.length, "a fenced example without an example marker");
  });

  test("ai-sdk-turn: turn 1 writes a note, turn 2's system prompt carries it", async () => {
    const { runTurn } = await importExample("ai-sdk-turn");
    const scopeId = await newScope(service.client());
    const sessionId = randomUUID();
    const first = new MockLanguageModelV3({
      doGenerate: [
        scriptedStep({ toolName: "working_notes_update", input: { notes: "check the cache" } }),
        scriptedStep(),
      ],
    });
    await runTurn(first, scopeId, sessionId, "start");
    assert.equal(await notesOf(scopeId, sessionId), "check the cache");

    const second = new MockLanguageModelV3({ doGenerate: [scriptedStep()] });
    await runTurn(second, scopeId, sessionId, "go on");
    const system = second.doGenerateCalls[0]?.prompt.find((m) => m.role === "system");
    const fold = await service.client().foldWorkingNotes(scopeId, sessionId);
    assert.equal(system?.content, `You are a careful coding agent.\n\n${fold}`);
  });

  test("ai-sdk-mcp: the AI SDK's MCP client gets the tools", async () => {
    const { powercontextMcpTools } = await importExample("ai-sdk-mcp");
    const { mcp } = await powercontextMcpTools();
    await writesANote(mcp);
  });

  for (const name of ["claude-code", "cursor"]) {
    test(`${name}: the mcpServers entry's URL and headers reach the tools`, async () => {
      const entry = liveConfig(name).mcpServers.powercontext;
      assert.equal(entry.url, `${service.url}/mcp`);
      await writesANote(
        await createMCPClient({
          transport: { type: "http", url: entry.url, headers: entry.headers },
        }),
      );
    });
  }

  test("claude-desktop: mcp-remote bridges stdio to the service with the configured header", async () => {
    const entry = liveConfig("claude-desktop").mcpServers.powercontext;
    assert.equal(entry.command, "npx");
    const [yes, pinned, ...bridgeArgs] = entry.args as string[];
    assert.equal(yes, "-y");
    const installed = JSON.parse(
      readFileSync(resolve(PACKAGE, "node_modules/mcp-remote/package.json"), "utf8"),
    ).version as string;
    assert.ok(installed.startsWith(`${pinned!.split("@")[1]}.`), `${pinned} vs ${installed}`);
    const transport = new StdioMCPTransport({
      command: resolve(PACKAGE, "node_modules/.bin/mcp-remote"),
      args: bridgeArgs,
      // npx would run the same binary; HOME keeps mcp-remote's state out of the user's.
      env: { ...entry.env, PATH: process.env.PATH ?? "", HOME: resolve(EXAMPLES, "home") },
      stderr: "ignore", // its log of every message; the assertions say what failed
    });
    await writesANote(await createMCPClient({ transport }));
  });
});
