/**
 * The agent's door to filing work (review's src/review/file-work.service.ts): the same work, told how review reads the
 * agent's turns (`turnReading`) to judge whether outside data led to it.
 */
import type { Queryable } from '../../db.js';
import { type Filed, fileWork as fileReviewWork, type WorkToFile } from '../../review/file-work.service.js';
import { turnReading } from '../core/doors.js';

/** Files the agent's work as a review card (review's `fileWork`, reading the agent's turns). */
export function fileWork(q: Queryable, w: Omit<WorkToFile, 'readTurn'>, approval?: boolean): Promise<Filed> {
  return fileReviewWork(q, { ...w, readTurn: turnReading }, approval);
}
