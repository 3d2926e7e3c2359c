import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { alive, ensurePackage, freePort, reapStaleRuns, until } from './processes.js';

/**
 * A Postfix of the test run's own (Debian's package, installed by scripts/ensure-package.sh when missing,
 * with swaks): its own config, queue and data directories under a temporary directory, its smtpd on a free
 * port of 127.0.0.1, chroot off, logging to a file of its own. The system's instance (port 25,
 * /etc/postfix/main.cf) is never configured, started or touched. Needs root (Postfix's master does).
 *
 * It is the relay between the service and mailboxes, as a provider's MTA would be:
 * - `MAILBOX_DOMAIN`: the users given are virtual mailboxes (Maildir under the temporary directory, read
 *   with `mailbox(user)`); an unknown user is refused at RCPT (550 5.1.1, smtpd_reject_unlisted_recipient).
 * - `BOUNCE_DOMAIN`: every recipient is accepted at RCPT and handed to the virtual delivery agent, which
 *   delivers the users given and bounces the others: Postfix's own DSN goes to the envelope sender.
 * - with `verifyInbound` (docs/sending-mail.md's recipe), a recipient at INBOUND_DOMAIN is verified with the
 *   listener (Postfix's address-verification probe) before RCPT is answered: what it refuses, Postfix refuses.
 * - with `tls`, smtpd offers STARTTLS with the certificate given (a test's own, self-signed).
 * - `INBOUND_DOMAIN` (the service's inbound domain): relayed by a transport map entry to the service's
 *   inbound SMTP listener (`inboundPort`), so DSNs and replies through Postfix reach the service.
 */
