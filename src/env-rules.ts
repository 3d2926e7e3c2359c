import { z } from 'zod';

/** Whole-number environment variable with a default, refused when it is not a positive integer. */
export const int = (fallback: number, min = 1) =>
  z
    .string()
    .regex(/^\d+$/, `must be a whole number (at least ${min})`)
    .transform(Number)
    .refine((n) => n >= min, `must be at least ${min}`)
    .optional()
    .transform((n) => n ?? fallback);

const hasScheme = (schemes: string[]) => (s: string) => {
  try {
    return schemes.includes(new URL(s).protocol);
  } catch {
    return false;
  }
};
const schemeMessage = (schemes: string[]) => `must be a URL starting with ${schemes.map((s) => `${s}//`).join(' or ')}`;

export const urlWithScheme = (schemes: string[], fallback: string) =>
  z
    .string()
    .optional()
    .transform((s) => s ?? fallback)
    .refine(hasScheme(schemes), schemeMessage(schemes));

/** A URL with one of the schemes, or undefined when unset. */
export const optionalUrlWithScheme = (schemes: string[]) => z.string().refine(hasScheme(schemes), schemeMessage(schemes)).optional();

const HOST_PORT = /^(rediss:\/\/)?([A-Za-z0-9.-]+):(\d{1,5})$/;

/**
 * `host:port,host:port,…` (REDIS_CLUSTER_NODES): the nodes a Redis Cluster client starts from; written
 * `rediss://host:port` (every one of them), the nodes are reached over TLS. Unset or empty: null (one
 * Redis at REDIS_URL).
 */
export const hostPortList = () =>
  z
    .string()
    .optional()
    .transform((s) => s?.split(',').map((n) => HOST_PORT.exec(n.trim())) ?? null)
    .refine((list) => list === null || list.every((m) => m !== null && Number(m[3]) > 0 && Number(m[3]) <= 65_535), {
      message: 'must be a comma-separated list of host:port such as 10.0.0.1:7000,10.0.0.2:7000 (rediss://host:port for TLS)',
      abort: true,
    })
    .refine(
      (list) => list === null || list.every((m) => Boolean(m![1]) === Boolean(list[0]![1])),
      'must use rediss:// on every node or on none',
    )
    .transform((list) => list?.map((m) => ({ host: m![2]!, port: Number(m![3]), ...(m![1] ? { tls: true } : {}) })) ?? null);

/** REDIS_CLUSTER_PASSWORD and REDIS_CLUSTER_USERNAME belong to a cluster, and a user needs a password: the problem, or null. */
export function clusterAuthProblem(env: {
  REDIS_CLUSTER_NODES: unknown;
  REDIS_CLUSTER_USERNAME?: string;
  REDIS_CLUSTER_PASSWORD?: string;
}) {
  const { REDIS_CLUSTER_NODES: nodes, REDIS_CLUSTER_USERNAME: user, REDIS_CLUSTER_PASSWORD: password } = env;
  if (!nodes && (user || password)) return 'REDIS_CLUSTER_PASSWORD and REDIS_CLUSTER_USERNAME are used only with REDIS_CLUSTER_NODES';
  if (user && !password) return 'REDIS_CLUSTER_USERNAME needs REDIS_CLUSTER_PASSWORD';
  return null;
}

/** Whole-number environment variable without a default (undefined when unset), refused when below `min`. */
export const optionalInt = (min = 1) =>
  z
    .string()
    .regex(/^\d+$/, `must be a whole number (at least ${min})`)
    .transform(Number)
    .refine((n) => n >= min, `must be at least ${min}`)
    .optional();
