/**
 * The committed types (`src/schema.ts`) are what the live service's
 * `/openapi.json` generates: a change to the API without `npm run generate`
 * fails here.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";

import { SCHEMA_PATH, renderTypes } from "../scripts/types.js";
import { releaseService, useService, type Service } from "./service.js";

let service: Service;

before(async () => {
  service = await useService();
});
after(async () => {
  await releaseService();
});

test("src/schema.ts is generated from the service's document (run `npm run generate`)", async () => {
  const answer = await fetch(`${service.url}/openapi.json`);
  assert.equal(answer.status, 200);
  const generated = await renderTypes((await answer.json()) as Record<string, unknown>);
  assert.equal(readFileSync(SCHEMA_PATH, "utf8"), generated);
});
