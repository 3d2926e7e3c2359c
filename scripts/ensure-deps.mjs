#!/usr/bin/env node
// Installs dependencies when node_modules is missing or was installed from a different lock file.
// Dependency-free on purpose: it runs before anything is installed. It compares a hash of
// package-lock.json with the one recorded after the last install (file times are not reliable
// across git checkouts and worktrees). npm's own output goes to stderr so that
// `npm run --silent admin` keeps stdout to exactly one JSON object.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lock = join(root, 'package-lock.json');
const marker = join(root, 'node_modules', '.installed-lock-sha256');

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 15)) {
  process.stderr.write(`Node ${process.versions.node} is too old: this service needs Node 20.15 or newer.\n`);
  process.exit(1);
}

const wanted = createHash('sha256').update(readFileSync(lock)).digest('hex');
const installed = existsSync(marker) ? readFileSync(marker, 'utf8').trim() : null;
if (installed !== wanted) {
  process.stderr.write('Installing dependencies (npm ci)…\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: ['ignore', 2, 2] });
  if (r.status !== 0) {
    process.stderr.write('npm ci failed; see the output above.\n');
    process.exit(r.status ?? 1);
  }
  writeFileSync(marker, `${wanted}\n`);
}
