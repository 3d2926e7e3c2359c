import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/processes.js';

/**
 * The web client (web/src, built into web/dist) is a thin client of the dashboard's JSON routes: it imports
 * only its own files, React and its stylesheet, never the service's code (which would ship server code and
 * secrets' shapes to the browser), and names no other host (no CDN font, icon or script: the CSP refuses them).
 */
function files(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) files(full, out);
    else out.push(full);
  }
  return out;
}
const SRC = path.join(ROOT, 'web', 'src');
// uPlot (and its stylesheet): the Results page's charts, in a chunk of their own (docs/decisions/dashboard-web.md).
const ALLOWED_PACKAGES = ['react', 'react/jsx-runtime', 'react-dom', 'react-dom/client', 'uplot', 'uplot/dist/uPlot.min.css'];

describe('the web client', () => {
  it('imports only its own files and React', () => {
    const bad: string[] = [];
    for (const file of files(SRC).filter((f) => /\.tsx?$/.test(f))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/^\s*import\s[^'"]*['"]([^'"]+)['"]/gm)) {
        const spec = m[1]!;
        if (spec.startsWith('.')) {
          const target = path.resolve(path.dirname(file), spec);
          if (!target.startsWith(SRC)) bad.push(`${path.relative(ROOT, file)} → ${spec}`);
        } else if (!ALLOWED_PACKAGES.includes(spec)) bad.push(`${path.relative(ROOT, file)} → ${spec}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('names no other host in its sources or its page', () => {
    const hits = [...files(SRC), path.join(ROOT, 'web', 'index.html')].filter((f) => /https?:\/\//.test(readFileSync(f, 'utf8')));
    expect(hits.map((f) => path.relative(ROOT, f))).toEqual([]);
  });
});
