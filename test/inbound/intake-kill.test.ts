import { describe, expect } from 'vitest';
import { newReplyToken } from '../../src/mail/outbound.js';
import { envFor } from '../helpers/env.js';
import { buildThread } from '../helpers/factories.js';
import { it } from '../helpers/fixture.js';
import { freePort, runTs } from '../helpers/processes.js';
import { startService } from '../helpers/service-process.js';
import { rawMessage, smtpSend } from '../helpers/smtp-client.js';
import { row, rows } from '../helpers/rows.js';

// Kill -9 of the inbound process mid-message loses nothing it answered 250 for.

// Spawns the real process (tsx start-up, migrations check): slow on a loaded 2-core machine.
const SLOW = 120_000;
/** A live reply address of ours (a shipped mail's token): the listener takes mail for it, under its account. */
let LIVE = '';
it.beforeAll(async ({ env }) => {
  const token = newReplyToken();
  await buildThread(env.deps.db, (await env.tenant()).accountId, {
    sendId: `send_${token}`,
    cardId: 'card_kill',
    replyToken: token,
    messageId: `<mail-${token}@localhost>`,
  });
  LIVE = `reply+${token}@localhost`;
});

const SENDERS = 8;
/** All senders share 127.0.0.1: its per-client limits are raised for this flood. */
const FLOOD = { INBOUND_SMTP_SESSIONS_PER_IP: String(SENDERS * 2), INBOUND_SMTP_MESSAGES_PER_MINUTE: '100000' };
/** The process is killed once this many messages were answered 250, while the senders keep going. */
const KILL_AFTER = 30;

describe('the inbound-mail process killed with SIGKILL mid-stream', { timeout: SLOW }, () => {
  it('has stored, byte for byte, every message it answered 250 for', async ({ env }) => {
    const port = await freePort();
    const proc = startService(['inbound-mail'], { ...envFor(env.config), INBOUND_SMTP_PORT: String(port), LOG_LEVEL: 'info', ...FLOOD });
    const accepted = new Map<string, Buffer>();
    const refused: string[] = [];
    let killed = false;
    try {
      await proc.logged('inbound smtp listening', 60_000);
      const gone = proc.ended;
      const sender = async (n: number) => {
        for (let i = 0; !killed; i++) {
          // Some bigger than a socket buffer, so the kill also finds messages halfway through DATA.
          const body = `message ${n}-${i} ${'lorem ipsum '.repeat(i % 3 === 0 ? 20_000 : 10)}`;
          const raw = rawMessage({ subject: `kill ${n}-${i}`, body });
          const answer = await smtpSend(port, { from: 'jane@acme.test', to: [LIVE], raw });
          if (!answer.ok) {
            refused.push(answer.response);
            return;
          }
          const id = /queued as (\S+)/.exec(answer.response)![1]!;
          accepted.set(id, raw);
          if (accepted.size >= KILL_AFTER && !killed) {
            killed = true;
            proc.child.kill('SIGKILL');
          }
        }
      };
      await Promise.all(Array.from({ length: SENDERS }, (_, n) => sender(n)));
      expect((await gone).signal).toBe('SIGKILL');
    } finally {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
    }
    // Senders that were mid-message when it died got no 250 (connection lost), as SMTP intends: they retry.
    expect(accepted.size).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(refused.length).toBeGreaterThan(0);
    const stored: { id: string; raw: Buffer; size: number }[] = await rows(env, 'inbound_messages').select('id', 'raw', 'size');
    const byId = new Map(stored.map((r) => [r.id, r]));
    const missing = [...accepted.keys()].filter((id) => !byId.has(id));
    expect(missing).toEqual([]);
    const changed = [...accepted].filter(([id, raw]) => !byId.get(id)!.raw.equals(raw) || byId.get(id)!.size !== raw.length);
    expect(changed.map(([id]) => id)).toEqual([]);
  });

  it('stops cleanly on SIGTERM (the listener closed), and refuses to start with INBOUND_SMTP_PORT=0', async ({ env }) => {
    const port = await freePort();
    const proc = startService(['inbound-mail'], { ...envFor(env.config), INBOUND_SMTP_PORT: String(port), LOG_LEVEL: 'info' });
    await proc.logged('inbound smtp listening', 60_000);
    expect((await smtpSend(port, { from: 'a@acme.test', to: [LIVE], raw: rawMessage() })).ok).toBe(true);
    proc.child.kill('SIGTERM');
    const done = await proc.exited;
    expect(done.code).toBe(0);
    expect(proc.output()).toContain('"msg":"stopped"');
    // Nothing else runs in this role: no API, no pool.
    expect(proc.output()).not.toContain('api listening');
    const off = await runTs(['bin/start.ts', 'inbound-mail'], { ...envFor(env.config), INBOUND_SMTP_PORT: '0' });
    expect(off.code).toBe(1);
    expect(off.stderr.trim()).toBe('the inbound-mail role needs INBOUND_SMTP_PORT (it is 0, off)');
  });

  it('runs the listener inside `all` too (with the API and the pools) and closes it on SIGTERM', async ({ env }) => {
    const port = await freePort();
    const childEnv = { ...envFor(env.config), PORT: '0', INBOUND_SMTP_PORT: String(port), LOG_LEVEL: 'info', SHUTDOWN_GRACE_MS: '3000' };
    const proc = startService(['all'], childEnv);
    await proc.logged('inbound smtp listening', 60_000);
    await proc.port();
    const answer = await smtpSend(port, { from: 'a@acme.test', to: [LIVE], raw: rawMessage({ body: 'via all' }) });
    expect(answer.ok).toBe(true);
    const id = /queued as (\S+)/.exec(answer.response)![1]!;
    expect(await row(env, 'inbound_messages', { id })).toBeTruthy();
    proc.child.kill('SIGTERM');
    expect((await proc.exited).code).toBe(0);
  });
});
