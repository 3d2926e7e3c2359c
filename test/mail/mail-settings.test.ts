import { describe, expect } from 'vitest';
import { generateDkimKey } from '../../src/mail/dkim.service.js';
import { mailSettings, setMailFrom } from '../../src/mail/mail-settings.js';
import { adminCall } from '../helpers/env.js';
import { it } from '../helpers/fixture.js';
import { rows } from '../helpers/rows.js';

// The account's mail settings as the dashboard shows them (src/mail/mail-settings.ts): derived from what
// sending reads (the From, the From domain's DKIM keys, the inbound domain), and one rule for a new From.

it.override('options', {
  env: { MAIL_ALLOWED_FROM_DOMAINS: 'localhost,acme-sender.test', INBOUND_MAIL_DOMAIN: 'replies.example.com' },
});

describe('mail settings', () => {
  it('shows MAIL_FROM, no DKIM record yet and the reply address until the account has its own From and key', async ({ env }) => {
    const { accountId } = await env.tenant();
    expect(await mailSettings(env.deps.db, env.config, accountId)).toEqual({
      from: env.config.mail.from,
      dkim: { domain: 'localhost', selector: null, name: null, value: null, record: null },
      inboundAddress: 'reply+<token>@replies.example.com',
    });
    await setMailFrom(env.deps.db, env.config, accountId, 'Acme Sales <sales@acme-sender.test>', { field: 'from' });
    await generateDkimKey(env.deps.db, env.config.sealing, 'acme-sender.test', 's1', 1_000);
    await generateDkimKey(env.deps.db, env.config.sealing, 'acme-sender.test', 's2', 2_000);
    const shown = await mailSettings(env.deps.db, env.config, accountId);
    expect(shown.from).toBe('Acme Sales <sales@acme-sender.test>');
    // The newest key is the one a rotation publishes; the record is the zone-file line `mail dkim generate` prints.
    expect(shown.dkim).toMatchObject({ domain: 'acme-sender.test', selector: 's2', name: 's2._domainkey.acme-sender.test' });
    expect(shown.dkim.record).toMatch(/^s2\._domainkey\.acme-sender\.test IN TXT "v=DKIM1; k=rsa; p=/);
    expect(JSON.stringify(shown)).not.toMatch(/PRIVATE/);
  });

  it('refuses a From the operator did not allow, naming the field it was given as, and writes nothing', async ({ env }) => {
    const { accountId } = await env.tenant();
    await expect(setMailFrom(env.deps.db, env.config, accountId, 'Eve <eve@evil.test>', { field: 'from' })).rejects.toMatchObject({
      status: 400,
      error: expect.stringMatching(/^from must be an address at a domain the operator allowed/),
    });
    await expect(
      setMailFrom(env.deps.db, env.config, accountId, 'a@acme-sender.test\r\nBcc: x@y.test', { field: 'from' }),
    ).rejects.toMatchObject({
      error: 'from must be one line',
    });
    expect((await mailSettings(env.deps.db, env.config, accountId)).from).toBe(env.config.mail.from);
    expect(await rows(env, 'audit_log', { account_id: accountId, route: 'mail sender set' })).toEqual([]);
    // The CLI's verb goes through the same rule and names its flag.
    expect(await adminCall(env, ['mail', 'sender', 'set', '--account', accountId, '--from', 'eve@evil.test'])).toEqual({
      error: expect.stringMatching(/^--from must be an address at a domain the operator allowed/),
    });
  });
});
