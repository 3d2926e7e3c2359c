import { z } from 'zod';
import { newId } from '../../ids.js';
import { kindOfWorkFor } from '../../review/cards/card-shape.js';
import { addCard } from '../../review/cards/doors.js';
import { outboundTexts } from '../../review/cards/private-text.js';
import { laterRepliesNote } from '../replies/reply-wakes.js';
import { refuseUnbackedClaim } from './claims.js';
import { cardShape } from '../../review/file-work.service.js';
import { refusePrivateText } from './private-text.js';
import { defineTool, text } from './tool.js';

/** A card in the review queue: a question, a choice or something to approve. */
export const createCard = defineTool({
  name: 'create_card',
  description: 'Put a card in the review queue (a question, a choice or something to approve).',
  input: z.object({
    kind: z.enum(['approval', 'question', 'choice']).default('approval'),
    sourceType: z.string().regex(/^[a-z][a-z0-9_]{1,40}$/),
    title: text(200),
    summary: z.string().max(2_000).optional(),
    prompt: z.string().max(2_000).optional(),
    options: z.array(z.string().max(200)).max(10).optional(),
    payload: z.record(z.string(), z.unknown()).default({}),
  }),
  async handler(args, ctx) {
    refuseUnbackedClaim([args.title, args.summary, args.prompt], args.payload);
    const shape = { sourceType: args.sourceType, title: args.title, payload: args.payload };
    if (kindOfWorkFor(shape)) await refusePrivateText(ctx, outboundTexts(shape));
    const card = await addCard(ctx.db, {
      id: newId('card'),
      accountId: ctx.accountId,
      kind: args.kind,
      sourceType: args.sourceType,
      title: args.title,
      summary: args.summary ?? '',
      ...(await laterRepliesNote(ctx, args.prompt ?? '')),
      options: args.options ?? null,
      payload: args.payload,
      turnId: ctx.turnId,
      fromOutside: ctx.fromOutside,
      ...cardShape(args.kind, args.sourceType),
    });
    return `card ${card.id} is waiting in the review queue`;
  },
});
