import { describe, expect } from 'vitest';
import { adminCall } from '../helpers/env.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { rawMessage } from '../helpers/smtp-client.js';
import { countRows } from '../helpers/rows.js';

// The inbound URL's bounds: messages a minute per account URL, and the account's raw storage cap.

const PER_MINUTE = 3;
const STORAGE = 4_096;
it.override('options', { env: { INBOUND_URL_PER_MINUTE: String(PER_MINUTE), INBOUND_ACCOUNT_STORAGE_BYTES: String(STORAGE) } });

async function inboundPath(env: TestEnv, accountId: string): Promise<string> {
  const { out, error } = await adminCall(env, ['mail', 'inbound-url', '--account', accountId]);
  expect(error).toBeUndefined();
  return new URL(String(out!.url)).pathname;
}

const post = (env: TestEnv, path: string, body: Buffer) => env.api().post(path).set('Content-Type', 'message/rfc822').send(body);
const stored = (env: TestEnv, accountId: string) => countRows(env, 'inbound_messages', { account_id: accountId });

describe('POST /api/mail/inbound/{secret} under a flood', () => {
  it('takes INBOUND_URL_PER_MINUTE messages a minute per URL, then answers 429 with Retry-After and stores nothing', async ({ env }) => {
    const { accountId } = await env.tenant();
    const { accountId: other } = await env.tenant();
    const path = await inboundPath(env, accountId);
    const otherPath = await inboundPath(env, other);
    const small = rawMessage({ body: 'hello' });
    const answers = [];
    for (let i = 0; i < PER_MINUTE + 2; i++) answers.push(await post(env, path, small));
    expect(answers.slice(0, PER_MINUTE).map((r) => r.status)).toEqual(Array(PER_MINUTE).fill(202));
    for (const over of answers.slice(PER_MINUTE)) {
      expect(over.status).toBe(429);
      expect(over.body).toEqual({ error: 'rate limited' });
      const wait = Number(over.headers['retry-after']);
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(60);
    }
    expect(await stored(env, accountId)).toBe(PER_MINUTE);
    // Another account's URL is counted on its own.
    expect((await post(env, otherPath, small)).status).toBe(202);
  });

  it("answers 429 once the account's raw inbound bytes reach INBOUND_ACCOUNT_STORAGE_BYTES, before reading the body", async ({ env }) => {
    const { accountId } = await env.tenant();
    const path = await inboundPath(env, accountId);
    const big = rawMessage({ body: 'x'.repeat(STORAGE) });
    expect((await post(env, path, big)).status).toBe(202);
    const full = await post(env, path, rawMessage({ body: 'one more' }));
    expect(full.status).toBe(429);
    expect(full.body).toEqual({ error: 'rate limited' });
    expect(Number(full.headers['retry-after'])).toBe(3600);
    expect(await stored(env, accountId)).toBe(1);
  });
});
