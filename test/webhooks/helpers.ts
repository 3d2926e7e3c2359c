import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type request from 'supertest';
import { expect } from 'vitest';
import { buildHook } from '../helpers/factories.js';
import type { TestEnv } from '../helpers/env.js';
import { rows } from '../helpers/rows.js';

/** A hook for `accountId`; returns its id, URL and the path to POST to. */
export function makeHook(env: TestEnv, accountId: string, label = 'signup') {
  return buildHook(env.deps, accountId, { label });
}

/** POST a JSON text (or any bytes) to a hook path with a content type. */
export function postRaw(env: TestEnv, path: string, body: string | Buffer, contentType = 'application/json') {
  const req = env.api().post(path);
  if (contentType) req.set('Content-Type', contentType);
  return req.send(body);
}

export function postJson(env: TestEnv, path: string, value: unknown) {
  return postRaw(env, path, JSON.stringify(value));
}

/** The spec's error shape (DESIGN rule 6). */
export function expectError(res: request.Response, status: number, error: string) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body).toEqual({ error });
  expect(res.headers['cache-control']).toBe('no-store');
}

export async function deliveryRows(env: TestEnv, hookId: string) {
  return rows(env, 'webhook_deliveries', { hook_id: hookId }).orderBy('at').orderBy('id');
}

/** Sends exact bytes with exact headers (supertest re-encodes Buffers sent as JSON). */
export async function rawPost(
  env: TestEnv,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<{ status: number; body: unknown }> {
  const server = http.createServer(env.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  try {
    return await new Promise((resolve, reject) => {
      const req = http.request(
        { port, host: '127.0.0.1', method: 'POST', path, headers: { ...headers, 'content-length': String(body.length) } },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}
