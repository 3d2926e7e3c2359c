import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProviderMessage {
  id: string;
  key: string;
  body: {
    to: string;
    subject: string;
    text: string;
    messageId?: string;
    replyTo?: string | null;
    inReplyTo?: string | null;
    headers?: Record<string, string>;
    envelopeFrom?: string | null;
  };
}

/**
 * A local HTTP mail API speaking the protocol of src/mail/http.transport.ts, deduplicating on
 * Idempotency-Key. `mode`: `accept`; `drop-after` takes the message then destroys the socket (answer
 * lost); `drop-before` destroys the socket without taking it.
 */
export async function startHttpProvider() {
  const messages: ProviderMessage[] = [];
  /** Every POST's key and body as it arrived, taken or not (a dropped one too): what each try sent. */
  const posts: { key: string; body: ProviderMessage['body'] }[] = [];
  /** `delayMs`: how long a taken message waits for its answer (a worker killed meanwhile loses it). */
  const state = { mode: 'accept' as 'accept' | 'drop-after' | 'drop-before', requests: 0, delayMs: 0 };
  const server: Server = createServer((req, res) => {
    state.requests++;
    const key = String(req.headers['idempotency-key'] ?? '');
    if (req.method === 'GET') {
      const k = decodeURIComponent(req.url?.split('/by-idempotency-key/')[1] ?? '');
      const found = messages.find((m) => m.key === k);
      res.writeHead(found ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(found ? { id: found.id } : { error: 'not found' }));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ProviderMessage['body'];
      posts.push({ key, body });
      if (state.mode === 'drop-before') return req.socket.destroy();
      let msg = messages.find((m) => m.key === key);
      if (!msg) {
        msg = { id: `prov-${messages.length + 1}`, key, body };
        messages.push(msg);
      }
      if (state.mode === 'drop-after') return req.socket.destroy();
      const id = msg.id;
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id }));
      }, state.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    messages,
    posts,
    state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
