import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The repository's root, for the architecture tests. */
export const ROOT = join(import.meta.dirname, '..', '..');

/** Every .ts file of src/, api/ and workers/ (the code the architecture tests read), as repo paths, sorted. */
export function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const rel = join(dir, e.name);
      if (e.isDirectory()) walk(rel);
      else if (rel.endsWith('.ts')) out.push(rel);
    }
  };
  for (const top of ['src', 'api', 'workers']) walk(top);
  return out.sort();
}
