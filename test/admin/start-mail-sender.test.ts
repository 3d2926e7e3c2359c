import { describe, expect } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { mailIdentityProblem, mailLinksWarning } from '../../src/config/mail-identity.js';
import { envFor } from '../helpers/env.js';
import { it } from '../helpers/fixture.js';
import { runTs } from '../helpers/processes.js';

// Who mail is sent as, checked at start-up: with the SMTP transport the mail leaves the machine, so a From
// at localhost (MAIL_FROM's default, so also an unset one) is refused with one line; the local transport
// keeps the default so `npm start` works as it is.

describe('MAIL_ALLOWED_FROM_DOMAINS', () => {
  it("defaults to MAIL_FROM's domain alone, takes a comma list, and names the variable when it is malformed", () => {
    expect(loadConfig({}).mail.identity.allowedFromDomains).toEqual(['localhost']);
    expect(loadConfig({ MAIL_FROM: 'Sam <sam@GrowthCo.example>' }).mail.identity.allowedFromDomains).toEqual(['growthco.example']);
    expect(loadConfig({ MAIL_ALLOWED_FROM_DOMAINS: 'a.example, B.example' }).mail.identity.allowedFromDomains).toEqual([
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
  it('stops with one configuration line, before connecting to anything, when MAIL_FROM is unset or at localhost', async ({ env }) => {
    for (const from of ['', 'Growth Agent <agent@localhost>']) {
      // DATABASE_URL on a closed port: had the process gone on, it would have said Postgres is not reachable.
      const out = await runTs(['bin/start.ts', 'api'], {
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

describe('start-up with real mail and a BASE_URL on this machine', { timeout: 120_000 }, () => {
  it('warns in one log line when MAIL_TRANSPORT is smtp or http and BASE_URL is localhost, and not otherwise', async ({ env }) => {
    const warning = (vars: Record<string, string>) => mailLinksWarning(loadConfig(vars));
    expect(warning({})).toBeNull();
    expect(warning({ MAIL_TRANSPORT: 'http', BASE_URL: 'https://app.growthco.example' })).toBeNull();
    for (const base of ['http://localhost:3000', 'http://127.0.0.1:3000', 'http://[::1]:3000', 'http://app.localhost']) {
      expect(warning({ MAIL_TRANSPORT: 'http', BASE_URL: base }), base).toMatch(/^MAIL_TRANSPORT=http sends real mail but BASE_URL is /);
    }
    // The process itself: the line comes before it reaches any store (Postgres on a closed port stops it after).
    const started = async (vars: Record<string, string>) =>
      runTs(['bin/start.ts', 'api'], {
        ...envFor(env.config),
        DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x',
        LOG_LEVEL: 'warn',
        MAIL_FROM: 'Sam <sam@growthco.example>',
        ...vars,
      });
    const warned = await started({ MAIL_TRANSPORT: 'smtp', BASE_URL: 'http://localhost:3000' });
    const lines = warned.stdout
      .trim()
      .split('\n')
      .filter((l) => l.includes('sends real mail but BASE_URL'));
    expect(lines, warned.stdout + warned.stderr).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 40, baseUrl: 'http://localhost:3000', transport: 'smtp' });
    for (const vars of [
      { MAIL_TRANSPORT: 'smtp', BASE_URL: 'https://app.growthco.example' },
      { MAIL_TRANSPORT: 'local', BASE_URL: 'http://localhost:3000' },
    ]) {
      const quiet = await started(vars);
      expect(quiet.stdout + quiet.stderr, JSON.stringify(vars)).not.toContain('sends real mail but BASE_URL');
      expect(quiet.code).toBe(1);
    }
  });
});
