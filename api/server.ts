import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Deps } from '../src/deps.js';
import { closeLiveHub } from '../src/review/live-stream.js';
import { createApp } from './app.js';
import { BULL_BOARD_PATH } from './bull-board.js';
import { deferContinue } from './raw-body.js';

/** The routes that read their body raw (api/raw-body.ts): they answer `100 Continue` only once they read it. */
const RAW_BODY_PREFIXES = ['/api/mail/inbound/', '/api/webhook/hook/'];

/** A refusal Node makes before Express sees the request, as the spec's JSON error. */
function clientRefusal(code: string | undefined): { status: string; error: string } {
  if (code === 'HPE_HEADER_OVERFLOW') return { status: '431 Request Header Fields Too Large', error: 'request headers are too large' };
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: '408 Request Timeout', error: 'request was not sent in time' };
  return { status: '400 Bad Request', error: 'request is malformed' };
}

export interface ApiServer {
  server: Server;
  port: number;
  /** Stops taking connections, lets in-flight requests finish (up to the grace period), then resolves. */
  close(): Promise<void>;
}

export async function startApi(deps: Deps): Promise<ApiServer> {
  await deps.ready();
  // Made (or read) at start, so the deployment's first process creates it and a broken store shows now.
  await deps.cursorSecret();
  const app = createApp(deps);
  // A client holds a connection only as long as these allow (docs/public-doors.md, "Connections"): its
  // headers within HTTP_HEADERS_TIMEOUT_MS, its whole request within HTTP_REQUEST_TIMEOUT_MS, idle
  // between requests within HTTP_KEEP_ALIVE_TIMEOUT_MS; checked every checkIntervalMs.
  const limits = deps.config.http;
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    },
    app,
  );
  // `Expect: 100-continue`: a route that reads its body raw sends `100 Continue` only when it starts
  // reading, so a refusal before that (unknown secret, storage full, over the minute) goes before any
  // body is sent; everything else is told to continue at once, as Node would.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').toLowerCase();
    if (RAW_BODY_PREFIXES.some((p) => path.startsWith(p))) deferContinue(req);
    else res.writeContinue();
    server.emit('request', req, res);
  });
  server.listen(deps.config.port, deps.config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // Requests Node refuses before Express sees them (oversized headers, broken HTTP, too slow) get JSON too.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const refusal = clientRefusal(err.code);
    const body = JSON.stringify({ error: refusal.error });
    socket.end(
      `HTTP/1.1 ${refusal.status}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nCache-Control: no-store\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : deps.config.port;
  deps.logger.info({ port, baseUrl: deps.config.baseUrl }, 'api listening');
  if (deps.config.admin)
    deps.logger.info({ path: BULL_BOARD_PATH, readOnly: deps.config.admin.readOnly }, 'bull board mounted (basic auth)');
  else deps.logger.warn('bull board disabled: set ADMIN_USER and ADMIN_PASSWORD to mount it at /admin/queues');
  deps.logger.flush();
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), deps.config.shutdownGraceMs);
        // A keep-alive connection whose request finishes during the close would hold it open until the
        // grace ran out: requests from now on are answered with `Connection: close`, and connections
        // left idle are closed as they become so.
        server.on('request', (_req, res: ServerResponse) => res.setHeader('Connection', 'close'));
        const idle = setInterval(() => server.closeIdleConnections(), 100);
        // Live streams never finish by themselves: they end now, and their readers reconnect to another process.
        void closeLiveHub(deps.redis);
        server.close(() => {
          clearTimeout(timer);
          clearInterval(idle);
          resolve();
        });
      }),
  };
}
