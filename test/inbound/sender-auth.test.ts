import { describe, expect, it } from 'vitest';
import { parseMail } from '../../src/inbound/parse.js';
import { proofOf } from '../../src/inbound/proof.js';
import { headerAuthOf, parseAuthResults, senderAuthentication, trustedField } from '../../src/inbound/sender-auth.js';
import { mailFixture } from '../helpers/mail-fixtures.js';

// Reading the receiving provider's Authentication-Results (RFC 8601): which header is believed, what it says.

const TRUSTED = ['mx.inbound.test'];

/** Gmail's layout: folded, comments with colons and parentheses, a `header.i=@domain`. */
const GMAIL_STYLE = [
  'mx.inbound.test;',
  '       dkim=pass header.i=@acme.test header.s=s2026 header.b=Xq3vB9k1;',
  '       spf=pass (mx.inbound.test: domain of jane@acme.test designates 203.0.113.7 as permitted sender) smtp.mailfrom=jane@acme.test;',
  '       dmarc=pass (p=REJECT sp=REJECT dis=NONE) header.from=acme.test',
].join(' ');

const block = (...lines: string[]) => `${lines.join('\r\n')}\r\n`;

describe('parseAuthResults', () => {
  it("reads a provider's field: authserv-id, each method=result and its properties, comments dropped", () => {
    expect(parseAuthResults(GMAIL_STYLE)).toEqual({
      authservId: 'mx.inbound.test',
      results: [
        { method: 'dkim', result: 'pass', props: { 'header.i': '@acme.test', 'header.s': 's2026', 'header.b': 'Xq3vB9k1' } },
        { method: 'spf', result: 'pass', props: { 'smtp.mailfrom': 'jane@acme.test' } },
        { method: 'dmarc', result: 'pass', props: { 'header.from': 'acme.test' } },
      ],
    });
    // A version, a quoted authserv-id, nested comments, a reason, a trailing `;`; `none`.
    expect(parseAuthResults('"mx.inbound.test" 1; dkim=fail (bad (nested) sig) reason="body hash" header.d=acme.test;')).toEqual({
      authservId: 'mx.inbound.test',
      results: [{ method: 'dkim', result: 'fail', props: { reason: 'body hash', 'header.d': 'acme.test' } }],
    });
    expect(parseAuthResults('mx.inbound.test; none')).toEqual({ authservId: 'mx.inbound.test', results: [] });
  });

  it('believes nothing that is not in the grammar', () => {
    for (const bad of [
      '',
      'dkim=pass header.d=acme.test', // no authserv-id (as Microsoft 365 writes it)
      'mx.inbound.test; dkim pass',
      'mx.inbound.test; dkim=pass (unclosed header.d=acme.test',
      'mx.inbound.test; dkim=pass header.d="acme.test',
      'mx.inbound.test; dkim=pass header.d=acme.test)',
      'mx.inbound.test; =pass',
      'mx.inbound.test',
    ]) {
      expect(parseAuthResults(bad), bad).toBeNull();
    }
  });
});

describe('which fields are believed', () => {
  it('only the topmost field of a trusted authserv-id; never one below it, even right below with the same id', () => {
    const auth = headerAuthOf(
      block(
        'Authentication-Results: relay.internal.test; spf=pass smtp.mailfrom=jane@acme.test',
        'Authentication-Results: mx.inbound.test; dkim=none',
        'Authentication-Results: mx.inbound.test; dmarc=pass header.from=acme.test',
        'Received: from relay.example.net by mx.inbound.test; Tue, 24 Nov 2026 17:02:42 +0000',
        'Authentication-Results: mx.inbound.test; dkim=pass header.d=acme.test',
        'From: jane@acme.test',
      ),
    );
    expect(auth.fromCount).toBe(1);
    expect(trustedField(auth.fields, TRUSTED)?.results.map((r) => r.method)).toEqual(['dkim']);
    expect(senderAuthentication('jane@acme.test', auth, TRUSTED)).toEqual({
      pass: false,
      reason: 'no DKIM or DMARC pass for the From domain',
    });
    expect(trustedField(auth.fields, [])).toBeNull();
  });

  it("a forged pass right below the provider's own fail, or beside it in the same field, never wins", () => {
    const below = headerAuthOf(
      block(
        'Authentication-Results: mx.inbound.test; dkim=none; dmarc=fail header.from=acme.test',
        'Authentication-Results: mx.inbound.test; dkim=pass header.d=acme.test; dmarc=pass header.from=acme.test',
        'From: jane@acme.test',
      ),
    );
    expect(senderAuthentication('jane@acme.test', below, TRUSTED)).toEqual({
      pass: false,
      reason: 'the provider failed DMARC for the message',
    });
    const beside = headerAuthOf(
      block(
        'Authentication-Results: mx.inbound.test; dkim=pass header.d=acme.test; dmarc=fail header.from=acme.test',
        'From: jane@acme.test',
      ),
    );
    expect(senderAuthentication('jane@acme.test', beside, TRUSTED)).toMatchObject({ pass: false });
  });

  it('stops at a field that does not parse: the one below it may be the sender’s', () => {
    const auth = headerAuthOf(
      block(
        'Authentication-Results: mx.inbound.test; dkim=pass (broken',
        'Authentication-Results: mx.inbound.test; dkim=pass header.d=acme.test',
      ),
    );
    expect(trustedField(auth.fields, TRUSTED)).toBeNull();
  });

  it('reads folded fields and a name in any case', () => {
    const auth = headerAuthOf(`authentication-results: ${GMAIL_STYLE.replace(/; /g, ';\r\n\t')}\r\nFROM: x@acme.test\r\n`);
    expect(senderAuthentication('jane@acme.test', auth, TRUSTED)).toMatchObject({ pass: true, method: 'dkim', domain: 'acme.test' });
  });
});

