import type { Config } from '../config.js';
import { httpTransport } from './http.transport.js';
import { localTransport } from './local.transport.js';
import type { MailTransport } from './mail.types.js';
import { smtpTransport } from './smtp.transport.js';

/** The transport the configuration names (`MAIL_TRANSPORT`: local by default, smtp or http). */
export function transportFor(config: Config): MailTransport {
  const m = config.mail;
  if (m.transport === 'smtp') {
    return smtpTransport({ ...m.smtp, connectTimeoutMs: m.connectTimeoutMs, sendTimeoutMs: m.sendTimeoutMs });
  }
  if (m.transport === 'http') return httpTransport({ url: m.api.url, key: m.api.key, sendTimeoutMs: m.sendTimeoutMs });
  return localTransport(m.localDir);
}
