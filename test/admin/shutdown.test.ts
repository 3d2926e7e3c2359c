import { connect } from 'node:net';
import { describe, expect } from 'vitest';
import { testDatabaseName, urlFor, withAdminClient } from '../helpers/db.js';
import { envFor } from '../helpers/env.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { cardRow, row, turnRow } from '../helpers/rows.js';
import { waitFor } from '../helpers/processes.js';
import { pendingJob } from '../../src/jobs/registry.js';
import { NODE_MAJOR } from '../../src/node-version.js';
import { groupAlive, startNpm, startService } from '../helpers/service-process.js';
import { smtpEnv, startTestSmtp } from '../helpers/smtp-server.js';
import { buildCard } from '../review/factories.js';
import { auth } from '../helpers/auth.js';

// These tests spawn real processes (npm, tsx start-up): slow on a loaded 2-core machine.
const SLOW = 180_000;

/** True when nothing accepts a connection on the port any more. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

async function turnStatus(env: TestEnv, requestId: string): Promise<string | undefined> {
  return (await turnRow(env, requestId))?.status as string | undefined;
}

function post(port: number, token: string, body: unknown): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/api/v1/agent/messages`, {
    method: 'POST',
    headers: { ...auth(token), 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('stopping on a signal', { timeout: SLOW }, () => {
  it('SIGTERM to the npm start process stops the server and every process under npm, exit code 0', async ({ env }) => {
    const proc = startNpm(['start'], { ...envFor(env.config), PORT: '0', LOG_LEVEL: 'info', SHUTDOWN_GRACE_MS: '5000' });
    const group = proc.child.pid!;
    try {
      const port = await proc.port(90_000);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      // npm runs the service on the Node it installed (node_modules/.bin first on the script's PATH).
      expect(proc.stdout()).toMatch(new RegExp(`"role":"all","node":"${NODE_MAJOR}\\.\\d+\\.\\d+","msg":"starting"`));
      proc.child.kill('SIGTERM');
      expect((await proc.ended).code).toBe(0);
      await waitFor(async () => !groupAlive(group), 'every process npm started to exit', 60_000);
      expect(await refused(port)).toBe(true);
      await proc.exited;
      expect(proc.stdout()).toContain('"msg":"stopped"');
    } finally {
      if (groupAlive(group)) process.kill(-group, 'SIGKILL');
    }
  });

  it('a SIGTERM during start-up (after migrating, before serving) is acted on once start-up is done: exit code 0', async ({ env }) => {
    const database = testDatabaseName();
    await withAdminClient((c) => c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));
    const proc = startService(['all'], { ...envFor(env.config), DATABASE_URL: urlFor(database), PORT: '0', LOG_LEVEL: 'info' });
    try {
      // Acted on as the line arrives: the process is still starting its API and pools.
      await proc.logged('migrations applied', 90_000);
      proc.child.kill('SIGTERM');
      const done = await proc.exited;
      expect(done).toMatchObject({ code: 0, signal: null });
      expect(proc.stdout()).toContain('"signal":"SIGTERM","msg":"shutting down');
      expect(proc.stdout()).toContain('"msg":"stopped"');
    } finally {
      proc.child.kill('SIGKILL');
      await withAdminClient((c) => c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));
    }
  });

  it('finishes a request waiting on a turn, and the turn, before it exits with code 0', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const proc = startService(['all'], {
      ...envFor(env.config),
      PORT: '0',
      LOG_LEVEL: 'info',
      SHUTDOWN_GRACE_MS: '600000',
      AGENT_STEP_DELAY_MS: '700',
    });
    try {
      const port = await proc.port(90_000);
      const answer = post(port, token, { text: 'draft an email to ops@example.com about pricing', waitSeconds: 60 });
      const running = () => row(env, 'agent_turns', { account_id: accountId, status: 'running' });
      await waitFor(async () => Boolean(await running()), 'the turn to run', 60_000);
      proc.child.kill('SIGTERM');
      const res = await answer;
      expect(res.status).toBe(200);
      const body = (await res.json()) as { requestId: string; message: { status: string } };
      expect(body.message.status).toBe('replied');
      expect((await proc.exited).code).toBe(0);
      expect(await turnStatus(env, body.requestId)).toBe('replied');
      expect(proc.stdout()).toContain('"msg":"stopped"');
      expect(proc.stdout()).not.toContain('returned to their queues');
    } finally {
      proc.child.kill('SIGKILL');
    }
  });

  it('finishes a mail send waiting on a slow SMTP server before it exits with code 0: sent once, card sent', async ({ env }) => {
    const smtp = await startTestSmtp({ kind: 'slow', delayMs: 3_000 });
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
      payload: { work: 'email', to: 'slow@acme.test', draft: { subject: 'subject-slow', body: 'Hi' } },
    });
    const proc = startService(['api'], {
      ...envFor(env.config),
      ...smtpEnv(smtp),
      // The SMTP transport refuses a From at localhost at start-up.
      MAIL_FROM: 'Growth Agent <agent@growthco.example>',
      PORT: '0',
      LOG_LEVEL: 'info',
      SHUTDOWN_GRACE_MS: '600000',
      MAIL_SEND_TIMEOUT_MS: '60000',
    });
    try {
      const port = await proc.port(90_000);
      const answer = fetch(`http://127.0.0.1:${port}/api/v1/review/${card.id}/send`, {
        method: 'POST',
        headers: { ...auth(token), 'Content-Type': 'application/json' },
        body: '{}',
      });
      // The server has the whole message and has not answered yet: the send is in flight.
      await waitFor(async () => smtp.received.some((m) => m.raw.includes('subject-slow')), 'the message to reach the SMTP server', 60_000);
      proc.child.kill('SIGTERM');
      const res = await answer;
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ ok: true, status: 'sent' });
      expect((await proc.exited).code).toBe(0);
      expect(smtp.received.filter((m) => m.raw.includes('subject-slow'))).toHaveLength(1);
      expect((await cardRow(env, card.id))?.status).toBe('sent');
    } finally {
      proc.child.kill('SIGKILL');
      await smtp.close();
    }
  });

  it('returns a job still running at the end of SHUTDOWN_GRACE_MS to its queue and exits; another worker then runs it', async ({ env }) => {
    const { token } = await env.tenant();
    // Each step waits ten minutes, and the lock outlives the test: only a returned job can run again.
    const stuck = {
      ...envFor(env.config),
      LOG_LEVEL: 'info',
      SHUTDOWN_GRACE_MS: '2000',
      AGENT_STEP_DELAY_MS: '600000',
      AGENT_TURN_LOCK_MS: '600000',
    };
    const proc = startService(['workers', '--pools', 'agent-turns'], stuck);
    let requestId = '';
    try {
      const sent = await env.api().post('/api/v1/agent/messages').set(auth(token)).send({ text: 'what is waiting' });
      expect(sent.status).toBe(202);
      requestId = sent.body.requestId as string;
      await waitFor(async () => (await turnStatus(env, requestId)) === 'running', 'the turn to run', 60_000);
      proc.child.kill('SIGTERM');
      expect((await proc.exited).code).toBe(0);
    } finally {
      proc.child.kill('SIGKILL');
    }
    expect(proc.stdout()).toMatch(/"level":40,[^\n]*"returned":\["[^"\n]+"\][^\n]*"msg":"shutdown grace over/);
    // Back in the queue (due a few seconds later), its attempt not counted.
    const job = await pendingJob(env.deps.queues.get('agent-turns')!, `turn-${requestId}`);
    expect(await job?.getState()).toBe('delayed');
    expect(job?.attemptsMade).toBe(0);
    const again = startService(['workers', '--pools', 'agent-turns'], { ...envFor(env.config), LOG_LEVEL: 'info' });
    try {
      await waitFor(async () => (await turnStatus(env, requestId)) === 'replied', 'the returned job to run on another worker', 90_000);
    } finally {
      again.child.kill('SIGTERM');
    }
    expect((await again.exited).code).toBe(0);
  });
});
