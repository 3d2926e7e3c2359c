import { it } from './fixture.js';

/**
 * Runs before each test file (vitest.config.ts setupFiles). Files share their worker's modules
 * (isolate: false), so fixture.ts's `it` is one object for every file a worker runs, and a file's top-level
 * `it.override('options', …)` replaces that object's options for good: each file starts again from none,
 * as it would in a process of its own.
 */
it.override('options', {});
