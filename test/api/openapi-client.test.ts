import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, describe, expect } from 'vitest';
import { it } from '../helpers/fixture.js';
import { ROOT, run } from '../helpers/processes.js';
import { buildCard } from '../helpers/factories.js';
import { published } from '../content/helpers.js';

/**
 * A typed client as a user of the service would make one: types generated from the served
 * /openapi.json by openapi-typescript, calls made with openapi-fetch. The client must type-check
 * cleanly, wrong calls must not, and the same client must work against the running app.
 */

/** The client a user would write. Every line must type-check against the generated types. */
const CLIENT = `
import createClient from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

type Contact = components['schemas']['LeadContact'];
// A contact is never null itself (only a lead's \`contact\` may be); its fields may be.
export const contactEmail = (c: Contact): string | null => c.email;
export type ListReviewCards = operations['listReviewCards'];
export type SendAgentMessage = operations['sendAgentMessage'];
// Operations are named by their stable operationId.
export const firstPage: NonNullable<operations['listReviewCards']['parameters']['query']> = { limit: 10 };

export function connect(baseUrl: string, token: string) {
  return createClient<paths>({ baseUrl, headers: { Authorization: 'Bearer ' + token } });
}

export async function tour(baseUrl: string, token: string, cardId: string) {
  const api = connect(baseUrl, token);
  const me = await api.GET('/api/v1/me');
  const queue = await api.GET('/api/v1/review', { params: { query: { limit: 10, status: 'needs_revision' } } });
  const ids: string[] = queue.data ? queue.data.items.map((c) => c.id) : [];
  const card = await api.GET('/api/v1/review/{id}', { params: { path: { id: cardId } } });
  const results = await api.GET('/api/v1/results', { params: { query: { since: Date.now() - 2 * 3_600_000 } } });
  const messageBody = { text: 'hello from a typed client', clientRequestId: 'typed-1', queue: true };
  const message = await api.POST('/api/v1/agent/messages', { body: messageBody });
  const tooLong = await api.GET('/api/v1/review', { params: { query: { limit: 1000 } } });
  const send = await api.POST('/api/v1/review/{id}/send', { params: { path: { id: 'card_missing' } } });
  const lead = await api.GET('/api/v1/leads/{id}', { params: { path: { id: 'lead_missing' } } });
  const leadContact = lead.data ? lead.data.lead.contact : null;
  const emails = lead.data ? lead.data.lead.contacts.map(contactEmail) : [];
  return {
    me: { status: me.response.status, tokenId: me.data?.me.tokenId },
    queue: { status: queue.response.status, ids },
    card: { status: card.response.status, id: card.data?.item.id, kind: card.data?.item.kind },
    results: { status: results.response.status, clamped: results.data?.results.window.clamped },
    message: { status: message.response.status, requestId: message.data?.requestId, deduplicated: message.data?.deduplicated },
    tooLong: { status: tooLong.response.status, error: tooLong.error?.error },
    send: { status: send.response.status, error: send.error?.error },
    lead: { status: lead.response.status, error: lead.error?.error, contact: leadContact?.email ?? null, emails },
  };
}

/** A customer's website backend: reads posts, revalidates one with its ETag, reads the feed, reports a sale. */
export async function site(baseUrl: string, token: string, slug: string) {
  const api = connect(baseUrl, token);
  const list = await api.GET('/api/v1/content/posts', { params: { query: { limit: 5 } } });
  const post = await api.GET('/api/v1/content/posts/{slug}', { params: { path: { slug } } });
  const etag = post.response.headers.get('ETag') ?? '';
  const again = await api.GET('/api/v1/content/posts/{slug}', { params: { path: { slug }, header: { 'If-None-Match': etag } } });
  const feed = await api.GET('/api/v1/content/feed.xml', { parseAs: 'text' });
  const landing = await api.POST('/api/v1/measurement/visits', {
    body: { url: 'https://acme.example/pricing?utm_source=newsletter&utm_medium=email', referrer: 'https://www.google.com/' },
  });
  const visitId = landing.data ? landing.data.visitId : undefined;
  const sale = { eventId: 'order-1001', name: 'purchase', visitId, occurredAt: Date.now(), value: 49, currency: 'EUR' };
  const events = await api.POST('/api/v1/measurement/events', { body: { events: [sale, sale] } });
  return {
    list: { status: list.response.status, slugs: list.data ? list.data.posts.map((p) => p.slug) : [] },
    post: { status: post.response.status, title: post.data?.post.title, etag },
    again: { status: again.response.status, etag: again.response.headers.get('ETag'), body: again.data ?? null },
    feed: { status: feed.response.status, type: feed.response.headers.get('Content-Type'), atom: (feed.data ?? '').includes('<feed') },
    landing: { status: landing.response.status, channel: landing.data?.channel },
    events: { status: events.response.status, outcomes: events.data ? events.data.events.map((e) => e.outcome) : [] },
  };
}
`;

/** Runs the tour as a separate program, the way a user's script would. */
const MAIN = `
import { site, tour } from './client.js';
const [what, baseUrl, token, arg] = process.argv.slice(2);
console.log(JSON.stringify(what === 'site' ? await site(baseUrl!, token!, arg!) : await tour(baseUrl!, token!, arg!)));
`;

