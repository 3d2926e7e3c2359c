import { auditedWrite, type Actor } from '../audit/audit.service.js';
import { WORK_NOUNS } from '../channels/kinds.js';
import type { Config } from '../config.js';
import type { Db, Queryable } from '../db.js';
import { getAccount } from '../accounts/accounts.service.js';
import { approvalModes, setApprovalMode, type ApprovalMode, type KindOfWork } from './approval.service.js';
import { trustLevels } from './trust.service.js';

// The approval settings as a person reads them: each kind of work's mode and where its trust ladder stands,
// said in words. Read from what the ladder (trust.service.ts) and the agent's tools follow, never kept apart.

/** `off`: the ladder sets no deadline for this kind; `climbing`: below the threshold; `trusted`: new cards resolve themselves. */
export type LadderState = 'off' | 'climbing' | 'trusted';

export interface ApprovalSetting {
  kind: KindOfWork;
  mode: ApprovalMode;
  ladder: { state: LadderState; words: string; approvedUnchanged: number; threshold: number };
}

/** "4 hours", "10 minutes", "90 seconds": the ladder's delay as a person reads it. */
export function durationWords(ms: number): string {
  const units: [number, string][] = [
    [24 * 60 * 60 * 1000, 'day'],
    [60 * 60 * 1000, 'hour'],
    [60 * 1000, 'minute'],
    [1000, 'second'],
  ];
  for (const [size, unit] of units) {
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}${ms / size === 1 ? '' : 's'}`;
  }
  return `${Math.round(ms / 1000)} seconds`;
}

function ladderOf(kind: KindOfWork, mode: ApprovalMode, level: number, config: Config): ApprovalSetting['ladder'] {
  const noun = WORK_NOUNS[kind];
  const threshold = config.review.trustThreshold;
  const delay = durationWords(config.review.autoResolveDelayMs);
  const base = { approvedUnchanged: level, threshold };
  if (kind === 'spend') return { ...base, state: 'off', words: 'Spending always waits for a person; the trust ladder never applies.' };
  if (mode === 'ship')
    return {
      ...base,
      state: 'off',
      words: `${capital(noun)} ship without approval, except work a webhook payload prompted, which waits for a person.`,
    };
  if (mode === 'always_ask')
    return { ...base, state: 'off', words: `Every one of the ${noun} waits for a person; the trust ladder is off for them.` };
  if (level >= threshold)
    return {
      ...base,
      state: 'trusted',
      words:
        `${level} ${noun} have been approved unchanged, so new ones resolve themselves ${delay} after they arrive unless ` +
        'someone acts first. A dismissal starts the count again.',
    };
  return {
    ...base,
    state: 'climbing',
    words:
      `${level} of ${threshold} approvals shipped unchanged so far (an edit or a note does not count). At ${threshold}, new ` +
      `${noun} resolve themselves ${delay} after they arrive unless someone acts first; a dismissal starts the count again.`,
  };
}

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Every kind of work's mode and ladder, in KINDS_OF_WORK's order. */
export async function approvalSettingsView(q: Queryable, config: Config, accountId: string): Promise<ApprovalSetting[]> {
  const [modes, levels] = await Promise.all([approvalModes(q, accountId), trustLevels(q, accountId)]);
  return modes.map(({ kind, mode }) => ({ kind, mode, ladder: ladderOf(kind, mode, levels[kind] ?? 0, config) }));
}

/**
 * Sets a kind's mode as `actor` (a dashboard owner, or the operator's `approval set`), audited in the same
 * transaction, and answers the kind as it now is. Spending stays `always_ask` (setApprovalMode's 400).
 */
export async function changeApprovalMode(
  db: Db,
  config: Config,
  actor: Actor,
  accountId: string,
  kind: KindOfWork,
  mode: ApprovalMode,
): Promise<ApprovalSetting> {
  await auditedWrite(db, actor, async (trx) => {
    await getAccount(trx, accountId, true);
    await setApprovalMode(trx, accountId, kind, mode);
    return { result: undefined, targetId: accountId };
  });
  return (await approvalSettingsView(db, config, accountId)).find((s) => s.kind === kind)!;
}
