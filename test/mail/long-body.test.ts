import { describe, expect } from 'vitest';
import { it } from '../helpers/fixture.js';
import { smtpEnv } from '../helpers/smtp-server.js';
import { buildCard } from '../review/factories.js';
import { auth } from '../helpers/auth.js';

it.override('options', ({ smtp }) => ({ env: { ...smtpEnv(smtp) } }));

// 200 numbered lines of 75 characters: 15,000 characters, short lines, so the message carries them as written.
const LINES = Array.from({ length: 200 }, (_, i) => `line ${String(i).padStart(4, '0')} ${'x'.repeat(64)}`);
const BODY = `${LINES.join('\n')}\n`;

describe('a long mail draft', () => {
  it('is delivered whole (15,000 characters), while GET /review shows it capped at 8 KB', async ({ smtp, env }) => {
    expect(BODY.length).toBe(15_000);
    smtp.mode = { kind: 'accept' };
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
      payload: { work: 'email', to: 'long@acme.test', draft: { subject: 'long-one', body: BODY } },
    });

    const page = (await env.api().get('/api/v1/review').set(auth(token))).body.items as {
      id: string;
      payload: { draft: { body: string } };
    }[];
    const shown = page.find((c) => c.id === card.id)!.payload.draft.body;
    expect(Buffer.byteLength(shown)).toBe(8 * 1024);
    expect(BODY.startsWith(shown)).toBe(true);

    const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(res.status).toBe(200);
    const raw = smtp.received.find((m) => m.raw.includes('long-one'))!.raw.replace(/\r\n/g, '\n');
    for (const line of LINES) expect(raw).toContain(`${line}\n`);
  });
});
