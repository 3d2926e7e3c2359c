import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './source-files.js';

/**
 * A test takes its fixtures from its context (`it('…', async ({ env }) => …)`, docs/testing.md): no test file
 * copies one into a module variable (`let env: TestEnv;` bound in a hook). Checked in every file under test/ but
 * the helpers, which build the fixtures.
 */
const SKIPPED = 'test/helpers';

/** Files with a reason to keep a module variable, said in the file. */
const ALLOWED = [
  // Its env is built on a private Redis the file starts itself, not the shared fixture's.
  'test/review/queue-cache.test.ts',
];

const COPY = /^let (env|smtp|llm|inbound|agent|db|dns|queues|pools)\b/m;

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const rel = join(dir, e.name);
    if (rel === SKIPPED) continue;
    if (e.isDirectory()) out.push(...testFiles(rel));
    else if (rel.endsWith('.ts')) out.push(rel);
  }
  return out;
}

describe('test fixtures', () => {
  it('are taken from the test context, never copied into a module variable', () => {
    const files = testFiles('test').filter((f) => !ALLOWED.includes(f));
    expect(files.length).toBeGreaterThan(200);
    const copying = files.filter((f) => COPY.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(copying, 'take the fixture from the test context: it(…, async ({ env }) => …)').toEqual([]);
  });
});
