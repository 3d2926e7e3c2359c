#!/usr/bin/env node
// Installs dependencies when node_modules is missing or older than package-lock.json.
// Dependency-free on purpose: it runs before anything is installed. npm's own output goes to
// stderr so that `npm run --silent admin` keeps stdout to exactly one JSON object.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lock = join(root, 'package-lock.json');
const marker = join(root, 'node_modules', '.package-lock.json');

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 15)) {
  process.stderr.write(`Node ${process.versions.node} is too old: this service needs Node 20.15 or newer.\n`);
  process.exit(1);
}

const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync(lock).mtimeMs;
if (stale) {
  process.stderr.write('Installing dependencies (npm ci)…\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: ['ignore', 2, 2] });
  if (r.status !== 0) {
    process.stderr.write('npm ci failed; see the output above.\n');
    process.exit(r.status ?? 1);
  }
}
