import type { Processor } from './create-worker.js';

/** Every processor, one per job in src/jobs/catalog.ts. Features add theirs here. */
export const PROCESSORS: Processor[] = [];
