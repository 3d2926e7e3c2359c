import { adminActor, auditedWrite } from '../audit/audit.service.js';
import { BadRequest } from '../errors.js';
import { setReplyStopsCompany } from '../leads/lead-settings.js';
import type { Verb } from './verb.js';

/**
 * Lead settings. `leads reply-stops --account ID --company stop|continue`: whether a reply from one
 * contact stops the sequences to the company's other contacts (default `stop`; `settings get` shows it).
 */
export const LEAD_VERBS: Record<string, Verb> = {
  'leads reply-stops': {
    flags: ['account', 'company'],
    async run(f, { db }) {
      if (f.company !== 'stop' && f.company !== 'continue') throw new BadRequest('--company must be stop or continue');
      const stops = f.company === 'stop';
      await auditedWrite(db, adminActor(f.account!, 'leads reply-stops'), async (trx) => ({
        result: await setReplyStopsCompany(trx, f.account!, stops),
        targetId: f.account!,
      }));
      return { account: { id: f.account! }, replyStopsCompany: stops };
    },
  },
};
