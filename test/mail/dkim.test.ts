import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { afterAll, describe, expect } from 'vitest';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { runAdmin } from '../../src/admin/commands.js';
import { dkimSigner } from '../../src/mail/dkim.js';
import { localTransport } from '../../src/mail/local.transport.js';
import { NotSent } from '../../src/mail/mail.types.js';
import { unseal } from '../../src/secrets/sealed.js';
import { envFor } from '../helpers/env.js';
import { buildCard } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { ensureOpendkim, opendkimVerify } from '../helpers/opendkim.js';
import { run, TSX } from '../helpers/processes.js';
import { smtpEnv } from '../helpers/smtp-server.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';
import { overwrite } from '../helpers/row-setup.js';

// DKIM signing as a mailbox provider sees it: the key is made by the admin CLI, the DNS record is the one
// it printed (given to mailauth through its resolver, as a DNS server would answer), the mail is the one
// the SMTP stand-in took or the local transport wrote.

const SENDING_DOMAIN = 'mail.acme-dkim.test';
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
const mailDir = async () => {
  const d = await mkdtemp(path.join(tmpdir(), 'gas-dkim-'));
  dirs.push(d);
  return d;
};
it.override('options', ({ smtp }) => ({ env: { ...smtpEnv(smtp), MAIL_FROM: `Acme Growth <agent@${SENDING_DOMAIN}>` } }));
it.beforeAll(() => {
  ensureOpendkim();
});

interface Printed {
  domain: string;
  selector: string;
  name: string;
  value: string;
  record: string;
  createdAt: number;
}

/** The DNS the test plays: TXT records by name, as the CLI printed them. */
const published = new Map<string, string>();
const resolver = async (name: string, type: string) => {
  const value = type === 'TXT' ? published.get(name.toLowerCase()) : undefined;
  if (!value) throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' });
  // As DNS answers a long TXT record: strings of at most 255 characters, joined by the verifier.
  return [value.match(/.{1,255}/g)!];
};
const publish = (p: Printed) => published.set(p.name, p.value);

const admin = (env: TestEnv, ...argv: string[]) => runAdmin(argv, { config: env.deps.config, db: env.deps.db });
const generate = async (env: TestEnv, domain: string, selector: string) =>
  ((await admin(env, 'mail', 'dkim', 'generate', '--domain', domain, '--selector', selector)) as { dkim: Printed }).dkim;

async function verified(raw: string | Buffer) {
  const result = await dkimVerify(Buffer.from(raw), { resolver });
  return result.results.map((r) => ({
    selector: r.selector,
    domain: r.signingDomain,
    result: r.status.result,
    signed: r.signingHeaders?.keys.toLowerCase().split(': ') ?? [],
  }));
}

