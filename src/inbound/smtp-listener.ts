import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { handOn, storeInbound, type IntakeDeps } from './intake.service.js';

export interface InboundSmtp {
  port: number;
  /** Stops taking connections; sessions still open get up to SHUTDOWN_GRACE_MS, then are cut. */
  close(): Promise<void>;
}

/** Sessions open at once; one more is answered 421 and closed. */
export const MAX_SMTP_CLIENTS = 100;
/** A session silent this long is closed (a stalled sender retries later, as SMTP intends). */
export const SMTP_SOCKET_TIMEOUT_MS = 60_000;

/** An SMTP refusal: `code` is the reply smtp-server sends (4xx: try later, 5xx: never). */
function refusal(code: number, message: string): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode: code });
}

/** The domain of an address, lowercased ('' when there is none). */
function domainOf(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0 ? '' : address.slice(at + 1).toLowerCase();
}

/**
 * The inbound MX (issue 16): takes mail for any local part at INBOUND_MAIL_DOMAIN and nothing else,
 * up to INBOUND_MAX_BYTES. A message is stored whole (its bytes as received) in `inbound_messages`
 * before the 250 goes out, so nothing answered 250 can be lost; when Postgres does not take it the
 * answer is 451 and the sender keeps it and retries. The parse job is queued after the 250 (a failed
 * enqueue is repaired by the sweep). No AUTH (an MX takes mail from anyone), no STARTTLS (no
 * certificate is configured; docs/decisions.md). Logs ids and sizes, never addresses or contents.
 * `port` 0 (tests) listens on a free port, which the result names.
 */
export async function startInboundSmtp(deps: IntakeDeps, at: { port?: number; host?: string } = {}): Promise<InboundSmtp> {
  const { config, logger } = deps;
  const { domain, maxBytes } = config.inbound;
  const log = logger.child({ component: 'inbound-smtp' });

  const onData = (stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null, message?: string) => void) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Past the limit nothing more is kept: the rest is read (SMTP has no way to stop a sender) and dropped.
      if (size > maxBytes) chunks.length = 0;
      else chunks.push(chunk);
    });
    // The sender went away before the final dot: nothing is stored and no answer is owed.
    stream.on('error', () => {});
    stream.on('end', () => {
      if (size > maxBytes || stream.sizeExceeded) {
        log.info({ size, limit: maxBytes }, 'inbound message refused: over the size limit');
        callback(refusal(552, `5.3.4 message exceeds fixed maximum message size ${maxBytes}`));
        return;
      }
      const raw = Buffer.concat(chunks, size);
      const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
      const rcptTo = session.envelope.rcptTo.map((r) => r.address);
      storeInbound(deps, { accountId: null, via: 'smtp', mailFrom: from || null, rcptTo, raw }).then(
        (id) => {
          callback(null, `OK: queued as ${id}`);
          log.info({ inboundId: id, size }, 'inbound message stored');
          void handOn(deps, id);
        },
        (err: unknown) => {
          log.error({ size, err: (err as Error).message }, 'inbound message not stored; answered 451');
          callback(refusal(451, '4.3.0 the message could not be stored; try again later'));
        },
      );
    });
  };

  const server = new SMTPServer({
    logger: false,
    size: maxBytes,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    hideSTARTTLS: true,
    disableReverseLookup: true,
    maxClients: MAX_SMTP_CLIENTS,
    socketTimeout: SMTP_SOCKET_TIMEOUT_MS,
    closeTimeout: config.shutdownGraceMs,
    onRcptTo(address, _session, callback) {
      if (domainOf(address.address) === domain) return callback();
      callback(refusal(550, `5.7.1 relay not permitted: this server takes mail for @${domain} only`));
    },
    onData,
  });
  server.on('error', (err) => log.warn({ err: err.message }, 'inbound smtp session error'));

  const port = at.port ?? config.inbound.smtpPort;
  const host = at.host ?? config.inbound.smtpHost;
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.server.once('error', onError);
    server.listen(port, host, () => {
      server.server.off('error', onError);
      resolve();
    });
  });
  const bound = (server.server.address() as AddressInfo).port;
  log.info({ port: bound, domain, maxBytes }, 'inbound smtp listening');
  return {
    port: bound,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
