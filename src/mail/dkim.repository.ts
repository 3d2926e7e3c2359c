import type { Queryable } from '../db.js';

/** Where a DKIM private key is kept sealed (the reseal verb walks it: src/admin/sealed-columns.ts). */
export const SEALED_DKIM_KEYS = { table: 'dkim_keys', column: 'private_key_sealed', key: ['domain', 'selector'] } as const;

export interface DkimKeyRow {
  domain: string;
  selector: string;
  private_key_sealed: string;
  public_key: string;
  created_at: number;
}

/** DKIM keys (migrations/20261127142900_dkim_keys.ts): the sealed private key is read only to sign. */
export function dkimRepository(q: Queryable) {
  return {
    /** False when the domain already has a key under this selector (nothing is written). */
    async insert(row: DkimKeyRow): Promise<boolean> {
      const inserted = await q('dkim_keys').insert(row).onConflict(['domain', 'selector']).ignore().returning('selector');
      return inserted.length > 0;
    },
    async countFor(domain: string): Promise<number> {
      const [row] = await q('dkim_keys').where({ domain }).count<{ n: string }[]>({ n: '*' });
      return Number(row?.n ?? 0);
    },
    /** Every key of a domain, newest first (the signatures go on in this order). */
    forDomain(domain: string): Promise<DkimKeyRow[]> {
      return q('dkim_keys')
        .where({ domain })
        .orderBy([{ column: 'created_at', order: 'desc' }, 'selector'])
        .select('*');
    },
    /** What may be shown of every key: never the private key. */
    listPublic(): Promise<Array<Pick<DkimKeyRow, 'domain' | 'selector' | 'public_key' | 'created_at'>>> {
      return q('dkim_keys')
        .orderBy(['domain', { column: 'created_at', order: 'desc' }])
        .select('domain', 'selector', 'public_key', 'created_at');
    },
    async remove(domain: string, selector: string): Promise<boolean> {
      return (await q('dkim_keys').where({ domain, selector }).del()) > 0;
    },
  };
}
