import type { AddressInfo } from 'node:net';
import { metrics } from '../metrics/registry.js';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { handOn, type IntakeDeps } from './intake.service.js';
import { failed, inSpan, SpanKind } from '../tracing/spans.js';
import { sessionClocks } from './smtp-clocks.js';
import { clientKey, createClientLimits, networkKey } from './smtp-limits.js';
import { createSessionSlots, SLOT_TEXT } from './smtp-slots.js';
import { storeTaken } from './smtp-store.js';
import { bounceAddress, judgeRecipient, mixesPostmaster, otherAccount, refusal } from './smtp-recipients.js';
import { inboundTlsOptions } from './smtp-tls.js';

export interface InboundSmtp {
  port: number;
  /** Bytes of messages being received now, all sessions together (tests, health). */
  inflightBytes(): number;
  /** Stops taking connections; sessions still open get up to SHUTDOWN_GRACE_MS, then are cut. */
  close(): Promise<void>;
}

/** A session silent this long in the middle of a command or a message is closed (smtp-server's socketTimeout). */
export const SMTP_SOCKET_TIMEOUT_MS = 60_000;
/** Recipients one message may have (RFC 5321 asks for at least 100); one more is answered 452. */
export const MAX_RECIPIENTS = 100;
/** Refused recipients one session may try before it is closed with 421 (a dictionary of guessed tokens). */
export const MAX_REFUSED_RECIPIENTS = 10;

interface Session {
  key: string;
  network: string;
  clocks: ReturnType<typeof sessionClocks>;
  /** A message is being stored: a clock that runs out closes the session once it is answered. */
  storing: boolean;
  closeAfterAnswer: string | null;
  refusedRecipients: number;
  /** The account each recipient taken in this transaction names (null: the bare bounce address). */
  accounts: Map<string, string | null>;
}

/**
 * The inbound MX: takes mail for our live reply, unsubscribe and bounce tokens at INBOUND_MAIL_DOMAIN and
 * for the old bounce address, nothing else, up to INBOUND_MAX_BYTES. A message is stored whole in `inbound_messages`,
 * under the one account its recipients (or, for the bare bounce address alone, its own content) name, before the 250
 * goes out, so nothing answered 250 can be lost; a message naming no account is refused 550 and nothing is kept;
 * when Postgres does not take it the answer is 451 and the sender retries. The parse job is queued after the
 * 250 (a failed enqueue is repaired by the sweep). Per client address: sessions at once, messages a minute, bytes an hour (counted in this
 * process); per network (IPv4 /24, IPv6 /48) sessions at once, and the last slots kept for networks holding none (smtp-slots.ts);
 * a session and a message's DATA each have a lifetime, and DATA a minimum rate (smtp-clocks.ts), none reset by
 * reading; a session that starts no message for INBOUND_SMTP_IDLE_SECONDS is closed; the bytes of
 * messages being received at once, all sessions together, stay under INBOUND_SMTP_INFLIGHT_BYTES (452
 * past it). No AUTH; STARTTLS only with a configured certificate (smtp-tls.ts). Logs ids and sizes, never addresses or contents.
 * `port` 0 (tests) listens on a free port, which the result names.
 */
