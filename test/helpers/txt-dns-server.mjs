// A DNS server that answers TXT questions from a JSON file (`{ "name": "value" }`) on 127.0.0.1:53 over
// UDP, NXDOMAIN for anything else; run inside a network namespace of its own (test/helpers/opendkim.ts),
// so port 53 and /etc/resolv.conf are the namespace's, not the machine's. Prints `ready` once listening.
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';

const records = JSON.parse(readFileSync(process.argv[2], 'utf8'));

/** The question's name and where the question ends (after QTYPE and QCLASS). */
function questionEnd(msg) {
  const labels = [];
  let i = 12;
  while (msg[i] > 0) {
    labels.push(msg.subarray(i + 1, i + 1 + msg[i]).toString('latin1'));
    i += msg[i] + 1;
  }
  return { name: labels.join('.').toLowerCase(), end: i + 5 };
}

const server = createSocket('udp4');
server.on('message', (msg, from) => {
  const { name, end } = questionEnd(msg);
  const qtype = msg.readUInt16BE(end - 4);
  const value = qtype === 16 ? records[name] : undefined;
  const header = Buffer.alloc(12);
  header.writeUInt16BE(msg.readUInt16BE(0), 0);
  header.writeUInt16BE(value === undefined ? 0x8583 : 0x8580, 2); // QR AA RD RA; NXDOMAIN when unknown
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(value === undefined ? 0 : 1, 6);
  const parts = [header, msg.subarray(12, end)];
  if (value !== undefined) {
    const strings = (value.match(/.{1,255}/g) ?? []).map((s) => Buffer.concat([Buffer.from([s.length]), Buffer.from(s, 'latin1')]));
    const rdata = Buffer.concat(strings);
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0);
    rr.writeUInt16BE(16, 2);
    rr.writeUInt16BE(1, 4);
    rr.writeUInt32BE(60, 6);
    rr.writeUInt16BE(rdata.length, 10);
    parts.push(rr, rdata);
  }
  server.send(Buffer.concat(parts), from.port, from.address);
});
server.bind(53, '127.0.0.1', () => process.stdout.write('ready\n'));
