import { z } from 'zod';
import { int } from '../env-rules.js';

const MIB = 1024 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Settings of the inbound mail door (the SMTP listener and the inbound URL). */
export const inboundEnv = {
  INBOUND_SMTP_PORT: int(2525, 0),
  INBOUND_SMTP_HOST: z.string().min(1).optional(),
  INBOUND_MAIL_DOMAIN: z
    .string()
    .regex(/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/, 'must be a domain name such as mail.example.com')
    .optional(),
  INBOUND_MAX_BYTES: int(25 * MIB),
  INBOUND_MAIL_CONCURRENCY: int(64),
  INBOUND_SMTP_MAX_CLIENTS: int(100),
  INBOUND_SMTP_SESSIONS_PER_IP: int(10),
  INBOUND_SMTP_SESSIONS_PER_NETWORK: int(20),
  INBOUND_SMTP_RESERVED_SLOTS: int(20, 0),
  INBOUND_SMTP_SESSION_SECONDS: int(900),
  INBOUND_SMTP_DATA_SECONDS: int(600),
  INBOUND_SMTP_DATA_MIN_BYTES: int(1024, 0),
  INBOUND_SMTP_DATA_WINDOW_SECONDS: int(30),
  INBOUND_SMTP_MESSAGES_PER_MINUTE: int(60),
  INBOUND_SMTP_BYTES_PER_HOUR: int(512 * MIB),
  INBOUND_SMTP_IDLE_SECONDS: int(30),
  INBOUND_SMTP_INFLIGHT_BYTES: int(64 * MIB),
  INBOUND_RAW_RETENTION_DAYS: int(7),
  INBOUND_APPLIED_RAW_RETENTION_DAYS: int(30),
  INBOUND_ACCOUNT_STORAGE_BYTES: int(1024 * MIB),
  INBOUND_URL_PER_MINUTE: int(600),
  INBOUND_POSTMASTER_BYTES: int(64 * MIB),
  INBOUND_POSTMASTER_RETENTION_DAYS: int(30),
  INBOUND_POSTMASTER_FORWARD_TO: z
    .string()
    .regex(/^[^\s@<>]+@[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/, 'must be one mail address such as ops@example.com')
    .optional(),
} satisfies z.ZodRawShape;

export function inboundConfig(env: z.output<z.ZodObject<typeof inboundEnv>>) {
  return {
    /** 0: no SMTP listener (mail may still arrive on an account's inbound URL). */
    smtpPort: env.INBOUND_SMTP_PORT,
    smtpHost: env.INBOUND_SMTP_HOST ?? '0.0.0.0',
    /** Reply-To and the List-Unsubscribe mailto use it; the listener accepts mail for its live tokens (and the bounce address) only. */
    domain: (env.INBOUND_MAIL_DOMAIN ?? 'localhost').toLowerCase(),
    /** Bigger messages are refused (SMTP 552, HTTP 413) before anything is stored. */
    maxBytes: env.INBOUND_MAX_BYTES,
    /** `inbound-mail` jobs (parse and apply) one worker process runs at once. */
    concurrency: env.INBOUND_MAIL_CONCURRENCY,
    smtp: {
      /** Sessions one listener holds at once; one more is answered 421. */
      maxClients: env.INBOUND_SMTP_MAX_CLIENTS,
      /** Sessions one client address (IPv4, or an IPv6 /64) holds at once; one more is answered 421. */
      sessionsPerIp: env.INBOUND_SMTP_SESSIONS_PER_IP,
      /** Sessions one network (an IPv4 /24, an IPv6 /48) holds at once; one more is answered 421. */
      sessionsPerNetwork: env.INBOUND_SMTP_SESSIONS_PER_NETWORK,
      /** Of maxClients, the slots kept for networks holding no session yet (at most maxClients - 1). */
      reservedSlots: env.INBOUND_SMTP_RESERVED_SLOTS,
      /** A session is closed with 421 this long after it connected, whatever it is doing. */
      sessionMs: env.INBOUND_SMTP_SESSION_SECONDS * 1000,
      /** A message's DATA is closed with 421 this long after it began. */
      dataMs: env.INBOUND_SMTP_DATA_SECONDS * 1000,
      /** During DATA at least this many bytes must arrive in every dataWindowMs, or the session is closed with 421. */
      dataMinBytes: env.INBOUND_SMTP_DATA_MIN_BYTES,
      dataWindowMs: env.INBOUND_SMTP_DATA_WINDOW_SECONDS * 1000,
      /** Messages one client address may start in a minute; past it MAIL FROM is answered 450. */
      messagesPerMinute: env.INBOUND_SMTP_MESSAGES_PER_MINUTE,
      /** Message bytes one client address may send in an hour; past it MAIL FROM (or the message) is answered 452. */
      bytesPerHour: env.INBOUND_SMTP_BYTES_PER_HOUR,
      /** A session that starts no message (NOOPs and RSETs do not count) for this long is closed with 421. */
      idleMs: env.INBOUND_SMTP_IDLE_SECONDS * 1000,
      /** Bytes of messages being received at once, all sessions together; past it a message is answered 452. */
      inflightBytes: env.INBOUND_SMTP_INFLIGHT_BYTES,
    },
    /** Raw bytes of `unplaced`, `malformed` and `duplicate` messages are dropped this long after arrival. */
    rawRetentionMs: env.INBOUND_RAW_RETENTION_DAYS * DAY_MS,
    /** Raw bytes of `applied` messages are dropped this long after arrival (the parsed outcome stays). */
    appliedRawRetentionMs: env.INBOUND_APPLIED_RAW_RETENTION_DAYS * DAY_MS,
    /** Raw bytes one account keeps; over it, new mail to its tokens is refused at RCPT with 452. */
    accountStorageBytes: env.INBOUND_ACCOUNT_STORAGE_BYTES,
    /** Messages one account's inbound URL takes a minute; past it 429 with Retry-After (a provider retries). */
    urlPerMinute: env.INBOUND_URL_PER_MINUTE,
    /** Bytes of mail to postmaster@ kept at once (operator mail); past it RCPT to postmaster is answered 452. */
    postmasterBytes: env.INBOUND_POSTMASTER_BYTES,
    /** Mail to postmaster@ is deleted this long after arrival. */
    postmasterRetentionMs: env.INBOUND_POSTMASTER_RETENTION_DAYS * DAY_MS,
    /** The operator's address mail to postmaster@ is forwarded to (null: kept for the admin verbs only). */
    postmasterForwardTo: env.INBOUND_POSTMASTER_FORWARD_TO ?? null,
  };
}
