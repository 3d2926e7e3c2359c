import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The size of the code: no line of a .ts, .tsx or .mjs file over 140 characters (biome.json's
 * lineWidth, which the formatter cannot reach inside a long string or comment), and no .ts or .tsx file of
 * src/, api/, workers/, bin/ or web/ over 350 lines, unless LONG_FILES names it. A failure names each file and line.
 * The line count is a prompt to look, not the reason to split: a file is split where its meaning splits
 * (docs/decisions/code-structure.md, "Files are split by meaning").
 */
const ROOT = join(import.meta.dirname, '..', '..');
const MAX_LINE = 140;
const MAX_LINES = 350;
const SIZED_FOLDERS = ['src/', 'api/', 'workers/', 'bin/', 'web/'];

/**
 * Files that are one concept and longer than MAX_LINES, each with its own higher bound and the reason
 * beside it (one table's repository, one state machine, one protocol's grammar: splitting it would scatter
 * one thing over files that all import each other). An entry needs a reason a reviewer accepts; an entry
 * whose file is back under MAX_LINES, or gone, fails the test so the list stays short and true.
 */
const LONG_FILES: Readonly<Record<string, { max: number; why: string }>> = {};
/** No file, however much one concept, may grow past this. */
const MAX_LONG = 600;

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
  .filter((f) => /\.(tsx?|mjs)$/.test(f))
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

/** Files of the sized folders over `MAX_LINES` lines (a listed long file: over its own bound), as `file (n lines)`. */
function longFiles(
  files: ReadonlyMap<string, readonly string[]>,
  max = MAX_LINES,
  long: Readonly<Record<string, { max: number }>> = LONG_FILES,
): string[] {
  return [...files]
    .filter(([file]) => /\.tsx?$/.test(file) && SIZED_FOLDERS.some((d) => file.startsWith(d)))
    .filter(([file, text]) => text.length > (long[file]?.max ?? max))
    .map(([file, text]) => `${file} (${text.length} lines)`);
}

/** Entries of the long-file list that are wrong: no reason, a bound past MAX_LONG, or a file gone or back under MAX_LINES. */
function staleLongFiles(
  files: ReadonlyMap<string, readonly string[]>,
  long: Readonly<Record<string, { max: number; why: string }>> = LONG_FILES,
): string[] {
  return Object.entries(long).flatMap(([file, { max, why }]) => {
    const n = files.get(file)?.length;
    if (n === undefined) return [`${file}: not a tracked file`];
    if (why.trim().length < 20) return [`${file}: no reason given`];
    if (max > MAX_LONG) return [`${file}: bound ${max} over ${MAX_LONG}`];
    if (n <= MAX_LINES) return [`${file}: ${n} lines, under ${MAX_LINES}: remove it from LONG_FILES`];
    return [];
  });
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
    // A listed long file passes up to its own bound, and fails past it.
    const why = 'one state machine, its transitions side by side';
    expect(longFiles(sample, MAX_LINES, { 'src/big.ts': { max: 400 } })).toEqual([]);
    expect(longFiles(sample, MAX_LINES, { 'src/big.ts': { max: 350 } })).toEqual(['src/big.ts (351 lines)']);
    expect(staleLongFiles(sample, { 'src/big.ts': { max: 400, why } })).toEqual([]);
    expect(
      staleLongFiles(sample, {
        'src/x.ts': { max: 400, why },
        'src/gone.ts': { max: 400, why },
        'src/big.ts': { max: 700, why: 'long' },
      }),
    ).toEqual([
      'src/x.ts: 3 lines, under 350: remove it from LONG_FILES',
      'src/gone.ts: not a tracked file',
      'src/big.ts: no reason given',
    ]);
  });

  it(`has no line over ${MAX_LINE} characters in a .ts or .mjs file`, () => {
    expect(longLines(lines)).toEqual([]);
  });

  it(`has no .ts file in ${SIZED_FOLDERS.join(', ')} over ${MAX_LINES} lines, but the named long ones under their bound`, () => {
    expect(longFiles(lines)).toEqual([]);
    expect(staleLongFiles(lines)).toEqual([]);
  });
});
