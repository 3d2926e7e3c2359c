import nodemailer from 'nodemailer';

export interface SmtpAnswer {
  /** True when the server answered 250 to the message. */
  ok: boolean;
  /** The reply code of the answer that ended the transaction (250, 451, 550, 552, …). */
  code: number | null;
  response: string;
}

/**
 * Sends `raw` (bytes as they go on the wire, CRLF lines) to a real SMTP server on loopback with
 * nodemailer's SMTP transport, one connection per message, and reports how the server answered.
 */
export async function smtpSend(
  port: number,
  m: { from: string; to: string[]; raw: Buffer | string },
  /** The client's own address (any 127.x.y.z on Linux loopback: another client for per-address limits). */
  localAddress?: string,
): Promise<SmtpAnswer> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    ...(localAddress ? { localAddress } : {}),
    port,
    secure: false,
    ignoreTLS: true,
    connectionTimeout: 10_000,
    socketTimeout: 30_000,
  });
  try {
    const info = await transport.sendMail({ envelope: { from: m.from, to: m.to }, raw: m.raw });
    return { ok: true, code: 250, response: info.response };
  } catch (err) {
    const e = err as { responseCode?: number; response?: string; message: string };
    return { ok: false, code: e.responseCode ?? null, response: e.response ?? e.message };
  } finally {
    transport.close();
  }
}

/** A small well-formed message, CRLF lines, with `body` as its text. */
export function rawMessage(opts: { from?: string; to?: string; subject?: string; body?: string } = {}): Buffer {
  const lines = [
    `From: ${opts.from ?? 'Jane <jane@acme.test>'}`,
    `To: ${opts.to ?? 'reply+abc@localhost'}`,
    `Subject: ${opts.subject ?? 'Re: hello'}`,
    `Message-ID: <${Math.random().toString(36).slice(2)}@acme.test>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    opts.body ?? 'Thanks, sounds good.',
    '',
  ];
  return Buffer.from(lines.join('\r\n'));
}

/** A hand-driven SMTP session on a raw socket: `say` a command line, `reply` waits for the next full reply. */
export async function smtpDialog(port: number, localAddress?: string) {
  const { connect } = await import('node:net');
  const socket = connect({ port, host: '127.0.0.1', ...(localAddress ? { localAddress } : {}) });
  let ended = false;
  socket.on('close', () => {
    ended = true;
    for (const w of waiting.splice(0)) w();
  });
  let buffered = '';
  const waiting: (() => void)[] = [];
  socket.on('data', (d: Buffer) => {
    buffered += d.toString('latin1');
    for (const w of waiting.splice(0)) w();
  });
  socket.on('error', () => {});
  /** The next whole reply (all its lines: a multi-line reply ends with `NNN ` then text). */
  const reply = (): Promise<string> =>
    new Promise((resolve) => {
      const check = () => {
        const m = /^\d{3} .*\r\n/m.exec(buffered);
        if (!m && ended) return resolve(buffered);
        if (!m) return void waiting.push(check);
        const end = m.index + m[0].length;
        const out = buffered.slice(0, end);
        buffered = buffered.slice(end);
        resolve(out);
      };
      check();
    });
  return {
    reply,
    say: async (line: string) => {
      socket.write(`${line}\r\n`);
      return reply();
    },
    /** Sends a message's bytes (dot-stuffed already) and the final dot, and waits for the answer. */
    data: async (bytes: Buffer) => {
      socket.write(bytes);
      socket.write('\r\n.\r\n');
      return reply();
    },
    close: () => socket.destroy(),
    /** Writes bytes without waiting for an answer (part of a message's DATA). */
    write: (bytes: Buffer | string) => new Promise<void>((resolve) => socket.write(bytes, () => resolve())),
    /** True once the server closed the connection. */
    get closed() {
      return ended;
    },
  };
}
