import { z } from 'zod';
import { newId } from '../../ids.js';
import { ToolRefused } from '../core/brain.js';
import { turnsRepository } from '../core/turns.repository.js';
import { defineTool, text } from './tool.js';

/** Scheduled wakes: from one minute to 90 days ahead, and at most this many waiting per account. */
export const WAKE_MIN_HOURS = 1 / 60;
export const WAKE_MAX_DAYS = 90;
export const MAX_PENDING_WAKES = 20;

/** A wake turn queued for later, to check back on something. */
export const scheduleWake = defineTool({
  name: 'schedule_wake',
  description:
    `Wake yourself later to check back on something (note: what to check). From one minute to ${WAKE_MAX_DAYS} days ahead; ` +
    `at most ${MAX_PENDING_WAKES} wakes wait per account.`,
  input: z.object({
    note: text(500),
    inHours: z
      .number()
      .min(WAKE_MIN_HOURS)
      .max(WAKE_MAX_DAYS * 24),
  }),
  async handler(args, ctx) {
    const turns = turnsRepository(ctx.db);
    const pending = (await turns.waitingWakes(ctx.accountId)).count;
    if (pending >= MAX_PENDING_WAKES) {
      throw new ToolRefused(`${pending} wakes are already waiting on this account (at most ${MAX_PENDING_WAKES}); none was scheduled`);
    }
    const at = Date.now();
    const notBefore = at + Math.round(args.inHours * 3_600_000);
    const [turn] = await turns.insertMany([
      {
        id: newId('turn'),
        accountId: ctx.accountId,
        kind: 'wake',
        origin: 'agent',
        tokenId: null,
        clientRequestId: null,
        text: `Check back: ${args.note}`,
        data: null,
        mode: 'queue',
        createdAt: at,
        notBefore,
        expiresAt: null,
      },
    ]);
    ctx.onWake?.(turn!);
    return `wake ${turn!.id} scheduled for ${new Date(notBefore).toISOString()}`;
  },
});
