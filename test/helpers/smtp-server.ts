import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  messageId: string | null;
}

/**
 * `accept`: takes each message and answers 250. `drop`: reads the whole message, then closes the
 * connection without answering (the provider took it; its answer is lost). `slow`: answers after `delayMs`;
 * `jitter`: after a random delay in [minMs, maxMs]. A message counts as received once its terminating
 * dot arrived (a client that dies mid-DATA leaves nothing behind), as with any real server.
 */
export type SmtpMode =
  | { kind: 'accept' }
  | { kind: 'drop' }
  | { kind: 'slow'; delayMs: number }
  | { kind: 'jitter'; minMs: number; maxMs: number }
  /** Answers `451 try again later` to the next `times` recipients (before any message is written), then accepts. */
  | { kind: 'busy'; times: number }
  /** Reads each message whole, then refuses it with `code` (4xx: try later, 5xx: never): it is not taken, nor recorded. */
  | { kind: 'refuse'; code: number };

/**
 * A refusal of one recipient address, whatever the mode: at `rcpt` (answering RCPT TO) or at `data` (after
 * reading the message whole), with `code` and `text` as a relay writes them (`550`, `5.1.1 user unknown`),
 * for the next `times` messages to it (unset: every one).
 */
export interface AddressRefusal {
  at: 'rcpt' | 'data';
  code: number;
  text: string;
  times?: number;
}

export interface TestSmtp {
  port: number;
  received: ReceivedMail[];
  mode: SmtpMode;
  /** Refusals by recipient address (lowercase), checked before the mode. */
  refusals: Map<string, AddressRefusal>;
  /** Emits `accepted` (with the ReceivedMail) the moment the server has answered 250 to a message. */
  events: EventEmitter;
  /** How many messages were taken per key (`key` picks it: recipient, Message-ID, …), in arrival order. */
  countBy(key: (m: ReceivedMail) => string | null): Map<string, number>;
  close(): Promise<void>;
}

/** A real SMTP server (the smtp-server package) on loopback, recording every message it takes. */
export async function startTestSmtp(mode: SmtpMode = { kind: 'accept' }): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const state: TestSmtp = {
    port: 0,
    received,
    mode,
    refusals: new Map(),
    events: new EventEmitter(),
    countBy(key) {
      const counts = new Map<string, number>();
      for (const m of received) {
        const k = key(m);
        if (k !== null) counts.set(k, (counts.get(k) ?? 0) + 1);
      }
      return counts;
    },
    close: async () => {},
  };
  /** The error a refusal of `address` at this stage answers with (spending one of its `times`), or null. */
  const refusalOf = (address: string, at: AddressRefusal['at']) => {
    const r = state.refusals.get(address.toLowerCase());
    if (r?.at !== at || r.times === 0) return null;
    if (r.times !== undefined) r.times--;
    return Object.assign(new Error(r.text), { responseCode: r.code });
  };
  const server: SMTPServer = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      const refused = refusalOf(address.address, 'rcpt');
      if (refused) return callback(refused);
      const m = state.mode;
      if (m.kind === 'busy' && m.times > 0) {
        m.times--;
        callback(Object.assign(new Error('mailbox busy, try again later'), { responseCode: 451 }));
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const refused = refusalOf(session.envelope.rcptTo[0]?.address ?? '', 'data');
        if (refused) return callback(refused);
        const refusal = state.mode;
        if (refusal.kind === 'refuse') {
          callback(Object.assign(new Error(refusal.code >= 500 ? 'message refused' : 'try again later'), { responseCode: refusal.code }));
          return;
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        const mail: ReceivedMail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          messageId: /^Message-ID:\s*(\S+)/im.exec(raw)?.[1] ?? null,
        };
        received.push(mail);
        const m = state.mode;
        if (m.kind === 'drop') {
          for (const c of server.connections) if (c.id === session.id) c._socket.destroy();
          return;
        }
        const accept = () => {
          callback();
          state.events.emit('accepted', mail);
        };
        if (m.kind === 'slow') setTimeout(accept, m.delayMs);
        else if (m.kind === 'jitter') setTimeout(accept, m.minMs + Math.random() * (m.maxMs - m.minMs));
        else accept();
      });
    },
  });
  // A client killed mid-conversation resets its socket; the server just drops that connection.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.server.address() as AddressInfo;
  state.port = address.port;
  state.close = () =>
    new Promise<void>((resolve) => {
      for (const c of server.connections) c._socket.destroy();
      server.close(() => resolve());
    });
  return state;
}

/** The settings that point the service's SMTP transport at a test server. */
export const smtpEnv = (smtp: Pick<TestSmtp, 'port'>) => ({ MAIL_TRANSPORT: 'smtp', SMTP_HOST: '127.0.0.1', SMTP_PORT: String(smtp.port) });

/**
 * The options of a file that runs the whole mail loop in-process (the shared fixture's `options`): the agent drafts,
 * the shipments pool sends to `smtp`, the inbound-mail pool applies what comes back; `env` adds settings.
 */
export const mailLoopOptions = (smtp: Pick<TestSmtp, 'port'>, env: Record<string, string> = {}) => ({
  env: { ...smtpEnv(smtp), AGENT_WAIT_POLL_MS: '100', ...env },
  pools: ['agent-turns', 'shipments', 'inbound-mail'] as ('agent-turns' | 'shipments' | 'inbound-mail')[],
});

/** A loopback port with nothing listening (the mail service is down). */
export async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
