import { addToBlocklist } from '../blocklist/blocklist.service.js';
import type { Db } from '../db.js';
import { recordChannelEvent, type Channel, type DecidedBy } from '../results/channel-events.js';
import { markDemoEvents } from '../results/event-statements.js';
import { getLeadColumns, setLeadColumns, upsertLead } from './leads.service.js';
import type { LeadStatus, ReplyKind } from './leads.types.js';

const DAY = 24 * 60 * 60 * 1000;
export const SEED_LEAD_COUNT = 150;

/** A small deterministic PRNG (mulberry32), so the demo looks the same every time (tests draw random histories with it too). */
export function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['North', 'Blue', 'Quiet', 'Bright', 'Iron', 'Maple', 'Signal', 'Harbor', 'Pixel', 'Summit', 'Cedar', 'Lumen', 'Orbit'];
const NOUNS = ['Labs', 'Works', 'Cloud', 'Systems', 'Analytics', 'Health', 'Logistics', 'Studio', 'Data', 'Robotics', 'Finance'];
const INDUSTRIES = ['B2B SaaS', 'Fintech', 'Healthtech', 'Logistics', 'Developer tools', 'E-commerce'];
const FIRST = ['Ana', 'Ben', 'Chen', 'Dara', 'Eli', 'Fatima', 'Gus', 'Hana', 'Ivo', 'Jules'];
const LAST = ['Okafor', 'Silva', 'Novak', 'Berg', 'Ito', 'Moreau', 'Khan', 'Lund'];
const TITLES = ['Head of Growth', 'VP Marketing', 'CTO', 'Founder', 'Head of Sales'];
const STATUSES: Array<{ status: LeadStatus; weight: number }> = [
  { status: 'new', weight: 20 },
  { status: 'researched', weight: 30 },
  { status: 'drafted', weight: 25 },
  { status: 'contacted', weight: 40 },
  { status: 'replied', weight: 20 },
  { status: 'bounced', weight: 5 },
  { status: 'declined', weight: 6 },
  { status: 'converted', weight: 4 },
];
const REPLIES: ReplyKind[] = ['interested', 'question', 'referral', 'out_of_office', 'not_interested'];

/**
 * Demo data for `seed demo`: about 150 leads (mixed statuses, some `replied`) with research, sources,
 * contacts and drafts, lead columns when the account has none, a few block list entries, and a week of
 * channel events on email, ads, seo, social and network (aeo stays unconnected). Idempotent:
 * leads are keyed by domain and events by refId, so running it twice changes nothing.
 */