/** Calls that must each be refused by the compiler; every line marked `// wrong` must get a diagnostic. */
const WRONG = `
import type { components } from './schema.js';
import { connect } from './client.js';

export async function mistakes() {
  const api = connect('http://localhost', 't');
  await api.GET('/api/v1/review', { params: { query: { limit: '10' } } }); // wrong: limit is an integer
  await api.GET('/api/v1/results', { params: { query: { since: 'yesterday' } } }); // wrong: since is an integer
  await api.POST('/api/v1/agent/messages', { body: { txt: 'hi' } }); // wrong: text is required, txt unknown
  await api.POST('/api/v1/agent/messages', {}); // wrong: the body is required
  await api.POST('/api/v1/agent/messages', { body: { text: 'hi', waitSeconds: '5' } }); // wrong: waitSeconds is an integer
  await api.GET('/api/v1/reviews'); // wrong: no such path
  await api.GET('/api/v1/content/posts/{slug}', { params: { path: { slug: 'x' }, header: { 'If-None-Match': 5 } } }); // wrong: not a string
  const contact: components['schemas']['LeadContact'] = null; // wrong: a contact is not null
  return contact;
}
`;

let server: Server;
let baseUrl: string;
let dir: string;
let program: ts.Program;
let diagnostics: readonly ts.Diagnostic[];

it.beforeAll(async ({ env }) => {
  server = env.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // Generate from the document the app serves, not from the route table directly.
  const served = (await env.api().get('/openapi.json').expect(200)).body as OpenAPI3;
  const types = astToString(await openapiTS(served));
  dir = await mkdtemp(path.join(tmpdir(), 'typed-client-'));
  await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  await writeFile(path.join(dir, 'schema.d.ts'), types);
  await writeFile(path.join(dir, 'client.ts'), CLIENT);
  await writeFile(path.join(dir, 'main.ts'), MAIN);
  await writeFile(path.join(dir, 'wrong.ts'), WRONG);
  program = ts.createProgram({
    rootNames: ['client.ts', 'main.ts', 'wrong.ts'].map((f) => path.join(dir, f)),
    options: {
      strict: true,
      noUncheckedIndexedAccess: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: ['node'],
      skipLibCheck: true,
      outDir: path.join(dir, 'out'),
    },
  });
  // Type-checking is the slow part (seconds, more on a loaded machine): once, here, with a long limit.
  diagnostics = ts.getPreEmitDiagnostics(program);
}, 180_000);

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  if (dir) await rm(dir, { recursive: true, force: true });
});

const diagnosticsOf = (file: string) =>
  diagnostics
    .filter((d) => d.file?.fileName === path.join(dir, file))
    .map((d) => ({
      line: d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0,
      text: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
    }));

describe('a client generated from /openapi.json (openapi-typescript + openapi-fetch)', () => {
  it('type-checks with zero diagnostics', () => {
    expect(diagnostics.filter((d) => !d.file).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
    expect(diagnosticsOf('schema.d.ts')).toEqual([]);
    expect(diagnosticsOf('client.ts')).toEqual([]);
    expect(diagnosticsOf('main.ts')).toEqual([]);
  });

  it('refuses each deliberately wrong call', () => {
    const lines = WRONG.split('\n');
    const marked = lines.flatMap((l, i) => (l.includes('// wrong') ? [i + 1] : []));
    expect(marked).toHaveLength(8);
    const found = diagnosticsOf('wrong.ts');
    for (const line of marked)
      expect(
        found.filter((d) => d.line === line),
        lines[line - 1],
      ).not.toEqual([]);
    // Nothing else in the file is wrong: the diagnostics are the marked calls'.
    expect(found.filter((d) => !marked.includes(d.line))).toEqual([]);
  });

  it('works against the running app', async ({ env }) => {
    const { token, tokenId, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'approval', { status: 'needs_revision' });
    const emitted = program.emit(undefined, undefined, undefined, false);
    expect(emitted.emitSkipped).toBe(false);
    const out = await run(process.execPath, [path.join(dir, 'out', 'main.js'), 'tour', baseUrl, token, card.id], {}, 60_000);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const tour = JSON.parse(out.stdout);
    expect(tour).toEqual({
      me: { status: 200, tokenId },
      queue: { status: 200, ids: [card.id] },
      card: { status: 200, id: card.id, kind: 'approval' },
      results: { status: 200, clamped: false },
      message: { status: 202, requestId: expect.stringMatching(/^req_/), deduplicated: false },
      tooLong: { status: 400, error: 'limit must be an integer from 1 to 100' },
      send: { status: 404, error: 'not found' },
      lead: { status: 404, error: 'not found', contact: null, emails: [] },
    });
  });
  it("works as a website's backend: posts, a revalidation answered 304, the feed, a landing and a sale", async ({ env }) => {
    const t = await env.tenant();
    const { slug } = await published(env, t, { title: 'Onboarding checklists that work' });
    const out = await run(process.execPath, [path.join(dir, 'out', 'main.js'), 'site', baseUrl, t.token, slug], {}, 60_000);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const site = JSON.parse(out.stdout);
    expect(site).toEqual({
      list: { status: 200, slugs: [slug] },
      post: { status: 200, title: 'Onboarding checklists that work', etag: expect.stringMatching(/^"[A-Za-z0-9_-]+"$/) },
      again: { status: 304, etag: site.post.etag, body: null },
      feed: { status: 200, type: 'application/atom+xml; charset=utf-8', atom: true },
      landing: { status: 201, channel: 'email' },
      events: { status: 200, outcomes: ['accepted', 'duplicate'] },
    });
  });
});
