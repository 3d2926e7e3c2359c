import { startInboundSmtp } from '../../src/inbound/smtp-listener.js';
import { it } from './fixture.js';
import { type PostfixOptions, startPostfix } from './postfix.js';
import { freePort } from './processes.js';

// Apart from postfix.ts, which the benchmarks import: a module that imports vitest cannot load outside it.

/**
 * The shared fixture with a private Postfix in front of the service, for a file of mail tests (one call per file):
 * `postfix`, started with `opts` and relaying INBOUND_DOMAIN to a free port, and `relayed`, the service's own inbound
 * listener on that port over the file's env (made when a hook or test asks for it). The file points the service's
 * sending at Postfix with `it.override('options', ({ postfix }) => ({ env: sendingThrough(postfix) }))`.
 */
export function withPostfix(opts: Omit<PostfixOptions, 'inboundPort'>) {
  return it
    .extend('postfix', { scope: 'file' }, async ({}, { onCleanup }) => {
      const postfix = await startPostfix({ ...opts, inboundPort: await freePort() });
      onCleanup(() => postfix.stop());
      return postfix;
    })
    .extend('relayed', { scope: 'file' }, async ({ env, postfix }, { onCleanup }) => {
      const listener = await startInboundSmtp(env.deps, { port: postfix.inboundPort, host: '127.0.0.1' });
      onCleanup(() => listener.close());
      return listener;
    });
}