export interface Postfix {
  /** smtpd's port on 127.0.0.1. */
  port: number;
  /** Where it relays mail for INBOUND_DOMAIN (the service's inbound listener, on 127.0.0.1). */
  inboundPort: number;
  dir: string;
  /** Postfix's mail_version, e.g. 3.7.11. */
  version: string;
  /** Messages delivered to `user@MAILBOX_DOMAIN` (or `@BOUNCE_DOMAIN`): the raw bytes, oldest first. */
  mailbox(address: string): string[];
  /** How many messages the mailbox holds (without reading them). */
  count(address: string): number;
  /** Waits until the mailbox holds at least `count` messages and returns them. */
  waitForMail(address: string, count?: number, timeoutMs?: number): Promise<string[]>;
  /** The instance's log (postlogd's file). */
  log(): string;
  /** Waits until the queue is empty (everything delivered, bounced or relayed). */
  drained(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export const MAILBOX_DOMAIN = 'mailbox.test';
export const BOUNCE_DOMAIN = 'bounce.test';
export const INBOUND_DOMAIN = 'inbound.test';
/** The name the instance gives itself (EHLO, Received, its DSNs' Reporting-MTA). */
export const POSTFIX_HOSTNAME = 'mta.postfix.test';

const DIR_PREFIX = 'gas-postfix-';
/** The user the virtual delivery agent writes mailboxes as (it refuses uids under virtual_minimum_uid, 100). */
const MAILBOX_UID = 65534;

/**
 * Runs `postfix -c DIR/etc ARGS`. Postfix's commands print their errors only to a terminal (else to syslog,
 * which a test machine may not run), so the command runs under script(1), which gives it one.
 */
function postfix(dir: string, ...args: string[]): { status: number | null; output: string } {
  const command = ['/usr/sbin/postfix', '-c', path.join(dir, 'etc'), ...args].join(' ');
  const r = spawnSync('script', ['-qec', command, '/dev/null'], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** Stops the Postfix instances of test runs that are gone (killed before their teardown). */
const reapStale = () =>
  reapStaleRuns(DIR_PREFIX, (dir) => {
    if (existsSync(path.join(dir, 'etc', 'main.cf'))) postfix(dir, 'abort');
  });

/** master.cf: the daemons Postfix needs, chroot off, smtpd on 127.0.0.1:`port` only. */
function masterCf(port: number, tls: boolean): string {
  const rows = [
    `127.0.0.1:${port} inet n - n - - smtpd`,
    'pickup unix n - n 60 1 pickup',
    'cleanup unix n - n - 0 cleanup',
    'qmgr unix n - n 300 1 qmgr',
    'rewrite unix - - n - - trivial-rewrite',
    'bounce unix - - n - 0 bounce',
    'defer unix - - n - 0 bounce',
    'trace unix - - n - 0 bounce',
    'verify unix - - n - 1 verify',
    'flush unix n - n 1000? 0 flush',
    'proxymap unix - - n - - proxymap',
    'proxywrite unix - - n - 1 proxymap',
    'smtp unix - - n - - smtp',
    'relay unix - - n - - smtp',
    'showq unix n - n - - showq',
    'error unix - - n - - error',
    'retry unix - - n - - error',
    'discard unix - - n - - discard',
    'local unix - n n - - local',
    'virtual unix - n n - - virtual',
    'anvil unix - - n - 1 anvil',
    'scache unix - - n - 1 scache',
    'postlog unix-dgram n - n - 1 postlogd',
    ...(tls ? ['tlsmgr unix - - n 1000? 1 tlsmgr'] : []),
  ];
  return `${rows.join('\n')}\n`;
}

/** STARTTLS on smtpd with this PEM certificate and key (files the test made). */
export interface PostfixTls {
  certFile: string;
  keyFile: string;
}

function mainCf(dir: string, tls: PostfixTls | null, verifyInbound: boolean): string {
  const etc = path.join(dir, 'etc');
  const settings: Record<string, string> = {
    compatibility_level: '3.6',
    config_directory: etc,
    queue_directory: path.join(dir, 'queue'),
    data_directory: path.join(dir, 'data'),
    maillog_file: path.join(dir, 'maillog'),
    maillog_file_prefixes: dir,
    myhostname: POSTFIX_HOSTNAME,
    mydomain: 'postfix.test',
    myorigin: '$myhostname',
    mydestination: '',
    inet_interfaces: '127.0.0.1',
    inet_protocols: 'ipv4',
    mynetworks: '127.0.0.0/8',
    smtpd_relay_restrictions: 'permit_mynetworks, reject_unauth_destination',
    smtpd_reject_unlisted_recipient: 'yes',
    relay_domains: `${BOUNCE_DOMAIN}, ${INBOUND_DOMAIN}`,
    transport_maps: `texthash:${path.join(etc, 'transport')}`,
    virtual_mailbox_domains: MAILBOX_DOMAIN,
    virtual_mailbox_maps: `texthash:${path.join(etc, 'vmailbox')}`,
    virtual_mailbox_base: path.join(dir, 'mail'),
    virtual_uid_maps: `static:${MAILBOX_UID}`,
    virtual_gid_maps: `static:${MAILBOX_UID}`,
    alias_maps: '',
    alias_database: '',
    smtp_dns_support_level: 'disabled',
    smtp_host_lookup: 'native',
    biff: 'no',
    // The test run is the only client: no delays, no waits between tries.
    queue_run_delay: '1s',
    minimal_backoff_time: '1s',
    maximal_backoff_time: '2s',
    smtpd_error_sleep_time: '0',
    smtpd_soft_error_limit: '1000',
    smtpd_hard_error_limit: '1000',
    smtpd_client_connection_count_limit: '0',
    smtpd_client_connection_rate_limit: '0',
    default_process_limit: '100',
    message_size_limit: String(30 * 1024 * 1024),
    // Postfix's own DSN carries the original message whole (its headers are what matching reads).
    bounce_size_limit: '200000',
    // docs/sending-mail.md's recipe: a recipient at the inbound domain is checked with the service's listener
    // (an address-verification probe through the transport map) before RCPT is answered; its 550 is ours.
    ...(verifyInbound
      ? {
          smtpd_recipient_restrictions: `reject_unauth_destination, check_recipient_access texthash:${path.join(etc, 'verify_inbound')}`,
          unverified_recipient_reject_code: '550',
        }
      : {}),
    // Offered, never required (as Debian's stock main.cf does with its snakeoil certificate).
    ...(tls ? { smtpd_tls_security_level: 'may', smtpd_tls_cert_file: tls.certFile, smtpd_tls_key_file: tls.keyFile } : {}),
  };
  return `${Object.entries(settings)
    .map(([k, v]) => `${k} = ${v}`)
    .join('\n')}\n`;
}

/** Maildir files of a mailbox (new/ and cur/), oldest first by delivery name. */
function maildir(dir: string, address: string): string[] {
  const box = path.join(dir, 'mail', address.toLowerCase());
  const files: string[] = [];
  for (const sub of ['new', 'cur']) {
    const d = path.join(box, sub);
    if (!existsSync(d)) continue;
    for (const f of readdirSync(d)) files.push(path.join(d, f));
  }
  return files.sort((a, b) => path.basename(a).localeCompare(path.basename(b))).map((f) => readFileSync(f, 'latin1'));
}

/**
 * Starts a private Postfix. `users`: the mailboxes of MAILBOX_DOMAIN and BOUNCE_DOMAIN that exist
 * (full addresses); `inboundPort`: the service's inbound SMTP listener on 127.0.0.1, where mail for
 * INBOUND_DOMAIN goes.
 */
export interface PostfixOptions {
  users: string[];
  inboundPort: number;
  /** smtpd offers STARTTLS with this certificate; null: no STARTTLS. */
  tls?: PostfixTls | null;
  /** Verify INBOUND_DOMAIN's recipients with the listener before answering RCPT (reject_unverified_recipient). */
  verifyInbound?: boolean;
}

export async function startPostfix({ users, inboundPort, tls = null, verifyInbound = false }: PostfixOptions): Promise<Postfix> {
  ensurePackage('postfix', '/usr/sbin/postfix');
  ensurePackage('swaks', 'swaks');
  if (process.getuid?.() !== 0) throw new Error('a private Postfix needs root (its master process starts as root)');
  reapStale();
  const dir = mkdtempSync(path.join(tmpdir(), `${DIR_PREFIX}${process.pid}-`));
  // The virtual delivery agent (as MAILBOX_UID) and Postfix's daemons must reach their directories.
  chmodSync(dir, 0o755);
  const etc = path.join(dir, 'etc');
  for (const d of ['etc', 'queue', 'data', 'mail']) mkdirSync(path.join(dir, d));
  const pf = spawnSync('id', ['-u', 'postfix'], { encoding: 'utf8' });
  const postfixUid = Number(pf.stdout.trim());
  chownSync(path.join(dir, 'data'), postfixUid, 0);
  chownSync(path.join(dir, 'mail'), MAILBOX_UID, MAILBOX_UID);
  const port = await freePort();
  writeFileSync(path.join(etc, 'main.cf'), mainCf(dir, tls, verifyInbound));
  writeFileSync(path.join(etc, 'verify_inbound'), `${INBOUND_DOMAIN} reject_unverified_recipient\n`);
  writeFileSync(path.join(etc, 'master.cf'), masterCf(port, tls !== null));
  writeFileSync(path.join(etc, 'vmailbox'), users.map((u) => `${u.toLowerCase()} ${u.toLowerCase()}/\n`).join(''));
  writeFileSync(
    path.join(etc, 'transport'),
    [`${INBOUND_DOMAIN} smtp:[127.0.0.1]:${inboundPort}`, `${BOUNCE_DOMAIN} virtual:`, ''].join('\n'),
  );
  writeFileSync(path.join(dir, 'maillog'), '');
  const log = () => readFileSync(path.join(dir, 'maillog'), 'utf8');
  const started = postfix(dir, 'start');
  if (started.status !== 0) {
    postfix(dir, 'abort');
    const text = `${started.output}\n${log()}`;
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`postfix did not start: ${text}`);
  }
  const queueEmpty = () => {
    const r = spawnSync('/usr/sbin/postqueue', ['-c', etc, '-j'], { encoding: 'utf8' });
    return r.status === 0 && r.stdout.trim() === '';
  };
  const instance: Postfix = {
    port,
    inboundPort,
    dir,
    version: spawnSync('/usr/sbin/postconf', ['-c', etc, '-h', 'mail_version'], { encoding: 'utf8' }).stdout.trim(),
    mailbox: (address) => maildir(dir, address),
    count: (address) =>
      ['new', 'cur'].reduce((n, sub) => {
        const d = path.join(dir, 'mail', address.toLowerCase(), sub);
        return n + (existsSync(d) ? readdirSync(d).length : 0);
      }, 0),
    async waitForMail(address, count = 1, timeoutMs = 15_000) {
      try {
        return await until(async () => {
          const got = maildir(dir, address);
          return got.length >= count ? got : null;
        }, timeoutMs);
      } catch {
        throw new Error(`${address} got ${maildir(dir, address).length} of ${count} messages; postfix log:\n${log().slice(-4000)}`);
      }
    },
    log,
    async drained(timeoutMs = 15_000) {
      await until(async () => queueEmpty(), timeoutMs, 100).catch(() => {
        throw new Error(`postfix queue not empty; log:\n${log().slice(-4000)}`);
      });
    },
    async stop() {
      postfix(dir, 'stop');
      const pidFile = path.join(dir, 'queue', 'pid', 'master.pid');
      const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : NaN;
      if (!Number.isNaN(pid)) {
        await until(async () => !alive(pid), 15_000, 50).catch(() => postfix(dir, 'abort'));
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  // smtpd answers once master has bound its port: wait for the greeting.
  await until(async () => greets(port), 15_000, 100).catch(async (err) => {
    const text = log();
    await instance.stop();
    throw new Error(`postfix does not answer on ${port}: ${(err as Error).message}\n${text}`);
  });
  return instance;
}

async function greets(port: number): Promise<boolean> {
  const { connect } = await import('node:net');
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.setTimeout(2_000);
    s.once('data', (d) => {
      resolve(d.toString().startsWith('220'));
      s.end('QUIT\r\n');
    });
    s.once('error', () => resolve(false));
    s.once('timeout', () => {
      s.destroy();
      resolve(false);
    });
  });
}

/** Runs swaks (a real SMTP client) against the instance; `args` are swaks's own. Resolves with its transcript. */
export function swaks(port: number, args: string[]): { status: number | null; output: string } {
  const r = spawnSync('swaks', ['--server', '127.0.0.1', '--port', String(port), '--timeout', '20', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** The service's settings for sending through `postfix` from `agent@INBOUND_DOMAIN` (so bounces come back to it). */
export function sendingThrough(postfix: Pick<Postfix, 'port'>): Record<string, string> {
  return {
    MAIL_TRANSPORT: 'smtp',
    SMTP_HOST: '127.0.0.1',
    SMTP_PORT: String(postfix.port),
    MAIL_FROM: `Growth Agent <agent@${INBOUND_DOMAIN}>`,
    INBOUND_MAIL_DOMAIN: INBOUND_DOMAIN,
  };
}
