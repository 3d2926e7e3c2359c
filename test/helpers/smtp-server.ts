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
 * connection without answering (the provider took it; its answer is lost). `slow`: answers after `delayMs`.
 */
export type SmtpMode = { kind: 'accept' } | { kind: 'drop' } | { kind: 'slow'; delayMs: number };

export interface TestSmtp {
  port: number;
  received: ReceivedMail[];
  mode: SmtpMode;
  close(): Promise<void>;
}

/** A real SMTP server (the smtp-server package) on loopback, recording every message it takes. */
export async function startTestSmtp(mode: SmtpMode = { kind: 'accept' }): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const state: TestSmtp = { port: 0, received, mode, close: async () => {} };
  const server: SMTPServer = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          messageId: /^Message-ID:\s*(\S+)/im.exec(raw)?.[1] ?? null,
        });
        const m = state.mode;
        if (m.kind === 'drop') {
          for (const c of server.connections) if (c.id === session.id) c._socket.destroy();
          return;
        }
        if (m.kind === 'slow') setTimeout(() => callback(), m.delayMs);
        else callback();
      });
    },
  });
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

/** A loopback port with nothing listening (the mail service is down). */
export async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
