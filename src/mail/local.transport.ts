import { link, mkdir, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { composeRaw } from './compose.js';
import type { DkimSign } from './dkim.js';
import { NotSent, type Accepted, type Lookup, type MailMessage, type MailTransport } from './mail.types.js';

const fileFor = (dir: string, key: string) => path.join(dir, `${key.replace(/[^A-Za-z0-9_.-]/g, '_')}.eml`);

/**
 * Development transport (the default): each sent message is an .eml file in `dir`, named by its
 * idempotency key, readable with any mail client or `cat`, its envelope sender in a `Return-Path` line.
 * The file is created with a hard link, which fails when it exists, so a second send under the same key
 * delivers nothing new. With `sign`, each file carries the From domain's DKIM signatures, as the SMTP
 * transport's mail does.
 */
export function localTransport(dir: string, sign?: DkimSign): MailTransport {
  return {
    name: 'local',
    canResend: true,
    async send(message: MailMessage, key: string): Promise<Accepted> {
      try {
        await mkdir(dir, { recursive: true });
      } catch (err) {
        throw new NotSent(`mail directory ${dir} is not writable: ${(err as Error).message}`);
      }
      const target = fileFor(dir, key);
      const tmp = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      // The envelope sender as a delivering MTA records it (RFC 5321 §4.4): where this mail's bounces would go.
      const returnPath = message.envelopeFrom ? Buffer.from(`Return-Path: <${message.envelopeFrom}>\r\n`) : Buffer.alloc(0);
      const composed = await composeRaw(message, key);
      await writeFile(tmp, Buffer.concat([returnPath, sign ? await sign(composed, message.from) : composed]));
      try {
        await link(tmp, target);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      } finally {
        await unlink(tmp).catch(() => {});
      }
      return { providerId: path.basename(target) };
    },
    async lookup(key: string): Promise<Lookup> {
      try {
        await stat(fileFor(dir, key));
        return { state: 'sent', providerId: path.basename(fileFor(dir, key)) };
      } catch {
        return { state: 'not_found' };
      }
    },
  };
}
