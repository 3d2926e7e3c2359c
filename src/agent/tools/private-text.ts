import { privateTextIn } from '../../review/cards/private-text.js';
import { ToolRefused } from '../core/brain.js';
import type { ToolContext } from './tool.js';

/** Work that would show the account's private notes to outsiders is refused back to the brain, and no card is made. */
export async function refusePrivateText(ctx: Pick<ToolContext, 'db' | 'accountId'>, texts: string[]): Promise<void> {
  const quotes = await privateTextIn(ctx.db, ctx.accountId, texts);
  if (quotes) throw new ToolRefused(`the draft ${quotes}, so no card was made; write it in your own words`);
}
