import { SEALED_PROVIDER_KEYS } from '../channels/connections.js';
import { SEALED_DKIM_KEYS } from '../mail/dkim.repository.js';
import { threadsRepository } from '../mail/threads.repository.js';
import type { Queryable } from '../db.js';
import type { PlainTokenStores } from '../secrets/plain-tokens.service.js';
import type { SealedColumn } from '../secrets/sealed-columns.repository.js';
import { SEALED_TOTP_SECRETS } from '../people/people.repository.js';
import { fencesRepository, SEALED_FENCE_TOKENS } from '../shipping/fence.repository.js';

/**
 * Every place a sealed value is kept, each declared by its table's owner (provider keys, DKIM private keys, a
 * fence's reply token, a person's TOTP secret): the `secrets reseal` verb walks them all.
 */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  SEALED_PROVIDER_KEYS,
  SEALED_DKIM_KEYS,
  SEALED_FENCE_TOKENS,
  ...SEALED_TOTP_SECRETS,
];

/** Where the previous version kept reply tokens in clear (`secrets forget-reply-tokens`): mail's threads and the shipping path's fences. */
export function plainTokenStores(q: Queryable): PlainTokenStores {
  const threads = threadsRepository(q);
  const fences = fencesRepository(q);
  return {
    countPlainThreads: () => threads.countPlainTokens(),
    clearThreads: (limit) => threads.clearPlainTokens(limit),
    plainFences: (limit) => fences.plainTokenFences(limit),
    sealFence: (f, sealed) => fences.sealFenceToken(f, sealed),
  };
}
