import { readFile } from 'node:fs/promises';
import type { Config } from '../config.js';

/** The smtp-server options for STARTTLS: offered with the configured certificate, else not at all. */
export type InboundTlsOptions =
  | { disabledCommands: string[]; hideSTARTTLS: false; key: Buffer; cert: Buffer }
  | { disabledCommands: string[]; hideSTARTTLS: true };

async function pem(file: string, name: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (err) {
    throw new Error(`${name} (${file}) cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/**
 * With INBOUND_TLS_CERT_FILE and INBOUND_TLS_KEY_FILE the listener offers STARTTLS (never requires it:
 * an MX must take mail from senders without TLS); without them STARTTLS is neither offered nor accepted.
 * AUTH stays off either way. One file without the other, or a file that cannot be read, stops the start.
 */
export async function inboundTlsOptions(tls: Config['inbound']['tls']): Promise<InboundTlsOptions> {
  if (!tls) return { disabledCommands: ['AUTH', 'STARTTLS'], hideSTARTTLS: true };
  if (!tls.certFile || !tls.keyFile) throw new Error('INBOUND_TLS_CERT_FILE and INBOUND_TLS_KEY_FILE must be set together');
  const [cert, key] = await Promise.all([pem(tls.certFile, 'INBOUND_TLS_CERT_FILE'), pem(tls.keyFile, 'INBOUND_TLS_KEY_FILE')]);
  return { disabledCommands: ['AUTH'], hideSTARTTLS: false, key, cert };
}
