import { z } from 'zod';
import { conversationOf, findApiMessage } from '../../src/agent/messages/agent.service.js';
import { NotFound } from '../../src/errors.js';
import { cardsFiledByTurn } from '../../src/review/queue.service.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { RequestIdParams } from '../routes/agent.schemas.js';

const FiledCards = z.object({
  items: z.array(z.object({ id: z.string(), title: z.string(), status: z.string(), primaryLabel: z.string() })),
});

/**
 * The chat's one route of its own: the cards a message's turn filed, so the page links each to the review
 * desk. The message is found exactly as GET /api/v1/agent/messages/{requestId} finds it (the person's own
 * conversation, else 404), and the cards come from the review area.
 */
export const agentRoutes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/dashboard/api/agent/messages/{requestId}/cards',
    operationId: 'getAgentMessageCards',
    summary: 'The review cards one of your messages’ turn filed, oldest first',
    auth: 'session',
    scope: 'agent:message',
    bucket: 'reads',
    params: RequestIdParams,
    responses: { 200: { description: 'The cards the turn filed', schema: FiledCards } },
  }).handle(async ({ params }, ctx) => {
    const { accountId } = ctx.principal;
    const turn = await findApiMessage(ctx.deps.db, accountId, conversationOf(ctx.principal), params.requestId);
    if (!turn) throw new NotFound();
    return { body: { items: await cardsFiledByTurn(ctx.deps.db, accountId, turn.id) } };
  }),
];
