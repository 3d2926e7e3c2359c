import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { matchPhrase, OFFLINE_PHRASES } from '../../src/agent/brains/offline/offline-phrases.js';
import { AGENT_DOC, phraseList, withPhraseList } from '../../scripts/offline-phrases.js';

/** What the capitals of an example stand for, to write it as a person would. */
const FILLED: Record<string, string> = {
  ADDRESS: 'jane.doe@example.com',
  TOPIC: 'our new pricing',
  URL: 'https://acme.test/pricing',
  DOMAIN: 'acme.test',
  NOTE: 'we sell to dentists',
  TASK: 'review the pipeline',
  SCHEDULE: 'monday at 9am',
  N: '3',
  SLUG: 'launch-notes',
};
const written = (example: string) => example.replace(/\b[A-Z]+\b/g, (w) => FILLED[w] ?? w);

describe('the offline brain phrases in docs/agent.md', () => {
  it('are the list the code declares (run `npx tsx scripts/offline-phrases.ts` after changing a phrase)', () => {
    const doc = readFileSync(AGENT_DOC, 'utf8');
    expect(withPhraseList(doc)).toBe(doc);
    for (const p of OFFLINE_PHRASES) expect(doc).toContain(`\`${p.example}\``);
  });

  it('names every phrase, and a list that differs from the code is caught', () => {
    expect(phraseList()).toContain('`start a sequence to ADDRESS about TOPIC`');
    const doc = readFileSync(AGENT_DOC, 'utf8');
    const stale = doc.replace('`add lead DOMAIN`', '`add a lead DOMAIN`');
    expect(stale).not.toBe(doc);
    expect(withPhraseList(stale)).not.toBe(stale);
  });

  it('each example and other spelling, filled in, is understood as that phrase', () => {
    for (const p of OFFLINE_PHRASES) {
      for (const example of [p.example, ...(p.variants ?? [])]) {
        expect(matchPhrase(written(example))?.phrase, example).toBe(p);
        expect(matchPhrase(written(example).toUpperCase())?.phrase, `${example} in capitals`).toBe(p);
      }
    }
    expect(matchPhrase('how are things going?')).toBeNull();
  });
});
