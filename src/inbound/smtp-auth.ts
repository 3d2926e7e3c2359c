import { Resolver } from 'node:dns/promises';
import { authenticate, type AuthenticateResult } from 'mailauth';
import { alignsWith, domainOf, type OwnChecks, type SenderAuth } from './sender-auth.js';

/**
 * Our own check of a message received over our SMTP listener (we are the receiving MTA, so nobody else
 * wrote an Authentication-Results header we could believe): DKIM signatures, SPF for the client's IP and
 * MAIL FROM, and DMARC for the From domain, with mailauth. DNS only; every lookup of one check together
 * gets a deadline, past which the check is a temporary error and proves nothing.
 */

export interface SmtpClient {
  /** The client's IP address as the listener saw it (null for mail stored before it was kept). */
  ip: string | null;
  helo: string | null;
  /** MAIL FROM ('' or null: the null sender of a report, checked against the HELO name). */
  mailFrom: string | null;
}

export interface CheckOptions {
  /** Our authserv-id (the inbound mail domain). */
  mta: string;
  /** Every DNS lookup of the check together. */
  timeoutMs: number;
  /** DNS servers (`ip` or `ip:port`); empty: the system's. */
  servers: string[];
}

/** Signatures listed in the kept checks, at most (a message may carry any number). */
const MAX_LISTED_SIGNATURES = 5;

/** A resolver for one check: each lookup bounded by the check's deadline; `stop` cancels what is still asked. */
function boundedResolver(o: CheckOptions) {
  const r = new Resolver({ timeout: o.timeoutMs, tries: 1 });
  if (o.servers.length) r.setServers(o.servers);
  let stopped = false;
  return {
    resolve: (name: string, type: string) =>
      stopped
        ? Promise.reject(Object.assign(new Error('the DNS check ended'), { code: 'ETIMEOUT' }))
        : (r.resolve(name, type) as Promise<string[][] | string[]>),
    stop: () => {
      stopped = true;
      r.cancel();
    },
  };
}

function checksOf(res: AuthenticateResult): OwnChecks {
  return {
    dkim: res.dkim.results
      .filter((s) => s.signingDomain)
      .slice(0, MAX_LISTED_SIGNATURES)
      .map((s) => ({
        domain: s.signingDomain ?? '',
        result: s.status.result,
        aligned: !!(s.status as { aligned?: unknown }).aligned,
      })),
    spf: res.spf ? { domain: res.spf.domain ?? null, result: res.spf.status.result } : { domain: null, result: 'none' },
    dmarc: res.dmarc ? { result: res.dmarc.status.result, policy: res.dmarc.policy ?? null } : null,
  };
}

/**
 * The verdict for the From domain: DMARC `pass` for it (an aligned DKIM signature or an aligned SPF pass,
 * as DMARC says), or a passing DKIM signature whose domain the From domain is at or below (as a provider's
 * `dkim=pass` is read). SPF alone, without a DMARC record that passes, proves nothing.
 */
function verdictOf(res: AuthenticateResult, fromDomain: string, mta: string): SenderAuth {
  const checks = checksOf(res);
  const dmarc = res.dmarc;
  if (dmarc && dmarc.status.result === 'pass' && dmarc.status.header?.from?.toLowerCase() === fromDomain) {
    return { pass: true, method: 'dmarc', domain: fromDomain, authservId: mta, checks };
  }
  for (const s of res.dkim.results) {
    const d = s.signingDomain?.toLowerCase();
    if (s.status.result === 'pass' && d && alignsWith(fromDomain, d))
      return { pass: true, method: 'dkim', domain: d, authservId: mta, checks };
  }
  const temp = [checks.dmarc?.result, checks.spf.result, ...checks.dkim.map((k) => k.result)].some((r) => r === 'temperror');
  const dkim = checks.dkim.map((k) => k.result).join(',') || 'none';
  const summary = `dkim=${dkim} spf=${checks.spf.result} dmarc=${checks.dmarc?.result ?? 'none'}`;
  return {
    pass: false,
    reason: temp
      ? `a DNS lookup failed (temperror): not proven (${summary})`
      : `no aligned DKIM or DMARC pass for the From domain (${summary})`,
    checks,
  };
}

/**
 * Checks a message received over SMTP. Never throws: a DNS failure, a timeout or anything mailauth
 * cannot read is a verdict that did not pass, with the reason.
 */
export async function checkSmtpSender(
  raw: Buffer,
  from: { address: string | null; fields: number },
  client: SmtpClient,
  o: CheckOptions,
): Promise<SenderAuth> {
  const fromDomain = domainOf(from.address);
  if (!fromDomain || from.fields !== 1) return { pass: false, reason: 'not exactly one From address' };
  if (!client.ip) return { pass: false, reason: 'the client address was not recorded' };
  const dns = boundedResolver(o);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), o.timeoutMs);
  });
  const check = authenticate(raw, {
    ip: client.ip,
    helo: client.helo ?? client.ip,
    sender: client.mailFrom ?? '',
    mta: o.mta,
    resolver: dns.resolve,
    disableArc: true,
    disableBimi: true,
  });
  try {
    const res = await Promise.race([check, deadline]);
    if (res === 'timeout')
      return { pass: false, reason: `the DNS lookups did not finish within ${o.timeoutMs} ms (temperror): not proven` };
    return verdictOf(res, fromDomain, o.mta);
  } catch (err) {
    return { pass: false, reason: `the check could not be made: ${String((err as Error).message).slice(0, 200)}` };
  } finally {
    clearTimeout(timer);
    dns.stop();
    check.catch(() => undefined);
  }
}
