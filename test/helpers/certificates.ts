import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A self-signed certificate for `localhost` and 127.0.0.1 made by openssl in a fresh temporary directory (a
 * relay's or the inbound listener's STARTTLS certificate, which Node does not trust); `remove()` deletes it.
 */
export function selfSignedCertificate(): { certFile: string; keyFile: string; cert: Buffer; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'gas-tls-'));
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  const made = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=localhost'].concat([
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ]),
    { encoding: 'utf8' },
  );
  if (made.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`openssl could not make a certificate: ${made.stderr}`);
  }
  return { certFile, keyFile, cert: readFileSync(certFile), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
