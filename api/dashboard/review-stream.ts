import { z } from 'zod';
import { BadRequest, CapReached } from '../../src/errors.js';
import { sessionIsLive } from '../../src/people/sessions.service.js';
import type { LiveEntry } from '../../src/queue-version/live-events.js';
import { liveHubOf } from '../../src/review/live-stream.js';
import { defineRoute, type RouteDef } from '../route-def.js';

const LIVE_ID = /^\d{1,20}-\d{1,20}$/;

/** `lastEventId`: for a first connection that resumes (a reconnecting EventSource sends the `Last-Event-ID` header instead). */
const StreamQuery = z.object({ lastEventId: z.string().regex(LIVE_ID, 'must be an event id such as 1733480000000-0').optional() }).strict();

const frame = (e: LiveEntry) => {
  const { type, ...data } = e.event;
  return `id: ${e.id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
};

/**
 * The review queue's live stream (docs/dashboard.md, "Live updates"): server-sent events `card.filed` and
 * `card.updated` for the signed-in person's account, first what they missed since `Last-Event-ID`, then
 * live; a comment line every LIVE_HEARTBEAT_MS; `resync` when the backlog no longer reaches their last event
 * (reload the queue); the stream ends when the session does. Open streams are capped per session and per
 * account: beyond, 429 with Retry-After.
 */
export const reviewStreamRoutes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/dashboard/api/review/stream',
    operationId: 'streamReviewQueue',
    summary: 'Server-sent events of the review queue: card.filed, card.updated (with who acted), resync',
    auth: 'session',
    scope: 'review:read',
    bucket: 'reads',
    query: StreamQuery,
    requestHeaders: z.object({ 'last-event-id': z.string().optional() }),
    errors: [429],
    responses: { 200: { description: 'An event stream', schema: z.string(), contentType: 'text/event-stream' } },
  }).handle(async ({ query }, ctx) => {
    const header = ctx.req.headers['last-event-id'];
    const lastEventId = (typeof header === 'string' && header ? header : undefined) ?? query.lastEventId ?? null;
    if (lastEventId !== null && !LIVE_ID.test(lastEventId))
      throw new BadRequest('Last-Event-ID must be an event id such as 1733480000000-0');
    const session = ctx.session!;
    const { res, req, deps } = ctx;
    const hub = liveHubOf(deps);
    let open = true;
    const write = (text: string) => {
      if (open) res.write(text);
    };
    const opened = await hub.open({
      accountId: session.account.id,
      sessionId: session.sessionId,
      lastEventId,
      sessionLive: () => sessionIsLive(deps.db, deps.config, { accountId: session.account.id, sessionId: session.sessionId }),
      sink: {
        event: (e) => write(frame(e)),
        ready: (id) => write(`${id ? `id: ${id}\n` : ''}event: ready\ndata: {}\n\n`),
        resync: (id) => write(`${id ? `id: ${id}\n` : ''}event: resync\ndata: {}\n\n`),
        heartbeat: () => write(': heartbeat\n\n'),
        end: (why) => {
          write(`event: end\ndata: ${JSON.stringify({ reason: why })}\n\n`);
          open = false;
          res.end();
        },
      },
      // Headers go out before the catch-up is written.
      onOpen: () => {
        res.status(200);
        res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
        res.setHeader('Cache-Control', 'no-store');
        res.setHeader('X-Accel-Buffering', 'no');
        res.flushHeaders();
        res.write(`retry: ${Math.min(deps.config.liveUpdates.heartbeatMs, 5_000)}\n\n`);
      },
    });
    if (!opened.ok)
      throw new CapReached(
        opened.limit === 'session'
          ? `this session already has ${deps.config.liveUpdates.perSession} live streams open; close one (another tab) and try again`
          : `this account already has ${deps.config.liveUpdates.perAccount} live streams open; try again later`,
        opened.retryAfterSeconds,
      );
    // The reader went away: its place is freed at once.
    req.on('close', () => {
      open = false;
      void opened.close();
    });
    if (req.socket.destroyed) void opened.close();
    return { text: '' };
  }),
];