describe('mail dkim generate', () => {
  it('prints the DNS TXT record once, never the private key, and keeps the key sealed', async ({ env }) => {
    const out = await run(
      TSX,
      ['bin/admin.ts', 'mail', 'dkim', 'generate', '--domain', 'CLI.Acme-dkim.test', '--selector', 's2026'],
      envFor(env.config),
    );
    expect(out.code).toBe(0);
    const lines = out.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const { dkim } = JSON.parse(lines[0]!) as { dkim: Printed };
    expect(dkim).toMatchObject({ domain: 'cli.acme-dkim.test', selector: 's2026', name: 's2026._domainkey.cli.acme-dkim.test' });
    expect(dkim.value).toMatch(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/);
    // A zone-file line: the value in quoted strings of at most 255 characters, which together are the value.
    expect(dkim.record.startsWith('s2026._domainkey.cli.acme-dkim.test IN TXT "v=DKIM1; k=rsa; p=')).toBe(true);
    const strings = [...dkim.record.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
    expect(strings.every((s) => s.length <= 255)).toBe(true);
    expect(strings.join('')).toBe(dkim.value);

    const [row] = await rows(env, 'dkim_keys', { domain: 'cli.acme-dkim.test' });
    expect(row.private_key_sealed).toMatch(/^v1\./);
    expect(row.private_key_sealed).not.toContain('PRIVATE KEY');
    // The private key (kept sealed) is in neither output, not even a line of it.
    const privateKey = await unseal(env.deps.db, env.config.sealing, row.private_key_sealed);
    expect(privateKey).toContain('BEGIN PRIVATE KEY');
    const keyLines = privateKey.split('\n').filter((l) => l.length > 40);
    for (const text of [out.stdout, out.stderr]) {
      expect(text).not.toContain('PRIVATE KEY');
      for (const l of keyLines) expect(text).not.toContain(l);
    }
    const listed = JSON.stringify(await admin(env, 'mail', 'dkim', 'list'));
    expect(listed).toContain(dkim.value);
    expect(listed).not.toContain(row.private_key_sealed);
    expect(listed).not.toContain('PRIVATE');
  }, 120_000);

  it('refuses a second key under the same selector and keeps the first; a bad flag is named', async ({ env }) => {
    const first = await generate(env, 'twice.acme-dkim.test', 'sel1');
    await expect(generate(env, 'twice.acme-dkim.test', 'sel1')).rejects.toMatchObject({
      status: 409,
      message: expect.stringContaining('rotate with a new selector'),
    });
    const keys = (await admin(env, 'mail', 'dkim', 'list')) as { keys: Printed[] };
    expect(keys.keys.filter((k) => k.domain === 'twice.acme-dkim.test')).toEqual([expect.objectContaining({ value: first.value })]);
    await expect(generate(env, 'not a domain', 'sel1')).rejects.toMatchObject({ status: 400, error: expect.stringContaining('--domain') });
    await expect(generate(env, 'ok.acme-dkim.test', 'a.b')).rejects.toMatchObject({
      status: 400,
      error: expect.stringContaining('--selector'),
    });
    await expect(admin(env, 'mail', 'dkim', 'generate', '--domain', 'ok.acme-dkim.test')).rejects.toMatchObject({
      error: '--selector is required',
    });
  });
});

describe('signed mail', () => {
  it('a mail sent over SMTP from the key domain carries a signature that verifies against the printed record', async ({ env, smtp }) => {
    publish(await generate(env, SENDING_DOMAIN, 'k1'));
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
      payload: { work: 'email', to: 'jane@example.org', draft: { subject: 'subject-dkim-smtp', body: 'Hello, signed.' } },
    });
    const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(res.status).toBe(200);
    const mail = smtp.received.find((m) => m.raw.includes('subject-dkim-smtp'))!;
    expect(mail.raw).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed;\s+d=mail\.acme-dkim\.test; q=dns\/txt; s=k1;/m);
    const [sig, ...others] = await verified(mail.raw);
    expect(others).toEqual([]);
    expect(sig).toMatchObject({ selector: 'k1', domain: SENDING_DOMAIN, result: 'pass' });
    // RFC 8058: both List-Unsubscribe fields signed, or one-click does not count.
    for (const h of ['from', 'to', 'subject', 'date', 'message-id', 'reply-to', 'list-unsubscribe', 'list-unsubscribe-post']) {
      expect(sig!.signed).toContain(h);
    }
    // OpenDKIM's own verifier agrees, looking the key up in (a namespace's) DNS.
    expect(await opendkimVerify(mail.raw, Object.fromEntries(published))).toEqual({ code: 0, output: '' });
    // …and finds no key when none is published.
    const unpublished = await opendkimVerify(mail.raw, {});
    expect(unpublished.code).not.toBe(0);
    expect(unpublished.output).toMatch(/Key retrieval failed/);

    // The same bytes changed in a signed header no longer verify, for either.
    const forged = mail.raw.replace('subject-dkim-smtp', 'subject-dkim-forged');
    expect((await verified(forged))[0]).toMatchObject({ result: 'fail' });
    const opendkimForged = await opendkimVerify(forged, Object.fromEntries(published));
    expect(opendkimForged.code).not.toBe(0);
    expect(opendkimForged.output).toMatch(/Bad signature/);
  });

  it('a reply signs In-Reply-To and References too', async ({ env }) => {
    const dir = await mailDir();
    const transport = localTransport(dir, dkimSigner(env.deps.db, env.config.sealing));
    await transport.send(
      {
        from: `agent@${SENDING_DOMAIN}`,
        to: 'jane@example.org',
        subject: 'Re: pricing',
        text: 'Thanks',
        inReplyTo: '<lead-reply@example.org>',
        replyTo: `reply+abc@${SENDING_DOMAIN}`,
        headers: { 'List-Unsubscribe': '<https://agent.example/u/x>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      },
      'mail-dkim-reply',
    );
    const [sig] = await verified(await readFile(path.join(dir, 'mail-dkim-reply.eml')));
    expect(sig).toMatchObject({ result: 'pass' });
    expect(sig!.signed).toEqual(expect.arrayContaining(['in-reply-to', 'references', 'list-unsubscribe', 'list-unsubscribe-post']));
  });

  it('rotation: a new selector signs beside the old one until the old key is removed; other domains go out unsigned', async ({ env }) => {
    const domain = 'rotate.acme-dkim.test';
    const dir = await mailDir();
    const transport = localTransport(dir, dkimSigner(env.deps.db, env.config.sealing));
    const send = async (key: string, from = `agent@${domain}`) => {
      await transport.send({ from, to: 'bob@example.org', subject: 'Rotation', text: 'Hi' }, key);
      return readFile(path.join(dir, `${key}.eml`), 'utf8');
    };
    const old = await generate(env, domain, 'old');
    publish(old);
    expect(await verified(await send('mail-rot-1'))).toEqual([expect.objectContaining({ selector: 'old', result: 'pass' })]);

    // The new record is not published yet: its signature cannot be checked, the old one still passes.
    const next = await generate(env, domain, 'new');
    const during = await verified(await send('mail-rot-2'));
    expect(during.map((s) => [s.selector, s.result])).toEqual(
      expect.arrayContaining([
        ['old', 'pass'],
        ['new', expect.not.stringMatching(/^pass$/)],
      ]),
    );
    publish(next);
    expect((await verified(await send('mail-rot-3'))).map((s) => [s.selector, s.result]).sort()).toEqual([
      ['new', 'pass'],
      ['old', 'pass'],
    ]);
    expect(await admin(env, 'mail', 'dkim', 'remove', '--domain', domain, '--selector', 'old')).toEqual({
      ok: true,
      removed: { domain, selector: 'old' },
    });
    expect(await verified(await send('mail-rot-4'))).toEqual([expect.objectContaining({ selector: 'new', result: 'pass' })]);
    await expect(admin(env, 'mail', 'dkim', 'remove', '--domain', domain, '--selector', 'old')).rejects.toMatchObject({ status: 409 });

    const unsigned = await send('mail-rot-5', 'agent@elsewhere.test');
    expect(unsigned).not.toContain('DKIM-Signature');
    expect(await readdir(dir)).toHaveLength(5);
  });

  it('a key that cannot be used sends nothing (NotSent), never an unsigned mail', async ({ env }) => {
    const domain = 'broken.acme-dkim.test';
    await generate(env, domain, 'b1');
    await overwrite(env, 'dkim_keys', { domain }, { private_key_sealed: 'v1.AAAA.AAAA.AAAA' });
    const dir = await mailDir();
    const transport = localTransport(dir, dkimSigner(env.deps.db, env.config.sealing));
    const failed = await transport
      .send({ from: `agent@${domain}`, to: 'bob@example.org', subject: 'x', text: 'y' }, 'mail-broken')
      .catch((e) => e);
    expect(failed).toBeInstanceOf(NotSent);
    expect((failed as Error).message).toMatch(/^mail from broken\.acme-dkim\.test could not be DKIM-signed/);
    expect(await readdir(dir)).toEqual([]);
  });
});
