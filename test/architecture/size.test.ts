import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The size of the code: no line of a .ts or .mjs file over 140 characters (biome.json's
 * lineWidth, which the formatter cannot reach inside a long string or comment), and no .ts file of
 * src/, api/, workers/ or bin/ over 350 lines. A failure names each file and line.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const MAX_LINE = 140;
const MAX_LINES = 350;
const SIZED_FOLDERS = ['src/', 'api/', 'workers/', 'bin/'];

/** The tracked files (`git ls-files`); without git, every file outside the ignored folders. */
function trackedFiles(): string[] {
  try {
    return execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
      .split('\0')
      .filter(Boolean);
  } catch {
    const out: string[] = [];
    const skip = new Set(['.git', 'node_modules', 'var', 'coverage', 'dist']);
    const walk = (dir: string) => {
      for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
        if (skip.has(e.name)) continue;
        const rel = dir ? `${dir}/${e.name}` : e.name;
        if (e.isDirectory()) walk(rel);
        else out.push(rel);
      }
    };
    walk('');
    return out;
  }
}

const code = trackedFiles()
  .filter((f) => /\.(ts|mjs)$/.test(f))
  .sort();
const lines = new Map(code.map((f) => [f, readFileSync(join(ROOT, f), 'utf8').replace(/\n$/, '').split('\n')]));

/** Lines over `MAX_LINE` characters (counted as code points), as `file:line (n characters)`. */
function longLines(files: ReadonlyMap<string, readonly string[]>, max = MAX_LINE): string[] {
  const out: string[] = [];
  for (const [file, text] of files) {
    text.forEach((line, i) => {
      const n = [...line.replace(/\r$/, '')].length;
      if (n > max) out.push(`${file}:${i + 1} (${n} characters)`);
    });
  }
  return out;
}

/** Files of the sized folders over `MAX_LINES` lines, as `file (n lines)`. */
function longFiles(files: ReadonlyMap<string, readonly string[]>, max = MAX_LINES): string[] {
  return [...files]
    .filter(([file]) => file.endsWith('.ts') && SIZED_FOLDERS.some((d) => file.startsWith(d)))
    .filter(([, text]) => text.length > max)
    .map(([file, text]) => `${file} (${text.length} lines)`);
}

describe('the size of the code', () => {
  it('sees the tracked code (the listing works)', () => {
    expect(code.length).toBeGreaterThan(100);
    expect(code).toContain('src/review/review.service.ts');
    expect(code).toContain('bin/start.ts');
  });

  it('finds a long line and a long file when there is one (the checks can fail)', () => {
    const sample = new Map([
      ['src/x.ts', ['ok', 'y'.repeat(141), '≤'.repeat(140)]],
      ['test/x.ts', Array.from({ length: 400 }, () => 'z')],
      ['src/big.ts', Array.from({ length: 351 }, () => 'z')],
    ]);
    expect(longLines(sample)).toEqual(['src/x.ts:2 (141 characters)']);
    expect(longFiles(sample)).toEqual(['src/big.ts (351 lines)']);
  });

  it(`has no line over ${MAX_LINE} characters in a .ts or .mjs file`, () => {
    expect(longLines(lines)).toEqual([]);
  });

  it(`has no .ts file in ${SIZED_FOLDERS.join(', ')} over ${MAX_LINES} lines`, () => {
    expect(longFiles(lines)).toEqual([]);
  });
});
