import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'mail');

/** The fixture names (test/fixtures/mail/*.eml, see its README). */
export const MAIL_FIXTURES = readdirSync(DIR)
  .filter((f) => f.endsWith('.eml'))
  .map((f) => f.replace(/\.eml$/, ''));

/**
 * A fixture's bytes with its placeholders filled: `__TOKEN__` (the thread's reply token) and
 * `<__MSGID__>` (the sent mail's Message-ID, brackets included). Unfilled, they match no thread.
 */
export function mailFixture(name: string, thread?: { replyToken?: string; messageId?: string }): Buffer {
  const text = readFileSync(join(DIR, `${name}.eml`), 'latin1');
  return Buffer.from(
    text.replaceAll('__TOKEN__', thread?.replyToken ?? '__TOKEN__').replaceAll('<__MSGID__>', thread?.messageId ?? '<__MSGID__>'),
    'latin1',
  );
}
