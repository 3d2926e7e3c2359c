import type { Deps } from '../deps.js';

/** What review and shipping services need; the API's deps and a worker's both fit. */
export type ReviewDeps = Pick<Deps, 'config' | 'db' | 'queues' | 'logger' | 'redis'>;
