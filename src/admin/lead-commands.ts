import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { getAccount } from '../accounts/accounts.service.js';
import { adminActor, auditedWrite } from '../audit/audit.service.js';
import { BadRequest } from '../errors.js';
import { parseMapping } from '../leads/import-csv.js';
import { importContacts } from '../leads/import.service.js';
import { setReplyStopsCompany } from '../leads/lead-settings.js';
import type { Verb } from './verb.js';

/**
 * Lead settings. `leads reply-stops --account ID --company stop|continue`: whether a reply from one
 * contact stops the sequences to the company's other contacts (default `stop`; `settings get` shows it).
 * `leads import --account ID --file PATH [--map email=Email,name=Name,...]`: imports a CSV of contacts in one
 * transaction (docs/dashboard.md, "Import") and prints `{ imported, duplicates, duplicateRows, rejected }`.
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
  'leads import': {
    flags: ['account', 'file', 'map?'],
    async run(f, { db }) {
      const mapping = parseMapping(f.map, '--map');
      await getAccount(db, f.account!);
      const file = f.file!;
      const info = await stat(file).catch(() => null);
      if (!info?.isFile()) throw new BadRequest(`--file ${file} is not a readable file`);
      const summary = await auditedWrite(db, adminActor(f.account!, 'leads import'), async (trx) => ({
        result: await importContacts(trx, f.account!, createReadStream(file), mapping),
        targetId: f.account!,
      }));
      return {
        imported: summary.imported,
        duplicates: summary.duplicates,
        duplicateRows: summary.duplicateRows,
        rejected: summary.rejected,
      };
    },
  },
};
