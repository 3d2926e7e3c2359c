import { createSocket, type RemoteInfo } from 'node:dgram';

/**
 * A small authoritative DNS server on loopback (UDP) serving TXT and A records from a map: the stand-in
 * for the DNS a sender check asks (DKIM keys, SPF and DMARC records). A name it does not know is NXDOMAIN;
 * a known name without records of the asked type is an empty answer. `silent` stops it answering at all
 * (a DNS outage: the asker times out).
 */
export interface DnsStandIn {
  /** `127.0.0.1:<port>`, for INBOUND_AUTH_DNS_SERVERS. */
  address: string;
  txt: Map<string, string[]>;
  a: Map<string, string[]>;
  silent: boolean;
  /** Queries received (name and type), newest last. */
  queries: { name: string; type: number }[];
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_TXT = 16;

function readName(msg: Buffer, at: number): { name: string; end: number } {
  const labels: string[] = [];
  let i = at;
  while (msg[i]! > 0) {
    labels.push(msg.subarray(i + 1, i + 1 + msg[i]!).toString('latin1'));
    i += 1 + msg[i]!;
  }
  return { name: labels.join('.').toLowerCase(), end: i + 1 };
}

/** TXT rdata: the value cut into character-strings of at most 255 bytes. */
function txtData(value: string): Buffer {
  const bytes = Buffer.from(value, 'latin1');
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length || i === 0; i += 255) {
    const chunk = bytes.subarray(i, i + 255);
    parts.push(Buffer.from([chunk.length]), chunk);
  }
  return Buffer.concat(parts);
}

function answer(rr: Buffer, type: number): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
  head.writeUInt16BE(type, 2);
  head.writeUInt16BE(1, 4); // IN
  head.writeUInt32BE(60, 6);
  head.writeUInt16BE(rr.length, 10);
  return Buffer.concat([head, rr]);
}

export async function startDnsStandIn(): Promise<DnsStandIn> {
  const socket = createSocket('udp4');
  const server: DnsStandIn = {
    address: '',
    txt: new Map(),
    a: new Map(),
    silent: false,
    queries: [],
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
  socket.on('message', (msg: Buffer, from: RemoteInfo) => {
    if (msg.length < 12 || msg.readUInt16BE(4) !== 1) return;
    const { name, end } = readName(msg, 12);
    const type = msg.readUInt16BE(end);
    server.queries.push({ name, type });
    if (server.silent) return;
    const question = msg.subarray(12, end + 4);
    const known = server.txt.has(name) || server.a.has(name);
    const rrs =
      type === TYPE_TXT
        ? (server.txt.get(name) ?? []).map((v) => answer(txtData(v), TYPE_TXT))
        : type === TYPE_A
          ? (server.a.get(name) ?? []).map((ip) => answer(Buffer.from(ip.split('.').map(Number)), TYPE_A))
          : [];
    const head = Buffer.alloc(12);
    head.writeUInt16BE(msg.readUInt16BE(0), 0);
    // QR, AA, RD as asked; RCODE 3 (NXDOMAIN) for a name it does not know.
    head.writeUInt16BE(0x8400 | (msg.readUInt16BE(2) & 0x0100) | (known ? 0 : 3), 2);
    head.writeUInt16BE(1, 4);
    head.writeUInt16BE(rrs.length, 6);
    socket.send(Buffer.concat([head, question, ...rrs]), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  server.address = `127.0.0.1:${socket.address().port}`;
  return server;
}
