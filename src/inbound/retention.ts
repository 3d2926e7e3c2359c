import { deleteBatch, type Prune } from '../db.js';

/** What retention removes of inbound's history (docs/decisions/retention.md) besides the raw bytes (inbound.repository.ts dropRaw). */
export const inboundPrunes = {
  inboundMessages: ((q, before, limit) =>
    deleteBatch(q, 'inbound_messages', `received_at < ? AND status <> 'received' AND raw IS NULL`, [before], limit)) as Prune,
  operatorMail: ((q, before, limit) => deleteBatch(q, 'operator_mail', 'received_at < ?', [before], limit)) as Prune,
};
