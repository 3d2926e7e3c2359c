/**
 * Where `npm run bench` writes each benchmark's section: one page per topic under docs/performance/
 * (docs/performance/<page>.md), and docs/performance.md the index of the pages and their sections.
 * A page groups what a reader compares (a request's costs, mail out and in, the public doors…), not a
 * line count. A new benchmark adds its name to one page here; run.ts refuses one that has none.
 */
import path from 'node:path';

export interface Section {
  title: string;
  body: string;
}

export interface Page {
  /** The file name under the pages' folder, without `.md`. */
  file: string;
  title: string;
  /** One line under the title: what the page's figures answer. */
  about: string;
  /** The benchmarks (bench/run.ts names) whose sections it holds, in the order they are written. */
  benches: readonly string[];
}

export const PAGES: readonly Page[] = [
  {
    file: 'requests',
    title: 'API requests and the stores',
    about:
      'What one API request costs: the stores’ ceilings, reads, paging, the agent’s round trip, round trips and ' +
      'instructions per request, the limiter, the pooler, logs and metrics.',
    benches: [
      'store-ceilings',
      'http-read',
      'access-log',
      'metrics-cost',
      'leads-paging',
      'leads-import',
      'live-streams',
      'agent-roundtrip',
      'round-trips',
      'limiter-redis',
      'api-instructions',
      'pooler',
      'dashboard',
    ],
  },
  {
    file: 'webhooks',
    title: 'Webhooks',
    about: 'Webhook intake, the refusals of unknown hooks, and the events through their worker pool.',
    benches: ['webhook-intake', 'webhook-404', 'webhook-worker'],
  },
  {
    file: 'mail',
    title: 'Mail out and in',
    about: 'Sends through the API, the worker pools and Postfix; received mail parsed and applied; the SMTP listener’s refusals.',
    benches: ['mail-send', 'mail-worker', 'postfix-send', 'inbound-parse', 'smtp-rcpt'],
  },
  {
    file: 'public-doors',
    title: 'Public doors',
    about: 'The doors a stranger reaches: one-click unsubscribe, a flood at every door, the Content API and measurement.',
    benches: ['one-click', 'door-flood', 'content-measurement'],
  },
  {
    file: 'channels-and-experiments',
    title: 'Other channels and experiments',
    about:
      'Network messages through the provider bridge, the experiments’ stopping rule simulated, and whole experiments through the service.',
    benches: ['network-ship', 'experiments', 'experiments-path'],
  },
  {
    file: 'data-growth',
    title: 'Data growth',
    about: 'A big account beside a small one, and retention at a steady daily volume.',
    benches: ['big-account', 'retention'],
  },
  {
    file: 'dashboard',
    title: 'The dashboard in a browser',
    about: 'The dashboard’s pages in headless Chromium: how soon the review desk is usable, answers a key and shows a new card.',
    benches: ['dashboard-desk'],
  },
];

/** The page a benchmark writes to; throws for a benchmark no page lists. */
export function pageOf(bench: string): Page {
  const page = PAGES.find((p) => p.benches.includes(bench));
  if (!page) throw new Error(`benchmark ${bench} is on no page of bench/pages.ts`);
  return page;
}

/** The folder of the pages beside the index `out` (docs/performance.md → docs/performance/). */
export const pagesDir = (out: string) => out.replace(/\.md$/, '');
export const pagePath = (out: string, page: Page) => path.join(pagesDir(out), `${page.file}.md`);

/** The `## title` sections of an earlier page. */
export function previousSections(text: string): Section[] {
  return text
    .split(/^## /m)
    .slice(1)
    .map((chunk) => {
      const [title = '', ...rest] = chunk.split('\n');
      return { title: title.trim(), body: rest.join('\n').trim() };
    });
}

/** A page's sections after a run: a section measured now replaces its earlier text where it stood, the others stay. */
export function mergeSections(kept: readonly Section[], measured: readonly Section[]): Section[] {
  return [
    ...kept.map((k) => measured.find((s) => s.title === k.title) ?? k),
    ...measured.filter((s) => !kept.some((k) => k.title === s.title)),
  ];
}

/** One page's text: its title, what it answers, the machine line, then its sections. */
export function pageText(page: Page, machine: string, sections: readonly Section[]): string {
  const head = [`# Performance: ${page.title}`, '', page.about, '', machine, '[All pages](../performance.md).', ''];
  return [...head, ...sections.flatMap((s) => [`## ${s.title}`, '', s.body, ''])].join('\n');
}

/** GitHub's anchor of a heading: lowercased, punctuation dropped, spaces to hyphens. */
export const anchorOf = (title: string) =>
  title
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

/** The index: every page, with a link to each of its sections. */
export function indexText(out: string, pages: readonly { page: Page; titles: readonly string[] }[]): string {
  const dir = path.basename(pagesDir(out));
  return [
    '# Performance',
    '',
    'Written by `npm run bench` (bench/run.ts): every figure stands beside baselines measured in the same run',
    'on the same machine; these machines are noisy, so read the ratios. Each page names the machine and day of',
    'its run. Figures measured once, beside a decision, are in [performance-decisions.md](performance-decisions.md).',
    '',
    ...pages.flatMap(({ page, titles }) => [
      `## [${page.title}](${dir}/${page.file}.md)`,
      '',
      page.about,
      '',
      ...titles.map((t) => `- [${t}](${dir}/${page.file}.md#${anchorOf(t)})`),
      '',
    ]),
  ].join('\n');
}
