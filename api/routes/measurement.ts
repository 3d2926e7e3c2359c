import type { RouteDef } from '../route.js';

/** Measurement routes (issue 17). */
export const measurementRoutes: RouteDef[] = [];