export async function startInboundSmtp(deps: IntakeDeps, at: { port?: number; host?: string } = {}): Promise<InboundSmtp> {
  const { config, logger } = deps;
  const { domain, maxBytes } = config.inbound;
  const limitsOf = config.inbound.smtp;
  const log = logger.child({ component: 'inbound-smtp' });
  const bounce = bounceAddress(config);
  const postmaster = `postmaster@${domain}`;
  const isPostmaster = (address: string) => address.toLowerCase() === postmaster;
  const limits = createClientLimits(limitsOf);
  const slots = createSessionSlots(limitsOf);
  const sessions = new Map<string, Session>();
  /** Bytes of messages being received now, all sessions together. */
  let inflight = 0;

  const connections = () =>
    (server as unknown as { connections: Set<{ id: string; send(code: number, text: string): void; close(): void }> }).connections;
  const closeSession = (id: string, code: number, text: string) => {
    metrics.publicDoor.inc({ door: 'smtp', outcome: 'closed' });
    for (const c of connections()) {
      if (c.id !== id) continue;
      c.send(code, text);
      c.close();
    }
  };
  /** A clock of the session ran out: closed with 421 now, or once the message being stored is answered. */
  const clockRanOut = (id: string, text: string) => {
    const s = sessions.get(id);
    log.info({ reason: text }, 'inbound smtp session closed by its clock');
    if (s?.storing) s.closeAfterAnswer = text;
    else closeSession(id, 421, text);
  };

  const onData = (stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null, message?: string) => void) => {
    const s = sessions.get(session.id);
    const key = s?.key ?? clientKey(session.remoteAddress);
    s?.clocks.startData();
    limits.countMessage(key);
    const chunks: Buffer[] = [];
    let size = 0;
    let held = 0;
    let refused: Error | null = null;
    const release = () => {
      inflight -= held;
      held = 0;
      chunks.length = 0;
    };
    const answer = (err: Error | null, message?: string) => {
      release();
      s?.clocks.idleFrom();
      callback(err, message);
      if (!s) return;
      s.storing = false;
      if (s.closeAfterAnswer) closeSession(session.id, 421, s.closeAfterAnswer);
    };
    stream.on('data', (chunk: Buffer) => {
      s?.clocks.bytes(chunk.length);
      size += chunk.length;
      if (!limits.addBytes(key, chunk.length) && !refused) {
        refused = refusal(450, '4.7.1 too much mail from your address this hour; try again later');
        log.info({ size }, 'inbound message refused: the client passed its bytes per hour');
      }
      // Past a limit nothing more is kept: the rest is read (SMTP has no way to stop a sender) and dropped.
      if (refused || size > maxBytes) return release();
      // Others' messages hold bytes and this one would pass the budget: it waits for a retry instead.
      if (inflight + chunk.length > limitsOf.inflightBytes && inflight > held) {
        refused = refusal(452, '4.3.1 too much mail being received at once; try again later');
        log.info({ inflight, limit: limitsOf.inflightBytes }, 'inbound message refused: in-flight bytes over the budget');
        return release();
      }
      chunks.push(chunk);
      held += chunk.length;
      inflight += chunk.length;
    });
    // The sender went away before the final dot: nothing is stored and no answer is owed.
    stream.on('error', () => {
      s?.clocks.endData();
      release();
    });
    stream.on('end', () => {
      s?.clocks.endData();
      if (s) s.storing = true;
      if (refused) return answer(refused);
      if (size > maxBytes || stream.sizeExceeded) {
        log.info({ size, limit: maxBytes }, 'inbound message refused: over the size limit');
        return answer(refusal(552, `5.3.4 message exceeds fixed maximum message size ${maxBytes}`));
      }
      const raw = Buffer.concat(chunks, size);
      chunks.length = 0;
      const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
      const rcptTo = session.envelope.rcptTo.map((r) => r.address);
      const accounts = rcptTo.map((r) => sessions.get(session.id)?.accounts.get(r.toLowerCase()) ?? null);
      const client = { clientIp: session.remoteAddress.replace(/^::ffff:/i, ''), helo: session.hostNameAppearsAs || null };
      // Each message starts a trace: its store, then its parse job (which joins it), in one span.
      void inSpan('smtp receive', { kind: SpanKind.SERVER, root: true, attributes: { 'gas.inbound.bytes': size } }, async (span) => {
        const toOperator = rcptTo.some(isPostmaster);
        let id: string;
        try {
          const stored = await storeTaken(deps, { accounts, raw, rcptTo, mailFrom: from || null, ...client }, toOperator);
          if (!stored.ok) {
            log.info(
              { size, code: stored.error.responseCode },
              'inbound message refused: it names no account of ours, or its account is full',
            );
            return answer(stored.error);
          }
          id = stored.id;
        } catch (err) {
          log.error({ size, err: (err as Error).message }, 'inbound message not stored; answered 451');
          answer(refusal(451, '4.3.0 the message could not be stored; try again later'));
          failed(span, err);
          return;
        }
        span.setAttribute('gas.inbound.id', id);
        answer(null, `OK: queued as ${id}`);
        metrics.publicDoor.inc({ door: 'smtp', outcome: 'served' });
        log.info({ inboundId: id, size, toOperator }, 'inbound message stored');
        if (!toOperator) await handOn(deps, id);
      });
    });
  };

  const tls = await inboundTlsOptions(config.inbound.tls);
  const server = new SMTPServer({
    logger: false,
    size: maxBytes,
    authOptional: true,
    ...tls,
    disableReverseLookup: true,
    // Our own count (onConnect) answers past maxClients with its 421; smtp-server's is a backstop with room for
    // the refused sessions still being closed, so it never answers a newcomer before ours does.
    maxClients: limitsOf.maxClients * 2,
    maxRecipients: MAX_RECIPIENTS,
    socketTimeout: SMTP_SOCKET_TIMEOUT_MS,
    closeTimeout: config.shutdownGraceMs,
    onConnect(session, callback) {
      const key = clientKey(session.remoteAddress);
      const network = networkKey(session.remoteAddress);
      const slot = slots.refusal(network);
      if (slot || !limits.openSession(key)) {
        log.info({ refused: slot ?? 'address' }, 'inbound smtp session refused: no slot for its address or network');
        return callback(refusal(421, SLOT_TEXT[slot ?? 'address']));
      }
      slots.take(network);
      const clocks = sessionClocks(limitsOf, (text) => clockRanOut(session.id, text));
      sessions.set(session.id, { key, network, clocks, storing: false, closeAfterAnswer: null, refusedRecipients: 0, accounts: new Map() });
      clocks.idleFrom();
      callback();
    },
    onClose(session) {
      const s = sessions.get(session.id);
      if (!s) return;
      s.clocks.stop();
      sessions.delete(session.id);
      limits.closeSession(s.key);
      slots.release(s.network);
    },
    onMailFrom(address, session, callback) {
      sessions.get(session.id)?.accounts.clear();
      const key = sessions.get(session.id)?.key ?? clientKey(session.remoteAddress);
      const declared = address.args ? Number(address.args.SIZE ?? 0) || 0 : 0;
      const may = limits.mayStart(key, declared);
      if (may === 'messages') return callback(refusal(450, '4.7.1 too many messages from your address; try again later'));
      if (may === 'bytes') return callback(refusal(450, '4.7.1 too much mail from your address this hour; try again later'));
      if (declared && inflight > 0 && inflight + declared > limitsOf.inflightBytes) {
        return callback(refusal(452, '4.3.1 too much mail being received at once; try again later'));
      }
      callback();
    },
    onRcptTo(address, session, callback) {
      const s = sessions.get(session.id);
      judgeRecipient(deps, address.address, bounce).then((v) => {
        if (v.ok) {
          const taken = session.envelope.rcptTo.map((r) => s?.accounts.get(r.address.toLowerCase()) ?? null);
          const rcpts = session.envelope.rcptTo;
          const other =
            mixesPostmaster(
              rcpts.length,
              rcpts.some((r) => isPostmaster(r.address)),
              !!v.postmaster,
            ) ?? otherAccount(taken, v.accountId);
          if (other) return callback(other);
          s?.accounts.set(address.address.toLowerCase(), v.accountId);
          return callback();
        }
        if (v.counts && s) {
          limits.countMessage(s.key);
          if (++s.refusedRecipients > MAX_REFUSED_RECIPIENTS) {
            callback(v.error);
            return closeSession(session.id, 421, '4.7.0 too many unknown recipients, closing');
          }
        }
        callback(v.error);
      }, callback);
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
    inflightBytes: () => inflight,
    close: () =>
      new Promise<void>((resolve) =>
        server.close(() => {
          for (const s of sessions.values()) s.clocks.stop();
          resolve();
        }),
      ),
  };
}
