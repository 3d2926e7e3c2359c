import type { z } from 'zod';
import { BadRequest, Rejected } from '../../src/errors.js';
import { REFUSAL } from '../schemas.js';

type Issue = z.core.$ZodIssue & { input?: unknown };

const article: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

const isDefaultMessage = (m: string) => /^(Invalid|Too (small|big)|Unrecognized key|Expected)/.test(m);

/** One issue → one sentence that names the field and the rule (`limit must be an integer from 1 to 100`). */
export function sentence(issue: Issue, where: 'body' | 'query' | 'params'): string {
  const path = issue.path.map(String).join('.');
  const field = path || (where === 'body' ? 'body' : where);
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.join(', ');
    return `${path ? `${path} has` : `${where} has`} unknown field${issue.keys.length > 1 ? 's' : ''} ${keys}`;
  }
  if (!isDefaultMessage(issue.message)) return `${field} ${issue.message}`;
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return path ? `${field} is required` : `${where} is required and must be JSON`;
      return `${field} must be ${article[issue.expected] ?? issue.expected}`;
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'string') return min === 1 ? `${field} must not be empty` : `${field} must be at least ${min} characters`;
      if (issue.origin === 'array') return `${field} must have at least ${min} item${min === 1 ? '' : 's'}`;
      return `${field} must be at least ${min}`;
    }
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'string') return `${field} must be at most ${max} characters`;
      if (issue.origin === 'array') return `${field} must have at most ${max} items`;
      return `${field} must be at most ${max}`;
    }
    case 'invalid_value':
      return `${field} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_format':
      return `${field} is not in the expected format`;
    default:
      return `${field} is not valid`;
  }
}

/** Parses one part of a request; the first problem becomes a 400 with its sentence (or a 409, see REFUSAL). */
export function parsePart<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query' | 'params'): z.output<S> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const issue = result.error.issues[0] as Issue | undefined;
  if (!issue) throw new BadRequest(`${where} is not valid`);
  if (issue.code === 'custom' && issue.params?.status === REFUSAL.status) throw new Rejected(sentence(issue, where));
  throw new BadRequest(sentence(issue, where));
}
