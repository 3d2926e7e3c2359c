import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** One sealing key given from outside the database: its id (kept in every value it seals) and its 32 bytes. */
export interface SealingKey {
  id: string;
  key: Buffer;
}

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const KEY_BYTES = 32;
const ENTRY_RULE = 'id:key entries (id: 1 to 32 letters, digits, _ or -; key: 32 bytes in base64, as `openssl rand -base64 32` prints)';

/** The keys of `id:base64` entries, in the order given (the last is the newest); a sentence naming the rule otherwise. */
export function parseSealingKeys(entries: string[]): SealingKey[] | string {
  const keys: SealingKey[] = [];
  for (const entry of entries) {
    const colon = entry.indexOf(':');
    const id = entry.slice(0, colon).trim();
    const encoded = entry.slice(colon + 1).trim();
    const key = Buffer.from(encoded, encoded.includes('-') || encoded.includes('_') ? 'base64url' : 'base64');
    if (colon < 0 || !KEY_ID.test(id) || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded) || key.length !== KEY_BYTES)
      return `must be ${ENTRY_RULE}`;
    if (keys.some((k) => k.id === id)) return `names the key id ${id} twice`;
    keys.push({ id, key });
  }
  return keys.length ? keys : `must hold at least one key: ${ENTRY_RULE}`;
}

const keysFrom = (entries: string[], ctx: z.RefinementCtx): SealingKey[] => {
  const parsed = parseSealingKeys(entries);
  if (typeof parsed === 'string') {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: parsed });
    return z.NEVER;
  }
  return parsed;
};

/**
 * Where provider keys and DKIM private keys are sealed from: keys given from outside the database.
 * SEALING_KEYS holds `id:key` entries separated by commas; SEALING_KEYS_FILE names a file holding one entry
 * a line (blank lines and `#` comments ignored), read once at start. The last entry seals; every one opens.
 */
export const sealingEnv = {
  SEALING_KEYS: z
    .string()
    .optional()
    .transform((v, ctx) => (v === undefined ? undefined : keysFrom(v.split(','), ctx))),
  SEALING_KEYS_FILE: z
    .string()
    .min(1)
    .optional()
    .transform((path, ctx) => {
      if (path === undefined) return undefined;
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (err) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})` });
        return z.NEVER;
      }
      const lines = text
        .split(/\r?\n/)
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith('#'));
      return keysFrom(lines, ctx);
    }),
} satisfies z.ZodRawShape;

export interface SealingConfig {
  /** The outside keys, oldest first: the last one seals, every one opens. Empty: only the in-database key. */
  keys: SealingKey[];
  /** Whether the key kept in the database may seal new values (never in production). */
  databaseKeySeals: boolean;
}

export function sealingConfig(env: z.output<z.ZodObject<typeof sealingEnv>> & { NODE_ENV: string }): SealingConfig {
  return { keys: env.SEALING_KEYS ?? env.SEALING_KEYS_FILE ?? [], databaseKeySeals: env.NODE_ENV !== 'production' };
}

/** Both settings at once is a mistake (which one holds the newest key?): a sentence naming them, or null. */
export function sealingSettingsProblem(env: { SEALING_KEYS?: unknown; SEALING_KEYS_FILE?: unknown }): string | null {
  return env.SEALING_KEYS !== undefined && env.SEALING_KEYS_FILE !== undefined ? 'set SEALING_KEYS or SEALING_KEYS_FILE, not both' : null;
}

/**
 * Why this process must not start, or null: in production the provider keys and DKIM private keys must be
 * sealed under a key that a copy of the database does not hold. Development and test go on with the
 * database's key (start-up warns).
 */
export function sealingProblem(config: { env: string; sealing: SealingConfig }): string | null {
  if (config.env !== 'production' || config.sealing.keys.length) return null;
  return (
    'NODE_ENV=production needs SEALING_KEYS or SEALING_KEYS_FILE: provider keys and DKIM private keys must not be ' +
    'sealed under the key kept in the same database (docs/configuration.md, "Sealing keys")'
  );
}