export async function seedLeadsAndEvents(
  db: Db,
  accountId: string,
  now = Date.now(),
): Promise<{ leads: number; events: number; eventsInResults: false }> {
  const rand = prng(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const total = STATUSES.reduce((n, s) => n + s.weight, 0);
  if (!(await getLeadColumns(db, accountId)).length) await setLeadColumns(db, accountId, ['industry', 'headcount', 'why_now']);

  for (let i = 0; i < SEED_LEAD_COUNT; i++) {
    let roll = rand() * total;
    const status = STATUSES.find((s) => (roll -= s.weight) < 0)?.status ?? 'new';
    const company = `${pick(WORDS)} ${pick(NOUNS)}`;
    const domain = `${company.toLowerCase().replace(/\s+/g, '')}${i}.example`;
    const first = pick(FIRST);
    const last = pick(LAST);
    const replied = status === 'replied' || status === 'converted' || status === 'declined';
    const hasDraft = status === 'drafted' || status === 'contacted' || replied;
    const replyKind = status === 'declined' ? 'not_interested' : replied ? pick(REPLIES.slice(0, 4)) : null;
    const { id } = await upsertLead(db, accountId, {
      domain,
      companyName: company,
      status,
      replyKind,
      declineReason: status === 'declined' ? 'Already use a competitor' : null,
      score: status === 'new' ? null : Math.floor(rand() * 100),
      scoreReasons: status === 'new' ? [] : ['Hiring for growth roles', 'Recently raised a round'],
      fields: { industry: pick(INDUSTRIES), headcount: String(10 + Math.floor(rand() * 490)) },
      research:
        status === 'new'
          ? []
          : [
              {
                key: 'why_now',
                reasoning: `${company} posted three growth roles this month and launched a self-serve plan.`,
                sources: [
                  { url: `https://${domain}/careers`, title: `${company} careers` },
                  { url: `https://news.example/${domain}/launch`, title: `${company} launches self-serve` },
                ],
              },
              {
                key: 'stack',
                reasoning: 'Uses a product-analytics tool and a marketing-automation suite, per the site source.',
                sources: [{ url: `https://${domain}/`, title: `${company} home page` }],
              },
            ],
      contacts: [
        {
          name: `${first} ${last}`,
          email: `${first.toLowerCase()}@${domain}`,
          title: pick(TITLES),
          profileUrl: `https://www.linkedin.com/in/${first.toLowerCase()}-${last.toLowerCase()}-${i}`,
        },
        ...(rand() < 0.4 ? [{ name: `${pick(FIRST)} ${pick(LAST)}`, email: null, title: pick(TITLES), profileUrl: null }] : []),
      ],
      draft: hasDraft ? { subject: `Quick idea for ${company}`, body: `Hi ${first},\n\nSaw you are hiring for growth. ...` } : null,
      createdAt: now - Math.floor(((SEED_LEAD_COUNT - i) / SEED_LEAD_COUNT) * 14 * DAY),
    });
    // The named contact is the one mail reached (and who answered): contacts keep their own status.
    const mailed = status === 'contacted' || status === 'replied' || status === 'bounced' ? status : replied ? 'replied' : null;
    if (mailed) {
      await db('lead_contacts')
        .where({ lead_id: id, email: `${first.toLowerCase()}@${domain}` })
        .update({ status: mailed, reply_kind: mailed === 'replied' ? replyKind : null, status_at: now });
    }
  }

  await addToBlocklist(db, accountId, ['competitor.example', 'press@bigco.example'], 'customer', 'demo');
  await addToBlocklist(db, accountId, ['optout@harborlabs.example'], 'opt_out_reply', null);

  let events = 0;
  const deciders: DecidedBy[] = ['person', 'person', 'trust_ladder', 'setting'];
  // One transaction: the rollup pass never sees these rows before they are marked (it folds committed rows once).
  await db.transaction(async (trx) => {
    const emit = async (
      channel: Channel,
      type: string,
      at: number,
      ref: string,
      extra: { decidedBy?: DecidedBy; amount?: number } = {},
    ) => {
      await recordChannelEvent(trx, accountId, { channel, type, at, refId: `seed-${ref}`, ...extra });
      events++;
    };
    for (let day = 0; day < 7; day++) {
      const dayStart = now - (day + 1) * DAY;
      const at = (k: number) => dayStart + Math.floor(((k + 1) / 40) * DAY);
      const sends = 8 + Math.floor(rand() * 10);
      for (let k = 0; k < sends; k++) {
        await emit('email', 'sent', at(k), `email-sent-${day}-${k}`, { decidedBy: pick(deciders) });
        if (rand() < 0.15) await emit('email', 'reply', at(k) + 3_600_000, `email-reply-${day}-${k}`);
        if (rand() < 0.04) await emit('email', 'bounce', at(k) + 60_000, `email-bounce-${day}-${k}`);
      }
      if (day === 2) await emit('email', 'opt_out', at(20), `email-optout-${day}`);
      await emit('ads', 'spend', at(1), `ads-spend-${day}`, { decidedBy: 'person', amount: 2_000 + Math.floor(rand() * 3_000) });
      for (let k = 0; k < 5; k++) await emit('ads', 'click', at(k + 2), `ads-click-${day}-${k}`);
      if (rand() < 0.5) await emit('ads', 'conversion', at(9), `ads-conv-${day}`);
      if (day % 3 === 0) await emit('ads', 'test_launched', at(3), `ads-test-${day}`, { decidedBy: 'person' });
      if (day % 2 === 0) await emit('seo', 'post_published', at(4), `seo-post-${day}`, { decidedBy: pick(deciders) });
      await emit('social', 'post_published', at(5), `social-post-${day}`, { decidedBy: pick(deciders) });
      for (let k = 0; k < 3; k++) await emit('social', 'engagement', at(k + 10), `social-eng-${day}-${k}`);
      for (let k = 0; k < 4; k++) {
        await emit('network', 'message_sent', at(k + 12), `network-msg-${day}-${k}`, { decidedBy: pick(deciders) });
        if (rand() < 0.25) await emit('network', 'reply', at(k + 13), `network-reply-${day}-${k}`);
      }
    }
    // Demo figures never mix into the account's real ones: every row written here is marked, and /results leaves it out.
    await markDemoEvents(trx, accountId, 'seed-');
  });
  return { leads: SEED_LEAD_COUNT, events, eventsInResults: false };
}
