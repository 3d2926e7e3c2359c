import { delimiter, dirname } from 'node:path';

/**
 * The Node release line this service runs on, everywhere: `npm start` and `npm test` (the node-linux-*
 * packages pinned in package.json put that Node first on every npm script's PATH), `.ci/run`, and the
 * Dockerfile's base image. package.json `engines`, `.nvmrc`, `.node-version` and the Dockerfile name the
 * same release; test/architecture/runtime.test.ts keeps them in step (docs/decisions/runtime-and-docker.md, "Runtime").
 */
export const NODE_MAJOR = 24;

/** Why this process should not run here (another Node major), or null. */
export function nodeVersionProblem(version: string = process.versions.node, execPath: string = process.execPath): string | null {
  if (Number(version.split('.')[0]) === NODE_MAJOR) return null;
  return (
    `this service runs on Node ${NODE_MAJOR}, not Node ${version} (${execPath}): start it with \`npm start\` ` +
    `(npm installs Node ${NODE_MAJOR} into node_modules and runs the service on it) or with node_modules/.bin/node`
  );
}

/**
 * PATH with this process's own Node first, for the processes a test or a benchmark starts: `node`, and the
 * `#!/usr/bin/env node` tools (tsx, npm), then run on the same Node as their parent, whatever PATH it had.
 */
export function pathWithThisNode(path: string | undefined = process.env.PATH): string {
  return [dirname(process.execPath), ...(path ? [path] : [])].join(delimiter);
}
