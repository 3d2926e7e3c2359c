import type { RouteDef } from '../route.js';

/** Content routes (issue 17). */
export const contentRoutes: RouteDef[] = [];
