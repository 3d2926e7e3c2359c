import { type Config, loadConfig } from '../../src/config.js';

/** This process's environment with overrides applied (tests and benchmarks); test/helpers/processes.ts's childEnv is a child process's. */
export function configWith(overrides: Record<string, string>): Config {
  // Vite sets BASE_URL to "/" inside vitest; a relative base is never what a test means.
  const inherited = process.env.BASE_URL === '/' ? { ...process.env, BASE_URL: undefined } : process.env;
  return loadConfig({ ...inherited, ...overrides });
}
