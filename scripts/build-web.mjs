// Builds the dashboard's web client (web/ → web/dist/, by Vite) when its sources changed since the last build.
// Dependency-free, like ensure-deps.mjs which calls it before `npm start` and `npm test`; the browser tests call
// it too, so `npx vitest run test/dashboard/…` never serves a stale page. "Changed" is a hash of every file
// under web/ (dist aside) and of package-lock.json (Vite, React), kept in web/dist/.source-sha256: file
// times are not reliable across git checkouts and worktrees, and hashing a few dozen small files takes
// milliseconds, so an unchanged client costs no build.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const web = join(root, 'web');
const dist = join(web, 'dist');
const stamp = join(dist, '.source-sha256');

function sources(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (full !== dist && entry.name !== 'node_modules') sources(full, out);
    } else out.push(full);
  }
  return out;
}

/** The hash of what the client is built from. */
export function webSourceHash() {
  const hash = createHash('sha256');
  for (const file of sources(web).sort()) {
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  hash.update(readFileSync(join(root, 'package-lock.json')));
  return hash.digest('hex');
}

/** Builds web/dist unless it was built from these very sources; returns whether it built. Throws on a failed build. */
export function ensureWebBuilt() {
  if (!existsSync(join(web, 'index.html'))) return false;
  const wanted = webSourceHash();
  const built = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : null;
  if (built === wanted && existsSync(join(dist, 'index.html'))) return false;
  const vite = join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  if (!existsSync(vite)) {
    if (existsSync(join(dist, 'index.html'))) return false; // installed without dev dependencies: keep what is there
    throw new Error('The dashboard is not built and Vite is not installed (npm ci installs it).');
  }
  // The project's own Node (node_modules/.bin/node) when npm runs on another one.
  const packaged = join(root, 'node_modules', '.bin', 'node');
  const node = existsSync(packaged) ? packaged : process.execPath;
  process.stderr.write('Building the dashboard (web/ → web/dist/)…\n');
  // NODE_ENV=production whoever calls (vitest sets it to `test`, which would bundle React's development build).
  const r = spawnSync(node, [vite, 'build', '--config', join(web, 'vite.config.ts'), '--logLevel', 'warn'], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 2, 2],
  });
  if (r.status !== 0) throw new Error('The dashboard build failed; see the output above.');
  writeFileSync(stamp, `${wanted}\n`);
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    ensureWebBuilt();
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}
