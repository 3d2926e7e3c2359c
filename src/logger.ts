import { pino, type Logger } from 'pino';

export type { Logger };

const HOLDS_SECRET = /whk_|inb_|^\/u\//;

/** Hook and one-click unsubscribe URLs carry their credential in the path; this hides it wherever a URL is logged. */
export function redactUrl(url: string): string {
  // Hook tokens, inbound mail URL secrets and one-click unsubscribe tokens: `/u/<token>`. Most URLs hold
  // none of them: one test finds that out before three replaces would.
  if (!HOLDS_SECRET.test(url)) return url;
  return url
    .replace(/whk_[A-Za-z0-9]+/g, 'whk_[redacted]')
    .replace(/inb_[A-Za-z0-9]+/g, 'inb_[redacted]')
    .replace(/^\/u\/[^/?#]+/, '/u/[redacted]');
}

const WARN = 40;

/** The most a batch holds before it is written, and the longest a line waits in it. */
export const LOG_BATCH_BYTES = 4096;
export const LOG_BATCH_MS = 200;

/** Every batch still holding lines, written out when the process exits (process.exit, end of loop). */
const live = new Set<{ flush(): void }>();
process.once('exit', () => {
  for (const batch of live) batch.flush();
});

/**
 * A log destination that batches lines and writes each batch synchronously to `fd`. A batch is
 * written when it reaches LOG_BATCH_BYTES, at most LOG_BATCH_MS after its first line, at once for a
 * warn, error or fatal line, and when `logger.flush()` is called (start-up and shutdown lines, so an
 * operator sees them while the process runs). Why batch at all: a write per request log line cost a
 * tenth of a request in profiles. Why write synchronously: an asynchronous write still in flight is
 * lost with the process on kill -9, and it could reorder lines against a synchronous one.
 */
export function batchedDestination(fd = 1): pino.DestinationStream {
  // sonic-boom in sync mode handles short writes and EAGAIN on a non-blocking pipe.
  const out = pino.destination({ dest: fd, sync: true });
  let lines: string[] = [];
  let bytes = 0;
  let timer: NodeJS.Timeout | null = null;
  const batch = {
    flush() {
      if (timer) clearTimeout(timer);
      timer = null;
      if (!lines.length) return;
      const text = lines.join('');
      lines = [];
      bytes = 0;
      live.delete(batch);
      out.write(text);
    },
  };
  const stream = {
    // pino sets lastLevel on a stream that asks for metadata, before each write.
    [pino.symbols.needsMetadataGsym]: true,
    lastLevel: 0,
    write(line: string): void {
      lines.push(line);
      bytes += line.length;
      if (stream.lastLevel >= WARN || bytes >= LOG_BATCH_BYTES) {
        batch.flush();
        return;
      }
      live.add(batch);
      if (!timer) {
        timer = setTimeout(() => batch.flush(), LOG_BATCH_MS);
        timer.unref();
      }
    },
    flush(cb?: (err?: Error) => void) {
      batch.flush();
      cb?.();
    },
  };
  return stream;
}

/**
 * One JSON logger per process; credentials are redacted at every depth we log them. Without a given
 * destination it writes to stdout in short batches (batchedDestination). Call `logger.flush()` after
 * a line an operator waits for (listening, ready, shutting down).
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
    destination ?? (level === 'silent' ? undefined : batchedDestination(1)),
  );
}

const LEVELS = { info: 30, warn: 40, error: 50 } as const;

type Stream = pino.DestinationStream & { lastLevel?: number; [pino.symbols.needsMetadataGsym]?: boolean };

/**
 * A writer of one kind of line whose fields the caller has already written as JSON (`"a":{"b":1},"c":2`):
 * the line comes out framed as pino frames its own (level, time, the logger's bindings, the fields, `msg`)
 * on the logger's destination, and only while the logger's level lets `level` through. For the line written
 * on every request: pino would walk an object, stringify it and pass it by the serializers and the
 * redaction; here the level, bindings and message are built once and the caller's fields are pasted in. So
 * the caller answers for the fields: nothing in them is redacted.
 */
export function prebuiltLine(logger: Logger, level: keyof typeof LEVELS, msg: string): (fields: string) => void {
  const stream = (logger as unknown as Record<symbol, Stream>)[pino.symbols.streamSym]!;
  const value = LEVELS[level];
  const bindings = JSON.stringify(logger.bindings()).slice(1, -1);
  const head = `{"level":${value},"time":`;
  const middle = bindings ? `,${bindings},` : ',';
  const tail = `,"msg":${JSON.stringify(msg)}}\n`;
  const metadata = stream[pino.symbols.needsMetadataGsym] === true;
  return (fields) => {
    if (logger.levelVal > value) return;
    if (metadata) stream.lastLevel = value;
    stream.write(head + Date.now() + middle + fields + tail);
  };
}
