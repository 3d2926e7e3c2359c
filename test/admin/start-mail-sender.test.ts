import { describe, expect } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { mailIdentityProblem } from '../../src/config/mail-identity.js';
import { envFor } from '../helpers/env.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { run, TSX } from '../helpers/processes.js';

// Who mail is sent as, checked at start-up: with the SMTP transport the mail leaves the machine, so a From
// at localhost (MAIL_FROM's default, so also an unset one) is refused with one line; the local transport
// keeps the default so `npm start` works as it is.

let env: TestEnv;
it.beforeAll(({ env: e }) => {
  env = e;
});

describe('MAIL_ALLOWED_FROM_DOMAINS', () => {
  it("defaults to MAIL_FROM's domain alone, takes a comma list, and names the variable when it is malformed", () => {
    expect(loadConfig({}).mailIdentity.allowedFromDomains).toEqual(['localhost']);
    expect(loadConfig({ MAIL_FROM: 'Sam <sam@GrowthCo.example>' }).mailIdentity.allowedFromDomains).toEqual(['growthco.example']);
    expect(loadConfig({ MAIL_ALLOWED_FROM_DOMAINS: 'a.example, B.example' }).mailIdentity.allowedFromDomains).toEqual([
      'a.example',
      'b.example',
    ]);
    for (const bad of ['a.example,', 'not a domain', '@a.example']) {
      try {
        loadConfig({ MAIL_ALLOWED_FROM_DOMAINS: bad });
        expect.unreachable(bad);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        expect((err as ConfigError).problems).toEqual([
          'MAIL_ALLOWED_FROM_DOMAINS must be a comma-separated list of domain names such as example.com,mail.example.com',
        ]);
      }
    }
  });

  it('refuses a From at localhost, under .localhost or without a domain with the SMTP transport only', () => {
    const problem = (vars: Record<string, string>) => mailIdentityProblem(loadConfig(vars));
    expect(problem({})).toBeNull();
    expect(problem({ MAIL_TRANSPORT: 'http' })).toBeNull();
    expect(problem({ MAIL_TRANSPORT: 'smtp', MAIL_FROM: 'Sam <sam@growthco.example>' })).toBeNull();
    expect(problem({ MAIL_TRANSPORT: 'smtp' })).toMatch(
      /^MAIL_FROM must be set to an address at your sending domain when MAIL_TRANSPORT=smtp/,
    );
    expect(problem({ MAIL_TRANSPORT: 'smtp', MAIL_FROM: 'a@box.localhost' })).toMatch(/\(it is at box\.localhost: "a@box\.localhost"\)$/);
    expect(problem({ MAIL_TRANSPORT: 'smtp', MAIL_FROM: 'Sam' })).toMatch(/\(it is without a domain: "sam"\)$/);
  });
});

describe('start-up with MAIL_TRANSPORT=smtp', { timeout: 120_000 }, () => {
  it('stops with one configuration line, before connecting to anything, when MAIL_FROM is unset or at localhost', async () => {
    for (const from of ['', 'Growth Agent <agent@localhost>']) {
      // DATABASE_URL on a closed port: had the process gone on, it would have said Postgres is not reachable.
      const out = await run(TSX, ['bin/start.ts', 'api'], {
        ...envFor(env.config),
        DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x',
        MAIL_TRANSPORT: 'smtp',
        MAIL_FROM: from,
      });
      expect(out.code, from).toBe(1);
      const lines = out.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toBe(
        'configuration: MAIL_FROM must be set to an address at your sending domain when MAIL_TRANSPORT=smtp ' +
          '(it is at localhost: "agent@localhost")',
      );
    }
  });
});
