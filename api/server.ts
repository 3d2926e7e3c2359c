import type { Server, ServerResponse } from 'node:http';
import type { Deps } from '../src/deps.js';
import { createApp } from './app.js';
import { BULL_BOARD_PATH } from './bull-board.js';

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
  const server = app.listen(deps.config.port, deps.config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  server.keepAliveTimeout = 65_000;
  // Requests Node refuses before Express sees them (oversized headers, broken HTTP) get JSON too.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const body = JSON.stringify({ error: tooLarge ? 'request headers are too large' : 'request is malformed' });
    socket.end(
      `HTTP/1.1 ${tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\n` +
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
        server.close(() => {
          clearTimeout(timer);
          clearInterval(idle);
          resolve();
        });
      }),
  };
}
