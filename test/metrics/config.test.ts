import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { configWith } from '../helpers/config.js';

function problems(env: Record<string, string>): string[] {
  try {
    configWith(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('metrics settings', () => {
  it('are off by default, on loopback, sampled every 15 s', () => {
    const { metrics } = configWith({});
    expect(metrics).toEqual({ port: null, host: '127.0.0.1', sampleMs: 15_000 });
    expect(configWith({ METRICS_PORT: '0', METRICS_HOST: '0.0.0.0', METRICS_SAMPLE_SECONDS: '5' }).metrics).toEqual({
      port: 0,
      host: '0.0.0.0',
      sampleMs: 5_000,
    });
  });

  it('refuse a bad value naming the variable and its rule', () => {
    expect(problems({ METRICS_PORT: 'nine' }).join('\n')).toMatch(/METRICS_PORT.*whole number/);
    expect(problems({ METRICS_PORT: '70000' }).join('\n')).toMatch(/METRICS_PORT.*at most 65535/);
    expect(problems({ METRICS_SAMPLE_SECONDS: '0' }).join('\n')).toMatch(/METRICS_SAMPLE_SECONDS.*at least 1/);
  });
});
