import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('inbound sender check settings', () => {
  it('defaults: 5 s for all DNS lookups of one check, the system resolvers', () => {
    expect(loadConfig({}).inbound.auth).toMatchObject({ dnsTimeoutMs: 5000, dnsServers: [] });
  });

  it('takes IP addresses with optional ports', () => {
    const c = loadConfig({ INBOUND_AUTH_DNS_SERVERS: '127.0.0.1:5353, 9.9.9.9, [::1]:53, ::1', INBOUND_AUTH_DNS_TIMEOUT_MS: '800' });
    expect(c.inbound.auth).toMatchObject({ dnsTimeoutMs: 800, dnsServers: ['127.0.0.1:5353', '9.9.9.9', '[::1]:53', '::1'] });
  });

  it('names the setting and the rule for a host name, a bad port or a timeout under 100 ms', () => {
    for (const [env, field] of [
      [{ INBOUND_AUTH_DNS_SERVERS: 'dns.example.com' }, 'INBOUND_AUTH_DNS_SERVERS'],
      [{ INBOUND_AUTH_DNS_SERVERS: '999.1.1.1' }, 'INBOUND_AUTH_DNS_SERVERS'],
      [{ INBOUND_AUTH_DNS_SERVERS: '127.0.0.1:70000' }, 'INBOUND_AUTH_DNS_SERVERS'],
      [{ INBOUND_AUTH_DNS_TIMEOUT_MS: '50' }, 'INBOUND_AUTH_DNS_TIMEOUT_MS'],
    ] as const) {
      let err: unknown;
      try {
        loadConfig(env);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect(String((err as Error).message)).toContain(field);
    }
  });
});
