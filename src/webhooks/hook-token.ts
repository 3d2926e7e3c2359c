import { randomBase62 } from '../ids.js';
import { hashToken } from '../tokens/token-format.js';
import { HOOK_PATH, HOOK_TOKEN_PREFIX } from './webhooks.types.js';

/** 40 base62 characters: about 238 bits from a CSPRNG. */
const RANDOM_LENGTH = 40;

/** A new hook token, `whk_<random base62>`; shown once inside the URL, never stored. */
export function generateHookToken(): string {
  return `${HOOK_TOKEN_PREFIX}${randomBase62(RANDOM_LENGTH)}`;
}

/**
 * What is stored and looked up: the SHA-256 of whatever stands in the path. Every token is hashed the
 * same way whatever it looks like (prefix, length), so refusing one costs what refusing any other does.
 */
export const hashHookToken = hashToken;

export function hookUrl(baseUrl: string, token: string): string {
  return `${baseUrl}${HOOK_PATH}/${token}`;
}
