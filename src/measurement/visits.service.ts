import type { Queryable } from '../db.js';
import { newId } from '../ids.js';
import { recordChannelEvent, type Channel } from '../results/channel-events.js';
import { channelOf, isResultsChannel, type Utm, type VisitChannel } from './channel-rules.js';
import { VISIT_PARAM } from './link-visits.service.js';
import { LINK_CODE, LINK_PATH } from './links.js';
import { measurementRepository, type VisitOrigin } from './measurement.repository.js';

/** What a customer's server reports of a landing that did not come through a tracked link. */
export interface ReportedLanding {
  /** Absolute http(s) URL of the page landed on. */
  url: string;
  /** The landing's referrer; empty or absent when there was none. */
  referrer?: string | undefined;
  /** UTM parameters; when absent, the `utm_*` parameters of `url` are read. */
  utm?: Utm | undefined;
}

const UTM_KEYS = ['source', 'medium', 'campaign', 'term', 'content'] as const;

/** The `utm_*` parameters of a URL (each cut at 200 characters), or null when it has none. */
function utmOfUrl(url: URL): Utm | null {
  const utm: Record<string, string> = {};
  for (const k of UTM_KEYS) {
    const v = url.searchParams.get(`utm_${k}`);
    if (v) utm[k] = v.slice(0, 200);
  }
  return Object.keys(utm).length ? utm : null;
}

const httpUrl = (s: string | undefined): URL | null => {
  if (!s) return null;
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u : null;
  } catch {
    return null;
  }
};

/**
 * Where this account's own tracking says the landing came from: the visit its `gvid` names, or the
 * tracked link its referrer is (`{BASE_URL}/l/{code}`). Another account's visit or link is nothing.
 */
async function ownOrigin(q: Queryable, baseUrl: string, accountId: string, url: URL, referrer: URL | null): Promise<VisitOrigin | null> {
  const repo = measurementRepository(q);
  const gvid = url.searchParams.get(VISIT_PARAM);
  if (gvid && /^vis_[0-9A-Za-z]{1,60}$/.test(gvid)) {
    const visit = await repo.visitOfAccount(accountId, gvid);
    if (visit) return visit;
  }
  const linkBase = `${baseUrl}${LINK_PATH}/`.toLowerCase();
  if (referrer?.href.toLowerCase().startsWith(linkBase)) {
    const code = referrer.href.slice(linkBase.length).split(/[/?#]/)[0]!;
    const link = LINK_CODE.test(code) ? await repo.linkOfAccount(accountId, code) : null;
    if (link) {
      return {
        id: '',
        channel: link.channel,
        link_code: link.code,
        source_type: link.sourceType,
        source_id: link.sourceId,
        card_id: link.cardId,
        lead_id: link.leadId,
      };
    }
  }
  return null;
}

/**
 * Records a landing a customer's server reported and answers its visit id and channel (derived by
 * src/measurement/channel-rules.ts). A landing whose `gvid` names a visit of this account is that visit
 * (the click through the tracked link was counted when it happened): its id and channel are answered
 * and nothing new is counted, so a site that reports every landing does not count a click twice. A
 * landing whose referrer is one of this account's tracked links keeps that link's send, card and lead.
 * A `/results` channel gets a `visit` event; `referral` and `direct` do not.
 */
export async function reportVisit(
  q: Queryable,
  baseUrl: string,
  accountId: string,
  landing: ReportedLanding,
  now = Date.now(),
): Promise<{ visitId: string; channel: VisitChannel }> {
  const url = new URL(landing.url);
  const referrer = httpUrl(landing.referrer);
  const utm = landing.utm ?? utmOfUrl(url);
  const origin = await ownOrigin(q, baseUrl, accountId, url, referrer);
  if (origin?.id) return { visitId: origin.id, channel: origin.channel as VisitChannel };
  const base = httpUrl(baseUrl);
  const referrerIsOwn = Boolean(referrer && (referrer.host === url.host || referrer.host === base?.host));
  const channel = await channelOf({ utm, referrerHost: referrer?.hostname ?? null, referrerIsOwn }, async () =>
    origin ? (origin.channel as VisitChannel) : null,
  );
  const visitId = newId('vis');
  await measurementRepository(q).insertVisits([
    {
      id: visitId,
      account_id: accountId,
      channel,
      via: 'reported',
      link_code: origin?.link_code ?? null,
      source_type: origin?.source_type ?? null,
      source_id: origin?.source_id ?? null,
      card_id: origin?.card_id ?? null,
      lead_id: origin?.lead_id ?? null,
      url: landing.url,
      referrer: landing.referrer || null,
      utm: utm ? (Object.fromEntries(Object.entries(utm).filter(([, v]) => typeof v === 'string')) as Record<string, string>) : null,
      ua_hash: null,
      bot: false,
      at: now,
    },
  ]);
  if (isResultsChannel(channel))
    await recordChannelEvent(q, accountId, { channel: channel as Channel, type: 'visit', at: now, refId: visitId });
  return { visitId, channel };
}
