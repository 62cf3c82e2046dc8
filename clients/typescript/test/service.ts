/**
 * A live PowerContext service for these tests, started by `tests/live_server.py`
 * in the repository (migrated database of its own, one `*:admin` token), and the
 * one place that decides how the server is started.
 *
 * `POWERCONTEXT_TEST_DATABASE_URL` picks the database: a `postgres://` server URL
 * (a new database is created on it and dropped after) or, by default, SQLite.
 * `POWERCONTEXT_TEST_PORT` pins the port (default: a free one).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import { createInterface } from "node:readline";

import { PowerContextClient } from "../src/index.js";
import { REPOSITORY } from "../scripts/types.js";

export interface Service {
  url: string;
  token: string;
  /** The browser origin the service allows (CORS). */
  corsOrigin: string;
  /** A client with the admin token (its method calls are recorded: `calledMethods`). */
  client(options?: { fetch?: typeof fetch; token?: string }): PowerContextClient;
  stop(): Promise<void>;
}

/**
 * The client methods the tests called (through `Service.client()`), whatever the
 * answer: test/coverage.test.ts checks that every operation's method is among them.
 */
export const calledMethods = new Set<string>();

/** The client, recording each method called on it in `calledMethods`. */
function recording(client: PowerContextClient): PowerContextClient {
  return new Proxy(client, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name, target);
      if (typeof value !== "function") {
        return value;
      }
      return (...args: unknown[]) => {
        calledMethods.add(String(name));
        return value.apply(target, args);
      };
    },
  });
}

let shared: { service: Promise<Service>; users: number } | undefined;

/**
 * The service the test files share in one run (started on first use); every
 * `useService()` is paired with a `releaseService()`, and the last one stops it.
 */
export function useService(): Promise<Service> {
  shared ??= { service: startService(), users: 0 };
  shared.users += 1;
  return shared.service;
}

export async function releaseService(): Promise<void> {
  if (shared === undefined) {
    return;
  }
  shared.users -= 1;
  if (shared.users === 0) {
    const { service } = shared;
    shared = undefined;
    await (await service).stop();
  }
}

/** Start the service; the one place that decides how (see the module docstring). */
export async function startService(): Promise<Service> {
  const databaseUrl = process.env.POWERCONTEXT_TEST_DATABASE_URL ?? "sqlite:///default";
  const args = ["-m", "tests.live_server", "--database-url", databaseUrl];
  if (process.env.POWERCONTEXT_TEST_PORT) {
    args.push("--port", process.env.POWERCONTEXT_TEST_PORT);
  }
  const server = spawn(resolve(REPOSITORY, ".venv/bin/python"), args, {
    cwd: REPOSITORY,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise<number | null>((done) => server.on("exit", done));
  const firstLine = await new Promise<string>((done, fail) => {
    const lines = createInterface({ input: server.stdout });
    lines.once("line", done);
    server.once("exit", (code) => fail(new Error(`tests.live_server exited with ${code}`)));
  });
  const started = JSON.parse(firstLine) as { url: string; token: string; cors_origin: string };
  return {
    url: started.url,
    token: started.token,
    corsOrigin: started.cors_origin,
    client: (options = {}) =>
      recording(
        new PowerContextClient({ baseUrl: started.url, token: started.token, ...options }),
      ),
    stop: async () => {
      server.stdin.end();
      await exited;
    },
  };
}

/** A fresh scope (ids are unique per call), created through the client. */
export async function newScope(client: PowerContextClient): Promise<string> {
  const scope = await client.createScope({
    title: "ts client test",
    summary: "scope for the TypeScript client's tests",
    idempotency_key: randomUUID(),
  });
  return scope.scope_id;
}

/** What `promise` rejects with; fails the test when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("expected a rejection");
}
