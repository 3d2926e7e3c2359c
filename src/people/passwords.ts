import { type Algorithm, hash, verify } from '@node-rs/argon2';
import { BadRequest } from '../errors.js';

/** argon2id's cost: memory in KiB and passes, with one lane (docs/dashboard.md, "Passwords"). */
export interface PasswordCost {
  memoryKib: number;
  timeCost: number;
}

/** `Algorithm.Argon2id`: the package's enum is a const enum, which this project's module syntax cannot read. */
const ARGON2ID = 2 as Algorithm;

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 256;

/** The password rule, one sentence naming the field (NIST 800-63B: length, no composition rules). */
export function checkPassword(password: string, field = 'password'): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX)
    throw new BadRequest(`${field} must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
}

/** An argon2id hash in the PHC string form (`$argon2id$v=19$m=…,t=…,p=1$salt$hash`): its cost travels with it. */
export function hashPassword(cost: PasswordCost, password: string): Promise<string> {
  return hash(password, { algorithm: ARGON2ID, memoryCost: cost.memoryKib, timeCost: cost.timeCost, parallelism: 1 });
}

/** Whether `password` is the one `stored` was made from (a malformed hash is a no). */
export async function passwordMatches(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

const dummies = new Map<string, Promise<string>>();

/**
 * Spends the time a real check costs, for an address no person holds: a hash of the same cost made once
 * per process and checked like any other, so the answer takes as long as a wrong password's.
 */
export async function spendPasswordCheck(cost: PasswordCost, password: string): Promise<void> {
  const key = `${cost.memoryKib}:${cost.timeCost}`;
  let dummy = dummies.get(key);
  if (!dummy) {
    dummy = hashPassword(cost, 'no person holds this address');
    dummies.set(key, dummy);
  }
  await passwordMatches(await dummy, password);
}
