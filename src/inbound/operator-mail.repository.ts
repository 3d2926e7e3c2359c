import type { Queryable } from '../db.js';

/** A message to `postmaster@` the inbound domain, kept for the operator (table `operator_mail`). */
export interface OperatorMail {
  id: string;
  mailFrom: string | null;
  rcptTo: string[];
  clientIp: string | null;
  helo: string | null;
  size: number;
  receivedAt: number;
}

interface Row {
  id: string;
  mail_from: string | null;
  rcpt_to: string[];
  client_ip: string | null;
  helo: string | null;
  size: number;
  received_at: string | number;
  raw?: Buffer;
}

const COLUMNS = ['id', 'mail_from', 'rcpt_to', 'client_ip', 'helo', 'size', 'received_at'];
const fromRow = (r: Row): OperatorMail => ({
  id: r.id,
  mailFrom: r.mail_from,
  rcptTo: r.rcpt_to,
  clientIp: r.client_ip,
  helo: r.helo,
  size: r.size,
  receivedAt: Number(r.received_at),
});

/** Operator mail: written once by the listener, read by the admin verbs, deleted by retention. */
export function operatorMailRepository(q: Queryable) {
  return {
    async insert(m: OperatorMail & { raw: Buffer }): Promise<void> {
      await q('operator_mail').insert({
        id: m.id,
        mail_from: m.mailFrom,
        rcpt_to: JSON.stringify(m.rcptTo),
        client_ip: m.clientIp,
        helo: m.helo,
        size: m.size,
        raw: m.raw,
        received_at: m.receivedAt,
      });
    },
    /** Bytes of all operator mail kept now. */
    async totalBytes(): Promise<number> {
      const row = await q('operator_mail').sum<{ n: string | null }[]>({ n: 'size' }).first();
      return Number(row?.n ?? 0);
    },
    /** Newest first, without the bytes. */
    async list(limit: number): Promise<OperatorMail[]> {
      const rows: Row[] = await q('operator_mail')
        .select(COLUMNS)
        .orderBy([
          { column: 'received_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(limit);
      return rows.map(fromRow);
    },
    /** Kept mail not forwarded yet that arrived before `before`, with fewer than `maxTries` forward tries, oldest first. */
    async unforwarded(before: number, maxTries: number, limit: number): Promise<string[]> {
      const rows: { id: string }[] = await q('operator_mail')
        .select('id')
        .whereNull('forwarded_at')
        .where('received_at', '<', before)
        .where('forward_tries', '<', maxTries)
        .orderBy('received_at')
        .limit(limit);
      return rows.map((r) => r.id);
    },
    /** Counts one forward try; the row's tries after it, or null when it is gone, forwarded or out of tries. */
    async countForwardTry(id: string, maxTries: number): Promise<number | null> {
      const [row]: { forward_tries: number }[] = await q('operator_mail')
        .where({ id })
        .whereNull('forwarded_at')
        .where('forward_tries', '<', maxTries)
        .increment('forward_tries', 1)
        .returning('forward_tries');
      return row ? row.forward_tries : null;
    },
    /** Marks it forwarded; false when another run did first. */
    async markForwarded(id: string, at: number): Promise<boolean> {
      return (await q('operator_mail').where({ id }).whereNull('forwarded_at').update({ forwarded_at: at })) > 0;
    },
    async find(id: string): Promise<(OperatorMail & { raw: Buffer }) | null> {
      const row: Row | undefined = await q('operator_mail')
        .select([...COLUMNS, 'raw'])
        .where({ id })
        .first();
      return row ? { ...fromRow(row), raw: row.raw! } : null;
    },
  };
}
