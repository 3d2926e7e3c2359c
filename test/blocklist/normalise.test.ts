import { describe, expect, it } from 'vitest';
import { domainAndParents, normaliseBlockValue } from '../../src/blocklist/normalise.js';

describe('block list normalisation', () => {
  const table: Array<[string, 'domain' | 'email' | 'network', string]> = [
    ['acme.com', 'domain', 'acme.com'],
    ['ACME.com', 'domain', 'acme.com'],
    ['  acme.com  ', 'domain', 'acme.com'],
    ['acme.com.', 'domain', 'acme.com'],
    ['acme.com...', 'domain', 'acme.com'],
    ['www.acme.com', 'domain', 'acme.com'],
    ['@acme.com', 'domain', 'acme.com'],
    ['https://www.acme.com/pricing?x=1', 'domain', 'acme.com'],
    ['http://Sub.Acme.com', 'domain', 'sub.acme.com'],
    ['acme.com/about', 'domain', 'acme.com'],
    ['bücher.de', 'domain', 'xn--bcher-kva.de'],
    ['Jane.Doe@Acme.COM', 'email', 'jane.doe@acme.com'],
    ['jane@acme.com.', 'email', 'jane@acme.com'],
    ['mailto:jane@acme.com', 'email', 'jane@acme.com'],
    ['MAILTO:Jane@Acme.com?subject=hi', 'email', 'jane@acme.com'],
    ['jane+news@acme.co.uk', 'email', 'jane+news@acme.co.uk'],
    ['https://www.linkedin.com/in/jane-doe', 'network', 'https://www.linkedin.com/in/jane-doe'],
    ['https://linkedin.com/in/Jane-Doe/', 'network', 'https://www.linkedin.com/in/jane-doe'],
    ['http://uk.linkedin.com/in/jane-doe?trk=abc#x', 'network', 'https://www.linkedin.com/in/jane-doe'],
    ['linkedin.com/in/jane-doe', 'network', 'https://www.linkedin.com/in/jane-doe'],
    ['www.linkedin.com/in/jane-doe/details/experience/', 'network', 'https://www.linkedin.com/in/jane-doe'],
    ['https://m.linkedin.com/in/jane-doe', 'network', 'https://www.linkedin.com/in/jane-doe'],
    ['https://www.linkedin.com/in/j%C3%B6rg-m', 'network', 'https://www.linkedin.com/in/jörg-m'],
  ];

  it.each(table)('reads %j as %s %s', (raw, kind, value) => {
    expect(normaliseBlockValue(raw)).toEqual({ kind, value });
  });

  it.each([
    '',
    '   ',
    'acme',
    'not a domain.com',
    'jane@',
    '@',
    'jane@@acme.com',
    'jane doe@acme.com',
    '.jane@acme.com',
    'ja..ne@acme.com',
    'https://www.linkedin.com/company/acme',
    'https://www.linkedin.com/in/',
    'ftp://acme.com',
    '-acme.com',
    'acme.123',
    `${'a'.repeat(64)}.com`,
    'https://user:pw@acme.com',
  ])('refuses %j as unreadable', (raw) => {
    expect(normaliseBlockValue(raw)).toBeNull();
  });

  it('lists a domain and each parent down to two labels', () => {
    expect(domainAndParents('a.b.acme.com')).toEqual(['a.b.acme.com', 'b.acme.com', 'acme.com']);
    expect(domainAndParents('acme.com')).toEqual(['acme.com']);
  });
});
