import { accountSettings } from '../accounts/settings.repository.js';
import { adminActor, auditedWrite } from '../audit/audit.service.js';
import type { Db, Queryable } from '../db.js';
import { BadRequest, NotFound, Rejected } from '../errors.js';
import { newId } from '../ids.js';
import { isTimeZone } from './schedule.js';

const NAME = /^[a-z0-9][a-z0-9_.-]{0,119}$/;

/** Connects a built-in destination (a run's summary is kept there for the CLI to read). Names are unique per account. */
export async function addDestination(db: Db, accountId: string, name: string): Promise<{ id: string; name: string }> {
  if (!NAME.test(name)) throw new BadRequest('--name must be 1 to 120 lowercase letters, digits, ".", "_" or "-"');
  return auditedWrite(db, adminActor(accountId, 'destination add'), async (trx) => {
    if (!(await accountSettings(trx).exists(accountId))) throw new NotFound();
    const id = newId('dest');
    const inserted = await trx('destinations')
      .insert({ id, account_id: accountId, name, created_at: Date.now() })
      .onConflict(['account_id', 'name'])
      .ignore()
      .returning('id');
    if (!inserted.length) throw new Rejected(`destination ${name} is already connected`);
    return { result: { id, name }, targetId: id };
  });
}

export async function listDestinations(db: Db, accountId: string): Promise<Array<{ id: string; name: string; createdAt: number }>> {
  const rows: Array<{ id: string; name: string; created_at: number }> = await db('destinations')
    .where({ account_id: accountId })
    .orderBy('name');
  return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at }));
}

/** Keeps a run's summary at a built-in destination; a second delivery of the same run is a no-op. */
export async function deliverToDestination(q: Queryable, accountId: string, name: string, runId: string, text: string): Promise<boolean> {
  const dest = await q('destinations').where({ account_id: accountId, name }).first<{ id: string } | undefined>('id');
  if (!dest) return false;
  await q('destination_deliveries')
    .insert({ account_id: accountId, destination_id: dest.id, run_id: runId, text, at: Date.now() })
    .onConflict(['account_id', 'run_id'])
    .ignore();
  return true;
}

export async function listDestinationDeliveries(db: Db, accountId: string, name: string, limit: number) {
  const dest = await db('destinations').where({ account_id: accountId, name }).first<{ id: string } | undefined>('id');
  if (!dest) throw new NotFound();
  const rows: Array<{ run_id: string; text: string; at: number }> = await db('destination_deliveries')
    .where({ account_id: accountId, destination_id: dest.id })
    .orderBy('id', 'desc')
    .limit(limit);
  return rows.map((r) => ({ runId: r.run_id, text: r.text, at: r.at }));
}

/** Sets the time zone schedules are read in (IANA name, such as Europe/Paris). */
export async function setAccountTimeZone(db: Db, accountId: string, tz: string): Promise<{ id: string; timeZone: string }> {
  if (!isTimeZone(tz)) throw new BadRequest(`--time-zone ${tz} is not a known IANA time zone (for example Europe/Paris)`);
  return auditedWrite(db, adminActor(accountId, 'account set-time-zone'), async (trx) => {
    const n = await accountSettings(trx).set(accountId, { time_zone: tz });
    if (!n) throw new NotFound();
    return { result: { id: accountId, timeZone: tz }, targetId: accountId };
  });
}
