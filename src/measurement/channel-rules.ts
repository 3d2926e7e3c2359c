/**
 * The one table that says which channel a landing came from (docs/decisions/content-and-measurement.md, "Measurement:
 * the channel of a visit"). Rules are tried in this order, the first that answers wins:
 *   1. UTM medium, then UTM source (a source naming an AI assistant, a social network or a search engine);
 *   2. the referrer's host: AI assistants first (gemini.google.com is not Google search), then search
 *      engines, then social networks;
 *   3. our own tracked link: the URL carries `gvid` of a visit of this account, or the referrer is one
 *      of this account's `{BASE_URL}/l/{code}` links → that visit's or link's channel;
 *   4. `referral` when another site referred the visitor, else `direct`.
 * `referral` and `direct` are stored on the visit but are not `/results` channels.
 */
export type VisitChannel = 'email' | 'ads' | 'seo' | 'social' | 'aeo' | 'referral' | 'direct';

/** UTM mediums, lowercased. GA4's default channel grouping reads them the same way. */
const MEDIUMS: Record<string, VisitChannel> = {
  email: 'email',
  'e-mail': 'email',
  e_mail: 'email',
  newsletter: 'email',
  cpc: 'ads',
  ppc: 'ads',
  paid: 'ads',
  paidsearch: 'ads',
  'paid-search': 'ads',
  paid_search: 'ads',
  'paid-social': 'ads',
  paid_social: 'ads',
  display: 'ads',
  cpm: 'ads',
  banner: 'ads',
  social: 'social',
  'social-media': 'social',
  social_media: 'social',
  'social-network': 'social',
  sm: 'social',
  organic: 'seo',
};

/** Hosts (a host matches itself and its subdomains), in the order they are tried. */
const HOSTS: { channel: VisitChannel; hosts: string[]; names: string[] }[] = [
  {
    channel: 'aeo',
    hosts: [
      'chatgpt.com',
      'chat.openai.com',
      'openai.com',
      'perplexity.ai',
      'gemini.google.com',
      'bard.google.com',
      'copilot.microsoft.com',
      'copilot.cloud.microsoft',
      'claude.ai',
      'you.com',
      'phind.com',
      'poe.com',
      'chat.deepseek.com',
      'meta.ai',
      'grok.com',
      'chat.mistral.ai',
    ],
    names: [
      'chatgpt',
      'openai',
      'perplexity',
      'gemini',
      'bard',
      'copilot',
      'claude',
      'anthropic',
      'phind',
      'poe',
      'deepseek',
      'grok',
      'mistral',
    ],
  },
  {
    channel: 'seo',
    hosts: [
      'bing.com',
      'duckduckgo.com',
      'search.yahoo.com',
      'yahoo.com',
      'baidu.com',
      'ecosia.org',
      'search.brave.com',
      'startpage.com',
      'qwant.com',
      'kagi.com',
      'naver.com',
      'seznam.cz',
      'ask.com',
      'search.aol.com',
    ],
    names: ['google', 'bing', 'duckduckgo', 'ddg', 'yahoo', 'baidu', 'yandex', 'ecosia', 'brave', 'startpage', 'qwant', 'kagi', 'naver'],
  },
  {
    channel: 'social',
    hosts: [
      'facebook.com',
      'fb.com',
      'instagram.com',
      't.co',
      'twitter.com',
      'x.com',
      'linkedin.com',
      'lnkd.in',
      'reddit.com',
      'youtube.com',
      'youtu.be',
      'news.ycombinator.com',
      'threads.net',
      'bsky.app',
      'mastodon.social',
      'mastodon.online',
      'pinterest.com',
      'tiktok.com',
      'quora.com',
      'tumblr.com',
    ],
    names: [
      'facebook',
      'fb',
      'instagram',
      'ig',
      'twitter',
      'x',
      'linkedin',
      'reddit',
      'youtube',
      'hackernews',
      'hacker-news',
      'hn',
      'threads',
      'bluesky',
      'bsky',
      'mastodon',
      'pinterest',
      'tiktok',
      'quora',
    ],
  },
];

/** Search engines under many country domains (google.co.uk, yandex.ru, …): the name then a TLD. */
const SEARCH_ANY_TLD = /^(?:www\.)?(?:google|yandex)\.[a-z]{2,3}(?:\.[a-z]{2})?$/;

const under = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);

/** The channel a host belongs to (AI assistants, then search engines, then social networks), or null. */
export function channelOfHost(rawHost: string): VisitChannel | null {
  const host = rawHost.toLowerCase().replace(/\.$/, '');
  for (const { channel, hosts } of HOSTS) {
    if (hosts.some((d) => under(host, d))) return channel;
    if (channel === 'seo' && SEARCH_ANY_TLD.test(host)) return 'seo';
  }
  return null;
}

/** A UTM source names a channel by a name (`chatgpt`) or by a host (`chatgpt.com`, as ChatGPT tags its links). */
function channelOfSource(rawSource: string): VisitChannel | null {
  const source = rawSource.trim().toLowerCase();
  if (source.includes('.')) {
    const byHost = channelOfHost(source.replace(/^https?:\/\//, '').split('/')[0]!);
    if (byHost) return byHost;
  }
  const word = source.split(/[.\s/]/)[0]!;
  for (const { channel, names } of HOSTS) if (names.includes(word)) return channel;
  return null;
}

export interface Utm {
  source?: string | undefined;
  medium?: string | undefined;
  campaign?: string | undefined;
  term?: string | undefined;
  content?: string | undefined;
}

/** Rule 1: the channel UTM parameters name, or null. */
export function channelOfUtm(utm: Utm | null): VisitChannel | null {
  if (!utm) return null;
  const medium = utm.medium?.trim().toLowerCase();
  if (medium && MEDIUMS[medium]) return MEDIUMS[medium];
  return utm.source ? channelOfSource(utm.source) : null;
}

export interface Landing {
  utm: Utm | null;
  /** The referrer's host, or null when there was none (or it was not a URL). */
  referrerHost: string | null;
  /** True when the referrer is a page of the site itself or of this service (never `referral`). */
  referrerIsOwn: boolean;
}

/**
 * The channel of a landing, by the rules above in their order. `ownLink` is asked only when rules 1
 * and 2 did not answer: it looks up this account's visit or tracked link (rule 3).
 */
export async function channelOf(landing: Landing, ownLink: () => Promise<VisitChannel | null>): Promise<VisitChannel> {
  const byUtm = channelOfUtm(landing.utm);
  if (byUtm) return byUtm;
  const byReferrer = landing.referrerHost ? channelOfHost(landing.referrerHost) : null;
  if (byReferrer) return byReferrer;
  const own = await ownLink();
  if (own) return own;
  return landing.referrerHost && !landing.referrerIsOwn ? 'referral' : 'direct';
}

/** The channels `/results` reports; a visit on another (`referral`, `direct`) records no channel event. */
export const RESULTS_CHANNELS = ['email', 'ads', 'seo', 'social', 'aeo'] as const;
export type ResultsVisitChannel = (typeof RESULTS_CHANNELS)[number];
export const isResultsChannel = (c: string): c is ResultsVisitChannel => (RESULTS_CHANNELS as readonly string[]).includes(c);