describe('senderAuthentication and proofOf', () => {
  const only = (value: string, from = 'From: x@y') => headerAuthOf(block(`Authentication-Results: ${value}`, from));

  it('passes DMARC for the From domain exactly, DKIM for a signing domain at or above it', () => {
    expect(senderAuthentication('jane@acme.test', only('mx.inbound.test; dmarc=pass header.from=acme.test'), TRUSTED)).toEqual({
      pass: true,
      method: 'dmarc',
      domain: 'acme.test',
      authservId: 'mx.inbound.test',
    });
    expect(senderAuthentication('jane@mail.acme.test', only('mx.inbound.test; dkim=pass header.d=acme.test'), TRUSTED)).toMatchObject({
      pass: true,
      domain: 'acme.test',
    });
    for (const [from, value] of [
      ['jane@acme.test', 'mx.inbound.test; dmarc=pass header.from=evil.test'],
      ['jane@acme.test', 'mx.inbound.test; dkim=pass header.d=evil.test'],
      ['jane@acme.test', 'mx.inbound.test; dkim=pass header.d=mail.acme.test'], // below the From domain
      ['jane@acme.test', 'mx.inbound.test; dkim=pass header.d=test'], // a bare TLD covers nothing
      ['jane@notacme.test', 'mx.inbound.test; dkim=pass header.d=acme.test'],
      ['jane@acme.test', 'mx.inbound.test; dkim=fail header.d=acme.test; dmarc=fail header.from=acme.test'],
      ['jane@acme.test', 'other.provider.test; dkim=pass header.d=acme.test'],
    ] as const) {
      expect(senderAuthentication(from, only(value), TRUSTED).pass, `${from} ${value}`).toBe(false);
    }
  });

  it('passes nothing with no trusted id configured, or with two From fields', () => {
    const value = 'mx.inbound.test; dmarc=pass header.from=acme.test';
    expect(senderAuthentication('jane@acme.test', only(value), [])).toEqual({
      pass: false,
      reason: 'no trusted authserv-id is configured',
    });
    const two = headerAuthOf(block(`Authentication-Results: ${value}`, 'From: jane@acme.test', 'From: boss@acme.test'));
    expect(senderAuthentication('jane@acme.test', two, TRUSTED)).toEqual({ pass: false, reason: 'not exactly one From address' });
  });

  it('proof: a token or our Message-ID always; a sender match only when the authenticated domain covers the address matched', () => {
    const pass = { pass: true, method: 'dkim', domain: 'acme.test', authservId: 'mx.inbound.test' } as const;
    expect(proofOf('reply-address', null, null)).toBe('token');
    expect(proofOf('original-address', null, null)).toBe('token');
    expect(proofOf('references', null, null)).toBe('message-id');
    expect(proofOf('original-message-id', null, null)).toBe('message-id');
    expect(proofOf('sender', 'jane@acme.test', null)).toBeNull();
    expect(proofOf('sender', 'jane@acme.test', { pass: false, reason: 'x' })).toBeNull();
    expect(proofOf('sender', 'jane@acme.test', pass)).toBe('sender-authentication');
    // A report signed by acme.test about someone at another domain bounces nobody.
    expect(proofOf('sender', 'hana@other.test', pass)).toBeNull();
  });
});

describe('parseMail', () => {
  it('keeps the top header block’s Authentication-Results in order, and the From count', async () => {
    const r = await parseMail(mailFixture('forged-unsubscribe'));
    if (!r.ok) throw new Error(r.reason);
    expect(r.mail.auth.fromCount).toBe(1);
    expect(r.mail.auth.fields.map((f) => f.position)).toEqual([0, 2]);
    // The provider's verdict (on top) fails DMARC, which is final; the passing one the sender wrote below is not read.
    expect(senderAuthentication(r.mail.from, r.mail.auth, TRUSTED)).toEqual({
      pass: false,
      reason: 'the provider failed DMARC for the message',
    });
  });
});
