import type { Config } from '../config.js';
import { tracedCalls } from '../tracing/spans.js';
import type { Queryable } from '../db.js';
import { dkimSigner } from './dkim.js';
import { httpTransport } from './http.transport.js';
import { localTransport } from './local.transport.js';
import type { MailTransport } from './mail.types.js';
import { smtpTransport } from './smtp.transport.js';

/**
 * The transport the configuration names (`MAIL_TRANSPORT`: local by default, smtp or http). With `db`, the
 * SMTP and local transports sign mail with the From domain's DKIM keys (`mail dkim generate`); an HTTP
 * mail API composes the message itself, so it signs with the keys it is given in its own settings.
 * Each send and lookup is a span (`mail send`, `mail lookup`) naming the transport, nothing of the message.
 */
export function transportFor(config: Config, db?: Queryable): MailTransport {
  const transport = chosenTransport(config, db);
  return tracedCalls('mail', transport, ['send', 'lookup'], { 'gas.mail.transport': transport.name });
}

function chosenTransport(config: Config, db?: Queryable): MailTransport {
  const m = config.mail;
  const sign = db ? dkimSigner(db, config.sealing) : undefined;
  if (m.transport === 'smtp') {
    const { ehloName, requireTls, tlsCa, ...relay } = m.smtp;
    const timeouts = { connectTimeoutMs: m.connectTimeoutMs, sendTimeoutMs: m.sendTimeoutMs };
    return smtpTransport({ ...relay, ...timeouts, ehloName, requireTls, ca: tlsCa, sign });
  }
  if (m.transport === 'http') return httpTransport({ url: m.api.url, key: m.api.key, sendTimeoutMs: m.sendTimeoutMs });
  return localTransport(m.localDir, sign);
}
