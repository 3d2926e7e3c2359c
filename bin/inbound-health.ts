/**
 * The inbound SMTP listener's health check: `node bin/inbound-health.ts [PORT]` (PORT defaults to
 * INBOUND_SMTP_PORT, else 2525). Exit 0 when the listener on loopback greets with `220` and answers QUIT
 * with `221`, as a sending MTA would see it; exit 1 with one line saying why otherwise (refused, silent
 * past the deadline, or another greeting: a listener that refuses mail greets with `421`/`554`). Node runs
 * this file itself (its own type stripping, no tsx, no imports from the project), so a check costs one
 * bare Node start-up and one short SMTP session.
 */
import { connect } from 'node:net';

const DEADLINE_MS = 2_500;

function unhealthy(why: string): never {
  process.stdout.write(`unhealthy: ${why}\n`);
  process.exit(1);
}

const port = Number(process.argv[2] ?? process.env.INBOUND_SMTP_PORT ?? 2525);
if (!Number.isInteger(port) || port < 1 || port > 65_535)
  unhealthy(`port ${process.argv[2] ?? process.env.INBOUND_SMTP_PORT} is not a TCP port`);

const socket = connect(port, '127.0.0.1');
socket.setEncoding('latin1');
const timer = setTimeout(() => unhealthy(`no SMTP answer on port ${port} within ${DEADLINE_MS} ms`), DEADLINE_MS);
let seen = '';
let greeted = false;
socket.on('error', (err) => unhealthy(`nothing listening on port ${port} (${err.message})`));
socket.on('data', (chunk: string) => {
  seen += chunk;
  // A reply ends with a line whose code is followed by a space ("220 ...", after any "220-..." lines).
  const last = /(?:^|\r\n)(\d{3}) [^\r\n]*\r\n$/.exec(seen);
  if (!last) return;
  seen = '';
  if (!greeted) {
    if (last[1] !== '220') unhealthy(`the listener on port ${port} greets with ${last[1]}, not 220`);
    greeted = true;
    socket.write('QUIT\r\n');
    return;
  }
  clearTimeout(timer);
  socket.end();
  if (last[1] !== '221') unhealthy(`the listener on port ${port} answered QUIT with ${last[1]}`);
  process.stdout.write(`ok: SMTP listener on port ${port} greets and closes\n`);
});
