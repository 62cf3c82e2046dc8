/**
 * The client wraps every operation of the service, and the tests call each
 * wrapper: `OPERATIONS` lists exactly the live document's operationIds, each names
 * a method, and every one of those methods was called by the test files that ran
 * before this one (test/all.test.ts imports it last).
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { OPERATIONS, PowerContextClient } from "../src/index.js";
import { calledMethods, releaseService, useService, type Service } from "./service.js";

let service: Service;

before(async () => {
  service = await useService();
});
after(async () => {
  await releaseService();
});

const METHODS = ["get", "put", "post", "delete", "patch", "options", "head", "trace"];

test("every operation in the service's OpenAPI document has a client method", async () => {
  const answer = await fetch(`${service.url}/openapi.json`);
  const document = (await answer.json()) as {
    paths: Record<string, Record<string, { operationId?: string }>>;
  };
  const served = Object.values(document.paths).flatMap((item) =>
    Object.entries(item).flatMap(([method, operation]) =>
      METHODS.includes(method) ? [operation.operationId] : [],
    ),
  );
  assert.deepEqual(Object.keys(OPERATIONS).sort(), served.sort());
  for (const method of Object.values(OPERATIONS)) {
    assert.equal(typeof PowerContextClient.prototype[method], "function", method);
  }
});

test("the tests called every operation's method", () => {
  const missed = Object.entries(OPERATIONS).filter(([, method]) => !calledMethods.has(method));
  assert.deepEqual(missed, [], "operations no test calls through the client");
});
