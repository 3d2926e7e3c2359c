import type { ToolCall, ToolResult } from '../../core/brain.js';
import { call, capitalise, mailBody, type OfflinePhrase, trimEnd } from './offline-calls.js';

const TEST = /^test (?:two|2) subject lines (?:for|about|on) ([\s\S]+)$/i;
const HOW = /^how (?:is|are) (?:the |my |our )?(?:subject(?: line)? tests?|experiments?|tests?)(?: doing| going)?\??$/i;

/**
 * The subject lines a subject test compares: the one "draft an email … about TOPIC" would use (A, the control) and
 * a question (B).
 */
export function subjectTest(topic: string): { subject: string; challenger: string; body: string } {
  return {
    subject: capitalise(topic).slice(0, 200),
    challenger: `Quick question about ${topic}`.slice(0, 200),
    body: mailBody('there', topic),
  };
}

/** The experiment phrases: "test two subject lines for TOPIC" and "how is the subject test doing". */
export const EXPERIMENT_PHRASES: readonly OfflinePhrase[] = [
  {
    example: 'test two subject lines for TOPIC',
    hint: '"test two subject lines for TOPIC"',
    does:
      'an `experiment` card: the subject "draft an email … about TOPIC" would use against "Quick question about TOPIC", ' +
      'the same body, on contacts never mailed; replies that it waits for review, or why nothing was proposed',
    pattern: TEST,
    cutEnd: true,
    plan(m) {
      const topic = trimEnd(m[1]!).slice(0, 200);
      const t = subjectTest(topic);
      // The reply comes in a second round, from what the tool did (it refuses a plan too few contacts could join).
      return [
        call(1, 'propose_experiment', { thing: 'mail_subject', topic, subject: t.subject, body: t.body, challengers: [t.challenger] }),
      ];
    },
  },
  {
    example: 'how is the subject test doing',
    variants: ['how are the experiments doing'],
    hint: '"how is the subject test doing"',
    does: "reads the account's results and replies with each experiment's figures (or that no experiment is running)",
    pattern: HOW,
    cutEnd: true,
    plan() {
      return [call(1, 'read_results', {})];
    },
  },
];

/** After an experiment phrase's tool call: what happened, truthfully, citing the tool's figures. */
export function experimentReply(text: string, result: ToolResult): ToolCall[] | null {
  const test = TEST.exec(trimEnd(text));
  if (test) {
    if (!result.ok)
      return [call(2, 'reply', { text: `I proposed no experiment: ${result.result.replace(/^no experiment was proposed: /, '')}.` })];
    const topic = trimEnd(test[1]!).slice(0, 200);
    const t = subjectTest(topic);
    const card = /card (\S+?)[;,)]? /.exec(`${result.result} `)?.[1];
    const what = `I proposed an experiment on the subject line of mail about ${topic}: A "${t.subject}" against B "${t.challenger}".`;
    const state = /without approval/.test(result.result)
      ? `This account lets experiments start without approval, so it starts now (card ${card}); its mail waits under your email settings.`
      : `It is waiting in your review queue as card ${card}; nothing is sent until you approve it.`;
    return [call(2, 'reply', { text: `${what} ${state}` })];
  }
  if (!HOW.test(trimEnd(text))) return null;
  if (!result.ok) return [call(2, 'reply', { text: `I could not read the results: ${result.result}.` })];
  const lines = result.result.split('\n').filter((l) => l.startsWith('- '));
  if (!lines.length) {
    return [call(2, 'reply', { text: 'No experiment is running or waiting for approval, and none ended in the last 24 hours.' })];
  }
  const head = `${lines.length} experiment${lines.length === 1 ? '' : 's'}:`;
  return [call(2, 'reply', { text: `${head}\n${lines.join('\n')}` })];
}
