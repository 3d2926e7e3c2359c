import { z } from 'zod';
import { defineRoute, type RouteDef } from '../../api/route-def.js';
import { auditedWrite } from '../../src/audit/audit.service.js';

/**
 * Routes that exist only in tests, mounted through the same route table machinery: a write that
 * records an audit row (until feature routes exist to exercise every rule), and one that crashes.
 */
export const fixtureRoutes: RouteDef[] = [
  defineRoute({
    method: 'post',
    path: '/api/v1/_test/write',
    operationId: 'testWrite',
    summary: 'test write',
    scope: 'review:write',
    bucket: 'writes',
    body: z.object({ note: z.string().max(10) }).strict(),
    responses: { 200: { description: 'ok', schema: z.object({ ok: z.boolean() }) } },
  }).handle(async ({ body }, ctx) => {
    await auditedWrite(ctx.deps.db, ctx.actor, async () => {
      if (body.note === 'fail') throw new Error('boom: internal detail /secret/path');
      return { result: null, targetId: body.note };
    });
    return { body: { ok: true } };
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/_test/crash',
    operationId: 'testCrash',
    summary: 'test crash',
    scope: null,
    bucket: 'reads',
    responses: { 200: { description: 'never', schema: z.object({}) } },
  }).handle(async () => {
    throw new Error('database password is hunter2 at /srv/app/secret.ts:12');
  }),
];
