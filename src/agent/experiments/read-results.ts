/**
 * The agent's `read_results` tool (docs/decisions/experiments.md, "The agent's tools: propose_experiment and
 * read_results"): reads the account's own scoreboard back as facts that carry no outside data: counts and rates per
 * channel, the agent's own work, and one line per experiment. Never a lead's name, a reply's text or an account note.
 */
import { z } from 'zod';
import { experimentFact, readExperiments } from '../../experiments/reading.js';
import { getResults, hasReturnPath, type Results } from '../../results/report/results.service.js';
import { defineTool } from '../tools/tool.js';

/** A metric's name in words: `replyRate` → "reply rate". */
const words = (key: string) => key.replace(/([A-Z])/g, ' $1').toLowerCase();

/** A count or rate as a fact, its baseline beside it; null (unknown) says so. */
const figure = (v: unknown) => (v === null ? 'unknown' : typeof v === 'number' ? String(v) : null);

/** One channel's numbers (only numbers: the names and titles an ads test carries stay out). */
function metricFacts(window: Record<string, unknown>, baseline: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [key, v] of Object.entries(window)) {
    const b = baseline[key];
    const now = figure(v);
    if (now !== null) {
      out.push(`${words(key)} ${now} (before ${figure(b) ?? 'unknown'})`);
    } else if (Array.isArray(v)) {
      out.push(`${words(key)} ${v.length} (before ${Array.isArray(b) ? b.length : 0})`);
    } else if (key === 'shipped' && v && typeof v === 'object') {
      out.push(`shipped ${(v as { total: number }).total} (before ${(b as { total?: number } | undefined)?.total ?? 0})`);
    } else if (v && typeof v === 'object') {
      // Conversion value per currency: the currency code and the sum.
      const sums = Object.entries(v as Record<string, unknown>).filter(([, n]) => typeof n === 'number');
      if (sums.length) out.push(`${words(key)} ${sums.map(([c, n]) => `${c} ${n}`).join(', ')}`);
    }
  }
  return out;
}

/** The scoreboard as facts: one line per channel and one for the agent's own work. */
export function resultFacts(r: Results): string[] {
  const hours = Math.round((r.window.until - r.window.since) / 3_600_000);
  const lines = [`Results for the last ${hours} hours (before: the ${hours} hours until then).`];
  for (const channel of ['email', 'ads', 'seo', 'social', 'aeo', 'network'] as const) {
    const s = r[channel];
    if (!s.available) lines.push(`${channel}: not available (${s.reason}).`);
    else lines.push(`${channel}: ${metricFacts(s.data.window, s.data.baseline).join('; ')}.`);
  }
  const h = r.harness.data;
  lines.push(`your work: ${metricFacts({ ...h.window }, { ...h.baseline }).join('; ')}.`);
  return lines;
}

export const readResults = defineTool({
  name: 'read_results',
  description:
    "Read the account's scoreboard for the last 24 hours and the 24 hours before: counts and rates per channel, your own " +
    'work (turns, cards, approvals), and one line per experiment with its figures. Cite these figures; claim nothing they do not show.',
  input: z.object({}),
  async handler(_args, ctx) {
    const now = Date.now();
    const sources = ctx.doors.scoreboard;
    const returnPath = await hasReturnPath(ctx.db, ctx.accountId, ctx.config.inbound.smtpPort, sources);
    const results = await getResults(ctx.db, ctx.accountId, undefined, now, returnPath, { sources });
    const experiments = await readExperiments(ctx.db, ctx.accountId, results.window.since, now - ctx.config.experiments.replyWindowMs);
    const lines = resultFacts(results);
    lines.push(
      experiments.length
        ? `Experiments (${experiments.length}):\n${experiments.map((e) => `- ${experimentFact(e)}`).join('\n')}`
        : 'Experiments: none is running or proposed, and none ended in this window.',
    );
    return lines.join('\n');
  },
});
