import { auditedWrite } from '../../src/audit/audit.service.js';
import { queueAggregation, recordConversions } from '../../src/measurement/conversions.service.js';
import { reportVisit } from '../../src/measurement/visits.service.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { EventsBody, EventsResponse, readEvents, VisitBody, VisitResponse } from './measurement.schemas.js';

/** Measurement: a customer's server reports landings and conversions. Writes bucket, audited. */
export const measurementRoutes: RouteDef[] = [
  defineRoute({
    method: 'post',
    path: '/api/v1/measurement/visits',
    operationId: 'reportVisit',
    summary: 'Report a landing that did not come through a tracked link; answers its visit id and channel',
    scope: 'measurement:write',
    bucket: 'writes',
    body: VisitBody,
    responses: { 201: { description: 'The visit, with the channel derived from UTM, referrer or our own links', schema: VisitResponse } },
  }).handle(async ({ body }, ctx) => ({
    status: 201,
    body: await auditedWrite(ctx.deps.db, ctx.actor, async (trx) => {
      const visit = await reportVisit(trx, ctx.deps.config.baseUrl, ctx.principal.accountId, body);
      return { result: visit, targetId: visit.visitId, status: 201 };
    }),
  })),
  /** Accepted events are committed before the answer; aggregation runs from a queue. */
  defineRoute({
    method: 'post',
    path: '/api/v1/measurement/events',
    operationId: 'reportConversionEvents',
    summary: 'Report up to 100 conversion events; each is accepted, a duplicate, or invalid with a reason',
    scope: 'measurement:write',
    bucket: 'writes',
    body: EventsBody,
    responses: { 200: { description: 'One outcome per event, in request order', schema: EventsResponse } },
  }).handle(async ({ body }, ctx) => {
    const accountId = ctx.principal.accountId;
    const out = await auditedWrite(ctx.deps.db, ctx.actor, async (trx) => ({
      result: await recordConversions(trx, accountId, readEvents(body.events)),
      targetId: null,
    }));
    if (out.accepted) await queueAggregation({ queues: ctx.deps.queues, logger: ctx.log }, accountId);
    return { body: { events: out.events } };
  }),
];
