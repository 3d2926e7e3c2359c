import { pino, type Logger } from 'pino';

export type { Logger };

/** Hook URLs carry their credential in the path; this hides it wherever a URL is logged. */
export function redactUrl(url: string): string {
  return url.replace(/whk_[A-Za-z0-9]+/g, 'whk_[redacted]');
}

/**
 * One JSON logger per process; credentials are redacted at every depth we log them. Without a given
 * destination it writes to stdout through a buffer (pino's asynchronous mode): synchronous writes
 * cost a tenth of a request in profiles. pino flushes
 * the buffer synchronously on exit.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'growth-agent' },
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'headers.authorization',
          'authorization',
          'token',
          '*.token',
          'url',
          '*.url',
        ],
        censor: (value: unknown, path: string[]) =>
          path[path.length - 1] === 'url' && typeof value === 'string' ? redactUrl(value) : '[redacted]',
      },
    },
    destination ?? (level === 'silent' ? undefined : pino.destination({ dest: 1, sync: false, minLength: 4096 })),
  );
}

