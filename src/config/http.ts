import type { z } from 'zod';
import { int } from '../env-rules.js';

/** How long the API's HTTP server lets a client hold a connection (docs/public-doors.md, "Connections"). */
export const httpEnv = {
  HTTP_HEADERS_TIMEOUT_MS: int(10_000, 100),
  HTTP_REQUEST_TIMEOUT_MS: int(120_000, 100),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: int(65_000, 100),
} satisfies z.ZodRawShape;

export function httpConfig(env: z.output<z.ZodObject<typeof httpEnv>>) {
  const headersTimeoutMs = env.HTTP_HEADERS_TIMEOUT_MS;
  return {
    /** From a connection's start (or a kept-alive connection's next request) to the request's last header; then 408, closed. */
    headersTimeoutMs,
    /** From a request's start to its last body byte; then 408 and the connection closed. At least the headers' limit. */
    requestTimeoutMs: Math.max(env.HTTP_REQUEST_TIMEOUT_MS, headersTimeoutMs),
    /** How long a kept-alive connection may sit idle between requests before it is closed. */
    keepAliveTimeoutMs: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    /** How often the server looks for connections past those limits: a limit is enforced within this much of it. */
    checkIntervalMs: Math.min(1_000, Math.max(50, Math.floor(headersTimeoutMs / 4))),
  };
}
